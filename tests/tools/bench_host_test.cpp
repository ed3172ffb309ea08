// The host side of spmmc-gpu-bench (tools/gpu_bench/bench_host.h): --dtype, and the checks that
// decide whether a half-precision or tf32 kernel passed (its error against float64 within the bound
// of docs/design/precision.md), the result line and the JSON record the scripts read, which no GPU
// is needed to exercise.
#include "tools/gpu_bench/bench_host.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/reference_spmm.h"
#include "tests/test_util.h"

namespace spmmc::gpu_bench {
namespace {

// The message of the usage error (exit 64) parse_bench_options gives for `args`; empty where it accepts them.
std::string usage_error_of(const std::vector<std::string>& args) {
  try {
    parse_bench_options(args);
  } catch (const BenchFailure& e) {
    CHECK(e.exit_code() == kExitUsage);
    return e.what();
  }
  return "";
}

TEST_CASE("gpu bench: --threshold and --tensor read A as spmmc compile reads it", "[gpu-bench]") {
  // kernel-study.sh and batch-study.sh pass a case's read options on to the bench; dense weights
  // thresholded at compile time must be thresholded the same way here, or A would not match.
  test::TempDir dir;
  const auto npy = dir.path / "w.npy";
  REQUIRE(test::run_spmmc({"gen", "uniform", "--rows", "16", "--cols", "32", "--sparsity", "0.5", "--values", "uniform",
                           "-q", "-o", npy.string()}).exit_code == 0);
  std::vector<std::string> args = {"--matrix", npy.string(), "--n", "8", "--kernel", "libk.so", "--name", "k"};
  const Csr all = load_matrix(parse_bench_options(args));
  REQUIRE(all.nnz() == 256);
  double median = 0;
  {
    std::vector<float> v(all.values.begin(), all.values.end());
    for (float& x : v) x = std::fabs(x);
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    median = v[v.size() / 2];
  }
  args.insert(args.end(), {"--threshold", fmt::format("{}", median)});
  const Csr kept = load_matrix(parse_bench_options(args));
  CHECK(kept.nnz() > 0);
  CHECK(kept.nnz() < all.nnz());
  for (float x : kept.values) CHECK(std::fabs(x) > median);
  args.back() = "-1";
  CHECK_FALSE(usage_error_of(args).empty());  // refused: --threshold -1
  args.insert(args.end() - 2, {"--tensor", "weights"});
  args.back() = "0";
  CHECK(parse_bench_options(args).read.tensor == "weights");
  CHECK_THAT(usage_text(), Catch::Contains("--threshold T") && Catch::Contains("--tensor NAME"));
}

TEST_CASE("gpu bench: --dtype is parsed and checked", "[gpu-bench][dtype]") {
  const std::vector<std::string> base = {"--matrix", "a.mtx", "--n", "8", "--kernel", "libk.so", "--name", "k"};
  CHECK(parse_bench_options(base).dtype == DType::kFp32);
  auto with = base;
  with.insert(with.end(), {"--dtype", "bf16"});
  CHECK(parse_bench_options(with).dtype == DType::kBf16);
  with.back() = "half";
  CHECK_THAT(usage_error_of(with), Catch::Contains("--dtype: unknown type 'half'"));
  CHECK(std::string(dense_gemm_name(DType::kFp16)) == "HGEMM");
  CHECK(std::string(dense_gemm_name(DType::kFp32)) == "SGEMM");
  with.back() = "tf32";
  CHECK(parse_bench_options(with).dtype == DType::kTf32);
  CHECK(std::string(dense_gemm_name(DType::kTf32)) == "TF32 GEMM");
  CHECK_THAT(usage_text(), Catch::Contains("fp32 (default), fp16, bf16 or tf32"));
  CHECK_THAT(usage_text(), Catch::Contains("CUBLAS_COMPUTE_32F_FAST_TF32"));
}

TEST_CASE("gpu bench: --dense-limit is parsed and checked", "[gpu-bench]") {
  const std::vector<std::string> base = {"--matrix", "a.mtx", "--n", "8", "--kernel", "libk.so", "--name", "k"};
  CHECK(parse_bench_options(base).dense_limit_mib == 4096);
  auto with = base;
  with.insert(with.end(), {"--dense-limit", "0"});
  CHECK(parse_bench_options(with).dense_limit_mib == 0);
  with.back() = "-1";
  CHECK_THAT(usage_error_of(with), Catch::Contains("--dense-limit"));
  CHECK_THAT(usage_text(), Catch::Contains("--dense-limit MIB"));
}

TEST_CASE("gpu bench: tf32 is checked against A and B rounded to tf32, within its bound", "[gpu-bench][dtype]") {
  CHECK(checked_by_bound(DType::kTf32));
  CHECK(checked_by_bound(DType::kFp16));
  CHECK_FALSE(checked_by_bound(DType::kFp32));
  // A rounded as spmmc rounds it (ties away from zero), B rounded for the reference only.
  Csr a;
  a.rows = 2, a.cols = 2;
  a.row_ptr = {0, 2, 3};
  a.col_idx = {0, 1, 1};
  a.values = {0.1f, 0x1.002p0f, 0.7f};
  round_values_to_dtype(a, DType::kTf32, "a");
  CHECK(a.values[1] == 0x1.004p0f);
  const std::vector<float> drawn = {0.5f, -1.25f, 0.3f, 0x1.002p1f, 0.0625f, -0.9f};
  const std::vector<float> b = rounded_b(drawn, DType::kTf32);
  CHECK(b[3] == 0x1.004p1f);                        // a tie, away from zero
  CHECK(b[2] == round_to_dtype(0.3f, DType::kTf32));
  CHECK(b[2] != 0.3f);
  CHECK(rounded_b(drawn, DType::kFp32) == drawn);  // fp32: B as drawn
  const int64_t n = 3;
  const std::vector<double> want = reference_spmm(a, b, n);
  const std::vector<double> bound = error_bounds(a, b, n, DType::kTf32, want, false);
  // The float32 sums of the tf32 products pass; so does the float64 result itself.
  std::vector<float> c(6);
  for (int32_t r = 0; r < a.rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) sum = std::fma(a.values[p], b[a.col_idx[p] * n + j], sum);
      c[static_cast<size_t>(r * n + j)] = sum;
    }
  const Check ok = check_bounded_result(c, want, bound);
  CHECK(ok.passed);
  CHECK(ok.max_bound_ratio <= 1.0);
  // What a kernel that multiplied B unrounded would give (0.3 in float32, not tf32): beyond the bound.
  std::vector<float> unrounded = c;
  unrounded[2] = std::fma(a.values[1], drawn[5], a.values[0] * drawn[2]);
  const Check bad = check_bounded_result(unrounded, want, bound);
  CHECK_FALSE(bad.passed);
  CHECK(bad.max_bound_ratio > 1.0);
  std::vector<float> with_nan = c;
  with_nan[4] = std::numeric_limits<float>::quiet_NaN();
  CHECK(check_bounded_result(with_nan, want, bound).non_finite == 1);

