// The element type of B and C an emitted kernel takes (spmmc compile --dtype, issue 26): float32,
// half precision (IEEE binary16, bfloat16) with the products summed in float32, or tf32 (B and C
// float32, the products taken on the TF32 tensor cores as cuBLAS does when TF32 is allowed: A and B
// rounded to tf32, summed in float32). A's values are rounded to the dtype when the kernel is
// compiled, so that the code computes with what a caller serving in that precision holds;
// docs/design/precision.md has the rules and the error bounds.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/common/csr.h"

namespace spmmc {

// kTf32: NVIDIA's TensorFloat-32, float32's sign and 8 exponent bits with 10 explicit mantissa bits
// (a float whose 13 low mantissa bits are zero); B and C stay float in the caller's API.
enum class DType { kFp32, kFp16, kBf16, kTf32 };

// "fp32", "fp16", "bf16", "tf32": the names of --dtype and the JSON report ("float32", "float16",
// "bfloat16", "tfloat32" in NAME_info()'s dtype field and the JSON layout: dtype_info_name).
const char* dtype_name(DType d);
const char* dtype_info_name(DType d);
// False for anything but the four names.
bool parse_dtype(const std::string& name, DType& out);
// The C type of B's and C's elements in the emitted header: float (fp32 and tf32), __half,
// __nv_bfloat16.
const char* dtype_c_type(DType d);
int dtype_bytes(DType d);  // 4 (fp32, tf32) or 2
// The dtype whose elements B and C hold in memory: kFp32 for tf32 (float), `d` otherwise. Code that
// asks which C type a pointer has (the verifier, the benchmark's buffers) compares this.
DType dtype_storage(DType d);
// True for the 16-bit dtypes (fp16, bf16), whose elements to_half_bits and from_half_bits convert.
bool dtype_is_half(DType d);
// The header that declares the C type (none for float): "cuda_fp16.h" or "cuda_bf16.h".
const char* dtype_header(DType d);
// The oldest architecture whose PTX has the instructions the kernels use ("sm_53" for fp16: none
// needed beyond cvt; bf16: cvt.rn.bf16.f32 needs sm_80; tf32: cvt.rna.tf32.f32 and the TF32 MMA
// need sm_80), as its number: 0 where any will do.
int dtype_min_sm(DType d);

// `v` rounded to the nearest value of the dtype, as a float (exact: every value of the four types
// is a float): ties to even for fp16 and bf16; ties away from zero for tf32, as the kernels'
// cvt.rna.tf32.f32 (10 explicit mantissa bits, float's exponent range, subnormals kept: 2^-136
// is the smallest). Overflow gives +-infinity, as the conversion on the GPU does; a NaN stays a NaN.
float round_to_dtype(float v, DType d);
// The 16 bits of `v` rounded to a half-precision dtype (fp16 or bf16; any other dtype is an
// internal error: tf32 has no 16-bit form), and back (exact). What the kernels store and load; the
// tests and the GPU checks build B and read C with them.
uint16_t to_half_bits(float v, DType d);
float from_half_bits(uint16_t bits, DType d);
// Unit roundoff of the dtype: 2^-24, 2^-11 (fp16 and tf32: 11 significant bits), 2^-8.
double dtype_unit_roundoff(DType d);

// The bound on |C_ij - exact| for a kernel of dtype `d` (docs/design/precision.md): `exact` is the
// float64 sum of the row's products of A's values (rounded to d) and B's (of d; for tf32 rounded
// to tf32 as the kernel rounds them), `row_nnz` its products, `abs_sum` the sum of their absolute
// values. The float32 sum adds at most row_nnz x 2^-24 x abs_sum (fma: one rounding per product,
// with 1% slack; for fp16, bf16 and tf32 2^-22, which covers the tensor cores' truncating
// additions too), the store's rounding to the element type of C its unit roundoff x |C| (float's
// 2^-24 for tf32, whose C is float) and, below that type's normal range, half its smallest
// subnormal. For tf32 also row_nnz x 2^-149: tf32 has float's exponent range, so its products and
// partial sums can fall below float's normal range, where an addition errs by up to float's
// quantum 2^-149 rather than relatively.
double dtype_error_bound(DType d, int64_t row_nnz, double abs_sum, double exact);

// What rounding A's values to the dtype did.
struct DTypeRounding {
  int64_t changed = 0;          // values that were not already of the dtype
  int64_t to_zero = 0;          // values that rounded to zero (dropped: A keeps no explicit zeros)
  double max_relative_change = 0.0;
};

// Rounds every value of `a` to the dtype; values that round to zero are removed (they are below
// half the dtype's smallest subnormal; for tf32 those of magnitude below 2^-137). Throws a UserError (exit 65) naming `file`, the row and
// column (1-based, as Matrix Market) of the first value beyond the dtype's range (it would be
// infinite in the code). fp32 leaves `a` unchanged.
DTypeRounding round_values_to_dtype(Csr& a, DType d, const std::string& file);

}  // namespace spmmc
