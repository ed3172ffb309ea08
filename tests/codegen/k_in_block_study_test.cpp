// The study hook SPMMC_STUDY_K_IN_BLOCK (codegen/templates/kernel_k_in_block.cuh): a --k-parts file whose
// ranges of K run in one block gives C bit for bit as the chain of kernels of the same file does, on
// the CPU emulation, at every n (the unrolled kernel at every n: --generic-below 0).
#include <cmath>
#include <cstring>
#include <random>

#include "compiler/formats/write_matrix.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

// C of the emitted file NAME in `dir` built for the emulation, for seeded B (K x n) at each n.
std::vector<std::vector<float>> run_file(const fs::path& dir, const std::string& name, int32_t m, int32_t k,
                                         const std::vector<int64_t>& ns) {
  const auto kernel = test::emulate_emitted(dir / (name + ".cu"), name);
  std::vector<std::vector<float>> out;
  for (const int64_t n : ns) {
    const std::vector<float> b = test::seeded_b(k, n, static_cast<uint64_t>(n));
    std::vector<float> c(static_cast<size_t>(m * n), std::nanf(""));
    // (no bounds for the emulation's PTX: the ranges' stores go to the block's shared memory, which they do not cover)
    REQUIRE(kernel->entry(b.data(), c.data(), n, nullptr) == 0);
    out.push_back(std::move(c));
  }
  return out;
}

TEST_CASE("k-in-block study hook: the ranges in one block give the chain's bits", "[codegen][emulation]") {
  test::TempDir dir;
  // 70 x 300, about 20% dense, a few rows empty in the middle range of K (slots without products there).
  const int32_t m = 70, k = 300;
  std::vector<float> dense(static_cast<size_t>(m * k), 0.0f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::bernoulli_distribution present(0.2);
  for (int32_t r = 0; r < m; ++r)
    for (int32_t c = 0; c < k; ++c)
      if (present(rng) && !(r % 9 == 0 && c >= 100 && c < 200)) dense[static_cast<size_t>(r * k + c)] = value(rng);
  const Csr a = test::csr_from_dense(m, k, dense);
  const fs::path matrix = dir.path / "a.mtx";
  write_matrix(a, matrix.string(), MatrixFormat::kMatrixMarket, "k_in_block_study_test");
  const std::vector<int64_t> ns = {1, 2, 5, 64, 66, 130, 200};
  for (const auto& [tile, parts] : std::vector<std::pair<std::string, int>>{{"16x64", 4}, {"8x64x2", 3}, {"4x32", 8}}) {
    INFO("--tile " << tile << " --k-parts " << parts);
    const std::vector<std::string> args = {"compile", matrix.string(), "--n", "256", "--tile", tile, "--k-parts",
                                           std::to_string(parts), "--generic-below", "0", "--balanced-below", "0",
                                           "-o", dir.path.string(), "--quiet"};
    std::vector<std::string> chain = args, block = args;
    chain.insert(chain.end(), {"--name", "chain"});
    block.insert(block.end(), {"--name", "block"});
    const auto emitted_chain = test::run_spmmc(chain);
    INFO(emitted_chain.err);
    REQUIRE(emitted_chain.exit_code == 0);
    const auto emitted_block = test::run_spmmc(block, "SPMMC_STUDY_K_IN_BLOCK=1");
    INFO(emitted_block.err);
    REQUIRE(emitted_block.exit_code == 0);
    const std::string cu = test::read_file(dir.path / "block.cu");
    CHECK(cu.find("#define SPMMC_K_IN_BLOCK 1") != std::string::npos);
    CHECK(cu.find("griddepcontrol.wait;\\n") == std::string::npos);
    CHECK(test::read_file(dir.path / "chain.cu").find("#define SPMMC_K_IN_BLOCK 1") == std::string::npos);
    const auto want = run_file(dir.path, "chain", m, k, ns);
    const auto got = run_file(dir.path, "block", m, k, ns);
    for (size_t i = 0; i < ns.size(); ++i) {
      INFO("n = " << ns[i]);
      REQUIRE(got[i].size() == want[i].size());
      CHECK(std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)) == 0);
    }
  }
}

}  // namespace
}  // namespace spmmc
