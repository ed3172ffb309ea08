#!/usr/bin/env bash
# Study 10 (j): variants of the generic family's CSR kernel (tools/microbench/csr_variants.cu) on
# the layers of a case file (default scripts/studies/csr-variants.cases); with --study row_split,
# issue 27's rows split over warps (tools/microbench/row_split.cu; its cases:
# scripts/studies/row-split.cases); with --study graph_spmm, issue 28's kernels for graphs against
# cuSPARSE (tools/microbench/graph_spmm.cu; its cases: scripts/studies/graph-kernels.cases, .mtx
# files and R-MAT graphs that `spmmc gen` writes first where absent); with --study slice_spmm, issue 27's
# B's slice in shared memory against the warp per row and cuSPARSE (tools/microbench/slice_spmm.cu; its
# cases: scripts/studies/slice.cases). Needs a GPU and nvcc; prints one Markdown table per case (time,
# TFLOP/s, speed against the first variant, bit-equality, error against float64). On a lent GPU
# machine, after scripts/pack-for-gpu.sh CASES here: the matrices come from .gpu-pack/data.tar.xz
# when ../shared/data is absent.
# The fastest variant of each kind per case, from the output saved to a file: scripts/studies/study-best.py FILE.
# usage: scripts/studies/csr-variants.sh [CASES] [--runs N] [--timeout S] [--study csr_variants|row_split|graph_spmm|slice_spmm] [--only 'S|S...']
#        (about a minute on an H100; --timeout: seconds a case, default 120; --only, graph_spmm: the variants whose
#        names contain one of the strings)
# Exit: 0 all variants agree; 1 a variant disagreed or a case failed (the others still run); 66 no matrices.
set -euo pipefail
cd "$(dirname "$0")/../.."
cases=scripts/studies/csr-variants.cases runs=30 study=csr_variants only=() limit=120
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift ;;
    --timeout) limit=$2; shift ;;
    --only) only=(--only "$2"); shift ;;
    --study) study=$2; shift
      case $study in csr_variants|row_split|graph_spmm|slice_spmm) ;; *) echo "csr-variants: --study csr_variants, row_split, graph_spmm or slice_spmm" >&2; exit 64 ;; esac ;;
    *) cases=$1 ;;
  esac
  shift
done
if [ ! -d ../shared/data ] && [ -f .gpu-pack/data.tar.xz ]; then
  [ -d .gpu-data ] || tar xJf .gpu-pack/data.tar.xz
  mkdir -p ../shared && ln -sfn "$PWD/.gpu-data" ../shared/data
fi
[ -d ../shared/data ] || { echo "csr-variants: ../shared/data absent; nothing to run" >&2; exit 66; }
out=${SPMMC_BUILD_DIR:-build}/microbench
mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
libs=()
case $study in graph_spmm|slice_spmm) libs=(-lcusparse) ;; esac
"$nvcc" -O3 -std=c++17 -arch=sm_90 -o "$out/$study" "tools/microbench/$study.cu" "${libs[@]}"
# Every case runs (a case that disagrees or fails, or runs past --timeout seconds, is named and the rest
# go on); the exit says whether any did.
failed=0
while IFS='|' read -r label matrix n gen; do
  echo "### $label"
  # A matrix the case generates (its fourth field: `spmmc gen` arguments) is written once.
  if [ -n "$gen" ] && [ ! -f "$matrix" ]; then
    mkdir -p "$(dirname "$matrix")"
    "${SPMMC_BUILD_DIR:-build}/spmmc" gen $gen -o "$matrix" >/dev/null || { echo "FAILED: spmmc gen $gen"; failed=$((failed + 1)); continue; }
  fi
  timeout "$limit" "$out/$study" "$matrix" "$n" --runs "$runs" "${only[@]}" </dev/null || { echo "FAILED: $label (exit $?)"; failed=$((failed + 1)); }
done < <(grep -v '^\s*\(#\|$\)' "$cases")
[ $failed -eq 0 ] || { echo "csr-variants: $failed case(s) failed" >&2; exit 1; }
