/* <cuda_bf16.h> as `spmmc verify` parses emitted kernels of --dtype bf16 (see cuda_runtime.h
   beside it): the bfloat16 type and just the functions emitted code calls, declared as nvcc's
   header spells them. Never compiled: only their types matter. __nv_bfloat16 is 2 bytes, as
   CUDA's, since the row stride the kernels pass is n x sizeof(spmmc_elem). */
#ifndef SPMMC_VERIFY_CUDA_BF16_H
#define SPMMC_VERIFY_CUDA_BF16_H

#include <cuda_runtime.h>

struct __attribute__((aligned(2))) __nv_bfloat16 {
  unsigned short __x;
};
static_assert(sizeof(__nv_bfloat16) == 2, "__nv_bfloat16 is 2 bytes");

__host__ __device__ float __bfloat162float(__nv_bfloat16 a);
__host__ __device__ __nv_bfloat16 __float2bfloat16_rn(float a);
__host__ __device__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short i);
__host__ __device__ unsigned short __bfloat16_as_ushort(__nv_bfloat16 h);
__device__ __nv_bfloat16 __ldg(const __nv_bfloat16* p);

#endif
