// The host side of spmmc-gpu-bench (tools/gpu_bench/bench_host.h): --dtype, and the checks that
// decide whether a half-precision kernel passed (its error against float64 within the bound of
// docs/design/precision.md), which no GPU is needed to exercise.
#include "tools/gpu_bench/bench_host.h"

#include <cmath>
#include <limits>

#include "runtime/reference_spmm.h"
#include "tests/test_util.h"

namespace spmmc::gpu_bench {
namespace {

TEST_CASE("gpu bench: --dtype is parsed and checked", "[gpu-bench][dtype]") {
  const std::vector<std::string> base = {"--matrix", "a.mtx", "--n", "8", "--kernel", "libk.so", "--name", "k"};
  CHECK(parse_bench_options(base).dtype == DType::kFp32);
  auto with = base;
  with.insert(with.end(), {"--dtype", "bf16"});
  CHECK(parse_bench_options(with).dtype == DType::kBf16);
  with.back() = "half";
  try {
    parse_bench_options(with);
    FAIL("accepted --dtype half");
  } catch (const BenchFailure& e) {
    CHECK(e.exit_code() == kExitUsage);
    CHECK_THAT(std::string(e.what()), Catch::Contains("--dtype: unknown type 'half'"));
  }
  CHECK(std::string(dense_gemm_name(DType::kFp16)) == "HGEMM");
  CHECK(std::string(dense_gemm_name(DType::kFp32)) == "SGEMM");
}

TEST_CASE("gpu bench: a half-precision C passes within the bound and fails beyond it", "[gpu-bench][dtype]") {
  // A = [[0.1, 3], [0, 0.7]] rounded to fp16, B (2 x 3) of fp16 values.
  Csr a;
  a.rows = 2, a.cols = 2;
  a.row_ptr = {0, 2, 3};
  a.col_idx = {0, 1, 1};
  a.values = {0.1f, 3.0f, 0.7f};
  round_values_to_dtype(a, DType::kFp16, "a");
  std::vector<float> b = {0.5f, -1.25f, 0.3f, 2.0f, 0.0625f, -0.9f};
  for (float& x : b) x = round_to_dtype(x, DType::kFp16);
  const int64_t n = 3;
  const std::vector<double> want = reference_spmm(a, b, n);
  const std::vector<double> bound = error_bounds(a, b, n, DType::kFp16, want, false);
  REQUIRE(bound.size() == 6);
  for (double x : bound) CHECK(x > 0.0);
  // The bound of a row of one product: that product's store rounding (and 2^-24 of it).
  CHECK(bound[3] == Approx(dtype_error_bound(DType::kFp16, 1, std::fabs(double(a.values[2]) * b[3]), want[3])));
  // A dense GEMM sums K = 2 products in every row: a larger bound for the row of one non-zero.
  CHECK(error_bounds(a, b, n, DType::kFp16, want, true)[3] > bound[3]);
  // C as a correct kernel stores it: each float64 value rounded to fp16.
  std::vector<uint16_t> c(6);
  for (size_t i = 0; i < c.size(); ++i) c[i] = to_half_bits(static_cast<float>(want[i]), DType::kFp16);
  Check ok = check_half_result(c, DType::kFp16, want, bound);
  CHECK(ok.passed);
  CHECK(ok.non_finite == 0);
  CHECK(ok.max_bound_ratio <= 1.0);
  CHECK(ok.rel_error < 1e-3);
  // Four half ulps off in one element: beyond its bound.
  std::vector<uint16_t> off = c;
  off[1] = static_cast<uint16_t>(off[1] + 4);
  const Check bad = check_half_result(off, DType::kFp16, want, bound);
  CHECK_FALSE(bad.passed);
  CHECK(bad.max_bound_ratio > 1.0);
  // A NaN left in C (0xFFFF, the fill) fails whatever the rest.
  off = c;
  off[5] = 0xffff;
  const Check nan = check_half_result(off, DType::kFp16, want, bound);
  CHECK_FALSE(nan.passed);
  CHECK(nan.non_finite == 1);
}

}  // namespace
}  // namespace spmmc::gpu_bench
