#!/usr/bin/env bash
# Writes the R-MAT graphs of scripts/studies/graph-kernels.cases (its fourth field: `spmmc gen`
# arguments) where absent, so that kernel-study case files can name them (graph-defaults.cases,
# graph-balanced.cases). Needs spmmc in SPMMC_BUILD_DIR (default build).
# usage: scripts/studies/gen-rmat.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -v '^\s*\(#\|$\)' scripts/studies/graph-kernels.cases | while IFS='|' read -r _ matrix _ gen; do
  if [ -n "$gen" ] && [ ! -f "$matrix" ]; then
    mkdir -p "$(dirname "$matrix")"
    "${SPMMC_BUILD_DIR:-build}/spmmc" gen $gen -o "$matrix" --quiet
  fi
done
