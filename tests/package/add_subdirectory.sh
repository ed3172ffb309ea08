#!/usr/bin/env bash
# In-tree use through add_subdirectory: configures a parent project that adds the spmmc source tree
# as a subdirectory and calls spmmc_add_spmm, then checks that the generated build runs the spmmc
# built in the subdirectory, with the depfile. Configure only: building spmmc again would take
# minutes; the build of an in-tree consumer is covered by examples/inference in spmmc's own build.
# usage: add_subdirectory.sh SOURCE_DIR WORK_DIR NVCC GENERATOR
set -euo pipefail
source=$1 work=$2 nvcc=$3 generator=$4
fail() { echo "add_subdirectory test: FAIL: $*" >&2; exit 1; }

rm -rf "$work"; mkdir -p "$work"
cat >"$work/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
set(CMAKE_CUDA_ARCHITECTURES 90)
project(parent LANGUAGES CXX CUDA)
set(SPMMC_BUILD_TESTS OFF CACHE BOOL "")
set(SPMMC_BUILD_EXAMPLES OFF CACHE BOOL "")
add_subdirectory("$source" third_party/spmmc)
add_executable(app main.cu)
spmmc_add_spmm(app WEIGHTS layer.mtx NAME layer N 64 TILE 8x64)
CMAKE
printf '%s\n' '#include "layer.h"' 'int main() { return layer_info()->m > 0 ? 0 : 1; }' >"$work/main.cu"
touch "$work/layer.mtx"
cmake -S "$work" -B "$work/build" -G "$generator" -DCMAKE_CUDA_COMPILER="$nvcc" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configure failed"; }
rules=$(cat "$work/build/build.ninja" "$work/build/CMakeFiles/app.dir/build.make" 2>/dev/null || true)
expected="$work/build/third_party/spmmc/spmmc compile $work/layer.mtx --n 64 --name layer -o $work/build/spmmc_kernels"
grep -qF -- "$expected" <<<"$rules" || fail "no rule runs '$expected'"
grep -qF -- "--depfile $work/build/spmmc_kernels/layer.d" <<<"$rules" || fail "the rule has no --depfile"
grep -qF -- "--tile 8x64" <<<"$rules" || fail "the rule has no --tile 8x64"
echo "add_subdirectory test: PASS: the parent's rule runs the spmmc built in third_party/spmmc"
