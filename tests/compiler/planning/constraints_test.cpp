// The constraints and features on the toy device of LO-SpMM Fig. 3 (8x8 matrix, M1 and N1 from
// 1 to 8, warp size 2, 8 SMs, at most 6 registers per thread and 24 per block), every decision
// computed by hand. The figure's matrix is not in the paper's text; this one has the row
// non-zero counts the text states (rows 0-3: 15, rows 4-7: 15; rows 0-5: 22, rows 6-7: 8).
// Counts: 64 -> 38 -> 18 -> 10 here, 64 -> 38 -> 12 -> 6 in the paper; docs/design/planning.md
// explains the difference.
#include "compiler/planning/constraints.h"

#include "compiler/planning/features.h"
#include "compiler/planning/plan_tiles.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

Csr toy_matrix() {
  const int32_t rows[8][8] = {
      {1, 1, 1, 1, 0, 0, 0, 0}, {1, 1, 0, 0, 1, 1, 0, 0}, {0, 0, 1, 1, 0, 0, 1, 1}, {1, 0, 0, 0, 1, 0, 1, 0},
      {0, 1, 0, 1, 0, 1, 0, 1}, {1, 0, 1, 0, 1, 0, 0, 0}, {0, 1, 1, 0, 0, 1, 1, 0}, {0, 0, 0, 1, 1, 0, 1, 1}};
  std::vector<float> dense;
  for (const auto& r : rows)
    for (int32_t v : r) dense.push_back(static_cast<float>(v));
  return test::csr_from_dense(8, 8, dense);
}

Target toy_target() { return load_target(std::string(SPMMC_TEST_DATA) + "/targets/lo-spmm-fig3.json"); }

Plan toy_plan() {
  PlanOptions options;
  options.n = 8;
  options.reorder = ReorderMethod::kNone;  // the figure's tiles are consecutive rows
  options.constraints.extra_registers_per_column = 0;  // the figure counts accumulators only
  options.constraints.addressing_registers = 0;
  options.axes.m1 = {1, 2, 3, 4, 5, 6, 7, 8};
  options.axes.n1 = {1, 2, 3, 4, 5, 6, 7, 8};
  return plan_tiles(toy_matrix(), toy_target(), options);
}

// The grid: rows M1 = 1..8, columns N1 = 1..8; R, H, B rejected by that constraint, * kept.
std::vector<std::string> grid(const Plan& plan) {
  std::vector<std::string> rows(8, std::string(8, '?'));
  for (const auto& c : plan.candidates) {
    const char mark = c.verdict.accepted() ? '*' : "-RHB"[static_cast<int>(c.verdict.rejected_by)];
    rows[static_cast<size_t>(c.tile.m1 - 1)][static_cast<size_t>(c.tile.n1 - 1)] = mark;
  }
  return rows;
}

TEST_CASE("constraints: the toy device of LO-SpMM Fig. 3, decision by decision", "[constraints]") {
  const Plan plan = toy_plan();
  // Register: M1 registers per thread <= 6 and M1 * N1 <= 24 per block.
  // Hardware: N1 even (warp 2) and ceil(8/M1) * ceil(8/N1) >= 4 blocks (half of 8 SMs).
  // Balance: WASTE_col of N1 = 6 is 4/12 > 0.25; COV_row of M1 = 5 ([19, 11]: 0.267) and
  // M1 = 6 ([22, 8]: 0.467) exceed 0.25; M1 = 1..4 are balanced (0.115, 0.067, 0.163, 0).
  const std::vector<std::string> expected = {
      "H*H*HBH*",  // M1 1
      "H*H*HBH*",  // M1 2
      "H*H*HBHH",  // M1 3: 3 tiles x 1 B-tile = 3 blocks at N1 = 8
      "H*H*HBRR",  // M1 4: 4 * 7 = 28 > 24 registers per block
      "HBHBRRRR",  // M1 5: COV 0.267
      "HBHBRRRR",  // M1 6: COV 0.467
      "RRRRRRRR",  // M1 7: 7 > 6 registers per thread
      "RRRRRRRR",  // M1 8
  };
  CHECK(grid(plan) == expected);
  CHECK(plan.remaining[0] == 64);
  CHECK(plan.remaining[1] == 38);  // as in the paper
  CHECK(plan.remaining[2] == 18);  // the paper: 12
  CHECK(plan.remaining[3] == 10);  // the paper: 6
}

