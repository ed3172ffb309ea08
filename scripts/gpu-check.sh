#!/usr/bin/env bash
# The GPU check: compile sets of matrices with spmmc, build each emitted kernel with nvcc (in
# parallel, timed), check and time each against a float64 reference, cuSPARSE, Sputnik and cuBLAS
# SGEMM (build/spmmc-gpu-bench), then print a Markdown table on stdout and a summary line LAST.
#
# usage: scripts/gpu-check.sh [awkward|dlmc|mobilenet|all] [DATA_DIR] [options]
#   DATA_DIR            the shared data (holding dlmc/ and weights/mobilenet/); default
#                       ${SPMMC_SHARED_DATA:-../shared/data}
#   --prepare-only      compile and build the kernels, run nothing (no GPU needed)
#   --fresh             recompile even where an earlier build of the same case is up to date
#   --filter REGEX      only the cases whose name matches REGEX (grep -E)
#   --runs N, --warmup N  timed / untimed runs per kernel (default 50 / 10)
#   --out DIR           work folder (default $SPMMC_BUILD_DIR/gpu-check)
# Environment: SPMMC_COMPILE_FLAGS (extra flags for every spmmc compile, e.g.
# "--max-compile-seconds 120"), SPMMC_BUILD_DIR (default build; built with scripts/build.sh when the binaries are
# missing), SPMMC_NVCC_TIMEOUT (seconds per nvcc compile, default 1800), NVCC (default nvcc,
# then /usr/local/cuda/bin/nvcc), SPMMC_SPUTNIK_DIR (the Sputnik sources to time as a peer: the
# folder holding sputnik/spmm/cuda_spmm.cu.cc, e.g. a copy of ../shared/thirdparty/sputnik in
# .gpu-data/sputnik; relative to the repository root; spmmc-gpu-bench is reconfigured with
# -DSPMMC_SPUTNIK_DIR and rebuilt when it was built from another or none. Unset: whatever the
# build has, by default ../shared/thirdparty/sputnik where that exists; without one, Sputnik is
# reported as skipped).
# Exit: 0 every case passed or was skipped by spmmc's size guard; 1 a case failed; 64 usage;
# 69 no GPU (nothing was run; with --prepare-only the GPU is not looked for).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)

say() { echo "gpu-check: $*" >&2; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }

set_name=all data_dir=${SPMMC_SHARED_DATA:-../shared/data} prepare_only=0 fresh=0 filter='' runs=50 warmup=10
out_dir='' positional=()
while [ $# -gt 0 ]; do
  case $1 in
    --prepare-only) prepare_only=1 ;;
    --fresh) fresh=1 ;;
    --filter) [ $# -ge 2 ] || usage; filter=$2; shift ;;
    --runs) [ $# -ge 2 ] || usage; runs=$2; shift ;;
    --warmup) [ $# -ge 2 ] || usage; warmup=$2; shift ;;
    --out) [ $# -ge 2 ] || usage; out_dir=$2; shift ;;
    -h|--help) usage ;;
    -*) say "unknown option '$1'"; usage ;;
    *) positional+=("$1") ;;
  esac
  shift
