#!/usr/bin/env bash
# Quick start, step 2: installs what is needed, builds spmmc and its tests, runs the tests.
# CTest's summary line is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)"
