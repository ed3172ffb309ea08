#!/usr/bin/env bash
# Runs a batch-size study (scripts/batch-study.sh) on a lent GPU machine in ONE call, and leaves
# everything it measured in two files under $OUT: the GPU tool returns only a few files, and nothing a
# call leaves in the working tree survives to the next one (a session lost its per-layer tables that
# way). Expects what scripts/pack-for-gpu.sh CASES carried: .gpu-bin (spmmc without verify,
# spmmc-gpu-bench, libfmt, libxgboost) and .gpu-pack/data.tar.xz (the matrices the cases name).
#
# usage: scripts/studies/batch-on-gpu.sh CASES [--budget S] [batch-study options]
#   CASES     batch-study's case file (LABEL|MATRIX|N|SPMMC COMPILE FLAGS[|NVCC FLAGS])
#   --budget  seconds the study may take (default 560): batch-study is stopped then (its running nvcc or
#             bench may outlive it briefly), and what it ran is still tabled (the rest: a next call with
#             --resume-from, or with --resume where the machine still holds the work folder)
#   --resume-from TAR  an earlier call's NAME.tar.xz (carried, e.g. under .gpu-pack/; relative to the
#             repository root): its results.jsonl is unpacked into the work folder .gpu-batch-NAME and
#             batch-study runs with --resume, so only the (case, n) without a result are built and run
#   the other options go to batch-study unchanged (--run-n LIST, --runs N, --jobs J, --resume, --part K/P)
# Writes to $OUT (default /tmp/out), NAME the case file's name without .cases (so that several studies
# can share a call; with --part K/P, NAME-pK, each part in a work folder of its own): NAME.md
# (batch-study's tables, its summary line, and the end of the run's log) and NAME.tar.xz (results.jsonl,
# each case's bench logs, reports and nvcc times).
# Exit: batch-study's (124 where the budget stopped it), or 64 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
cases='' budget=560 pass=() part='' run_n=() resume_from=''
while [ $# -gt 0 ]; do
  case $1 in
    --budget) [ $# -ge 2 ] || usage; budget=$2; shift ;;
    --run-n) [ $# -ge 2 ] || usage; run_n=("$1" "$2"); shift ;;
    --runs|--jobs) [ $# -ge 2 ] || usage; pass+=("$1" "$2"); shift ;;
    --part) [ $# -ge 2 ] || usage; part=$2; shift ;;
    --resume-from) [ $# -ge 2 ] || usage; resume_from=$2; shift ;;
    --resume) pass+=("$1") ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) [ -z "$cases" ] || usage; cases=$1 ;;
  esac
  shift
done
[ -f "$cases" ] || usage
[[ $budget =~ ^[1-9][0-9]*$ ]] || usage
slice=()  # batch-study's --part K/P, where given
[ -z "$part" ] || slice=(--part "$part")
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
. scripts/studies/gpu-machine.sh
name=$(basename "$cases" .cases)${part:+-p${part%%/*}}
work=.gpu-batch-$name
study=$OUT/$name.md log=$OUT/$name.log gpu=$OUT/$name.gpu
if [ -n "$resume_from" ]; then  # the earlier call's results, then only what is left
  [ -f "$resume_from" ] || { echo "batch-on-gpu: no $resume_from" >&2; exit 64; }
  mkdir -p "$work" && tar xJf "$resume_from" -C "$work" results.jsonl || exit 64
  pass+=(--resume)
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$gpu" 2>&1
timeout "$budget" scripts/batch-study.sh "$cases" --out "$work" "${run_n[@]}" "${pass[@]}" "${slice[@]}" >"$study" 2>"$log"
rc=$?
if [ $rc -eq 124 ]; then  # stopped: table what ran (at the n asked: the others are not counted as not run)
  scripts/batch-study.sh "$cases" --out "$work" "${run_n[@]}" "${slice[@]}" --table-only >"$study" 2>>"$log"
fi
summary=$(tail -n 1 "$study")
{ echo; echo "GPU: $(cat "$gpu")"; echo "batch-study exit: $rc"; echo '```'; tail -n 40 "$log"; echo '```'; } >>"$study"
(cd "$work" && tar cJf "$OUT/$name.tar.xz" -- results.jsonl ./*/bench-n*.log ./*/bench-n*.rc ./*/*.json \
  ./*/nvcc.seconds ./*/nvcc.rc ./*/nvcc.log ./*/emit.seconds ./*/emit.log 2>/dev/null)
rm -f "$gpu" "$log"
echo "$summary"
exit $rc
