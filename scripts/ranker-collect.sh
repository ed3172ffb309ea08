#!/usr/bin/env bash
# Collects the ranker's tuning database on the GPU at hand (issue 12, docs/design/ranker.md): the
# three parts the H100 model was trained and measured on, each one `spmmc collect` run, resumable
# (a problem whose file exists is skipped) and bounded by its own time budget.
#
#   DB/heldout-dlmc   the proxy study's DLMC and MobileNet layers (scripts/studies/proxy-study.cases)
#                     at n = 4096: the held-out set, never trained on
#   DB/heldout-gen    --generate HELDOUT problems of seed 1001: generated, held out
#   DB/gen-sSEED      --generate 1000 problems of --seed SEED (at most --max-nnz non-zeros): training
#   DB/dlmc           the shared layers at their usual n (scripts/studies/all-layers.cases) whose
#                     matrix is not in the held-out set: training at real sizes (issue 25), --sample
#                     candidates per problem (default 12 for this part) and up to --max-nnz 400000
#
# usage: scripts/ranker-collect.sh --db DB [--part heldout-dlmc|heldout-gen|gen|dlmc]... [--seed S]
#                                  [--budget S] [--max-nnz N] [--heldout K] [--sample K] [--jobs J]
#                                  [--target T]
#   --part        the parts to collect, in the order given (default: heldout-dlmc, heldout-gen, gen)
#   --seed        the training part's seed (default 2); a new seed draws new problems
#   --budget      seconds per part (default 300); a part stops before its next problem once spent
#   --max-nnz     the generated problems' limit of non-zeros (default 12000)
#   --heldout     generated held-out problems (default 12)
#   --sample      candidates measured per problem besides the heuristic's pick (spmmc collect
#                 --sample; default: all, 12 for the dlmc part)
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
db="" seed=2 budget=300 max_nnz=12000 heldout=12 jobs=$(nproc) parts=() target=() sample=""
while [ $# -gt 0 ]; do
  case $1 in
    --db) db=$2; shift 2 ;;
    --part) parts+=("$2"); shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --max-nnz) max_nnz=$2; shift 2 ;;
    --heldout) heldout=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
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
      cd "$data" && collect --out "$db/heldout-dlmc" "${files[@]}" --n 4096 "${common[@]}" --sample "${sample:-0}" &&
        cd "$OLDPWD" ;;
    heldout-gen)
      collect --out "$db/heldout-gen" --generate "$heldout" --seed 1001 --max-nnz "$max_nnz" "${common[@]}" \
        --sample "${sample:-0}" ;;
    gen)
      collect --out "$db/gen-s$seed" --generate 1000 --seed "$seed" --max-nnz "$max_nnz" "${common[@]}" \
        --sample "${sample:-0}" ;;
    dlmc)
      # Split by matrix source: no matrix of the held-out set, at any n. One collect per width, since
      # the layers' usual n differ (ResNet-50: 32 x the spatial size).
      [ -d "$data" ] || { say "no $data: skipping the shared layers"; continue; }
      held=$(grep -v '^#' scripts/studies/proxy-study.cases | cut -d'|' -f2 | sort -u)
      cases=$(grep -v '^#' scripts/studies/all-layers.cases | awk -F'|' 'NR==FNR {h[$0]; next} !($2 in h)' <(echo "$held") -)
      for n in $(echo "$cases" | cut -d'|' -f3 | sort -un); do
        mapfile -t files < <(echo "$cases" | awk -F'|' -v n="$n" '$3 == n {print $2}' | sed -n 's|^\.\./shared/data/||p')
        [ ${#files[@]} -gt 0 ] || continue
        cd "$data" && collect --out "$db/dlmc" "${files[@]}" --n "$n" --max-nnz 400000 "${common[@]}" \
          --sample "${sample:-12}" && cd "$OLDPWD" || exit $?
      done ;;
    *) say "unknown part '$part' (heldout-dlmc, heldout-gen, gen or dlmc)"; exit 64 ;;
  esac || { rc=$?; [ $rc -eq 69 ] && exit 69; say "part $part failed (exit $rc)"; exit 1; }
done
