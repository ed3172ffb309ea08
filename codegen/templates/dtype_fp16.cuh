/*@HEADER_COMMENT*/// Template of the element type fp16 of an spmmc-emitted kernel (codegen/templates/dtype_fp16.cuh;
// see dtype_fp32.cuh). Needs cuda_fp16.h, which the emitted header includes.
/*@*/
// B and C: IEEE binary16 (__half); the products are summed in float32 and each sum is rounded to
// the nearest half (ties to even) when it is stored.
typedef __half spmmc_elem;

// Four halves of B from `at` (8-byte aligned) as floats: one 8-byte load through the read-only cache.
__device__ __forceinline__ void spmmc_load_b4(const spmmc_elem* __restrict__ at, float (&b)[4]) {
  const uint2 q = __ldg(reinterpret_cast<const uint2*>(at));
  b[0] = __half2float(__ushort_as_half(static_cast<unsigned short>(q.x & 0xffffu)));
  b[1] = __half2float(__ushort_as_half(static_cast<unsigned short>(q.x >> 16)));
  b[2] = __half2float(__ushort_as_half(static_cast<unsigned short>(q.y & 0xffffu)));
  b[3] = __half2float(__ushort_as_half(static_cast<unsigned short>(q.y >> 16)));
}
__device__ __forceinline__ float spmmc_load_b1(const spmmc_elem* __restrict__ at) { return __half2float(__ldg(at)); }

// Four sums into C (8-byte aligned, one store) and one sum, rounded to nearest even.
__device__ __forceinline__ void spmmc_store_c4(spmmc_elem* __restrict__ at, const float (&c)[4]) {
  uint2 q;
  q.x = static_cast<unsigned>(__half_as_ushort(__float2half_rn(c[0]))) |
        (static_cast<unsigned>(__half_as_ushort(__float2half_rn(c[1]))) << 16);
  q.y = static_cast<unsigned>(__half_as_ushort(__float2half_rn(c[2]))) |
        (static_cast<unsigned>(__half_as_ushort(__float2half_rn(c[3]))) << 16);
  *reinterpret_cast<uint2*>(at) = q;
}
__device__ __forceinline__ void spmmc_store_c1(spmmc_elem* __restrict__ at, float c) { *at = __float2half_rn(c); }

// Two sums rounded to nearest even as one word of two halves, `lo` in the low 16 bits (the tensor-core
// family's stores).
__device__ __forceinline__ unsigned spmmc_pack2(float lo, float hi) {
  return static_cast<unsigned>(__half_as_ushort(__float2half_rn(lo))) |
         (static_cast<unsigned>(__half_as_ushort(__float2half_rn(hi))) << 16);
}
