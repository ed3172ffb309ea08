/*@HEADER_COMMENT*/// Template of the element type of an spmmc-emitted kernel (codegen/templates/dtype_fp32.cuh, and
// dtype_fp16.cuh, dtype_bf16.cuh for --dtype fp16 and bf16): the type of B's and C's elements and
// how the generic path loads and stores them, as floats. The emitter pastes the one of the file's
// dtype before the device code (kernel.cu, kernel_nvrtc.cu); the unrolled tiles do the same in
// PTX (codegen/print_tile_ptx.h).
/*@*/
// B and C: float32.
typedef float spmmc_elem;

// Four elements of B from `at` (aligned to four elements) as floats, through the read-only cache.
__device__ __forceinline__ void spmmc_load_b4(const spmmc_elem* __restrict__ at, float (&b)[4]) {
  const float4 q = __ldg(reinterpret_cast<const float4*>(at));
  b[0] = q.x, b[1] = q.y, b[2] = q.z, b[3] = q.w;
}
__device__ __forceinline__ float spmmc_load_b1(const spmmc_elem* __restrict__ at) { return __ldg(at); }

// Four sums (aligned to four elements) and one sum into C.
__device__ __forceinline__ void spmmc_store_c4(spmmc_elem* __restrict__ at, const float (&c)[4]) {
  *reinterpret_cast<float4*>(at) = make_float4(c[0], c[1], c[2], c[3]);
}
__device__ __forceinline__ void spmmc_store_c1(spmmc_elem* __restrict__ at, float c) { *at = c; }