done
[ ${#positional[@]} -ge 1 ] && set_name=${positional[0]}
[ ${#positional[@]} -ge 2 ] && data_dir=${positional[1]}
[ ${#positional[@]} -le 2 ] || usage
case $set_name in awkward|dlmc|mobilenet|all) ;; *) say "unknown case set '$set_name'"; usage ;; esac
[[ $runs =~ ^[1-9][0-9]*$ && $warmup =~ ^[0-9]+$ ]] || { say "--runs and --warmup take integers"; exit 64; }

# --- binaries ---------------------------------------------------------------------------------
build=${SPMMC_BUILD_DIR:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
spmmc=$build/spmmc bench=$build/spmmc-gpu-bench
sputnik_dir=${SPMMC_SPUTNIK_DIR:-} cmake_sputnik=()
if [ -n "$sputnik_dir" ]; then
  case $sputnik_dir in /*) ;; *) sputnik_dir=$root/$sputnik_dir ;; esac
  if [ ! -f "$sputnik_dir/sputnik/spmm/cuda_spmm.cu.cc" ]; then
    say "SPMMC_SPUTNIK_DIR=$SPMMC_SPUTNIK_DIR holds no sputnik/spmm/cuda_spmm.cu.cc"; exit 64
  fi
  sputnik_dir=$(cd "$sputnik_dir" && pwd)
  cmake_sputnik=("-DSPMMC_SPUTNIK_DIR=$sputnik_dir")
fi
if [ ! -x "$spmmc" ] || [ ! -x "$bench" ]; then
  say "no prebuilt $spmmc and $bench: building"
  if [ "$build" = "$root/build" ]; then
    scripts/build.sh "${cmake_sputnik[@]}" >&2 || { say "build failed"; exit 1; }
  else
    { [ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${cmake_sputnik[@]}"; } >&2 &&
      cmake --build "$build" -j "$(nproc)" --target spmmc spmmc-gpu-bench >&2 || { say "build failed"; exit 1; }
  fi
fi
# Libraries carried beside a prebuilt build (e.g. libfmt.so.9 where the machine lacks it).
[ -d "$build/lib" ] && export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Sputnik: the bench says in --help what it was built with; rebuild it where SPMMC_SPUTNIK_DIR
# asks for another.
sputnik_built=$("$bench" --help 2>/dev/null | sed -n 's/^Sputnik: built from //p')
if [ -n "$sputnik_dir" ] && [ "$sputnik_built" != "$sputnik_dir" ]; then
  say "spmmc-gpu-bench has Sputnik from '${sputnik_built:-nowhere}', SPMMC_SPUTNIK_DIR says $sputnik_dir: rebuilding it"
  { cmake -S . -B "$build" "${cmake_sputnik[@]}" && cmake --build "$build" -j "$(nproc)" --target spmmc-gpu-bench; } >&2 ||
    { say "rebuilding spmmc-gpu-bench with Sputnik from $sputnik_dir failed"; exit 1; }
  sputnik_built=$("$bench" --help 2>/dev/null | sed -n 's/^Sputnik: built from //p')
  [ "$sputnik_built" = "$sputnik_dir" ] || { say "spmmc-gpu-bench still lacks Sputnik from $sputnik_dir"; exit 1; }
fi
if [ -n "$sputnik_built" ]; then say "Sputnik: built from $sputnik_built"
else say "Sputnik: not built into $bench (set SPMMC_SPUTNIK_DIR): reported as skipped"; fi
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { say "nvcc not found (set NVCC)"; exit 1; }

device="(not looked for: --prepare-only)"
if [ $prepare_only -eq 0 ]; then
  device=$("$bench" --device-info 2>&1); rc=$?
  if [ $rc -eq 69 ]; then say "skipped: no GPU on this machine ($device)"; exit 69; fi
  [ $rc -eq 0 ] || { say "spmmc-gpu-bench --device-info failed (exit $rc): $device"; exit 1; }
  say "device: $device"
fi

work=${out_dir:-$build/gpu-check}/$set_name
mkdir -p "$work/matrices" || exit 1
work=$(cd "$work" && pwd)
cases=$work/cases.txt status=$work/status.tsv results=$work/results.jsonl
: >"$cases"; : >"$status"; : >"$results"

# --- case lists: NAME|FILE|N|READ FLAGS|KIND (spmmc or handmade); '|' since IFS merges tabs ----
add_case() { printf '%s|%s|%s|%s|%s\n' "$1" "$2" "$3" "${4:-}" "${5:-spmmc}" >>"$cases"; }

gen() {  # gen FILE KIND ARGS...: a seeded matrix from spmmc gen
  local file=$work/matrices/$1; shift
  "$spmmc" gen "$@" -o "$file" >/dev/null || { say "spmmc gen $* failed"; exit 1; }
}

awkward_cases() {
  local m=$work/matrices
  gen u7x96.mtx uniform --rows 7 --cols 96 --sparsity 0.8 --seed 1
  gen u37x64.mtx uniform --rows 37 --cols 64 --sparsity 0.9 --seed 2
  gen u33x1.mtx uniform --rows 33 --cols 1 --sparsity 0.5 --seed 3
  gen u1x300.mtx uniform --rows 1 --cols 300 --sparsity 0.5 --seed 4
  gen p100x200.mtx patterns --rows 100 --cols 200 --sparsity 0.9 --patterns 5 --seed 5
  gen b66x70.mtx blocks --rows 66 --cols 70 --sparsity 0.8 --block 4x4 --seed 6
  gen mag129x65.mtx magnitude --rows 129 --cols 65 --sparsity 0.95 --seed 7
  gen rmat7.mtx rmat --scale 7 --edge-factor 4 --seed 8
  gen u5x8.mtx uniform --rows 5 --cols 8 --sparsity 0.5 --seed 9
  # Hand-written: empty rows and columns, one non-zero, a 1x1, a dense row among sparse ones.
  printf '%s\n' '%%MatrixMarket matrix coordinate real general' '% rows 0, 3, 5 and columns 1, 2, 7 empty' \
    '6 8 6' '2 1 0.5' '2 4 -1.25' '3 6 2' '5 1 -0.75' '5 5 1' '5 7 3.5' >"$m/empty_rows_cols.mtx"
  printf '%s\n' '%%MatrixMarket matrix coordinate real general' '5 5 1' '4 3 -2.5' >"$m/single_nnz.mtx"
  printf '%s\n' '%%MatrixMarket matrix coordinate real general' '1 1 1' '1 1 0.75' >"$m/one_by_one.mtx"
  {
    echo '%%MatrixMarket matrix coordinate real general'
    echo '% row 5 dense, a diagonal elsewhere'
    echo "16 64 $((64 + 15))"
    for r in $(seq 1 16); do
      if [ "$r" -eq 6 ]; then for c in $(seq 1 64); do echo "6 $c 0.$((c % 9 + 1))"; done
      else echo "$r $((r * 3)) -1.$r"; fi
    done
  } >"$m/dense_row.mtx"
  add_case handmade_3x4 "$root/tests/gpu/handmade_3x4.mtx" 77 "" handmade
  add_case m7_k96_n40 "$m/u7x96.mtx" 40        # M and n not multiples of any tile
  add_case m37_k64_n33 "$m/u37x64.mtx" 33
  add_case m37_k64_n1 "$m/u37x64.mtx" 1         # n = 1
  add_case k1_n64 "$m/u33x1.mtx" 64             # K = 1
  add_case m1_n100 "$m/u1x300.mtx" 100          # M = 1
  add_case patterns_n96 "$m/p100x200.mtx" 96
  add_case blocks_n130 "$m/b66x70.mtx" 130
  add_case magnitude_n257 "$m/mag129x65.mtx" 257
  add_case rmat7_n64 "$m/rmat7.mtx" 64
  add_case empty_rows_cols_n50 "$m/empty_rows_cols.mtx" 50
  add_case single_nnz_n32 "$m/single_nnz.mtx" 32
  add_case one_by_one_n3 "$m/one_by_one.mtx" 3
  add_case dense_row_n70 "$m/dense_row.mtx" 70
  add_case grid_y_loop "$m/u5x8.mtx" 4200001    # more column tiles than grid.y holds (N1 <= 64)
}

resolve_data() {  # $1: the subfolder wanted (dlmc, weights/mobilenet); prints its path or nothing
  local d
  for d in "$data_dir/$1" "$data_dir/data/$1" "$data_dir/shared/data/$1" "$data_dir"; do
    case $1 in
      dlmc) [ -d "$d/transformer" ] && { echo "$d"; return; } ;;
      *) [ -f "$d/sizes.txt" ] && { echo "$d"; return; } ;;
    esac
  done
}

dlmc_cases() {
  local dir; dir=$(resolve_data dlmc)
  if [ -z "$dir" ]; then say "no DLMC data under '$data_dir' (pass DATA_DIR or set SPMMC_SHARED_DATA): dlmc skipped"; return; fi
  local f sparsity layer
  for f in "$dir"/transformer/magnitude_pruning/*/*.smtx; do
    [ -f "$f" ] || continue
    sparsity=$(basename "$(dirname "$f")"); layer=$(basename "$f" .smtx)
    layer=${layer#body_encoder_layer_0_}; layer=${layer%_fully_connected}
    layer=${layer/self_attention_multihead_attention_/attn_}
    add_case "dlmc_s${sparsity/./}_${layer}" "$f" 4096
  done
}

mobilenet_cases() {
  local dir; dir=$(resolve_data weights/mobilenet)
  if [ -z "$dir" ]; then say "no MobileNet data under '$data_dir': mobilenet skipped"; return; fi
  local rows n file
  while read -r rows _ n file; do
    [[ $rows =~ ^[0-9]+$ ]] || continue   # the header
    [ -f "$dir/$file" ] || { say "mobilenet: $file listed in sizes.txt but absent"; continue; }
    add_case "mobilenet_${file%.npy}" "$dir/$file" $((32 * n))
  done <"$dir/sizes.txt"
}

case $set_name in
  awkward) awkward_cases ;;
  dlmc) dlmc_cases ;;
  mobilenet) mobilenet_cases ;;
  all) awkward_cases; dlmc_cases; mobilenet_cases ;;
esac
if [ -n "$filter" ]; then
  grep -E -- "^[^|]*($filter)" "$cases" >"$cases.kept"; mv "$cases.kept" "$cases"
fi
total=$(wc -l <"$cases")
[ "$total" -gt 0 ] || { say "no cases to run"; echo "gpu-check $set_name: no cases (data missing or --filter too narrow)"; exit 1; }
say "$total cases in $work"

note() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$status"; }  # NAME STATUS DETAIL

# --- 1. spmmc compile (one at a time: it may time proxies on the GPU) --------------------------
while IFS='|' read -r name file n read_flags kind; do
  dir=$work/$name; mkdir -p "$dir"
  if [ "$kind" = handmade ]; then
    cp "$root/tests/gpu/handmade_kernel.cu" "$dir/$name.cu"
    cp "$root/codegen/templates/spmmc_kernel_info.h" "$dir/"
    continue
  fi
  # shellcheck disable=SC2086,SC2206  # read_flags is a list of words
  # shellcheck disable=SC2086  # SPMMC_COMPILE_FLAGS: extra spmmc compile flags, word-split on purpose
  cmd=("$spmmc" compile "$file" --n "$n" --name "$name" -o "$dir" $read_flags ${SPMMC_COMPILE_FLAGS:-})
  stamp="${cmd[*]} | $("$spmmc" --version 2>&1)"
  stamp=${stamp//"$root"/.}  # relative: kernels prepared in one checkout are reused in a copy of it
  if [ $fresh -eq 0 ] && [ -f "$dir/lib$name.so" ] && [ "$(cat "$dir/compile.stamp" 2>/dev/null)" = "$stamp" ]; then
    say "[$name] compiled earlier: reused"; continue
  fi
  rm -f "$dir/lib$name.so" "$dir/compile.stamp"
  say "[$name] spmmc compile ($(basename "$file"), n=$n)"
  "${cmd[@]}" >"$dir/compile.log" 2>&1; rc=$?
  if [ $rc -ne 0 ]; then
    reason=$(grep -m1 -i 'error' "$dir/compile.log" || tail -n1 "$dir/compile.log")
    if grep -qiE 'size guard|limit' "$dir/compile.log"; then
      note "$name" SKIPPED "spmmc compile refused (exit $rc): $reason"; say "[$name] SKIPPED: $reason"
    else
      note "$name" FAIL "spmmc compile exit $rc: $reason"; say "[$name] FAIL: spmmc compile exit $rc: $reason"
    fi
    continue
  fi
  [ -f "$dir/$name.cu" ] || { note "$name" FAIL "spmmc compile wrote no $name.cu"; continue; }
  echo "$stamp" >"$dir/compile.stamp.pending"
done <"$cases"

# --- 2. nvcc, in parallel, each timed --------------------------------------------------------
nvcc_one() {  # nvcc_one DIR NAME
  local dir=$1 name=$2 t0 t1 rc options_file=()
  # The options spmmc wrote beside an emitted file (a hand-made kernel has none).
  [ -f "$dir/$name.nvcc-options" ] && options_file=(--options-file "$name.nvcc-options")
  t0=$(date +%s.%N)
  (cd "$dir" && timeout "${SPMMC_NVCC_TIMEOUT:-1800}" "$NVCC_BIN" -O3 -arch=sm_90 -shared -Xcompiler -fPIC \
      "${options_file[@]}" "$name.cu" -o "lib$name.so") >"$dir/nvcc.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "$rc" >"$dir/nvcc.rc"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' >"$dir/nvcc.seconds"
  echo "gpu-check: [$name] nvcc exit $rc in $(cat "$dir/nvcc.seconds") s" >&2
}
export -f nvcc_one
export NVCC_BIN=$nvcc
pending=()
while IFS='|' read -r name _ _ _ kind; do
  dir=$work/$name
  if [ "$kind" = handmade ] || [ -f "$dir/compile.stamp.pending" ]; then pending+=("$dir" "$name"); fi
done <"$cases"
if [ ${#pending[@]} -gt 0 ]; then
  say "nvcc: $(( ${#pending[@]} / 2 )) kernels, $(nproc) at a time"
  printf '%s\n' "${pending[@]}" | xargs -d '\n' -n 2 -P "$(nproc)" bash -c 'nvcc_one "$0" "$1"'
fi
while IFS='|' read -r name _ _ _ kind; do
  dir=$work/$name
  [ -f "$dir/nvcc.rc" ] || continue
  if [ "$(cat "$dir/nvcc.rc")" != 0 ]; then
    rc=$(cat "$dir/nvcc.rc")
    [ "$rc" = 124 ] && why="nvcc timed out after ${SPMMC_NVCC_TIMEOUT:-1800} s" ||
      why="nvcc exit $rc: $(grep -m1 -i error "$dir/nvcc.log")"
    grep -q "^$name	" "$status" || note "$name" FAIL "$why"
    rm -f "$dir/compile.stamp.pending"
  elif [ -f "$dir/compile.stamp.pending" ]; then
    mv "$dir/compile.stamp.pending" "$dir/compile.stamp"
  fi
done <"$cases"

if [ $prepare_only -eq 1 ]; then
  built=$(find "$work" -name 'lib*.so' | wc -l)
  say "prepared: $built kernels under $work (run again without --prepare-only on the GPU machine)"
  echo "gpu-check $set_name: prepared $built of $total kernels; $(grep -c FAIL "$status") failed, $(grep -c SKIPPED "$status") skipped"
  grep -q FAIL "$status" && exit 1
  exit 0
fi

# --- 3. spmmc-gpu-bench, one case at a time ---------------------------------------------------
while IFS='|' read -r name file n read_flags kind; do
  grep -q "^$name	" "$status" && continue
  dir=$work/$name
  [ -f "$dir/lib$name.so" ] || { note "$name" FAIL "no lib$name.so"; continue; }
  seconds=$(cat "$dir/nvcc.seconds" 2>/dev/null || echo 0)
  # shellcheck disable=SC2086
  line=$("$bench" --matrix "$file" $read_flags --n "$n" --kernel "$dir/lib$name.so" --name "$name" \
           --runs "$runs" --warmup "$warmup" --json "$results" --label "$name" --nvcc-seconds "$seconds" \
           2>"$dir/bench.log"); rc=$?
  say "[$name] ${line:-$(tail -n1 "$dir/bench.log")}"
  case $rc in
    0) note "$name" PASS "" ;;
    1) note "$name" FAIL "wrong result" ;;
    69) say "the GPU disappeared (exit 69)"; exit 69 ;;
    *) note "$name" FAIL "spmmc-gpu-bench exit $rc: $(tail -n1 "$dir/bench.log")" ;;
  esac
