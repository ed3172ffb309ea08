#!/usr/bin/env bash
# Runs a kernel study (scripts/kernel-study.sh) on a lent GPU machine in ONE call: nothing a call
# leaves in the working tree survives to the next one, so emission, the nvcc builds and the
# timing must share a call. Expects what scripts/pack-for-gpu.sh CASES carried: .gpu-bin (spmmc
# without verify, spmmc-gpu-bench, libfmt) and .gpu-pack/data.tar.xz (the matrices the cases name).
#
# usage: scripts/studies/run-on-gpu.sh CASES [--budget S] [--emit-budget E] [--runs N] [--jobs J]
#   CASES      kernel-study case file (LABEL|MATRIX|N|FLAGS)
#   --budget   seconds the whole call may take (default 570): builds stop at the budget less the
#              time kept for timing (20 s plus 3 s per case); builds still running then are killed
#   --emit-budget  seconds emission may take (default: half the budget; tuned cases, --tune proxy
#              or exhaustive, spend their tuning there): cases not emitted by then are skipped
#   --runs     timed runs per kernel (default 20)
#   --jobs     parallel nvcc builds (default: the cores)
# Writes to $OUT (default /tmp/out): STUDY.md (the table, summary last), emit.log, build.log,
# study.log, times.txt and dirs.tar.xz (results.jsonl and each case's nvcc times and report).
# Exit: kernel-study's, or 64 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
cases='' budget=570 emit_budget='' runs=20 jobs=$(nproc)
while [ $# -gt 0 ]; do
  case $1 in
    --budget) [ $# -ge 2 ] || usage; budget=$2; shift ;;
    --emit-budget) [ $# -ge 2 ] || usage; emit_budget=$2; shift ;;
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift ;;
    --jobs) [ $# -ge 2 ] || usage; jobs=$2; shift ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) [ -z "$cases" ] || usage; cases=$1 ;;
  esac
  shift
done
[ -f "$cases" ] || usage
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
. scripts/studies/gpu-machine.sh
work=.gpu-study-$(basename "$cases" .cases)
count=$(grep -cv '^\s*\(#\|$\)' "$cases")
keep=$(( 20 + 3 * count ))
# The deadline holds for the later steps too: they emit nothing after it (a case left unemitted stays so).
export SPMMC_EMIT_DEADLINE=$(( start + ${emit_budget:-$(( budget / 2 ))} ))
scripts/kernel-study.sh "$cases" --out "$work" --prepare-only >"$OUT/emit.log" 2>&1
echo "emitted at $(elapsed) s" >>"$OUT/times.txt"
left=$(( budget - keep - $(elapsed) ))
SPMMC_NVCC_TIMEOUT=$left timeout $(( left + 5 )) scripts/kernel-study.sh "$cases" --out "$work" --build-only --jobs "$jobs" \
  >"$OUT/build.log" 2>&1
echo "builds stopped at $(elapsed) s" >>"$OUT/times.txt"
# Time what was built; nothing more is built (a case without a build gets a 1-second nvcc limit).
SPMMC_NVCC_TIMEOUT=1 timeout $(( budget - $(elapsed) )) scripts/kernel-study.sh "$cases" --out "$work" --runs "$runs" \
  >"$OUT/STUDY.md" 2>"$OUT/study.log"
rc=$?
echo "timed at $(elapsed) s (rc $rc)" >>"$OUT/times.txt"
(cd "$work" && tar cJf "$OUT/dirs.tar.xz" -- results.jsonl ./*/nvcc.time.csv ./*/nvcc.log ./*/nvcc.rc ./*/nvcc.seconds ./*/*.json ./*/emit.seconds ./*/emit.failed 2>/dev/null)
cat "$OUT/times.txt"
tail -n 3 "$OUT/STUDY.md"
exit $rc
