#include "compiler/common/dtype.h"

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

}  // namespace

const char* dtype_name(DType d) { return d == DType::kFp16 ? "fp16" : d == DType::kBf16 ? "bf16" : "fp32"; }

const char* dtype_info_name(DType d) { return d == DType::kFp16 ? "float16" : d == DType::kBf16 ? "bfloat16" : "float32"; }

bool parse_dtype(const std::string& name, DType& out) {
  for (const DType d : {DType::kFp32, DType::kFp16, DType::kBf16})
    if (name == dtype_name(d)) {
      out = d;
      return true;
    }
  return false;
}

const char* dtype_c_type(DType d) { return d == DType::kFp16 ? "__half" : d == DType::kBf16 ? "__nv_bfloat16" : "float"; }

int dtype_bytes(DType d) { return d == DType::kFp32 ? 4 : 2; }

const char* dtype_header(DType d) { return d == DType::kFp16 ? "cuda_fp16.h" : d == DType::kBf16 ? "cuda_bf16.h" : ""; }

int dtype_min_sm(DType d) { return d == DType::kBf16 ? 80 : 0; }

float round_to_dtype(float v, DType d) {
  switch (d) {
    case DType::kFp16: return half_value(half_bits(v));
    case DType::kBf16: return bits_float(static_cast<uint32_t>(bf16_bits(v)) << 16);
    case DType::kFp32: break;
  }
  return v;
}

uint16_t to_half_bits(float v, DType d) {
  SPMMC_CHECK(d != DType::kFp32, "float32 has no 16-bit form");
  return d == DType::kFp16 ? half_bits(v) : bf16_bits(v);
}

float from_half_bits(uint16_t bits, DType d) {
  SPMMC_CHECK(d != DType::kFp32, "float32 has no 16-bit form");
  return d == DType::kFp16 ? half_value(bits) : bits_float(static_cast<uint32_t>(bits) << 16);
}

double dtype_unit_roundoff(DType d) { return d == DType::kFp16 ? 0x1p-11 : d == DType::kBf16 ? 0x1p-8 : 0x1p-24; }

double dtype_error_bound(DType d, int64_t row_nnz, double abs_sum, double exact) {
  // Half precision may sum on the tensor cores, whose additions align to the largest exponent and
  // truncate (docs/design/precision.md): four times the fused multiply-add's term.
  const double per_product = d == DType::kFp32 ? 0x1p-24 : 0x1p-22;
  const double accumulation = 1.01 * static_cast<double>(row_nnz) * per_product * abs_sum;
  const double half_subnormal = d == DType::kFp16 ? 0x1p-25 : d == DType::kBf16 ? 0x1p-134 : 0x1p-150;
  const double u = dtype_unit_roundoff(d);
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
                  v, row + 1, a.col_idx[static_cast<size_t>(p)] + 1, dtype_name(d), d == DType::kFp16 ? "65504" : "3.39e38");
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
