#include "compiler/common/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

uint32_t float_bits(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

float bits_float(uint32_t bits) {
  float v = 0.0f;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// IEEE binary16 bits of `v`, rounded to nearest even; overflow to infinity, NaN to 0x7fff (what
// the GPU's cvt.rn.f16.f32 gives for every NaN).
uint16_t half_bits(float v) {
  const uint32_t x = float_bits(v);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0x7fffu;
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: rounds beyond 65504
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal m x 2^-24 (or zero); the scaling is exact
    const auto m = static_cast<uint32_t>(std::nearbyint(std::fabs(v) * 16777216.0f));  // ties to even
    return static_cast<uint16_t>(sign | m);
  }
  // Normal: drop 13 mantissa bits rounding to nearest even, rebias the exponent (127 - 15).
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u) - 0x38000000u;
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

float half_value(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) return bits_float(sign) + (sign ? -1.0f : 1.0f) * static_cast<float>(mantissa) * 0x1p-24f;
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// bfloat16: the top 16 bits of the float rounded to nearest even; NaN to 0x7fff (as cvt.rn.bf16.f32).
uint16_t bf16_bits(float v) {
  const uint32_t x = float_bits(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// TensorFloat-32 (cvt.rna.tf32.f32): `v` rounded to 11 significant bits, ties away from zero, with
// float's exponent range. Written on values (frexp, round, ldexp), not on bits, so that the tests
// can hold it against the CUDA emulation's bit-level conversion as an independent one. The
// quantum of a value 2^e x m (m in [0.5, 1)) is 2^(e - 11); below float's normal range (e < -125)
// it stays 2^-136, the subnormal tf32's: the 13 low bits of a subnormal float are dropped too.
float tf32_value(float v) {
  if (!std::isfinite(v) || v == 0.0f) return v;  // infinities, NaNs and zeros (with their sign) as they are
  int e = 0;
  std::frexp(v, &e);
  const int quantum = std::max(e, -125) - 11;
  // v / 2^quantum is below 2^11 in magnitude, exact in float; std::round takes ties away from zero.
  const float scaled = std::round(std::ldexp(v, -quantum));
  return std::ldexp(scaled, quantum);  // exact, or +-infinity past float's largest value
}

}  // namespace

const char* dtype_name(DType d) {
  switch (d) {
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    case DType::kTf32: return "tf32";
    case DType::kFp32: break;
  }
  return "fp32";
}

const char* dtype_info_name(DType d) {
  switch (d) {
    case DType::kFp16: return "float16";
    case DType::kBf16: return "bfloat16";
    case DType::kTf32: return "tfloat32";
    case DType::kFp32: break;
  }
  return "float32";
}

bool parse_dtype(const std::string& name, DType& out) {
  for (const DType d : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kTf32})
    if (name == dtype_name(d)) {
      out = d;
      return true;
    }
  return false;
}

const char* dtype_c_type(DType d) { return d == DType::kFp16 ? "__half" : d == DType::kBf16 ? "__nv_bfloat16" : "float"; }

int dtype_bytes(DType d) { return dtype_is_half(d) ? 2 : 4; }

DType dtype_storage(DType d) { return d == DType::kTf32 ? DType::kFp32 : d; }

bool dtype_is_half(DType d) { return d == DType::kFp16 || d == DType::kBf16; }

const char* dtype_header(DType d) { return d == DType::kFp16 ? "cuda_fp16.h" : d == DType::kBf16 ? "cuda_bf16.h" : ""; }

int dtype_min_sm(DType d) { return d == DType::kBf16 || d == DType::kTf32 ? 80 : 0; }

float round_to_dtype(float v, DType d) {
  switch (d) {
    case DType::kFp16: return half_value(half_bits(v));
    case DType::kBf16: return bits_float(static_cast<uint32_t>(bf16_bits(v)) << 16);
    case DType::kTf32: return tf32_value(v);
    case DType::kFp32: break;
  }
  return v;
}

uint16_t to_half_bits(float v, DType d) {
  SPMMC_CHECK(dtype_is_half(d), "only fp16 and bf16 have a 16-bit form (float32 and tf32 are 32-bit floats)");
  return d == DType::kFp16 ? half_bits(v) : bf16_bits(v);
}

float from_half_bits(uint16_t bits, DType d) {
  SPMMC_CHECK(dtype_is_half(d), "only fp16 and bf16 have a 16-bit form (float32 and tf32 are 32-bit floats)");
  return d == DType::kFp16 ? half_value(bits) : bits_float(static_cast<uint32_t>(bits) << 16);
}

double dtype_unit_roundoff(DType d) {
  switch (d) {
    case DType::kFp16:
    case DType::kTf32: return 0x1p-11;
    case DType::kBf16: return 0x1p-8;
    case DType::kFp32: break;
  }
  return 0x1p-24;
}

double dtype_error_bound(DType d, int64_t row_nnz, double abs_sum, double exact) {
  // Half precision and tf32 may sum on the tensor cores, whose additions align to the largest
  // exponent and truncate (docs/design/precision.md): four times the fused multiply-add's term.
  const double per_product = d == DType::kFp32 ? 0x1p-24 : 0x1p-22;
  const double products = static_cast<double>(row_nnz);
  double accumulation = 1.01 * products * per_product * abs_sum;
  // tf32 keeps float's exponent range: sums below float's normal range err by float's quantum.
  if (d == DType::kTf32) accumulation += products * 0x1p-149;
  // C's element type: tf32 stores float32 sums as they are (float's rounding and subnormals).
  const DType stored = dtype_storage(d);
  const double half_subnormal = stored == DType::kFp16 ? 0x1p-25 : stored == DType::kBf16 ? 0x1p-134 : 0x1p-150;
  const double u = dtype_unit_roundoff(stored);
  return accumulation + u * (std::fabs(exact) + accumulation) + half_subnormal;
}

DTypeRounding round_values_to_dtype(Csr& a, DType d, const std::string& file) {
  DTypeRounding r;
  if (d == DType::kFp32) return r;
  Csr out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.row_ptr.assign(1, 0);
  for (int32_t row = 0; row < a.rows; ++row) {
    for (int32_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p) {
      const float v = a.values[static_cast<size_t>(p)];
      const float rounded = round_to_dtype(v, d);
      if (std::isinf(rounded))
        fail_data(SourceLocation::whole(file),
                  "the value {} of A at row {}, column {} is beyond the range of {} (largest finite {}): it cannot be "
                  "compiled in that precision; scale the layer or use --dtype fp32",
                  v, row + 1, a.col_idx[static_cast<size_t>(p)] + 1, dtype_name(d),
                  d == DType::kFp16 ? "65504" : d == DType::kTf32 ? "3.4012e38" : "3.39e38");
      if (rounded != v) {
        ++r.changed;
        r.max_relative_change = std::max(r.max_relative_change, std::fabs(static_cast<double>(rounded) - v) / std::fabs(v));
      }
      if (rounded == 0.0f) {
        ++r.to_zero;
        continue;
      }
      out.col_idx.push_back(a.col_idx[static_cast<size_t>(p)]);
      out.values.push_back(rounded);
    }
    out.row_ptr.push_back(static_cast<int32_t>(out.col_idx.size()));
  }
  a = std::move(out);
  return r;
}

}  // namespace spmmc
