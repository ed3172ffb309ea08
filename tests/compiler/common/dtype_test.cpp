// The element types of --dtype (compiler/common/dtype.h): names, rounding to fp16 and bf16 (ties to
// even, subnormals, overflow, NaN) and to tf32 (ties away from zero), the 16-bit forms, the error
// bound, and rounding A's values.
#include "compiler/common/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/common/diagnostics.h"
#include "tests/cuda_emulation/half_bits.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

float bits_float(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

uint32_t float_bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

TEST_CASE("dtype: names parse and print", "[dtype]") {
  for (const DType d : {DType::kFp32, DType::kFp16, DType::kBf16, DType::kTf32}) {
    DType back = DType::kFp32;
    REQUIRE(parse_dtype(dtype_name(d), back));
    CHECK(back == d);
  }
  DType d = DType::kFp16;
  CHECK_FALSE(parse_dtype("half", d));
  CHECK_FALSE(parse_dtype("FP16", d));
  CHECK(d == DType::kFp16);  // untouched on failure
  CHECK(std::string(dtype_info_name(DType::kBf16)) == "bfloat16");
  CHECK(std::string(dtype_c_type(DType::kFp16)) == "__half");
  CHECK(dtype_bytes(DType::kFp32) == 4);
  CHECK(dtype_bytes(DType::kBf16) == 2);
  // tf32: float elements (B and C stay float), multiplied as tf32 on sm_80 and later.
  CHECK(std::string(dtype_name(DType::kTf32)) == "tf32");
  CHECK(std::string(dtype_info_name(DType::kTf32)) == "tfloat32");
  CHECK(std::string(dtype_c_type(DType::kTf32)) == "float");
  CHECK(std::string(dtype_header(DType::kTf32)).empty());
  CHECK(dtype_bytes(DType::kTf32) == 4);
  CHECK(dtype_storage(DType::kTf32) == DType::kFp32);
  CHECK(dtype_storage(DType::kFp16) == DType::kFp16);
  CHECK(dtype_min_sm(DType::kTf32) == 80);
  CHECK_FALSE(dtype_is_half(DType::kTf32));
  CHECK(dtype_is_half(DType::kBf16));
  CHECK(dtype_unit_roundoff(DType::kTf32) == 0x1p-11);
  CHECK_FALSE(parse_dtype("TF32", d));
  CHECK_FALSE(parse_dtype("tfloat32", d));  // the info name is not an option value
}

TEST_CASE("dtype: tf32 has no 16-bit form: the half helpers refuse it", "[dtype]") {
  CHECK_THROWS_AS(to_half_bits(1.0f, DType::kTf32), InternalError);
  CHECK_THROWS_AS(from_half_bits(0x3c00, DType::kTf32), InternalError);
  CHECK_THROWS_AS(to_half_bits(1.0f, DType::kFp32), InternalError);
}

TEST_CASE("dtype: tf32 rounding is to 10 mantissa bits, ties away from zero (cvt.rna.tf32.f32)", "[dtype]") {
  const DType t = DType::kTf32;
  CHECK(round_to_dtype(1.0f, t) == 1.0f);
  CHECK(round_to_dtype(0x1.002p0f, t) == 0x1.004p0f);       // 1 + 2^-11: a tie, away from zero (even would be 1)
  CHECK(round_to_dtype(-0x1.002p0f, t) == -0x1.004p0f);     // and for negatives, away from zero too
  CHECK(round_to_dtype(0x1.001ffep0f, t) == 1.0f);          // just below the tie
  CHECK(round_to_dtype(0x1.006p0f, t) == 0x1.008p0f);       // 1 + 3 x 2^-11: a tie, up
  CHECK(round_to_dtype(0x1.ffep0f, t) == 2.0f);             // a carry into the exponent
  CHECK(round_to_dtype(3.0e-5f, t) == bits_float((float_bits(3.0e-5f) + 0x1000u) & 0xffffe000u));
  // Overflow: tf32 has float's exponent range; its largest value is 0x7f7fe000.
  CHECK(float_bits(round_to_dtype(bits_float(0x7f7fe000u), t)) == 0x7f7fe000u);
  CHECK(float_bits(round_to_dtype(bits_float(0x7f7fefffu), t)) == 0x7f7fe000u);
  CHECK(std::isinf(round_to_dtype(bits_float(0x7f7ff000u), t)));  // the midpoint to 2^128: away, infinity
  CHECK(std::isinf(round_to_dtype(std::numeric_limits<float>::max(), t)));
  CHECK(round_to_dtype(-std::numeric_limits<float>::max(), t) == -std::numeric_limits<float>::infinity());
  CHECK(round_to_dtype(std::numeric_limits<float>::infinity(), t) == std::numeric_limits<float>::infinity());
  CHECK(std::isnan(round_to_dtype(std::numeric_limits<float>::quiet_NaN(), t)));
  // Subnormals are kept: the quantum below float's normal range is 2^-136, tf32's smallest subnormal.
  CHECK(round_to_dtype(0x1p-136f, t) == 0x1p-136f);
  CHECK(round_to_dtype(0x1p-137f, t) == 0x1p-136f);              // half the smallest: a tie, away from zero
  CHECK(round_to_dtype(0x1p-137f - 0x1p-149f, t) == 0.0f);       // just below it: zero
  CHECK(std::signbit(round_to_dtype(-0x1p-140f, t)));            // a negative that rounds to zero stays -0
  CHECK(round_to_dtype(3 * 0x1p-137f, t) == 0x1p-135f);          // 1.5 quanta: a tie, away (to 2)
  CHECK(round_to_dtype(0x1p-149f, t) == 0.0f);                   // float's smallest subnormal
  CHECK(round_to_dtype(bits_float(0x007fffffu), t) == 0x1p-126f);  // the largest subnormal rounds to the smallest normal
  CHECK(round_to_dtype(-0.0f, t) == 0.0f);
  CHECK(std::signbit(round_to_dtype(-0.0f, t)));
  // Every result has its 13 low mantissa bits clear, and rounding is idempotent.
  std::mt19937 rng(26);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 200000; ++i) {
    const float v = bits_float(any_bits(rng));
    if (std::isnan(v)) continue;
    const float r = round_to_dtype(v, t);
    REQUIRE((float_bits(r) & 0x1fffu) == 0u);
    REQUIRE(float_bits(round_to_dtype(r, t)) == float_bits(r));
    if (std::isfinite(r)) REQUIRE(std::fabs(static_cast<double>(r) - v) <= std::ldexp(std::fabs(static_cast<double>(v)), -11) + 0x1p-137);
  }
}

