#!/usr/bin/env bash
# CI check of the example consumer: configures examples/inference against the installed package
# (find_package(spmmc) with CMAKE_PREFIX_PATH=PREFIX), builds it, checks that a second build does
# nothing, and runs the program: exit 0 (PASS on a GPU) or 69 (no GPU here) is a success.
# usage: example_builds.sh PREFIX SOURCE_DIR WORK_DIR NVCC GENERATOR
set -euo pipefail
prefix=$1 source=$2 work=$3 nvcc=$4 generator=$5
fail() { echo "example test: FAIL: $*" >&2; exit 1; }

rm -rf "$work"
cmake -S "$source/examples/inference" -B "$work" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CUDA_COMPILER="$nvcc" >"$work.configure.log" 2>&1 ||
  { cat "$work.configure.log"; fail "configure failed"; }
found=$(grep '^spmmc_DIR:' "$work/CMakeCache.txt" | cut -d= -f2)
case $found in "$prefix"/*) ;; *) fail "find_package(spmmc) found '$found', not the package in $prefix" ;; esac
cmake --build "$work" -j 2 || fail "build failed"
[ -x "$work/mlp" ] || fail "no $work/mlp"
for f in fc1.cu fc1.h fc1.json fc1.nvcc-options fc2.cu fc2.h fc2.json fc2.nvcc-options; do [ -f "$work/spmmc_kernels/$f" ] || fail "no $work/spmmc_kernels/$f"; done
# Each kernel is built with the options spmmc wrote beside it (-Xptxas -O1 --split-compile 0 for the unrolled family).
for k in fc1 fc2; do
  grep -q -- "--options-file=[^\"]*/spmmc_kernels/$k.nvcc-options" "$work/compile_commands.json" ||
    fail "$k.cu is not built with --options-file=.../$k.nvcc-options (compile_commands.json)"
done
again=$(cmake --build "$work" -j 2 2>&1)
if grep -q 'spmmc compile' <<<"$again"; then fail "a second build ran spmmc again: $again"; fi

set +e
"$work/mlp"; rc=$?
set -e
case $rc in
  0) echo "example test: PASS: built against $prefix and ran on the GPU" ;;
  69) echo "example test: PASS: built against $prefix (not run: no GPU here)" ;;
  *) fail "mlp exited $rc" ;;
esac