TEST_CASE("constraints: every rejection says why", "[constraints]") {
  const Plan plan = toy_plan();
  auto verdict = [&](int32_t m1, int32_t n1) {
    for (const auto& c : plan.candidates)
      if (c.tile.m1 == m1 && c.tile.n1 == n1) return c.verdict;
    FAIL("no such candidate");
    return Verdict{};
  };
  CHECK(verdict(7, 1).reason == "7 registers per thread exceed the limit of 6");
  CHECK(verdict(4, 7).reason == "28 registers per block (7 threads x 4) exceed the limit of 24");
  CHECK(verdict(1, 3).reason == "3 threads per block are not a multiple of the warp size 2");
  CHECK(verdict(3, 8).reason == "3 thread blocks (3 A-tiles x 1 B-tiles) are fewer than half of the 8 SMs");
  CHECK(verdict(1, 6).reason == "WASTE_col 0.333 (4 of 12 B columns are padding) exceeds TH_col 0.25");
  CHECK(verdict(5, 2).reason == "COV_row 0.267 of non-zeros across 2 A-tiles exceeds TH_row 0.25");
  CHECK(verdict(4, 4).accepted());
  CHECK(verdict(4, 4).reason.empty());
}

TEST_CASE("constraints: thresholds move the balance decisions", "[constraints]") {
  PlanOptions options;
  options.n = 8;
  options.reorder = ReorderMethod::kNone;
  options.constraints.extra_registers_per_column = 0;
  options.constraints.addressing_registers = 0;
  options.constraints.max_row_cov = 0.3;   // admits M1 = 5 (0.267), not M1 = 6 (0.467)
  options.constraints.max_col_waste = 0.4; // admits N1 = 6 (0.333)
  options.axes.m1 = {1, 2, 3, 4, 5, 6, 7, 8};
  options.axes.n1 = {1, 2, 3, 4, 5, 6, 7, 8};
  const Plan plan = plan_tiles(toy_matrix(), toy_target(), options);
  CHECK(plan.remaining[3] == 18 - 2);  // only M1 = 6's two cells stay out
}

TEST_CASE("constraints: the register estimate of the unrolled kernel", "[constraints]") {
  ConstraintSettings settings;  // 2 per column (B value and its prefetch) + 6 addressing
  TileCandidate c;
  c.m1 = 32;
  CHECK(estimate_registers_per_thread(c, settings) == 32 + 2 + 6);
  c.cols_per_thread = 2;
  CHECK(estimate_registers_per_thread(c, settings) == 2 * (32 + 2) + 6);
  CHECK(column_waste(4096, 96) == Approx(32.0 / 4128.0));
  CHECK(column_waste(4096, 1024) == 0.0);
}