TEST_CASE("dtype: products of two tf32 values are exact in float", "[dtype]") {
  // 11 x 11 significant bits fit float's 24: the tensor cores' products lose nothing, so the bound
  // has no product term. Over float's normal range of the products (factors 2^-62 .. 2^63, either sign).
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-62, 62);
  std::bernoulli_distribution negative(0.5);
  const auto draw = [&] {
    const float m = negative(rng) ? -mantissa(rng) : mantissa(rng);
    return round_to_dtype(std::ldexp(m, exponent(rng)), DType::kTf32);
  };
  for (int i = 0; i < 200000; ++i) {
    const float a = draw(), b = draw();
    REQUIRE(static_cast<double>(a * b) == static_cast<double>(a) * static_cast<double>(b));
  }
  // Not so for float32 values in general (the check can fail): 1 + 2^-23 squared needs 47 bits.
  const float f = 0x1.000002p0f;
  CHECK(static_cast<double>(f * f) != static_cast<double>(f) * static_cast<double>(f));
}

TEST_CASE("dtype: fp16 rounding is IEEE binary16, ties to even", "[dtype]") {
  const DType h = DType::kFp16;
  CHECK(to_half_bits(1.0f, h) == 0x3c00);
  CHECK(to_half_bits(-2.5f, h) == 0xc100);
  CHECK(to_half_bits(65504.0f, h) == 0x7bff);           // the largest half
  CHECK(to_half_bits(65519.99f, h) == 0x7bff);          // below the midpoint to 2^16
  CHECK(to_half_bits(65520.0f, h) == 0x7c00);           // the midpoint rounds to even: infinity
  CHECK(to_half_bits(-1e9f, h) == 0xfc00);
  CHECK(to_half_bits(0x1p-24f, h) == 0x0001);           // the smallest subnormal
  CHECK(to_half_bits(0x1p-25f, h) == 0x0000);           // half of it: a tie, to even (zero)
  CHECK(to_half_bits(0x1.8p-25f, h) == 0x0001);         // above the tie
  CHECK(to_half_bits(3 * 0x1p-25f, h) == 0x0002);       // 1.5 ulp: a tie to even (2)
  CHECK(to_half_bits(0x1p-14f, h) == 0x0400);           // the smallest normal
  CHECK(to_half_bits(0x1.002p0f, h) == 0x3c00);         // 1 + 2^-11: a tie, to even
  CHECK(to_half_bits(0x1.006p0f, h) == 0x3c02);         // 1 + 3 x 2^-11: a tie, to even (up)
  CHECK(to_half_bits(-0.0f, h) == 0x8000);
  CHECK(to_half_bits(std::numeric_limits<float>::infinity(), h) == 0x7c00);
  CHECK(to_half_bits(std::numeric_limits<float>::quiet_NaN(), h) == 0x7fff);  // the GPU's canonical NaN
  CHECK(to_half_bits(-std::numeric_limits<float>::quiet_NaN(), h) == 0x7fff);
  // Every half reads back exactly through float (NaNs stay NaN).
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float v = from_half_bits(static_cast<uint16_t>(bits), h);
    if (std::isnan(v)) {
      CHECK((bits & 0x7c00) == 0x7c00);
      continue;
    }
    REQUIRE(to_half_bits(v, h) == bits);
    REQUIRE(round_to_dtype(v, h) == v);
  }
  CHECK(from_half_bits(0x0001, h) == 0x1p-24f);
  CHECK(from_half_bits(0x7bff, h) == 65504.0f);
}