done <"$cases"

# --- 4. the table, then the summary as the last line ------------------------------------------
python3 - "$cases" "$status" "$results" "$set_name" "$device" <<'PY'
import json, math, sys
cases_path, status_path, results_path, set_name, device = sys.argv[1:6]
names = [l.split("|")[0] for l in open(cases_path).read().splitlines() if l]
status = {}
for l in open(status_path).read().splitlines():
    name, st, detail = (l.split("\t") + ["", ""])[:3]
    status[name] = (st, detail)
results = {}
for l in open(results_path).read().splitlines():
    if l.strip():
        r = json.loads(l)
        results[r["label"]] = r

def f(x, fmt):
    return "-" if x is None else format(x, fmt)

print(f"### spmmc GPU check: {set_name} ({device})\n")
# Sputnik: its time, or why it has none ("skipped" when not built in, "failed" when it refused
# the launch, "wrong" when excluded for a wrong result).
def sputnik_cell(r):
    if r.get("sputnik_ms") is not None:
        return f(r["sputnik_ms"], ".4f")
    st = r.get("sputnik_status") or ""
    for prefix, word in (("skipped", "skipped"), ("failed", "failed"), ("wrong", "wrong")):
        if st.startswith(prefix):
            return word
    return "-"

print("| matrix | M | K | n | nnz | tile | spmmc ms | cuSPARSE ms (alg) | Sputnik ms | SGEMM ms | × cuSPARSE "
      "| × Sputnik | × best peer | × SGEMM | TFLOP/s spmmc | TFLOP/s cuSPARSE | TFLOP/s Sputnik | error spmmc "
      "| error cuSPARSE | error Sputnik | nvcc s | result |")
