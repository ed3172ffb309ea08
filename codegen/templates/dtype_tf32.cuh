/*@HEADER_COMMENT*/// Template of the element type tf32 of an spmmc-emitted kernel (codegen/templates/dtype_tf32.cuh;
// see dtype_fp32.cuh). B and C are float; needs sm_80 or later (cvt.rna.tf32.f32).
/*@*/
// B and C: float32, multiplied as TensorFloat-32 (--dtype tf32, docs/design/precision.md). A's values
// were rounded to tf32 when this file was compiled; B's are rounded here, as they are loaded
// (cvt.rna.tf32.f32: to nearest, ties away from zero, 10 explicit mantissa bits); the products are
// summed in float32 and stored as they are. The generic path rounds B the same way, so that both
// paths multiply the same operands.
typedef float spmmc_elem;

// `x` rounded to tf32: the bits cvt.rna.tf32.f32 writes (a float whose 13 low mantissa bits are
// zero), the MMA's .tf32 operand. The tests' host emulation defines SPMMC_CVT_RNA_TF32 itself.
#ifndef SPMMC_CVT_RNA_TF32
#define SPMMC_CVT_RNA_TF32(d, x) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(d) : "f"(x))
#endif
__device__ __forceinline__ unsigned spmmc_tf32_bits(float x) {
  unsigned d;
  SPMMC_CVT_RNA_TF32(d, x);
  return d;
}
__device__ __forceinline__ float spmmc_to_tf32(float x) { return __uint_as_float(spmmc_tf32_bits(x)); }

// Four elements of B from `at` (aligned to four elements), rounded to tf32, through the read-only cache.
__device__ __forceinline__ void spmmc_load_b4(const spmmc_elem* __restrict__ at, float (&b)[4]) {
  const float4 q = __ldg(reinterpret_cast<const float4*>(at));
  b[0] = spmmc_to_tf32(q.x), b[1] = spmmc_to_tf32(q.y), b[2] = spmmc_to_tf32(q.z), b[3] = spmmc_to_tf32(q.w);
}
__device__ __forceinline__ float spmmc_load_b1(const spmmc_elem* __restrict__ at) { return spmmc_to_tf32(__ldg(at)); }

// Four sums (aligned to four elements) and one sum into C, as they are.
__device__ __forceinline__ void spmmc_store_c4(spmmc_elem* __restrict__ at, const float (&c)[4]) {
  *reinterpret_cast<float4*>(at) = make_float4(c[0], c[1], c[2], c[3]);
}
__device__ __forceinline__ void spmmc_store_c1(spmmc_elem* __restrict__ at, float c) { *at = c; }
