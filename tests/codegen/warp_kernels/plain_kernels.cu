// Kernels without any collective, for tests/codegen/warp_emulation_test.cpp: built as host C++
// against the CUDA emulation into a shared object of their own, which therefore never compiles the
// block scheduler (warp_scheduler.h's fiber_hooks) and runs its blocks as a plain loop, threads in
// threadIdx order (x fastest), each to completion, as the emulation always did for the emitted
// kernels. __shared__ memory is still refilled with 0xFF bytes at each block's start.
#include <cuda_runtime.h>
#include <string.h>

namespace {

// Records the order of the threads, as warp_kernels.cu's order_kernel does, and what each thread
// reads of its own __shared__ word before writing it (all one bits in every block).
__global__ void plain_order_kernel(int* sequence, unsigned* first_bits, int* next) {
  __shared__ unsigned scratch[64];
  const unsigned t = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  const unsigned global = blockIdx.x * blockDim.x * blockDim.y * blockDim.z + t;
  first_bits[global] = scratch[t];
  scratch[t] = global;
  sequence[(*next)++] = static_cast<int>(blockIdx.x * 10000 + threadIdx.z * 100 + threadIdx.y * 10 + threadIdx.x);
}

}  // namespace

extern "C" int plain_test_order(int* sequence, unsigned* first_bits, unsigned blocks, unsigned x, unsigned y, unsigned z) {
  int next = 0;
  return spmmc_emulation::launch(plain_order_kernel, dim3(blocks), dim3(x, y, z), sequence, first_bits, &next);
}
