#!/usr/bin/env bash
# Checks every built file of a batch study at its small-n dispatch (issue 27): each case's file
# (DIR/LABEL/libLABEL.so, as scripts/batch-study.sh built it) is run by spmmc-gpu-bench at n =
# generic_below_n - 1, generic_below_n and generic_below_n + 1, and where the file has a balanced path at
# its end, below_n - 1 and below_n, and where that path has a second table (balanced_mid) at its end too
# (from DIR/LABEL/LABEL.json; n >= 1, each n once), checked against
# float64 and timed beside cuSPARSE. One JSON line per run in DIR/dispatch.jsonl,
# labelled "LABEL@N"; a Markdown table and a summary line last.
#
# usage: scripts/check-dispatch.sh CASES --out DIR [--runs N]
#   CASES      the case file the batch study ran (LABEL|MATRIX|N|FLAGS)
#   --out DIR  the batch study's work folder
#   --runs N   timed runs per file and n (default 5)
# Environment: SPMMC_BUILD_DIR (default build: spmmc-gpu-bench).
# Exit: 0 every run correct; 1 a run failed or was wrong, or a file is missing; 64 usage.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "check-dispatch: $*" >&2; }
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64; }
cases="" out="" runs=5
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift ;;
    -h|--help) usage ;;
    -*) say "unknown option '$1'"; usage ;;
    *) [ -z "$cases" ] || usage; cases=$1 ;;
  esac
  shift
done
[ -n "$cases" ] && [ -f "$cases" ] && [ -n "$out" ] && [ -d "$out" ] || usage
cases=$(cd "$(dirname "$cases")" && pwd)/$(basename "$cases")
out=$(cd "$out" && pwd)
cd "$root" || exit 1
build=${SPMMC_BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bench=$build/spmmc-gpu-bench
results=$out/dispatch.jsonl
: >"$results"
failed=0
while IFS='|' read -r label matrix _ flags _; do
  case $label in ''|'#'*) continue ;; esac
  dir=$out/$label
  if [ ! -f "$dir/lib$label.so" ] || [ ! -f "$dir/$label.json" ]; then say "[$label] not built"; failed=1; continue; fi
  # the boundaries: the generic path's end -1, 0, +1; the balanced path's end -1, 0; its second table's
  ns=$(python3 -c 'import json, sys
k = json.load(open(sys.argv[1]))["kernel"]
g, p, m = k["generic_below_n"], k.get("balanced_path"), k.get("balanced_mid")
ns = [g - 1, g, g + 1] + ([p["below_n"] - 1, p["below_n"]] if p else []) + ([m["below_n"] - 1, m["below_n"]] if m else [])
print(" ".join(str(n) for n in sorted(set(ns)) if n >= 1))' "$dir/$label.json")
  read_flags=$(grep -oE -- '--(seed|values|threshold|tensor|dtype) [^ ]+' <<<"$flags" | tr '\n' ' ')
  for n in $ns; do
    # shellcheck disable=SC2086  # read_flags: options and their values, split into words on purpose
    "$bench" --matrix "$matrix" $read_flags --n "$n" --kernel "$dir/lib$label.so" --name "$label" --runs "$runs" \
      --warmup 5 --json "$results" --label "$label@$n" </dev/null >"$dir/dispatch-n$n.log" 2>&1 || failed=1
    say "[$label@$n] $(tail -n1 "$dir/dispatch-n$n.log")"
  done
done <"$cases"
python3 - "$results" "$out" <<'PY' || failed=1
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print("| file | generic_below_n | balanced path below_n | n | correct | spmmc µs | best peer µs |")
print("|---|--:|--:|--:|---|--:|--:|")
bad = 0
for r in rows:
    label, n = r["label"].rsplit("@", 1)
    kernel = json.load(open(f"{sys.argv[2]}/{label}/{label}.json"))["kernel"]
    path = kernel.get("balanced_path")
    ok = bool(r.get("pass"))
    bad += not ok
    us = lambda k: f"{r[k] * 1000:.1f}" if isinstance(r.get(k), (int, float)) else "-"
    print(f"| {label} | {kernel['generic_below_n']} | {path['below_n'] if path else '-'} | {n} | {'yes' if ok else 'NO'} "
          f"| {us('spmmc_ms')} | {us('best_peer_ms')} |")
print(f"\ncheck-dispatch: {len(rows) - bad} of {len(rows)} runs correct")
sys.exit(1 if bad else 0)
PY
exit $failed
