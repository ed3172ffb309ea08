// The study hook SPMMC_STUDY_UNION_ROWS (codegen/templates/kernel_generic.cuh): a generic-family file whose
// warp per row takes two or four rows over the union of their columns gives C bit for bit as the file
// without it does, on the CPU emulation, at n where the warp kernel runs (and at one where it does not),
// with a row of B of infinities that only some rows of a group multiply.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/formats/write_matrix.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kInfiniteRow = 17;  // the row of B set to +inf

// C of the emitted file NAME in `dir` built for the emulation, for seeded B (K x n) at each n.
std::vector<std::vector<float>> run_file(const fs::path& dir, const std::string& name, int32_t m, int32_t k,
                                         const std::vector<int64_t>& ns) {
  const auto kernel = test::emulate_emitted(dir / (name + ".cu"), name);
  std::vector<std::vector<float>> out;
  for (const int64_t n : ns) {
    std::vector<float> b = test::seeded_b(k, n, static_cast<uint64_t>(n));
    std::fill_n(b.begin() + kInfiniteRow * n, n, std::numeric_limits<float>::infinity());
    std::vector<float> c(static_cast<size_t>(m * n), std::nanf(""));
    REQUIRE(kernel->entry(b.data(), c.data(), n, nullptr) == 0);
    out.push_back(std::move(c));
  }
  return out;
}

// m x k, about `density` dense, every ninth row empty, column kInfiniteRow in every fifth other row only.
std::vector<float> union_test_matrix(int32_t m, int32_t k, double density, unsigned seed) {
  std::vector<float> dense(static_cast<size_t>(m * k), 0.0f);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::bernoulli_distribution present(density);
  for (int32_t r = 0; r < m; ++r)
    for (int32_t c = 0; c < k; ++c)
      if (r % 9 != 4 && (c == kInfiniteRow ? r % 5 == 0 : present(rng))) dense[static_cast<size_t>(r * k + c)] = value(rng);
  return dense;
}

// The files of A (m x k) with and without the hook, R = 2 and 4, give the same C at each n.
void check_union_rows(const fs::path& dir, const std::string& tag, int32_t m, int32_t k, const std::vector<float>& dense,
                      const std::vector<int64_t>& ns) {
  const Csr a = test::csr_from_dense(m, k, dense);
  const fs::path matrix = dir / (tag + ".mtx");
  write_matrix(a, matrix.string(), MatrixFormat::kMatrixMarket, "union_rows_study_test");
  const std::vector<std::string> args = {"compile", matrix.string(), "--n", "1024", "--family", "generic", "--tune",
                                         "none", "--balanced-below", "0", "-o", dir.string(), "--quiet"};
  const auto emit = [&](const std::string& name, const std::string& env) {
    std::vector<std::string> with_name = args;
    with_name.insert(with_name.end(), {"--name", name});
    const auto r = env.empty() ? test::run_spmmc(with_name) : test::run_spmmc(with_name, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  };
  emit(tag + "_plain", "");
  CHECK(test::read_file(dir / (tag + "_plain.cu")).find("#define SPMMC_UNION_ROWS") == std::string::npos);
  const auto want = run_file(dir, tag + "_plain", m, k, ns);
  for (const int rows : {2, 4}) {
    INFO(rows << " rows a warp");
    const std::string name = tag + "_union" + std::to_string(rows);
    emit(name, "SPMMC_STUDY_UNION_ROWS=" + std::to_string(rows));
    CHECK(test::read_file(dir / (name + ".cu")).find("#define SPMMC_UNION_ROWS " + std::to_string(rows)) != std::string::npos);
    const auto got = run_file(dir, name, m, k, ns);
    for (size_t i = 0; i < ns.size(); ++i) {
      INFO("n = " << ns[i]);
      REQUIRE(got[i].size() == want[i].size());
      CHECK(std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("union study hook: rows over the union of their columns give the warp per row's bits", "[codegen][emulation]") {
  test::TempDir dir;
  // 70 x 300 (groups of 4 end with a group of 2) at n = 64 (four columns per thread) and where the warp
  // kernel in blocks of 8 runs; 40 x 2048 where the wide warp kernel does (A of 2048 columns, and at
  // n = 512 its one block of 32 groups x 4 blocks of 128 columns fills the emulation's 4 SMs).
  SECTION("blocks of 8") { check_union_rows(dir.path, "short", 70, 300, union_test_matrix(70, 300, 0.2, 11), {64, 512, 516, 640}); }
  SECTION("blocks of 32") { check_union_rows(dir.path, "long", 40, 2048, union_test_matrix(40, 2048, 0.03, 12), {512, 640}); }
}

}  // namespace
}  // namespace spmmc