TEST_CASE("dtype: bf16 rounding keeps the float's top 16 bits, ties to even", "[dtype]") {
  const DType b = DType::kBf16;
  CHECK(to_half_bits(1.0f, b) == 0x3f80);
  CHECK(to_half_bits(bits_float(0x3f808000u), b) == 0x3f80);  // a tie, to even (down)
  CHECK(to_half_bits(bits_float(0x3f818000u), b) == 0x3f82);  // a tie, to even (up)
  CHECK(to_half_bits(bits_float(0x3f808001u), b) == 0x3f81);
  CHECK(to_half_bits(3.0e38f, b) == 0x7f62);
  CHECK(to_half_bits(bits_float(0x7f7fffffu), b) == 0x7f80);  // FLT_MAX rounds to infinity
  CHECK(std::isnan(round_to_dtype(std::numeric_limits<float>::quiet_NaN(), b)));
  CHECK(to_half_bits(bits_float(0x7f800001u), b) == 0x7fff);  // a NaN whose payload is in the low bits: canonical
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float v = from_half_bits(static_cast<uint16_t>(bits), b);
    if (std::isnan(v)) continue;
    REQUIRE(to_half_bits(v, b) == bits);
  }
  CHECK(round_to_dtype(0x1.0101p0f, DType::kFp32) == 0x1.0101p0f);  // fp32 leaves values alone
}

