// The element types of --dtype (compiler/common/dtype.h): names, rounding to fp16 and bf16 (ties to
// even, subnormals, overflow, NaN), the 16-bit forms, the error bound, and rounding A's values.
#include "compiler/common/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

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

TEST_CASE("dtype: names parse and print", "[dtype]") {
  for (const DType d : {DType::kFp32, DType::kFp16, DType::kBf16}) {
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
}

}  // namespace
}  // namespace spmmc
