#!/usr/bin/env bash
# Collects the ranker's tuning database on the GPU at hand (issue 12, docs/design/ranker.md): the
# three parts the H100 model was trained and measured on and the real-size training parts of issue
# 25, each collected by `spmmc collect`, resumable (a problem whose file exists is skipped) and
# bounded by its own time budget.
#
#   DB/heldout-dlmc   the proxy study's DLMC and MobileNet layers (scripts/studies/proxy-study.cases)
#                     at n = 4096: the held-out set, never trained on
#   DB/heldout-gen    --generate HELDOUT problems of seed 1001: generated, held out
#   DB/gen-sSEED      --generate 1000 problems of --seed SEED (at most --max-nnz non-zeros): training
#   DB/dlmc           the shared layers at their usual n (scripts/studies/all-layers.cases) whose
#                     matrix is not in the held-out set: training at real sizes (issue 25), --sample
#                     candidates per problem (default 12 for this part) and up to --max-nnz 400000
#   DB/graphs         generated graphs at n = 32, 64, 128, 256 (issue 25): training, --sample candidates
#                     per problem (default 12 for this part), matrices of at most --max-nnz non-zeros
#                     (default 400000 for this part). The matrices, written by `spmmc gen` (seed 0,
#                     values normal) into DB/graphs-matrices (deleted and regenerated on every run:
#                     the same bytes each time), and their ids:
#                       rmat-sS-fF-a57.mtx  R-MAT, --scale S in 10..14, --edge-factor F in 4, 8, 16,
#                                           --abcd 0.57,0.19,0.19,0.05 (the default)
#                       rmat-sS-fF-a75.mtx  the same with the more skewed --abcd 0.75,0.1,0.1,0.05
#                       banded-nN-wW-sX.mtx banded N x N, N in 2048, 4096, 8192, 16384, --bandwidth W
#                                           in 2, 8, 32, --sparsity X in 0, 0.5
#                     54 matrices, those above --max-nnz left out (at 400000: banded-n8192-w32-s0,
#                     banded-n16384-w32-s0 and -s0.5; 51 left, 204 problems)
#
# usage: scripts/ranker-collect.sh --db DB [--part heldout-dlmc|heldout-gen|gen|dlmc|graphs]... [--seed S]
#                                  [--budget S] [--max-nnz N] [--heldout K] [--sample K] [--jobs J]
#                                  [--target T] [--only generic|balanced]
#   --part        the parts to collect, in the order given (default: heldout-dlmc, heldout-gen, gen)
#   --seed        the training part's seed (default 2); a new seed draws new problems
#   --budget      seconds per part (default 300); a part stops before its next problem once spent
#   --max-nnz     the generated problems' limit of non-zeros (default 12000; graphs: 400000)
#   --heldout     generated held-out problems (default 12)
#   --sample      candidates measured per problem besides the heuristic's pick (spmmc collect
#                 --sample; default: all, 12 for the dlmc and graphs parts)
#   --jobs        compile jobs (default: every core)
#   --target      the target description of this GPU (default: spmmc's, h100)
#   --only FAMILY add one family's kernels (`spmmc collect --families FAMILY`: generic, one line per
#                 problem; balanced, three: 1, 2 and 4 pieces per warp) to a part collected before that
#                 family was: into DB/PART-FAMILY, for the problems DB/PART holds (their matrix and n
#                 read from its files; the generated parts by count and the graphs part by its
#                 generator: both are deterministic); train-ranker joins each problem's lines.
#                 --generic-only is --only generic
# Environment: SPMMC (default build/spmmc), SPMMC_SHARED_DATA (default ../shared/data).
# Exit: 0 collected (or nothing left); 69 no usable GPU; 1 a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "ranker-collect: $*" >&2; }
[ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] && { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; }
spmmc=$(realpath "${SPMMC:-build/spmmc}")
data=${SPMMC_SHARED_DATA:-../shared/data}
db="" seed=2 budget=300 max_nnz="" heldout=12 jobs=$(nproc) parts=() target=() sample="" only=""
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
    --generic-only) only=generic; shift ;;
    --only) only=${2:-}; shift 2 ;;
    *) say "unknown argument '$1' (see --help)"; exit 64 ;;
  esac
