// CUDA emulation for tests: lets a kernel that spmmc emits (NAME.cu) compile as host C++
// (g++ -std=c++17 -x c++ -I tests/cuda_emulation NAME.cu) and run on the CPU, so that CI
// machines without a GPU check the numbers the emitted code computes (design.md, "Testing
// without a GPU").
//
// Just enough of the runtime for the unrolled family: the execution-space qualifiers are no-ops,
// blockIdx/threadIdx/blockDim/gridDim are thread-local globals, and cudaLaunchKernel runs the
// kernel once per (block, thread), sequentially. There is no shared memory, synchronisation or
// warp intrinsic: the unrolled kernels use none, and a kernel that did would not compile here.
// fmaf is the C library's fused multiply-add (one rounding), bit-exact with the GPU's FFMA; the
// default host floating point keeps subnormals, like nvcc without --use_fast_math.
//
// Everything has external linkage and inline definitions (one copy however many emitted .cu
// files are linked together), so the launcher and every kernel see the same blockIdx.
#ifndef SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
#define SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H

#include <math.h>  // fmaf
#include <stddef.h>
#include <stdint.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// __restrict__ is a g++ and clang extension already.

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

inline thread_local dim3 blockIdx{0, 0, 0};
inline thread_local dim3 threadIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};

// Values as in the CUDA runtime's driver_types.h.
enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorInvalidConfiguration = 9 };
typedef enum cudaError cudaError_t;
typedef struct CUstream_st* cudaStream_t;

// The read-only data cache load: a plain load on the host.
inline float __ldg(const float* p) { return *p; }

// Runs `func`, a kernel `void(const float* B, float* C, int64_t n)` (the signature of every
// emitted kernel), over grid x block, block by block and thread by thread. Rejects what a GPU
// launch rejects (a block of more than 1024 threads, grid.y or grid.z above 65535, an empty
// grid or block) with cudaErrorInvalidConfiguration, so the emitted launch configuration is
// checked too. Dynamic shared memory must be 0; the stream is ignored (runs synchronously).
inline cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                                    cudaStream_t /*stream*/) {
  if (func == nullptr || args == nullptr || shared_mem != 0) return cudaErrorInvalidValue;
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    return cudaErrorInvalidConfiguration;
  using Kernel = void (*)(const float*, float*, int64_t);
  const Kernel kernel = reinterpret_cast<Kernel>(const_cast<void*>(func));
  const float* b = *static_cast<const float* const*>(args[0]);
  float* c = *static_cast<float* const*>(args[1]);
  const int64_t n = *static_cast<const int64_t*>(args[2]);
  gridDim = grid;
  blockDim = block;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              blockIdx = dim3(bx, by, bz);
              threadIdx = dim3(tx, ty, tz);
              kernel(b, c, n);
            }
  return cudaSuccess;
}

#endif  // SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