  // The line and the record: the dense column is the TF32 GEMM, errors as ratios to the bound,
  // cuSPARSE in FP32 said so.
  BenchResult r;
  r.matrix = "a.mtx";
  r.dtype = DType::kTf32;
  r.m = 2, r.k = 2, r.n = n, r.nnz = a.nnz();
  r.m1 = 8, r.n1 = 64;
  r.spmmc_check = ok;
  r.spmmc_timing = TimingStats{1, 0.5, 0.5, 0.5, 0.5};
  BaselineAlgorithm alg;
  alg.name = "CSR_ALG2";
  alg.status = "ok";
  alg.check = ok;
  alg.timing = TimingStats{1, 1.0, 1.0, 1.0, 1.0};
  r.cusparse.push_back(alg);
  r.cusparse_best = 0;
  r.sgemm_check = ok;
  r.sgemm_timing = TimingStats{1, 0.25, 0.25, 0.25, 0.25};
  decide_pass(r);
  CHECK(r.passed);
  const std::string line = result_line(r);
  CHECK_THAT(line, Catch::StartsWith("PASS a.mtx M=2 K=2 n=3"));
  CHECK_THAT(line, Catch::Contains("dtype=tf32"));
  CHECK_THAT(line, Catch::Contains("| TF32 GEMM 0.2500 ms"));
  CHECK_THAT(line, Catch::Contains("x0.50 vs TF32 GEMM"));
  CHECK_THAT(line, Catch::Contains("x2.00 vs cuSPARSE"));
  CHECK_THAT(line, Catch::Contains("| error/bound spmmc "));
  test::TempDir dir;
  const auto path = dir.path / "r.jsonl";
  append_json(path.string(), r);
  const auto j = nlohmann::json::parse(test::read_file(path));
  CHECK(j["dtype"] == "tf32");
  CHECK(j["dense_gemm"] == "TF32 GEMM");
  CHECK_THAT(j["sgemm_math"].get<std::string>(), Catch::Contains("CUBLAS_COMPUTE_32F_FAST_TF32"));
  CHECK_THAT(j["cusparse_math"].get<std::string>(), Catch::Contains("no TF32 compute type"));
  CHECK(j["speedup_vs_sgemm"].get<double>() == Approx(0.5));  // what scripts/kernel-study.sh reads as x dense GEMM
  CHECK(j["spmmc_bound_ratio"].is_number());                  // and its error column
  CHECK(j["sgemm_bound_ratio"].is_number());
  // A wrong result fails against the bound, and says so.
  r.spmmc_check = bad;
  decide_pass(r);
  CHECK_FALSE(r.passed);
  CHECK_THAT(r.failure, Catch::Contains("its bound (docs/design/precision.md)"));
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
