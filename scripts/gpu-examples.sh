#!/usr/bin/env bash
# The examples on a GPU machine: builds examples/inference against an installed spmmc and runs it
# (three batch sizes), then builds and runs the PyTorch example (examples/pytorch/run_example.py).
# Prints each example's output, a Markdown table, and a summary line LAST.
#
# usage: scripts/gpu-examples.sh [--prepare] [--prefix DIR] [--work DIR]
#   --prepare      on the build machine: install build/ into DIR with the shared libraries a bare
#                  machine lacks (libfmt), so DIR can be carried to the GPU machine; then exit
#   --prefix DIR   the spmmc install tree (default .gpu-install; made from build/ when missing and
#                  build/spmmc exists)
#   --work DIR     work folder (default build-gpu-examples)
# On the GPU machine only nvcc, CMake, a C++ compiler and (for the PyTorch part) PyTorch are needed.
# Exit: 0 everything passed (the PyTorch part may be skipped without PyTorch); 1 something failed;
# 69 no GPU (after building what can be built); 64 usage.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$(pwd)
say() { echo "gpu-examples: $*" >&2; }
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }

prepare=0 prefix=.gpu-install work=build-gpu-examples
while [ $# -gt 0 ]; do
  case $1 in
    --prepare) prepare=1 ;;
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift ;;
    --work) [ $# -ge 2 ] || usage; work=$2; shift ;;
    -h|--help) usage ;;
    *) say "unknown argument '$1'"; usage ;;
  esac
  shift
done
case $prefix in /*) ;; *) prefix=$root/$prefix ;; esac
case $work in /*) ;; *) work=$root/$work ;; esac

# --- the install tree -------------------------------------------------------------------------
make_prefix() {
  [ -x build/spmmc ] || { say "neither $prefix/bin/spmmc nor build/spmmc: run scripts/gpu-examples.sh --prepare on the build machine and carry $(basename "$prefix"), or run scripts/build.sh"; exit 1; }
  rm -rf "$prefix"
  cmake --install build --prefix "$prefix" >/dev/null || { say "cmake --install build failed"; exit 1; }
  # Carry libfmt (not on the GPU machine); the installed spmmc's RUNPATH is $ORIGIN/../lib.
  mkdir -p "$prefix/lib"
  ldd "$prefix/bin/spmmc" | awk '/libfmt/ { print $3 }' | while read -r lib; do cp -L "$lib" "$prefix/lib/"; done
  say "installed spmmc into $prefix ($(du -sh "$prefix" | cut -f1))"
}
if [ $prepare -eq 1 ]; then
  make_prefix
  echo "gpu-examples: prepared $prefix; on the GPU machine run scripts/gpu-examples.sh with $prefix carried"
  exit 0
fi
[ -x "$prefix/bin/spmmc" ] || make_prefix
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
spmmc=$prefix/bin/spmmc
"$spmmc" --version >/dev/null 2>&1 || { say "$spmmc does not run: $("$spmmc" --version 2>&1 | head -n1)"; exit 1; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { say "nvcc not found (set NVCC)"; exit 1; }
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
mkdir -p "$work"
rows=()  # "example|what|result|detail"
row() { rows+=("$1|$2|$3|$4"); }

# --- 1. examples/inference: find_package(spmmc) + spmmc_add_spmm, two layers, one binary ------
inference=$work/inference
say "building examples/inference against $prefix"
start=$(date +%s)
if cmake -S examples/inference -B "$inference" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_COMPILER="$nvcc" >"$work/inference-configure.log" 2>&1 &&
   cmake --build "$inference" -j "$(nproc)" >"$work/inference-build.log" 2>&1; then
  row inference build PASS "configure + build in $(( $(date +%s) - start )) s"
  for batch in 256 1 1000; do
    out=$("$inference/mlp" "$inference/weights/fc1.mtx" "$inference/weights/fc2.mtx" "$batch" 2>&1); rc=$?
    echo "$out"
    case $rc in
      0) row inference "run, batch $batch" PASS "$(echo "$out" | sed -n 's/.*max |error| \([^ ]*\) (tolerance \([^,]*\),.*/max error \1, tolerance \2/p')" ;;
      69) row inference "run, batch $batch" SKIPPED "no GPU" ;;
      *) row inference "run, batch $batch" FAIL "exit $rc: $(echo "$out" | tail -n1)" ;;
    esac
  done
else
  tail -n 20 "$work/inference-configure.log" "$work/inference-build.log" 2>/dev/null >&2
  row inference build FAIL "see $work/inference-*.log"
fi

# --- 2. examples/pytorch: a PyTorch custom operator around an emitted kernel ----------------
python=${PYTHON:-python3}
say "building and running examples/pytorch"
"$python" examples/pytorch/run_example.py --spmmc "$spmmc" --work "$work/pytorch" --nvcc "$nvcc" \
  >"$work/pytorch.out" 2>"$work/pytorch.err"; rc=$?
cat "$work/pytorch.err" >&2
cat "$work/pytorch.out"
last=$(tail -n1 "$work/pytorch.out")
case $rc in
  0) row pytorch "build + ${last#*PASS: }" PASS "$(grep -m1 'built ' "$work/pytorch.err" | sed 's/.*(\(.*\))$/\1/')" ;;
  69) row pytorch "build + run" SKIPPED "$last" ;;
  *) row pytorch "build + run" FAIL "exit $rc: $last" ;;
esac

# --- the table, then the summary as the last line ---------------------------------------------
device=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n1)
echo
echo "### spmmc GPU examples (${device:-no GPU found by nvidia-smi}; $("$spmmc" --version 2>&1 | head -n1))"
echo
echo "| example | what | result | detail |"
echo "|---|---|---|---|"
passed=0 failed=0 skipped=0
for r in "${rows[@]}"; do
  IFS='|' read -r example what result detail <<<"$r"
  echo "| $example | $what | $result | $detail |"
  case $result in PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;; *) skipped=$((skipped + 1)) ;; esac
done
echo
if [ $failed -gt 0 ]; then verdict=FAIL; elif [ $passed -eq 0 ] || grep -q '^inference|run.*|SKIPPED' <<<"$(printf '%s\n' "${rows[@]}")"; then verdict=SKIPPED; else verdict=PASS; fi
echo "gpu-examples: $verdict: $passed passed, $failed failed, $skipped skipped"
[ $failed -gt 0 ] && exit 1
[ "$verdict" = SKIPPED ] && exit 69
exit 0