TEST_CASE("dtype: the compiler's conversions agree with the CUDA emulation's on 2^24 floats", "[dtype]") {
  // Two independent implementations (the emulation's was checked against CUDA's own headers on
  // every float): every 256th float bit pattern, all exponents and signs, NaNs and infinities.
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 256) {
    const auto x = static_cast<uint32_t>(bits) | static_cast<uint32_t>(bits >> 24 & 0xff);  // vary the low byte too
    const float v = bits_float(x);
    REQUIRE(to_half_bits(v, DType::kFp16) == spmmc_emulation::f32_bits_to_f16_bits_rn(x));
    REQUIRE(to_half_bits(v, DType::kBf16) == spmmc_emulation::f32_bits_to_bf16_bits_rn(x));
    // tf32: the compiler's (on values) and the emulation's cvt.rna.tf32.f32 (on bits); NaNs stay NaN.
    const float t = round_to_dtype(v, DType::kTf32);
    const uint32_t emulated = spmmc_emulation::f32_bits_to_tf32_bits_rna(x);
    if (std::isnan(v)) REQUIRE(std::isnan(bits_float(emulated)));
    else REQUIRE(float_bits(t) == emulated);
  }
}

TEST_CASE("dtype: the error bound covers the float32 sum and the store's rounding", "[dtype]") {
  // One product of 1 x 1: no accumulation error beyond 1.01 x 2^-22 in half precision (the tensor
  // cores' truncating sums) and 1.01 x 2^-24 in float32, the rounding of 1 is exact.
  CHECK(dtype_error_bound(DType::kFp16, 1, 1.0, 1.0) == Approx(1.01 * 0x1p-22 + 0x1p-11 * (1 + 1.01 * 0x1p-22) + 0x1p-25));
  CHECK(dtype_error_bound(DType::kFp32, 1, 1.0, 1.0) == Approx(1.01 * 0x1p-24 + 0x1p-24 * (1 + 1.01 * 0x1p-24) + 0x1p-150));
  // It grows with the row's products and their magnitudes.
  CHECK(dtype_error_bound(DType::kBf16, 100, 50.0, 1.0) > dtype_error_bound(DType::kBf16, 10, 50.0, 1.0));
  CHECK(dtype_error_bound(DType::kBf16, 10, 50.0, 1.0) > dtype_error_bound(DType::kFp16, 10, 50.0, 1.0));
  // tf32: the tensor cores' sum (2^-22 per product, as fp16's, and float's quantum below its normal
  // range), C stored as float (its roundoff 2^-24, half its smallest subnormal 2^-150), not tf32's.
  const double tf32_one = 1.01 * 0x1p-22 + 0x1p-149;
  CHECK(dtype_error_bound(DType::kTf32, 1, 1.0, 1.0) == Approx(tf32_one + 0x1p-24 * (1 + tf32_one) + 0x1p-150).epsilon(1e-12));
  CHECK(dtype_error_bound(DType::kTf32, 10, 50.0, 1.0) < dtype_error_bound(DType::kFp16, 10, 50.0, 1.0));
  CHECK(dtype_error_bound(DType::kTf32, 10, 50.0, 1.0) > dtype_error_bound(DType::kFp32, 10, 50.0, 1.0));
  // Below float's normal range the absolute term keeps the bound above zero products' quantum.
  CHECK(dtype_error_bound(DType::kTf32, 4, 0.0, 0.0) >= 4 * 0x1p-149);
}

