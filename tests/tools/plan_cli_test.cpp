// spmmc plan end to end: output, JSON schema, bad input, and decisions that follow the target.
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace spmmc {
namespace {

using test::run_spmmc;

struct Fixture {
  test::TempDir dir;
  std::string layer = (dir.path / "layer.smtx").string();
  Fixture() {
    const auto r = run_spmmc({"gen", "patterns", "--rows", "256", "--cols", "256", "--sparsity", "0.9", "--patterns", "8",
                              "--seed", "3", "-o", layer, "--quiet"});
    REQUIRE(r.exit_code == 0);
  }
};

TEST_CASE("plan: text output has the reordering table, the grid and the survivors", "[plan-cli]") {
  Fixture f;
  const auto r = run_spmmc({"plan", f.layer, "--n", "4096"});
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("row reordering per M1"));
  CHECK_THAT(r.out, Catch::Contains("tile space (R register, H hardware utilisation, B load balance, * survivor)"));
  CHECK_THAT(r.out, Catch::Contains("space: 256 -> "));
  CHECK_THAT(r.out, Catch::Contains("survivors ("));
  // The launch axes of each survivor: V, threads per block and the register budget's min blocks.
  CHECK_THAT(r.out, Catch::Contains("  V threads min_blocks"));
}

TEST_CASE("plan: --json follows the documented schema and agrees with itself", "[plan-cli]") {
  Fixture f;
  const auto r = run_spmmc({"plan", f.layer, "--n", "4096", "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "spmmc.plan/1");
  CHECK(j["n"] == 4096);
  CHECK(j["target"]["name"] == "h100");
  CHECK(j["feature_schema_version"] == 4);
  CHECK(j["reordering"].size() == 8);
  CHECK(j["candidates"].size() == 256);
  const auto& space = j["space"];
  CHECK(space["all"] == 256);
  CHECK(space["after_balance"] == j["survivors"].size());
  int64_t kept = 0;
  for (const auto& c : j["candidates"]) kept += c["rejected_by"] == "none";
  CHECK(kept == space["after_balance"].get<int64_t>());
  for (const auto& m1 : j["reordering"]) CHECK(m1["after"]["max_nnc"] <= m1["before"]["max_nnc"]);
  // 8 row patterns of about 26 columns: reordering recovers tiles of one pattern at M1 = 2.
  CHECK(j["reordering"][1]["after"]["max_nnc"] < j["reordering"][1]["before"]["max_nnc"]);
  const auto& s = j["survivors"][0];
  for (const char* key : {"a_tile_num", "b_tile_num", "block_num", "sparsity", "nnc_sum", "nnz_max", "m1", "n1", "k",
                          "blocks_per_a_tile", "b_tiles_per_block", "wave_fill", "resident_warps_per_sm", "kernels", "family"})
    CHECK(s["features"].contains(key));
  CHECK(s["features"]["family"] == 0);
  // The generic family's candidate beside the survivors.
  CHECK(j["generic"]["family"] == "generic");
  CHECK(j["generic"]["features"]["family"] == 1);
  CHECK(j["generic"]["features"]["nnc_sum"] == j["matrix"]["nnz"]);
}

TEST_CASE("plan: decisions change with the target", "[plan-cli]") {
  Fixture f;
  auto survivors = [&](const char* target) {
    const auto r = run_spmmc({"plan", f.layer, "--n", "256", "--json", "--target", target});
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["space"]["after_hardware"].get<int64_t>();
  };
  // Fewer SMs need fewer thread blocks: the L4 (58 SMs) keeps more than the H100 (132).
  CHECK(survivors("l4") > survivors("h100"));
  const auto by_arch = run_spmmc({"plan", f.layer, "--n", "256", "--json", "--arch", "sm_89"});
  REQUIRE(by_arch.exit_code == 0);
  CHECK(nlohmann::json::parse(by_arch.out)["target"]["name"] == "l4");
}

TEST_CASE("plan: bad input is a clear error with a non-zero exit", "[plan-cli][errors]") {
  Fixture f;
  CHECK(run_spmmc({"plan", f.layer}).exit_code == 64);  // no --n
  CHECK(run_spmmc({"plan", f.layer, "--n", "0"}).exit_code == 64);
  CHECK(run_spmmc({"plan", f.layer, "--n", "-5"}).exit_code == 64);
  const auto target = run_spmmc({"plan", f.layer, "--n", "64", "--target", "nosuchgpu"});
  CHECK(target.exit_code == 64);
  CHECK_THAT(target.err, Catch::Contains("unknown target 'nosuchgpu'"));
  CHECK(run_spmmc({"plan", f.layer, "--n", "64", "--th-row", "-1"}).exit_code == 64);
  CHECK(run_spmmc({"plan", f.layer, "--n", "64", "--th-col", "2"}).exit_code == 64);
  CHECK(run_spmmc({"plan", f.layer, "--n", "64", "--reorder", "magic"}).exit_code == 64);
  CHECK(run_spmmc({"plan", f.layer, "--n", "64", "--target", "h100", "--arch", "sm_90"}).exit_code == 64);

  test::write_file(f.dir.path / "empty.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 0\n");
  const auto empty = run_spmmc({"plan", (f.dir.path / "empty.mtx").string(), "--n", "64"});
  CHECK(empty.exit_code == 65);
  CHECK_THAT(empty.err, Catch::Contains("no non-zeros"));

  // A tiny matrix and n: too few thread blocks for 132 SMs whatever the tile.
  test::write_file(f.dir.path / "tiny.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n");
  const auto none = run_spmmc({"plan", (f.dir.path / "tiny.mtx").string(), "--n", "32"});
  CHECK(none.exit_code == 65);
  CHECK_THAT(none.err, Catch::Contains("no tile candidate survives: the hardware constraint removed the last"));
  CHECK_THAT(none.err, Catch::Contains("--n"));
}

}  // namespace
}  // namespace spmmc
