#!/usr/bin/env bash
# Prepares a run on a lent GPU machine that has the CUDA toolkit but not spmmc's build
# dependencies (LLVM for verify, the fmt and xgboost packages): builds spmmc and the GPU tools without
# verify, copies them with libfmt and libxgboost into .gpu-bin/, and packs the matrices the given case files name into
# .gpu-pack/data.tar.xz, so that the two folders travel with the working tree (both are ignored by
# git through .git/info/exclude, which this script extends; the studies' work folders .gpu-study* and
# .gpu-batch* too, so that a later call on a machine still warm finds what an earlier one built).
#
# usage: scripts/pack-for-gpu.sh [CASES ...]
#   CASES   kernel-study case files (LABEL|MATRIX|N|FLAGS); every MATRIX under ../shared/data is
#           packed (default: scripts/studies/all-layers.cases, every shared layer)
# Environment: SPMMC_GPU_BUILD_DIR (default build-tuner), the build folder it configures and builds.
# On the GPU machine, from the repository root:
#   tar xJf .gpu-pack/data.tar.xz && mkdir -p ../shared && ln -sfn "$PWD/.gpu-data" ../shared/data
#   export LD_LIBRARY_PATH=$PWD/.gpu-bin/lib SPMMC_BUILD_DIR=.gpu-bin
#   scripts/kernel-study.sh CASES --out .gpu-study --jobs 15      # or any other GPU script
# Exit: 0 packed; 1 a build or a copy failed; 66 a case file or matrix is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "pack-for-gpu: $*" >&2; }
[ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] && { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(scripts/studies/all-layers.cases)
build=${SPMMC_GPU_BUILD_DIR:-build-tuner}

# 1. spmmc and the GPU tools, without verify (no LLVM needed where they run).
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPMMC_WITH_VERIFY=OFF >/dev/null
cmake --build "$build" --target spmmc spmmc-gpu-bench spmmc-runtime-gpu-check spmmc-tuner-gpu-check >/dev/null
mkdir -p .gpu-bin/lib
for tool in spmmc spmmc-gpu-bench spmmc-runtime-gpu-check spmmc-tuner-gpu-check; do cp "$build/$tool" .gpu-bin/; done
# The shared libraries of spmmc that a GPU machine may lack: libfmt, libxgboost (the ranker) and
# its libdmlc.
for lib in libfmt libxgboost libdmlc; do
  path=$(ldd "$build/spmmc" | awk -v l="$lib" '$1 ~ "^" l {print $3; exit}')
  if [ -n "$path" ]; then cp -L "$path" ".gpu-bin/lib/$(basename "$path")"; fi
done

# 2. The matrices of the cases, under .gpu-data with the paths below ../shared/data.
list=$(mktemp)
trap 'rm -f "$list"' EXIT
for c in "${cases[@]}"; do
  [ -f "$c" ] || { say "no case file $c"; exit 66; }
  grep -v '^#' "$c" | cut -d'|' -f2 | sed -n 's|^\.\./shared/data/||p' >>"$list"
done
sort -u -o "$list" "$list"
while read -r f; do
  [ -f "../shared/data/$f" ] || { say "missing ../shared/data/$f"; exit 66; }
  mkdir -p ".gpu-data/$(dirname "$f")" && cp -p "../shared/data/$f" ".gpu-data/$f"
done <"$list"
mkdir -p .gpu-pack
for c in "${cases[@]}"; do cp "$c" .gpu-pack/; done
tar cJf .gpu-pack/data.tar.xz.tmp .gpu-data && mv .gpu-pack/data.tar.xz.tmp .gpu-pack/data.tar.xz

# 3. Keep both out of git.
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
for p in /.gpu-bin/ /.gpu-data/ /.gpu-pack/ '/.gpu-study*/' '/.gpu-batch*/'; do grep -qxF "$p" "$exclude" 2>/dev/null || echo "$p" >>"$exclude"; done
say "$(wc -l <"$list") matrices in .gpu-pack/data.tar.xz ($(du -h .gpu-pack/data.tar.xz | cut -f1)), tools in .gpu-bin ($(du -sh .gpu-bin | cut -f1)); carry .gpu-bin and .gpu-pack"
