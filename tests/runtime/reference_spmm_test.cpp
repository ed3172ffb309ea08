#include "runtime/reference_spmm.h"

#include <random>

#include "tests/test_util.h"

namespace spmmc {
namespace {

// Naive dense product in double, the oracle for the oracle.
std::vector<double> dense_product(const std::vector<float>& a, int32_t m, int32_t k, const std::vector<float>& b, int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int32_t i = 0; i < m; ++i)
    for (int32_t l = 0; l < k; ++l)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += static_cast<double>(a[i * k + l]) * b[l * n + j];
  return c;
}

TEST_CASE("reference SpMM equals the dense product on awkward shapes", "[reference]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1, 1);
  const struct {
    int32_t m, k;
    int64_t n;
    double density;
  } shapes[] = {{7, 96, 40, 0.1}, {1, 1, 1, 1.0}, {5, 1, 3, 0.5}, {1, 33, 17, 0.3}, {64, 64, 1, 0.05}, {13, 7, 129, 0.0}, {500, 400, 300, 0.2}};
  for (const auto& s : shapes) {
    std::vector<float> dense(static_cast<size_t>(s.m) * s.k, 0.0f);
    for (auto& x : dense)
      if (std::uniform_real_distribution<double>(0, 1)(rng) < s.density) x = value(rng);
    dense[0] = 0.75f;  // at least one non-zero
    std::vector<float> b(static_cast<size_t>(s.k * s.n));
    for (auto& x : b) x = value(rng);
    const Csr a = test::csr_from_dense(s.m, s.k, dense);
    const std::vector<double> want = dense_product(dense, s.m, s.k, b, s.n);
    for (unsigned threads : {1u, 4u}) {
      const std::vector<double> got = reference_spmm(a, b, s.n, threads);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == Approx(want[i]).margin(1e-12));
    }
  }
}

TEST_CASE("reference SpMM writes zero rows for empty rows of A", "[reference]") {
  const Csr a = test::csr_from_dense(3, 2, {0, 0, 1, 2, 0, 0});
  std::vector<double> c(6, 123.0);
  const std::vector<float> b = {1, 2, 3, 4};
  reference_spmm(a, b.data(), 2, c.data(), 1);
  CHECK(c == std::vector<double>{0, 0, 7, 10, 0, 0});
}

TEST_CASE("relative Frobenius error", "[reference]") {
  const std::vector<double> want = {3, 4};
  const std::vector<float> exact = {3, 4}, off = {3, 4.5f};
  CHECK(relative_frobenius_error(exact.data(), want.data(), 2) == 0.0);
  CHECK(relative_frobenius_error(off.data(), want.data(), 2) == Approx(0.1));
}

}  // namespace
}  // namespace spmmc