TEST_CASE("dtype: the tf32 bound holds for float32 sums of tf32 products, and is tight enough to fail", "[dtype]") {
  // The emulation's MMA sums each element's products in k order with fmaf; its sums stay within the
  // bound against float64. A kernel that did not round B (the MMA truncating B's low bits instead)
  // falls outside it.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  int outside_unrounded = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int k = 1 + trial % 32;
    float sum = 0.0f, truncated_sum = 0.0f;
    double exact = 0.0, abs_sum = 0.0;
    for (int i = 0; i < k; ++i) {
      const float a = round_to_dtype(value(rng), DType::kTf32), raw = value(rng);
      const float b = round_to_dtype(raw, DType::kTf32);
      sum = std::fma(a, b, sum);
      truncated_sum = std::fma(a, bits_float(float_bits(raw) & 0xffffe000u), truncated_sum);
      exact += static_cast<double>(a) * b;
      abs_sum += std::fabs(static_cast<double>(a) * b);
    }
    const double bound = dtype_error_bound(DType::kTf32, k, abs_sum, exact);
    REQUIRE(std::fabs(sum - exact) <= bound);
    outside_unrounded += std::fabs(truncated_sum - exact) > bound;
  }
  CHECK(outside_unrounded > 1000);
}

TEST_CASE("dtype: A's values rounded, tiny ones dropped, huge ones refused", "[dtype]") {
  Csr a;
  a.rows = 2, a.cols = 3;
  a.row_ptr = {0, 2, 3};
  a.col_idx = {0, 2, 1};
  a.values = {0.1f, 1e-9f, 2.0f};
  Csr h = a;
  const DTypeRounding r = round_values_to_dtype(h, DType::kFp16, "w.mtx");
  CHECK(r.changed == 2);  // 0.1 and 1e-9 (2.0 is a half)
  CHECK(r.to_zero == 1);
  CHECK(r.max_relative_change == Approx(1.0));  // 1e-9 -> 0
  CHECK(h.row_ptr == std::vector<int32_t>{0, 1, 2});
  CHECK(h.col_idx == std::vector<int32_t>{0, 1});
  CHECK(h.values == std::vector<float>{round_to_dtype(0.1f, DType::kFp16), 2.0f});
  Csr same = a;
  CHECK(round_values_to_dtype(same, DType::kFp32, "w.mtx").changed == 0);
  CHECK(same == a);
  Csr big = a;
  big.values[2] = 1e6f;
  try {
    round_values_to_dtype(big, DType::kFp16, "w.mtx");
    FAIL("accepted 1e6 in fp16");
  } catch (const UserError& e) {
    CHECK(e.code() == ExitCode::kDataError);
    CHECK(e.where().str() == "w.mtx");
    CHECK_THAT(e.message(), Catch::Contains("row 2, column 2"));
  }
  Csr in_bf16 = big;
  CHECK(round_values_to_dtype(in_bf16, DType::kBf16, "w.mtx").to_zero == 0);
  CHECK(in_bf16.values[2] == 999424.0f);  // 1e6 to 8 significant bits
  // tf32: 1e6 to 11 significant bits, 1e-9 kept (float's exponent range), 1e-42 (a subnormal float
  // below 2^-137) dropped, FLT_MAX refused.
  Csr in_tf32 = big;
  in_tf32.values[1] = 1e-42f;
  const DTypeRounding rt = round_values_to_dtype(in_tf32, DType::kTf32, "w.mtx");
  CHECK(rt.to_zero == 1);
  CHECK(rt.changed == 3);  // 0.1, 1e-42 and 1e6
  CHECK(in_tf32.values == std::vector<float>{round_to_dtype(0.1f, DType::kTf32), 999936.0f});  // 1e6 to 11 significant bits
  Csr tiny = a;  // 1e-9 survives in tf32
  CHECK(round_values_to_dtype(tiny, DType::kTf32, "w.mtx").to_zero == 0);
  Csr huge = a;
  huge.values[0] = std::numeric_limits<float>::max();
  try {
    round_values_to_dtype(huge, DType::kTf32, "w.mtx");
    FAIL("accepted FLT_MAX in tf32");
  } catch (const UserError& e) {
    CHECK(e.code() == ExitCode::kDataError);
    CHECK_THAT(e.message(), Catch::Contains("row 1, column 1") && Catch::Contains("tf32") && Catch::Contains("3.4012e38"));
  }
}

}  // namespace
}  // namespace spmmc
