/*@HEADER_COMMENT*/// Template of the element type bf16 of an spmmc-emitted kernel (codegen/templates/dtype_bf16.cuh;
// see dtype_fp32.cuh). Needs cuda_bf16.h, which the emitted header includes.
/*@*/
// B and C: bfloat16 (__nv_bfloat16); the products are summed in float32 and each sum is rounded to
// the nearest bfloat16 (ties to even) when it is stored.
typedef __nv_bfloat16 spmmc_elem;

// Four bfloat16s of B from `at` (8-byte aligned) as floats: one 8-byte load through the read-only cache.
__device__ __forceinline__ void spmmc_load_b4(const spmmc_elem* __restrict__ at, float (&b)[4]) {
  const uint2 q = __ldg(reinterpret_cast<const uint2*>(at));
  b[0] = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(q.x & 0xffffu)));
  b[1] = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(q.x >> 16)));
  b[2] = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(q.y & 0xffffu)));
  b[3] = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(q.y >> 16)));
}
__device__ __forceinline__ float spmmc_load_b1(const spmmc_elem* __restrict__ at) { return __bfloat162float(__ldg(at)); }

// Four sums into C (8-byte aligned, one store) and one sum, rounded to nearest even.
__device__ __forceinline__ void spmmc_store_c4(spmmc_elem* __restrict__ at, const float (&c)[4]) {
  uint2 q;
  q.x = static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(c[0]))) |
        (static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(c[1]))) << 16);
  q.y = static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(c[2]))) |
        (static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(c[3]))) << 16);
  *reinterpret_cast<uint2*>(at) = q;
}
__device__ __forceinline__ void spmmc_store_c1(spmmc_elem* __restrict__ at, float c) { *at = __float2bfloat16_rn(c); }

// Two sums rounded to nearest even as one word of two bfloat16s, `lo` in the low 16 bits (the
// tensor-core family's stores).
__device__ __forceinline__ unsigned spmmc_pack2(float lo, float hi) {
  return static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
         (static_cast<unsigned>(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16);
}
