#!/usr/bin/env bash
# Quick start, step 1: installs what is needed, builds spmmc, generates a pruned layer whose
# rows come from a few column patterns, inspects it, and plans its tile space for n = 4096.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
mkdir -p demo
./build/spmmc gen patterns --rows 512 --cols 512 --sparsity 0.9 --patterns 16 --seed 1 -o demo/layer0.mtx
./build/spmmc inspect demo/layer0.mtx
./build/spmmc plan demo/layer0.mtx --n 4096
