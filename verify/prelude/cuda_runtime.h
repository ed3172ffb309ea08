/* The CUDA runtime as `spmmc verify` parses emitted kernels (verify/analyze_emitted_kernel.h).
   Clang 14-16 predate CUDA 13's headers, so the verifier parses with -nocudainc and maps this
   file (and stdint.h beside it) in memory instead: just what emitted code uses, declared the
   way nvcc's headers spell it. It is force-included, as nvcc includes cuda_runtime.h into every
   .cu, and it answers the emitted header's own #include <cuda_runtime.h>. Nothing here is ever
   compiled to machine code: the verifier only builds an AST (-fsyntax-only). */
#ifndef SPMMC_VERIFY_CUDA_RUNTIME_H
#define SPMMC_VERIFY_CUDA_RUNTIME_H

#include <stdint.h>

/* Execution-space attributes: clang's own CUDA attributes, spelled as cuda_runtime.h does. */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
/* A kernel's register limit (CUDA 12.4 and later): nothing clang checks, so nothing here. */
#define __maxnreg__(n)

struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
/* The built-in index variables: plain device objects are enough to type-check their uses. */
extern __device__ const uint3 threadIdx;
extern __device__ const uint3 blockIdx;
extern __device__ const dim3 blockDim;
extern __device__ const dim3 gridDim;

typedef __SIZE_TYPE__ size_t;

enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
};
typedef enum cudaError cudaError_t;
typedef struct CUstream_st* cudaStream_t;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75 };

/* cudaLaunchKernelExC's configuration, as the entry point fills it (the programmatic stream
   serialization attribute of the kernels after the first). */
enum cudaLaunchAttributeID { cudaLaunchAttributeProgrammaticStreamSerialization = 5 };
union cudaLaunchAttributeValue {
  char pad[64];
  int programmaticStreamSerializationAllowed;
};
typedef struct cudaLaunchAttribute_st {
  enum cudaLaunchAttributeID id;
  char pad[8 - sizeof(enum cudaLaunchAttributeID)];
  union cudaLaunchAttributeValue val;
} cudaLaunchAttribute;
typedef struct cudaLaunchConfig_st {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned int numAttrs;
} cudaLaunchConfig_t;

extern "C" __host__ cudaError_t cudaLaunchKernel(const void* func, dim3 grid_dim, dim3 block_dim, void** args,
                                                 size_t shared_mem, cudaStream_t stream);
extern "C" __host__ cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args);
extern "C" __host__ cudaError_t cudaGetDevice(int* device);
extern "C" __host__ cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device);
/* As cuda_runtime.h's C++ overload: any kernel, by name or pointer. */
template <class T>
__host__ cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* num_blocks, T func, int block_size,
                                                                   size_t dynamic_shared_mem);

/* CUDA's vector types the generic path loads and stores through: four floats (float32), two
   unsigned ints (four half-precision elements, cuda_fp16.h and cuda_bf16.h). */
struct __attribute__((aligned(16))) float4 {
  float x, y, z, w;
};
__host__ __device__ float4 make_float4(float x, float y, float z, float w);
struct __attribute__((aligned(8))) uint2 {
  unsigned int x, y;
};
/* The tensor-core family (kernel_tensor_core.cuh): its columns as int2 pairs, its 16-byte loads of
   B and stores of C as uint4 (eight half-precision elements). */
struct __attribute__((aligned(8))) int2 {
  int x, y;
};
struct __attribute__((aligned(16))) uint4 {
  unsigned int x, y, z, w;
};
__host__ __device__ uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w);
__host__ __device__ int2 make_int2(int x, int y);
/* The balanced family (codegen/families/balanced/kernel_balanced.cuh): its pieces as int4 (row, begin,
   end, first slot + slots x pieces), two columns of B and C per lane as float2. */
struct __attribute__((aligned(16))) int4 {
  int x, y, z, w;
};
struct __attribute__((aligned(8))) float2 {
  float x, y;
};
__host__ __device__ float2 make_float2(float x, float y);

/* Device functions emitted code calls. */
__device__ float __ldg(const float* p);
__device__ float4 __ldg(const float4* p);
__device__ int __ldg(const int* p);
__device__ unsigned __ldg(const unsigned* p);
__device__ uint2 __ldg(const uint2* p);
__device__ int2 __ldg(const int2* p);
__device__ uint4 __ldg(const uint4* p);
__device__ float2 __ldg(const float2* p);
__device__ unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s);
__device__ size_t __cvta_generic_to_shared(const void* ptr);
__device__ void __syncthreads();
__device__ void __stwb(float4* p, float4 value);
extern "C" __device__ float fmaf(float a, float b, float c);
__device__ float __fmaf_rn(float a, float b, float c);
__device__ float __uint_as_float(unsigned int x);
/* The generic path's split kernel: a warp's lanes share a round of products through shared memory. */
__device__ float __shfl_sync(unsigned mask, float var, int src_lane, int width = 32);
__device__ int __shfl_sync(unsigned mask, int var, int src_lane, int width = 32);
__device__ void __syncwarp(unsigned mask = 0xffffffffu);
/* The balanced family: a cut row's pieces counted in shared memory, their sums fenced before. */
__device__ unsigned __shfl_sync(unsigned mask, unsigned var, int src_lane, int width = 32);
__device__ unsigned atomicAdd(unsigned* address, unsigned value);
__device__ void __threadfence_block();
/* The balanced kernels at n = 1: a butterfly of shuffles adds a piece's lanes. */
__device__ float __shfl_xor_sync(unsigned mask, float var, int lane_mask, int width = 32);

#endif
