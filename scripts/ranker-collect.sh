#!/usr/bin/env bash
# Collects the ranker's tuning database on the GPU at hand (issue 12, docs/design/ranker.md): the
# three parts the H100 model was trained and measured on, each one `spmmc collect` run, resumable
# (a problem whose file exists is skipped) and bounded by its own time budget.
#
#   DB/heldout-dlmc   the proxy study's DLMC and MobileNet layers (scripts/studies/proxy-study.cases)
#                     at n = 4096: the held-out set, never trained on
#   DB/heldout-gen    --generate HELDOUT problems of seed 1001: generated, held out
#   DB/gen-sSEED      --generate 1000 problems of --seed SEED (at most --max-nnz non-zeros): training
#
# usage: scripts/ranker-collect.sh --db DB [--part heldout-dlmc|heldout-gen|gen]... [--seed S]
#                                  [--budget S] [--max-nnz N] [--heldout K] [--jobs J] [--target T]
#   --part        the parts to collect, in the order given (default: all three)
#   --seed        the training part's seed (default 2); a new seed draws new problems
#   --budget      seconds per part (default 300); a part stops before its next problem once spent
#   --max-nnz     the generated problems' limit of non-zeros (default 12000)
#   --heldout     generated held-out problems (default 12)
#   --jobs        compile jobs (default: every core)
#   --target      the target description of this GPU (default: spmmc's, h100)
# Environment: SPMMC (default build/spmmc), SPMMC_SHARED_DATA (default ../shared/data).
# Exit: 0 collected (or nothing left); 69 no usable GPU; 1 a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "ranker-collect: $*" >&2; }
[ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] && { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; }
spmmc=$(realpath "${SPMMC:-build/spmmc}")
data=${SPMMC_SHARED_DATA:-../shared/data}
db="" seed=2 budget=300 max_nnz=12000 heldout=12 jobs=$(nproc) parts=() target=()
while [ $# -gt 0 ]; do
  case $1 in
    --db) db=$2; shift 2 ;;
    --part) parts+=("$2"); shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --max-nnz) max_nnz=$2; shift 2 ;;
    --heldout) heldout=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --target) target=(--target "$2"); shift 2 ;;
    *) say "unknown argument '$1' (see --help)"; exit 64 ;;
  esac
done
[ -n "$db" ] || { say "give the database folder: --db DB"; exit 64; }
[ ${#parts[@]} -gt 0 ] || parts=(heldout-dlmc heldout-gen gen)
mkdir -p "$db"
db=$(realpath "$db")
common=(--timing-runs 10 --jobs "$jobs" --budget "$budget" "${target[@]}")
# spmmc runs in the background and is waited for, so that a TERM (timeout) stops it too: the problem
# in flight is lost, those written stay (each file is renamed into place whole).
child=""
trap '[ -z "$child" ] || kill "$child" 2>/dev/null; exit 143' TERM INT
collect() { "$spmmc" collect "$@" & child=$!; wait "$child"; }

for part in "${parts[@]}"; do
  case $part in
    heldout-dlmc)
      # Matrix ids relative to the data folder ("dlmc/rn50/..."), as the database names them.
      [ -d "$data" ] || { say "no $data: skipping the held-out DLMC layers"; continue; }
      mapfile -t files < <(grep -v '^#' scripts/studies/proxy-study.cases | cut -d'|' -f2 | sed -n 's|^\.\./shared/data/||p')
      cd "$data" && collect --out "$db/heldout-dlmc" "${files[@]}" --n 4096 "${common[@]}" && cd "$OLDPWD" ;;
    heldout-gen)
      collect --out "$db/heldout-gen" --generate "$heldout" --seed 1001 --max-nnz "$max_nnz" "${common[@]}" ;;
    gen)
      collect --out "$db/gen-s$seed" --generate 1000 --seed "$seed" --max-nnz "$max_nnz" "${common[@]}" ;;
    *) say "unknown part '$part' (heldout-dlmc, heldout-gen or gen)"; exit 64 ;;
  esac || { rc=$?; [ $rc -eq 69 ] && exit 69; say "part $part failed (exit $rc)"; exit 1; }
done
