#!/usr/bin/env bash
# Quick start, step 1: installs what is needed, builds spmmc, generates a pruned 256x256 layer
# whose rows come from a few column patterns, inspects it, compiles it into a CUDA kernel
# (demo/layer0.cu, .h, .json, .nvcc-options) and, where nvcc is present, checks that the kernel compiles.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
mkdir -p demo
./build/spmmc gen patterns --rows 256 --cols 256 --sparsity 0.9 --patterns 16 --seed 1 -o demo/layer0.mtx
./build/spmmc inspect demo/layer0.mtx
./build/spmmc compile demo/layer0.mtx --n 4096 --name layer0 -o demo
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ -x "$nvcc" ]; then
  start=$(date +%s%N)
  "$nvcc" -O3 -arch=sm_90 --options-file demo/layer0.nvcc-options -c demo/layer0.cu -o demo/layer0.o
  echo "demo: nvcc compiled demo/layer0.cu in $(( ($(date +%s%N) - start) / 1000000 )) ms"
else
  echo "demo: nvcc not found; skipped compiling demo/layer0.cu"
fi
