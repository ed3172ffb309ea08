// A kernel written by hand in the ABI of spmmc-emitted code (codegen/templates/kernel.h), for
// the 3x4 matrix in handmade_3x4.mtx. It tests spmmc-gpu-bench and scripts/gpu-check.sh
// independently of the emitter: a plain CSR loop, A in constant memory.
//
// Built like an emitted file: nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC
//   -I codegen/templates [-DHANDMADE_FAULT=1|2] handmade_kernel.cu -o libhandmade_3x4.so
// HANDMADE_FAULT plants a bug the harness must catch (negative controls):
//   1: the last row of C is never written (NaN must survive and be reported);
//   2: one weight is wrong (the relative error must exceed the tolerance).
#include <stdint.h>

#include <cuda_runtime.h>

#include "spmmc_kernel_info.h"

#ifndef HANDMADE_FAULT
#define HANDMADE_FAULT 0
#endif

namespace {

constexpr int kM = 3;
constexpr int kK = 4;
constexpr int kNnz = 5;
constexpr int kThreads = 128;
constexpr int kMaxBlocks = 4096;

__constant__ int kRowPtr[kM + 1] = {0, 2, 2, 5};
__constant__ int kColIdx[kNnz] = {0, 3, 1, 2, 3};
#if HANDMADE_FAULT == 2
__constant__ float kValues[kNnz] = {1.75f, -2.0f, 0.25f, 3.0f, -1.0f};
#else
__constant__ float kValues[kNnz] = {1.5f, -2.0f, 0.25f, 3.0f, -1.0f};
#endif

__global__ void __launch_bounds__(kThreads) handmade_3x4_kernel(const float* __restrict__ b, float* __restrict__ c,
                                                                int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; col < n; col += stride) {
    for (int r = 0; r < kM; ++r) {
      if (HANDMADE_FAULT == 1 && r == kM - 1) continue;
      float acc = 0.0f;
      for (int p = kRowPtr[r]; p < kRowPtr[r + 1]; ++p) acc = fmaf(kValues[p], b[kColIdx[p] * n + col], acc);
      c[r * n + col] = acc;
    }
  }
}

const spmmc_kernel_info kInfo = {
    SPMMC_KERNEL_ABI_VERSION,
    "handmade_3x4",
    kM,
    kK,
    kNnz,
    "handmade-csr-loop",
    "row-major",
    "row-major",
    "float32",
    "sm_90",
    kM,
    kThreads,
    1,
    1,
    "none",
    "",
    "handmade",
    0,
    0,        // no variants listed
    nullptr,
};

}  // namespace

extern "C" cudaError_t handmade_3x4(const float* B, float* C, int64_t n, cudaStream_t stream) {
  if (B == nullptr || C == nullptr || n < 1) return cudaErrorInvalidValue;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  handmade_3x4_kernel<<<static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads, 0, stream>>>(B, C,
                                                                                                                 n);
  return cudaGetLastError();
}

extern "C" const spmmc_kernel_info* handmade_3x4_info(void) { return &kInfo; }
