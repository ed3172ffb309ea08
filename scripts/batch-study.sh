#!/usr/bin/env bash
# A batch-size study (issue 27): how ONE emitted file behaves when it is called at many n. For each
# case (a matrix, the n the file is compiled for, spmmc compile flags), emit and build the kernel
# once (scripts/kernel-study.sh --build-only: DIR/LABEL/libLABEL.so), then check and time that same
# library at every n of --run-n with spmmc-gpu-bench (float64 check; cuSPARSE best of its
# algorithms, Sputnik where built in, cuBLAS SGEMM or the dense GEMM of the case's dtype), one JSON
# line per (case, n) in DIR/results.jsonl, labelled "LABEL@n". Prints Markdown tables, one row per
# case and one column per n: x the best sparse peer (FAIL: wrong result; ERROR: no result, the
# bench failed; -: not run), spmmc's microseconds per call, the best peer's microseconds per call,
# the geomean x best peer per n for each set of compile flags; the summary line last: per n, the
# geomean x best peer over the cases and how many are below 0.9x.
#
# usage: scripts/batch-study.sh CASES [--out DIR] [--run-n LIST] [--runs N] [--jobs J] [--resume]
#                               [--part K/P] [--table-only]
#   CASES         kernel-study's case file: LABEL|MATRIX|N|SPMMC COMPILE FLAGS[|NVCC FLAGS] ('#'
#                 comments), N the n the file is compiled for; MATRIX relative to the repository root
#   --out DIR     work folder (default $SPMMC_BUILD_DIR/batch-study)
#   --run-n LIST  the n to run every file at, comma-separated (default 1,8,32,128,512,2048,8192)
#   --runs N      timed runs per kernel and n (default 30; 10 warm-up runs)
#   --jobs J      parallel nvcc builds (default: the number of cores)
#   --resume      keep DIR/results.jsonl and run only the (case, n) that have no result of
#                 spmmc-gpu-bench's in it (ERROR ones run again; a wrong result is a result): a second
#                 call after a first one was cut short; without it the file is started afresh. Only
#                 the cases with an n still to run are emitted and built (a fresh machine rebuilds
#                 nothing the earlier call finished)
#   --part K/P    only the K-th of P consecutive slices of CASES' cases (case i of C, from 0, is in slice
#                 floor(i x P / C) + 1), builds, runs and tables alike: a study too long for one call of a
#                 lent GPU split over P calls, each with its own --out; the parts' results.jsonl put
#                 together in one DIR give the whole study's tables with --table-only
#   --table-only  build and run nothing: print the tables from DIR/results.jsonl (no GPU needed)
# Environment: SPMMC_BUILD_DIR (default build: spmmc and spmmc-gpu-bench), and what
# scripts/kernel-study.sh reads for emission and builds (NVCC, SPMMC_NVCC_TIMEOUT, SPMMC_NVCC_FLAGS,
# SPMMC_EMIT_DEADLINE). Per run: DIR/LABEL/bench-nN.log and bench-nN.rc.
# Exit: 0 every case ran at every n and was correct; 1 a case was not built, or a run failed or was
# wrong (also with --table-only: a result missing or failed); 64 usage; 66 --table-only without
# DIR/results.jsonl; 69 no GPU (spmmc-gpu-bench --device-info exits 69).
set -uo pipefail
cases='' out='' run_n='1,8,32,128,512,2048,8192' runs=30 jobs=$(nproc) resume=0 table_only=0 part=''
say() { echo "batch-study: $*" >&2; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
positive() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
    --run-n) [ $# -ge 2 ] || usage; run_n=$2; shift ;;
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift ;;
    --resume) resume=1 ;;
    --table-only) table_only=1 ;;
    --part) [ $# -ge 2 ] || usage; part=$2; shift ;;
    -h|--help) usage ;;
    -*) say "unknown option '$1'"; usage ;;
    *) [ -z "$cases" ] || { say "one CASES file only"; usage; }; cases=$1 ;;
  esac
  shift
