#!/usr/bin/env bash
# Installs what spmmc needs to build and test on Debian 12 (bookworm).
# Idempotent and non-interactive: packages already present are skipped,
# and apt-get runs only when something is missing.
# The CUDA toolkit itself is expected in /usr/local/cuda (or CUDAToolkit_ROOT);
# it does not come from Debian.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev nlohmann-json3-dev catch2
  libxgboost-dev xgboost
  zlib1g-dev
  # the study scripts' tables (scripts/batch-study.sh), which tests/tools/batch_study_part_test.cpp runs
  python3
  # spmmc verify (verify/): clang -> clang-14 (ClangConfig.cmake, libclang-cpp14), libclang-dev ->
  # libclang-14-dev (headers), llvm-dev -> llvm-14-dev (LLVMConfig.cmake, libLLVM-14.so).
  clang libclang-dev llvm-dev libclang-rt-dev
  time
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