done
[ -n "$db" ] || { say "give the database folder: --db DB"; exit 64; }
case $only in ''|generic|balanced) ;; *) say "--only expects generic or balanced, got '$only'"; exit 64 ;; esac
[ ${#parts[@]} -gt 0 ] || parts=(heldout-dlmc heldout-gen gen)
[ -z "$max_nnz" ] || [[ $max_nnz =~ ^[1-9][0-9]*$ ]] || { say "--max-nnz expects a positive integer, got '$max_nnz'"; exit 64; }
mkdir -p "$db"
db=$(realpath "$db")
common=(--timing-runs 10 --jobs "$jobs" --budget "$budget" "${target[@]}")
# spmmc runs in the background and is waited for, so that a TERM (timeout) stops it too: the problem
# in flight is lost, those written stay (each file is renamed into place whole).
child=""
trap '[ -z "$child" ] || kill "$child" 2>/dev/null; exit 143' TERM INT
collect() { "$spmmc" collect "$@" & child=$!; wait "$child"; }

# --only: the problems of DB/PART as "n|matrix" lines, and their count.
collected_problems() {
  local f
  for f in "$db/$1"/*.jsonl; do
    [ -e "$f" ] && sed -n '1s/^{"format":"spmmc.collect\/1","matrix":"\([^"]*\)","n":\([0-9]*\),.*/\2|\1/p' "$f"
  done
}
# collect_family PART: the --only family's kernels of the file problems DB/PART holds, one collect per
# n, run in the data folder (the ids are relative to it).
collect_family() {
  local part=$1 problems n
  problems=$(collected_problems "$part")
  [ -n "$problems" ] || { say "$part: no problems in $db/$part to add the $only family to"; return 0; }
  for n in $(echo "$problems" | cut -d'|' -f1 | sort -un); do
    mapfile -t files < <(echo "$problems" | awk -F'|' -v n="$n" '$1 == n {print $2}')
    cd "$data" && collect --out "$db/$part-$only" "${files[@]}" --n "$n" --families "$only" --max-nnz 400000 \
      "${common[@]}" && cd "$OLDPWD" || return $?
  done
}
count_of() { ls "$db/$1" 2>/dev/null | grep -c '\.jsonl$' || true; }

# The graphs part's matrices (listed in the help above): make_graphs DIR LIMIT deletes DIR, writes
# every matrix of at most LIMIT non-zeros into it and names them in graph_files (the others are
# removed and named in graph_dropped).
gen_graph() {  # NAME GEN-ARGS...
  local name=$1 nnz
  shift
  "$spmmc" gen "$@" --seed 0 --values normal --quiet -o "$graph_dir/$name" || return
  nnz=$(awk '!/^%/ {print $3; exit}' "$graph_dir/$name") && [ -n "$nnz" ] || return
  if [ "$nnz" -le "$graph_limit" ]; then graph_files+=("$name"); else rm -- "$graph_dir/$name"; graph_dropped+=("$name"); fi
}
make_graphs() {
  local s f n w x
  graph_dir=$1 graph_limit=$2
  graph_files=()
  graph_dropped=()
  rm -rf -- "$graph_dir" && mkdir -p -- "$graph_dir" || return
  for s in 10 11 12 13 14; do
    for f in 4 8 16; do
      gen_graph "rmat-s$s-f$f-a57.mtx" rmat --scale "$s" --edge-factor "$f" --abcd 0.57,0.19,0.19,0.05 || return
      gen_graph "rmat-s$s-f$f-a75.mtx" rmat --scale "$s" --edge-factor "$f" --abcd 0.75,0.1,0.1,0.05 || return
    done
  done
  for n in 2048 4096 8192 16384; do
    for w in 2 8 32; do
      for x in 0 0.5; do
        gen_graph "banded-n$n-w$w-s$x.mtx" banded --rows "$n" --cols "$n" --bandwidth "$w" --sparsity "$x" || return
      done
    done
  done
}

for part in "${parts[@]}"; do
  if [ -n "$only" ]; then
    case $part in
      heldout-dlmc|dlmc) collect_family "$part" ;;
      heldout-gen)
        collect --out "$db/heldout-gen-$only" --generate "$(count_of heldout-gen)" --seed 1001 \
          --max-nnz "${max_nnz:-12000}" --families "$only" "${common[@]}" ;;
      gen)
        collect --out "$db/gen-s$seed-$only" --generate "$(count_of "gen-s$seed")" --seed "$seed" \
          --max-nnz "${max_nnz:-12000}" --families "$only" "${common[@]}" ;;
      graphs)
        [ "$only" = balanced ] || { say "--only generic: the graphs part is collected with the generic family already"; exit 64; }
        make_graphs "$db/graphs-matrices" "${max_nnz:-400000}" ||
          { say "generating the graphs part's matrices failed"; exit 1; }
        cd "$graph_dir" && collect --out "$db/graphs-$only" "${graph_files[@]}" --n 32,64,128,256 \
          --max-nnz "$graph_limit" --families "$only" "${common[@]}" && cd "$OLDPWD" ;;
      *) say "--only: unknown part '$part' (heldout-dlmc, heldout-gen, gen, dlmc or graphs)"; exit 64 ;;
    esac || { rc=$?; [ $rc -eq 69 ] && exit 69; say "part $part ($only) failed (exit $rc)"; exit 1; }
    continue
  fi
  case $part in
    heldout-dlmc)
      # Matrix ids relative to the data folder ("dlmc/rn50/..."), as the database names them.
      [ -d "$data" ] || { say "no $data: skipping the held-out DLMC layers"; continue; }
      mapfile -t files < <(grep -v '^#' scripts/studies/proxy-study.cases | cut -d'|' -f2 | sed -n 's|^\.\./shared/data/||p')
      cd "$data" && collect --out "$db/heldout-dlmc" "${files[@]}" --n 4096 "${common[@]}" --sample "${sample:-0}" &&
        cd "$OLDPWD" ;;
    heldout-gen)
      collect --out "$db/heldout-gen" --generate "$heldout" --seed 1001 --max-nnz "${max_nnz:-12000}" "${common[@]}" \
        --sample "${sample:-0}" ;;
    gen)
      collect --out "$db/gen-s$seed" --generate 1000 --seed "$seed" --max-nnz "${max_nnz:-12000}" "${common[@]}" \
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
    graphs)
      # Ids are the bare file names ("rmat-s12-f8-a57.mtx"): collect runs inside the matrices' folder.
      make_graphs "$db/graphs-matrices" "${max_nnz:-400000}" ||
        { say "generating the graphs part's matrices failed"; exit 1; }
      dropped=${graph_dropped[*]:+; above --max-nnz $graph_limit, left out: ${graph_dropped[*]}}
      say "graphs: ${#graph_files[@]} matrices in $graph_dir, at n = 32, 64, 128, 256$dropped"
      cd "$graph_dir" && collect --out "$db/graphs" "${graph_files[@]}" --n 32,64,128,256 --max-nnz "$graph_limit" \
        "${common[@]}" --sample "${sample:-12}" && cd "$OLDPWD" ;;
    *) say "unknown part '$part' (heldout-dlmc, heldout-gen, gen, dlmc or graphs)"; exit 64 ;;
  esac || { rc=$?; [ $rc -eq 69 ] && exit 69; say "part $part failed (exit $rc)"; exit 1; }
done