done
if [ -z "$cases" ] || [ ! -f "$cases" ]; then say "no CASES file ${cases:-given}"; usage; fi
positive "$runs" || { say "--runs: '$runs' is not a positive integer"; usage; }
positive "$jobs" || { say "--jobs: '$jobs' is not a positive integer"; usage; }
IFS=',' read -r -a ns <<<"$run_n"
[ ${#ns[@]} -gt 0 ] || { say "--run-n: empty list"; usage; }
for n in "${ns[@]}"; do positive "$n" || { say "--run-n: '$n' is not a positive integer"; usage; }; done
# Paths given relative to where the script was called from, before moving to the repository root.
cases=$(cd "$(dirname "$cases")" && pwd)/$(basename "$cases")
if [ -n "$part" ]; then  # the slice, in a file of its own for every step below
  [[ $part =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] ||
    { say "--part: '$part' is not K/P with 1 <= K <= P"; usage; }
  slice=$(mktemp)
  trap 'rm -f "$slice"' EXIT
  awk -v k="${BASH_REMATCH[1]}" -v p="${BASH_REMATCH[2]}" '!/^#/ && !/^[[:space:]]*$/ { line[c++] = $0 }
    END { for (i = 0; i < c; ++i) if (int(i * p / c) + 1 == k) print line[i] }' "$cases" >"$slice"
  [ -s "$slice" ] || { say "--part $part: no case in that slice of $cases"; exit 64; }
  cases=$slice
fi
if [ -n "$out" ]; then
  [ $table_only -eq 1 ] || mkdir -p "$out" || exit 1
  case $out in /*) ;; *) out=$(pwd)/$out ;; esac
fi
cd "$(dirname "$0")/.." || exit 1
build=${SPMMC_BUILD_DIR:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bench=$build/spmmc-gpu-bench
work=${out:-$build/batch-study}
results=$work/results.jsonl
device=''

table() {  # the tables from results.jsonl; exit 0 when every (case, n) ran and passed, else 1
  python3 - "$cases" "$work" "$run_n" "$device" <<'PY'
import json, math, os, sys
cases_path, work, run_n, device = sys.argv[1:5]
asked = [int(x) for x in run_n.split(",")]
cases = []  # (label, compiled n, spmmc flags)
for line in open(cases_path).read().splitlines():
    if line.strip() and not line.startswith("#"):
        cells = (line.split("|") + ["", "", "", ""])[:4]
        cases.append((cells[0], cells[2].strip(), cells[3].strip()))
labels = {c[0] for c in cases}

# The last record of each (label, n): spmmc-gpu-bench's lines ("label": "LABEL@n"), and the
# lines this script writes for a run that exited without one ("bench_exit").
results = {}
for number, line in enumerate(open(os.path.join(work, "results.jsonl")), 1):
    if not line.strip():
        continue
    try:
        r = json.loads(line)
    except ValueError:
        print(f"batch-study: results.jsonl:{number}: not JSON, skipped", file=sys.stderr)
        continue
    label, _, n = str(r.get("label", "")).rpartition("@")
    if not label or not n.isdigit():
        label, n = r.get("name"), str(r.get("n"))
    if label in labels and n.isdigit():
        results[(label, int(n))] = r
columns = sorted(set(asked) | {n for (label, n) in results})
device = device or next((r["device"] for r in results.values() if r.get("device")), "")


def read(path):
    try:
        return open(path).read().strip()
    except OSError:
        return None


def state(r):
    if r is None:
        return "missing"
    if "bench_exit" in r:
        return "error"
    return "pass" if r.get("pass") else "fail"


def cell(label, n, value):
    r = results.get((label, n))
    s = state(r)
    if s == "missing":
        return "-"
    if s == "error":
        return "ERROR"
    if s == "fail":
        return "FAIL"
    return value(r)


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def note(label):  # why a case has no results, where its folder says so
    d = os.path.join(work, label)
    failed = read(os.path.join(d, "emit.failed"))
    if failed:
        return "emit failed: " + failed
    rc = read(os.path.join(d, "nvcc.rc"))
    if rc is not None and rc != "0":
        return "nvcc timed out" if rc == "124" else f"nvcc failed (exit {rc})"
    return ""


def family(label):
    try:
        return json.load(open(os.path.join(work, label, label + ".json")))["choice"]["family"]
    except (OSError, ValueError, KeyError, TypeError):
        return "-"


def tile(label):
    for n in columns:
        r = results.get((label, n))
        if r and r.get("tile"):
            return r["tile"]
    return "-"


head = " | ".join(f"n={n}" for n in columns)
rule = "|".join("--:" for _ in columns)
print(f"### batch study: one file per case, run at every n ({device or 'device not recorded'})\n")
print("x the best sparse peer (cuSPARSE best of its algorithms, Sputnik where built in) at each n; "
      "FAIL: wrong result; ERROR: spmmc-gpu-bench gave no result; -: not run\n")
print(f"| case | compiled n | family | tile | {head} | note |")
print(f"|---|--:|---|---|{rule}|---|")
for label, compiled, _ in cases:
    cells = [cell(label, n, lambda r: fmt(r.get("speedup_vs_best_peer"), ".2f")) for n in columns]
    print(f"| {label} | {compiled} | {family(label)} | {tile(label)} | {' | '.join(cells)} | {note(label)} |")

print("\nspmmc's microseconds per call (median)\n")
print(f"| case | {head} |")
print(f"|---|{rule}|")
for label, _, _ in cases:
    cells = [cell(label, n, lambda r: fmt(r["spmmc_ms"] * 1000 if r.get("spmmc_ms") is not None else None, ".1f"))
             for n in columns]
    print(f"| {label} | {' | '.join(cells)} |")


def peer(r):
    if r.get("best_peer_ms") is None:
        return "-"
    name = str(r.get("best_peer") or "").replace("cuSPARSE ", "")
    return f"{r['best_peer_ms'] * 1000:.1f} {name}".strip()


print("\nthe best peer's microseconds per call (median) and which it was\n")
print(f"| case | {head} |")
print(f"|---|{rule}|")
for label, _, _ in cases:
    print(f"| {label} | {' | '.join(cell(label, n, peer) for n in columns)} |")


def speedups(members, n):
    xs = []
    for label in members:
        r = results.get((label, n))
        if state(r) == "pass" and r.get("speedup_vs_best_peer"):
            xs.append(r["speedup_vs_best_peer"])
    return xs


def summary_cell(xs):
    g = geomean(xs)
    return "-" if g is None else f"{g:.2f} ({sum(x < 0.9 for x in xs)} of {len(xs)})"


groups = {}
for label, _, flags in cases:
    groups.setdefault(flags or "(no flags)", []).append(label)
print("\ngeomean x best peer per n by spmmc compile flags (cases below 0.9x of those timed)\n")
print(f"| flags | cases | {head} |")
print(f"|---|--:|{rule}|")
for flags, members in groups.items():
    print(f"| {flags} | {len(members)} | {' | '.join(summary_cell(speedups(members, n)) for n in columns)} |")

problems = []
for label, _, _ in cases:
    for n in columns:
        r = results.get((label, n))
        s = state(r)
        if s in ("fail", "error"):
            problems.append(f"{label}@{n}: {'FAIL' if s == 'fail' else 'ERROR'}: {r.get('failure') or '(no message)'}")
        elif s == "missing" and n in asked:
            problems.append(f"{label}@{n}: not run{' (' + note(label) + ')' if note(label) else ''}")
if problems:
    print("\nnot run, failed or wrong:\n")
    for p in problems:
        print(f"- {p}")

everyone = [label for label, _, _ in cases]
parts = []
for n in columns:
    xs = speedups(everyone, n)
    g = geomean(xs)
    parts.append(f"n={n} -" if g is None else f"n={n} {g:.2f}x ({sum(x < 0.9 for x in xs)} of {len(xs)} below 0.9x)")
states = [state(results.get((label, n))) for label in everyone for n in asked]
ran = states.count("pass")
print(f"\nbatch-study: {ran} of {len(states)} runs correct ({states.count('fail')} wrong, {states.count('error')} "
      f"no result, {states.count('missing')} not run); geomean x best peer per n: " + "; ".join(parts))
sys.exit(0 if ran == len(states) else 1)
PY
}

if [ $table_only -eq 1 ]; then
  [ -f "$results" ] || { say "no $results to make tables of"; exit 66; }
  table
  exit $?
fi

[ -x "$bench" ] || { say "no $bench (cmake --build $build --target spmmc-gpu-bench)"; exit 1; }
mkdir -p "$work" || exit 1

done_already() {  # done_already LABEL@N: a result from spmmc-gpu-bench (not an ERROR line) is there
  grep -F "\"label\":\"$1\"" "$results" 2>/dev/null | grep -qv '"bench_exit"'
}

# --- 1. emit (where missing) and build, each case once --------------------------------------------
# With --resume, only the cases with an n still to run (step 2 runs the same list): a call that resumes an
# earlier one on a fresh machine (its results.jsonl unpacked into the work folder) builds nothing the
# earlier call finished.
to_build=$cases
if [ $resume -eq 1 ] && [ -f "$results" ]; then
  to_build=$work/to-build.cases
  : >"$to_build"
  while IFS= read -r line; do
    label=${line%%|*}
    case $label in ''|'#'*) continue ;; esac
    for n in "${ns[@]}"; do
      if ! done_already "$label@$n"; then printf '%s\n' "$line" >>"$to_build"; break; fi
    done
  done <"$cases"
  say "--resume: $(grep -c . "$to_build") case(s) with an n still to run"
fi
if [ -s "$to_build" ]; then
  scripts/kernel-study.sh "$to_build" --out "$work" --build-only --jobs "$jobs"
  rc=$?
  [ $rc -eq 0 ] || { say "scripts/kernel-study.sh --build-only exited $rc"; exit $(( rc == 64 ? 64 : 1 )); }
fi

device=$("$bench" --device-info 2>&1); rc=$?
[ $rc -eq 69 ] && { say "no GPU: $device"; say "kernels built into $work; nothing timed"; exit 69; }
[ $rc -eq 0 ] || { say "spmmc-gpu-bench --device-info failed (exit $rc): $device"; exit 1; }
say "device: $device"

# --- 2. every built file at every n still to run, one run at a time --------------------------------
if [ $resume -eq 0 ] || [ ! -f "$results" ]; then : >"$results"; fi
while IFS='|' read -r label matrix _ flags _; do
  case $label in ''|'#'*) continue ;; esac
  dir=$work/$label
  if [ "$(cat "$dir/nvcc.rc" 2>/dev/null)" != 0 ] || [ ! -f "$dir/lib$label.so" ]; then
    say "[$label] not built: nothing run"; continue
  fi
  read_flags=$(grep -oE -- '--(seed|values|threshold|tensor|dtype) [^ ]+' <<<"$flags" | tr '\n' ' ')
  nvcc_seconds=()
  [ -f "$dir/nvcc.seconds" ] && nvcc_seconds=(--nvcc-seconds "$(cat "$dir/nvcc.seconds")")
  for n in "${ns[@]}"; do
    if [ $resume -eq 1 ] && done_already "$label@$n"; then continue; fi
    before=$(wc -l <"$results")
    # shellcheck disable=SC2086  # read_flags: options and their values, split into words on purpose
    "$bench" --matrix "$matrix" $read_flags --n "$n" --kernel "$dir/lib$label.so" --name "$label" --runs "$runs" \
      --warmup 10 --json "$results" --label "$label@$n" "${nvcc_seconds[@]}" </dev/null >"$dir/bench-n$n.log" 2>&1
    rc=$?
    echo $rc >"$dir/bench-n$n.rc"
    if [ "$(wc -l <"$results")" -eq "$before" ]; then  # no result line: say why in one
      python3 -c 'import json, sys; print(json.dumps({"label": sys.argv[1], "name": sys.argv[2], "n": int(sys.argv[3]),
        "pass": False, "bench_exit": int(sys.argv[4]), "failure": f"spmmc-gpu-bench exit {sys.argv[4]}: {sys.argv[5]}"}))' \
        "$label@$n" "$label" "$n" "$rc" "$(tail -n1 "$dir/bench-n$n.log")" >>"$results"
    fi
    say "[$label@$n] $(tail -n1 "$dir/bench-n$n.log")"
  done
done <"$to_build"

# --- 3. the tables --------------------------------------------------------------------------------
table
