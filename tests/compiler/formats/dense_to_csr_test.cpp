#include "compiler/formats/dense_to_csr.h"

#include <cstring>
#include <limits>
#include <sstream>

#include "tests/test_util.h"

namespace spmmc {
namespace {

template <typename T>
std::string bytes_of(const std::vector<T>& v, size_t prefix = 0) {
  std::string s(prefix, 'x');
  s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  return s;
}

TEST_CASE("dense: C and Fortran order give the same CSR", "[dense]") {
  // 2x3 matrix [[1 0 2] [0 3 0]]
  const std::vector<float> c_order = {1, 0, 2, 0, 3, 0};
  const std::vector<float> f_order = {1, 0, 0, 3, 2, 0};
  DenseLayout layout;
  layout.rows = 2;
  layout.cols = 3;
  layout.data_offset = 5;
  DenseCounts counts;
  std::istringstream c_in(bytes_of(c_order, 5));
  const Csr a = dense_to_csr(c_in, layout, 0.0, "t", counts);
  CHECK(counts.zeros_dropped == 3);
  layout.column_major = true;
  std::istringstream f_in(bytes_of(f_order, 5));
  DenseCounts f_counts;
  const Csr b = dense_to_csr(f_in, layout, 0.0, "t", f_counts);
  CHECK(a == b);
  CHECK(a.col_idx == std::vector<int32_t>{0, 2, 1});
  CHECK(a.values == std::vector<float>{1, 2, 3});
}

TEST_CASE("dense: float64, threshold and big-endian", "[dense]") {
  std::vector<double> d = {0.5, -0.01, 0.0, 2.0};
  std::string bytes = bytes_of(d);
  DenseLayout layout;
  layout.dtype = DenseDType::kF64;
  layout.rows = 2;
  layout.cols = 2;
  DenseCounts counts;
  std::istringstream in(bytes);
  const Csr a = dense_to_csr(in, layout, 0.1, "t", counts);
  CHECK(a.values == std::vector<float>{0.5f, 2.0f});
  CHECK(counts.pruned_by_threshold == 1);
  CHECK(counts.zeros_dropped == 1);
  // Byte-swap every element and read as big-endian.
  for (size_t i = 0; i < d.size(); ++i) std::reverse(bytes.begin() + static_cast<long>(8 * i), bytes.begin() + static_cast<long>(8 * i + 8));
  layout.little_endian = false;
  std::istringstream be(bytes);
  DenseCounts be_counts;
  CHECK(dense_to_csr(be, layout, 0.1, "t", be_counts) == a);
}

TEST_CASE("dense: half and bfloat16 conversions are exact", "[dense]") {
  CHECK(half_to_float(0x3C00) == 1.0f);
  CHECK(half_to_float(0xC000) == -2.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(half_to_float(0x7BFF) == 65504.0f);
  CHECK(std::isinf(half_to_float(0x7C00)));
  CHECK(std::isnan(half_to_float(0x7E00)));
  CHECK(bfloat16_to_float(0x3F80) == 1.0f);
  CHECK(bfloat16_to_float(0xC0A0) == -5.0f);
}

TEST_CASE("dense: NaN, Inf, overflow and truncation are data errors with a byte offset", "[dense][errors]") {
  DenseLayout layout;
  layout.rows = 1;
  layout.cols = 3;
  layout.data_offset = 8;
  SECTION("nan") {
    std::istringstream in(bytes_of(std::vector<float>{1, std::numeric_limits<float>::quiet_NaN(), 1}, 8));
    DenseCounts counts;
    const UserError e = test::expect_user_error([&] { dense_to_csr(in, layout, 0, "w.npy", counts); });
    CHECK(std::string(e.what()) == "w.npy:byte 12: error: element (0, 1) is nan: weights must be finite float32 values");
  }
  SECTION("float64 beyond float range") {
    layout.dtype = DenseDType::kF64;
    std::istringstream in(bytes_of(std::vector<double>{1, 1, 1e300}, 8));
    DenseCounts counts;
    const UserError e = test::expect_user_error([&] { dense_to_csr(in, layout, 0, "w.npy", counts); });
    CHECK(e.where().byte == 24);
  }
  SECTION("truncated") {
    std::istringstream in(bytes_of(std::vector<float>{1, 2}, 8));
    DenseCounts counts;
    const UserError e = test::expect_user_error([&] { dense_to_csr(in, layout, 0, "w.npy", counts); });
    CHECK_THAT(e.message(), Catch::Contains("truncated"));
    CHECK(e.where().byte == 16);
  }
}

}  // namespace
}  // namespace spmmc
