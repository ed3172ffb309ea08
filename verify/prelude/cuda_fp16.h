/* <cuda_fp16.h> as `spmmc verify` parses emitted kernels of --dtype fp16 (see cuda_runtime.h
   beside it): the IEEE binary16 type and just the functions emitted code calls, declared as
   nvcc's header spells them. Never compiled: only their types matter. __half is 2 bytes, as
   CUDA's, since the row stride the kernels pass is n x sizeof(spmmc_elem). */
#ifndef SPMMC_VERIFY_CUDA_FP16_H
#define SPMMC_VERIFY_CUDA_FP16_H

#include <cuda_runtime.h>

struct __attribute__((aligned(2))) __half {
  unsigned short __x;
};
static_assert(sizeof(__half) == 2, "__half is 2 bytes");

__host__ __device__ float __half2float(__half a);
__host__ __device__ __half __float2half_rn(float a);
__host__ __device__ __half __ushort_as_half(unsigned short i);
__host__ __device__ unsigned short __half_as_ushort(__half h);
__device__ __half __ldg(const __half* p);

#endif