print("|---|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
geo = {"spmmc_tflops": [], "cusparse_tflops": [], "sputnik_tflops": [], "best_peer_tflops": [],
       "speedup_vs_cusparse": [], "speedup_vs_sputnik": [], "speedup_vs_best_peer": [], "speedup_vs_sgemm": []}
sputnik_skips = set()
for name in names:
    st, detail = status.get(name, ("FAIL", "not run"))
    r = results.get(name)
    if r is None:
        print(f"| {name} | | | | | | - | - | - | - | - | - | - | - | - | - | - | - | - | - | - | {st}: {detail} |")
        continue
    for k in geo:
        if r.get(k):
            geo[k].append(r[k])
    if (r.get("sputnik_status") or "").startswith("skipped"):
        sputnik_skips.add(r["sputnik_status"])
    alg = f" ({r['cusparse_alg']})" if r.get("cusparse_alg") else ""
    result = st if st == "PASS" else f"{st}: {r.get('failure') or detail}"
    print(f"| {name} | {r['M']} | {r['K']} | {r['n']} | {r['nnz']} | {r['tile']} | {f(r['spmmc_ms'], '.4f')} "
          f"| {f(r['cusparse_ms'], '.4f')}{alg} | {sputnik_cell(r)} | {f(r['sgemm_ms'], '.4f')} "
          f"| {f(r['speedup_vs_cusparse'], '.2f')} | {f(r.get('speedup_vs_sputnik'), '.2f')} "
          f"| {f(r.get('speedup_vs_best_peer'), '.2f')} | {f(r['speedup_vs_sgemm'], '.2f')} "
          f"| {f(r['spmmc_tflops'], '.3g')} | {f(r['cusparse_tflops'], '.3g')} | {f(r.get('sputnik_tflops'), '.3g')} "
          f"| {f(r['spmmc_error'], '.1e')} | {f(r['cusparse_error'], '.1e')} | {f(r.get('sputnik_error'), '.1e')} "
          f"| {f(r['nvcc_seconds'], '.1f')} | {result} |")

def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None
print()
best_peer_text = ""
if geo["spmmc_tflops"]:
    print(f"geomean over {len(geo['spmmc_tflops'])} timed cases: spmmc {f(gm(geo['spmmc_tflops']), '.2f')} useful TFLOP/s, "
          f"cuSPARSE {f(gm(geo['cusparse_tflops']), '.2f')} ({len(geo['cusparse_tflops'])} cases), "
          f"Sputnik {f(gm(geo['sputnik_tflops']), '.2f')} ({len(geo['sputnik_tflops'])}), "
          f"best peer {f(gm(geo['best_peer_tflops']), '.2f')} ({len(geo['best_peer_tflops'])}); "
          f"speedup × cuSPARSE {f(gm(geo['speedup_vs_cusparse']), '.2f')}, × Sputnik {f(gm(geo['speedup_vs_sputnik']), '.2f')}, "
          f"× best peer {f(gm(geo['speedup_vs_best_peer']), '.2f')}, × SGEMM {f(gm(geo['speedup_vs_sgemm']), '.2f')}")
    if geo["speedup_vs_best_peer"]:
        best_peer_text = (f"; geomean × best peer (the faster of cuSPARSE and Sputnik) "
                          f"{gm(geo['speedup_vs_best_peer']):.2f} over {len(geo['speedup_vs_best_peer'])} cases")
for why in sorted(sputnik_skips):
    print(f"Sputnik {why}")
skipped = [(n, status[n][1]) for n in names if status.get(n, ("",))[0] == "SKIPPED"]
for n, why in skipped:
    print(f"skipped: {n}: {why}")
passed = sum(1 for n in names if status.get(n, ("",))[0] == "PASS")
failed = len(names) - passed - len(skipped)
print(f"gpu-check {set_name}: {'PASS' if failed == 0 else 'FAIL'}: {passed} passed, {failed} failed, "
      f"{len(skipped)} skipped, of {len(names)} cases{best_peer_text}")
sys.exit(1 if failed else 0)
PY
