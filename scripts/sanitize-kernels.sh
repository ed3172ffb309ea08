#!/usr/bin/env bash
# Runs compute-sanitizer (memcheck, racecheck, initcheck) over emitted kernels: each case of a
# CASES file (as scripts/kernel-study.sh reads them) is emitted where spmmc runs (or taken from
# an earlier --prepare-only), built with nvcc -O3 and launched by spmmc-gpu-bench --spmmc-only
# (checked against float64, no baselines) under each tool. Prints one Markdown table and a
# summary line LAST.
#
# usage: scripts/sanitize-kernels.sh CASES [--out DIR] [--prepare-only] [--tools "memcheck ..."]
#   CASES            lines LABEL|MATRIX|N|SPMMC COMPILE FLAGS ('#' comments)
#   --out DIR        work folder (default $SPMMC_BUILD_DIR/sanitize)
#   --prepare-only   emit the kernels only (needs build/spmmc; no GPU)
#   --tools LIST     sanitizer tools (default "memcheck racecheck initcheck")
# Environment: SPMMC_BUILD_DIR (default build), NVCC, COMPUTE_SANITIZER (default compute-sanitizer
# on PATH, then /usr/local/cuda/bin/compute-sanitizer).
# Exit: 0 every tool ran clean on every case; 1 a finding or a failure; 64 usage; 69 no GPU or no
# compute-sanitizer.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
say() { echo "sanitize-kernels: $*" >&2; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }

cases='' out='' prepare_only=0 tools="memcheck racecheck initcheck"
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
    --prepare-only) prepare_only=1 ;;
    --tools) [ $# -ge 2 ] || usage; tools=$2; shift ;;
    -h|--help) usage ;;
    -*) say "unknown option '$1'"; usage ;;
    *) [ -z "$cases" ] || usage; cases=$1 ;;
  esac
  shift
done
[ -n "$cases" ] && [ -f "$cases" ] || { say "no CASES file"; usage; }
build=${SPMMC_BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
work=${out:-$build/sanitize}

bench=$build/spmmc-gpu-bench
sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
if [ $prepare_only -eq 0 ]; then
  [ -x "$sanitizer" ] || { say "no compute-sanitizer (set COMPUTE_SANITIZER)"; exit 69; }
  device=$("$bench" --device-info 2>&1); rc=$?
  [ $rc -eq 69 ] && { say "no GPU: $device"; exit 69; }
  [ $rc -eq 0 ] || { say "spmmc-gpu-bench --device-info failed: $device"; exit 1; }
fi

# Emitting and building are kernel-study's: the same CASES format, the same reuse of earlier
# kernels, the same nvcc line.
if [ $prepare_only -eq 1 ]; then scripts/kernel-study.sh "$cases" --out "$work" --prepare-only; exit; fi
scripts/kernel-study.sh "$cases" --out "$work" --build-only || exit 1
work=$(cd "$work" && pwd)

echo "### compute-sanitizer over emitted kernels ($device; $("$sanitizer" --version | tail -n1))"
echo
header="| case | n |"; rule="|---|--:|"
for t in $tools; do header+=" $t |"; rule+="---|"; done
echo "$header"; echo "$rule"
clean=0 dirty=0
while IFS='|' read -r label matrix n flags _; do
  case $label in ''|'#'*) continue ;; esac
  dir=$work/$label row="| $label | $n |"
  if [ ! -f "$dir/lib$label.so" ]; then
    for _ in $tools; do row+=" not built |"; done; echo "$row"; dirty=$((dirty + 1)); continue
  fi
  read_flags=$(grep -oE -- '--(seed|values|threshold|tensor|dtype) [^ ]+' <<<"$flags" | tr '\n' ' ')
  for t in $tools; do
    # shellcheck disable=SC2086
    "$sanitizer" --tool "$t" --error-exitcode 99 --print-limit 20 \
      "$bench" --matrix "$matrix" $read_flags --n "$n" --kernel "$dir/lib$label.so" --name "$label" \
      --spmmc-only --runs 1 --warmup 0 >"$dir/$t.log" 2>&1
    rc=$?
    errors=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$dir/$t.log" | grep -oE '[0-9]+' | tail -n1)
    if [ $rc -eq 0 ] && [ "${errors:-0}" = 0 ]; then row+=" clean |"; clean=$((clean + 1))
    else row+=" **exit $rc, ${errors:-?} errors** ($t.log) |"; dirty=$((dirty + 1)); fi
  done
  echo "$row"
done <"$cases"
echo
echo "sanitize-kernels: $clean clean, $dirty with findings or failures (tools: $tools); logs in $work"
[ $dirty -eq 0 ]
