#!/usr/bin/env bash
# Nsight Compute profiles of emitted kernels beside cuSPARSE's algorithms and cuBLAS SGEMM in the same
# harness (scripts/profile-kernel.sh --with-peers: every kernel launched, in order, replayed with caches
# flushed). For each line of CASES (batch-study's format: LABEL|MATRIX|N|SPMMC COMPILE FLAGS; the nvcc flags
# field is ignored) the file is emitted with .gpu-bin/spmmc and profiled at --n. On a lent GPU machine after
# scripts/pack-for-gpu.sh CASES; writes $OUT/PREFIX-LABEL.md (the table) and $OUT/PREFIX-LABEL-details.txt
# (ncu's details page: memory tables, shared memory, occupancy limits).
# usage: scripts/studies/peer-profile.sh CASES [--n N] [--launches L] [--prefix P] [LABEL ...]
#   --n         columns of B (default 512)
#   --launches  kernels profiled in launch order (default 24: spmmc's, then cuSPARSE's DEFAULT, ALG2, ALG1
#               and ALG3 with their helper kernels)
#   --prefix    the output files' prefix (default: CASES' name without .cases)
#   LABEL       only these lines (default all)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
cases='' n=512 launches=24 prefix='' want=' '
while [ $# -gt 0 ]; do
  case $1 in
    --n) [ $# -ge 2 ] || usage; n=$2; shift ;;
    --launches) [ $# -ge 2 ] || usage; launches=$2; shift ;;
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift ;;
    -h|--help|-*) usage ;;
    *) if [ -z "$cases" ]; then cases=$1; else want+="$1 "; fi ;;
  esac
  shift
done
[ -f "$cases" ] || usage
prefix=${prefix:-$(basename "$cases" .cases)}
. scripts/studies/gpu-machine.sh
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" .gpu-profile
sections="SpeedOfLight LaunchStats Occupancy MemoryWorkloadAnalysis WarpStateStats InstructionStats"
while IFS='|' read -r label matrix compiled flags _; do
  case $label in ''|'#'*) continue ;; esac
  [ "$want" = ' ' ] || [[ $want == *" $label "* ]] || continue
  # shellcheck disable=SC2086  # flags: options and their values, split into words on purpose
  .gpu-bin/spmmc compile "$matrix" --n "$compiled" $flags --name "$label" -o ".gpu-profile/$label" --quiet \
    </dev/null || { echo "[$label] spmmc compile failed" >&2; continue; }
  read_flags=$(grep -oE -- '--(seed|values|threshold|tensor|dtype) [^ ]+' <<<"$flags" | tr '\n' ' ')
  # shellcheck disable=SC2086
  scripts/profile-kernel.sh ".gpu-profile/$label/$label.cu" "$matrix" "$n" $read_flags --with-peers \
    --kernel-regex . --launch-skip 0 --launch-count "$launches" --sections "$sections" \
    --out ".gpu-profile/p-$label" </dev/null &&
    cp ".gpu-profile/p-$label/summary.md" "$OUT/$prefix-$label.md" &&
    cp ".gpu-profile/p-$label/details.txt" "$OUT/$prefix-$label-details.txt"
done <"$cases"