TEST_CASE("features: LO-SpMM Table 1 for a hand-computed case", "[features]") {
  const Plan plan = toy_plan();
  for (const auto& c : plan.candidates) {
    if (c.tile.m1 != 4 || c.tile.n1 != 4) continue;
    const CandidateFeatures& f = c.features;
    CHECK(f.a_tile_num == 2);   // rows 0-3 and 4-7
    CHECK(f.b_tile_num == 2);   // ceil(8 / 4)
    CHECK(f.block_num == 4);
    CHECK(f.sparsity == Approx(1.0 - 30.0 / 64.0));
    CHECK(f.nnc_sum == 16);     // each half uses all 8 columns
    CHECK(f.nnz_max == 15);
    CHECK(f.m1 == 4);
    CHECK(f.n1 == 4);
    CHECK(f.k == 8);
    CHECK(f.cols_per_thread == 1);
    CHECK(f.threads_per_block == 4);
    CHECK(f.min_blocks_per_sm == c.tile.min_blocks_per_sm);
    // The launch on the toy device (8 SMs, warps of 2): a wave of 8 x min_blocks_per_sm blocks
    // holds both B-tiles of both A-tiles, so each block has one B-tile; 4 blocks of 2 warps.
    const double wave = 8.0 * c.tile.min_blocks_per_sm;
    CHECK(f.blocks_per_a_tile == 2);
    CHECK(f.b_tiles_per_block == 1);
    CHECK(f.wave_fill == Approx(std::min(4.0, wave) / wave));
    CHECK(f.resident_warps_per_sm == Approx(std::min(4.0, wave) * 2 / 8));
    CHECK(f.kernels == 1);  // no split (PlanOptions::fmas_per_kernel 0)
    CHECK(f.values() == std::vector<double>{2, 2, 4, 1.0 - 30.0 / 64.0, 16, 15, 4, 4, 8, 1, 4,
                                            static_cast<double>(c.tile.min_blocks_per_sm), 2, 1, f.wave_fill,
                                            f.resident_warps_per_sm, 1, 0});
    CHECK(CandidateFeatures::names().size() == f.values().size());
    return;
  }
  FAIL("the 4x4 candidate is missing");
}

TEST_CASE("features: the launch of a 512-row layer at n = 4096 on the H100 (schema 3)", "[features]") {
  // 32 A-tiles of 16 rows, N1 = 1024 (4 B-tiles), one block of 1024 threads per SM: 132 blocks a
  // wave, so 4 blocks per A-tile, each with one B-tile; 128 blocks of 32 warps over 132 SMs.
  CandidateFeatures f;
  f.a_tile_num = 32;
  f.b_tile_num = 4;
  f.m1 = 16;
  f.n1 = 1024;
  f.cols_per_thread = 1;
  f.threads_per_block = 1024;
  f.min_blocks_per_sm = 1;
  const Target h100 = load_target("h100");
  derive_launch_features(f, h100, 3);
  CHECK(f.blocks_per_a_tile == 4);
  CHECK(f.b_tiles_per_block == 1);
  CHECK(f.wave_fill == Approx(128.0 / 132.0));
  CHECK(f.resident_warps_per_sm == Approx(128.0 * 32.0 / 132.0));
  CHECK(f.kernels == 3);
  // At n = 16384 (16 B-tiles) the same wave gives each of the 4 blocks of an A-tile 4 B-tiles.
  f.b_tile_num = 16;
  derive_launch_features(f, h100, 0);
  CHECK(f.blocks_per_a_tile == 4);
  CHECK(f.b_tiles_per_block == 4);
  CHECK(f.kernels == 1);  // a count below one is one kernel
  // Two blocks per SM: 264 a wave, 8 per A-tile, 2 B-tiles each.
  f.min_blocks_per_sm = 2;
  derive_launch_features(f, h100, 1);
  CHECK(f.blocks_per_a_tile == 8);
  CHECK(f.b_tiles_per_block == 2);
  CHECK(f.wave_fill == Approx(256.0 / 264.0));
}

TEST_CASE("plan: the generic family's rows follow M1 = its block's rows, else the nearest M1 below, else the smallest",
          "[constraints]") {
  const Plan plan = toy_plan();  // M1 = 1..8
  CHECK(plan.for_generic(4).m1 == 4);
  CHECK(plan.for_generic(16).m1 == 8);
  CHECK(&plan.for_generic(16) == &plan.for_m1(8));
  PlanOptions options;
  options.n = 8;
  options.axes.m1 = {32, 64};
  options.axes.n1 = {8};
  CHECK(plan_tiles(toy_matrix(), toy_target(), options).for_generic(16).m1 == 32);
}

}  // namespace
}  // namespace spmmc
