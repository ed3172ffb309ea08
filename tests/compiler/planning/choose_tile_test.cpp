#include "compiler/planning/choose_tile.h"

#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/tile_space.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

TEST_CASE("launch shape: blocks per A-tile fill one wave with the fewest B-tiles per block", "[choose_tile]") {
  // 16 A-tiles on 132 slots: at most 8 blocks each; 7 B-tiles need one each.
  CHECK(blocks_per_a_tile(16, 7, 132) == 7);
  // 8 A-tiles, 25 B-tiles: at most 16 blocks each, so 2 B-tiles per block, 13 blocks.
  CHECK(blocks_per_a_tile(8, 25, 132) == 13);
  // Never more blocks than one wave holds (the rule before rounded 132 / 8 up to 17: 136 blocks).
  for (int64_t a = 1; a <= 300; ++a)
    for (const int64_t b : {1, 2, 7, 25, 98, 1000}) {
      const int64_t y = blocks_per_a_tile(a, b, 132);
      INFO(a << " A-tiles, " << b << " B-tiles: " << y);
      CHECK(y >= 1);
      CHECK(y <= b);
      CHECK((a * y <= 132 || y == 1));
    }
  // A-tiles alone fill the wave: one block each, looping over every B-tile.
  CHECK(blocks_per_a_tile(200, 4, 132) == 1);
  CHECK(blocks_per_a_tile(4, 1, 132) == 1);
  CHECK(blocks_per_a_tile(1, 100000, 132) == 132);
}

TEST_CASE("launch shape: the busiest SM's columns, by hand", "[choose_tile]") {
  // 16 A-tiles, n = 6272, 1024 columns per block, 1 block per SM: 7 blocks per A-tile, the
  // busiest SM has a whole B-tile (the last B-tile has 128 columns).
  CHECK(busiest_sm_columns(16, 6272, 1024, 1, 132) == 1024);
  // 800 columns per block: 8 B-tiles (the last 672), 128 blocks.
  CHECK(busiest_sm_columns(16, 6272, 800, 1, 132) == 800);
  // 4 A-tiles on 2 SMs, one B-tile each: two blocks per SM.
  CHECK(busiest_sm_columns(4, 100, 128, 1, 2) == 200);
  // One A-tile, n = 100 in blocks of 32 on 8 SMs: 4 blocks (32, 32, 32, 4 columns).
  CHECK(busiest_sm_columns(1, 100, 32, 1, 8) == 32);
}

TEST_CASE("balanced threads: the width that leaves the busiest SM the fewest columns", "[choose_tile]") {
  const Target h100 = load_target("h100");
  // 16 A-tiles at n = 6272 (ResNet-50 group-3 layers): 800 threads, 128 blocks of 800 columns
  // instead of 112 of 1024.
  CHECK(balanced_threads(16, 6272, h100) == 800);
  // 32 A-tiles at n = 4096 (transformer projections): 1024 threads, 128 blocks, as before.
  CHECK(balanced_threads(32, 4096, h100) == 1024);
  // 32 A-tiles at n = 1568: 512 threads, two blocks per SM of the register budget.
  CHECK(balanced_threads(32, 1568, h100) == 512);
  // n below 512: n rounded up to the warp size.
  CHECK(balanced_threads(63, 32, h100) == 32);
  CHECK(balanced_threads(5, 257, h100) == 288);
  // The choice is never worse than 1024 threads by the model, and always a warp multiple.
  for (const int64_t a : {1, 4, 8, 16, 32, 63, 128, 256})
    for (const int64_t n : {512, 1000, 1568, 4096, 6272, 25088, 100352}) {
      const int64_t t = balanced_threads(a, n, h100);
      INFO(a << " A-tiles at n = " << n << ": " << t);
      CHECK(t % 32 == 0);
      CHECK(t >= 512);
      CHECK(t <= 1024);
      const auto per_sm = [&](int64_t threads) {
        return min_blocks_for_register_budget(static_cast<int32_t>(threads), h100.registers_per_sm);
      };
      CHECK(busiest_sm_columns(a, n, t, per_sm(t), h100.sm_count) <=
            busiest_sm_columns(a, n, 1024, per_sm(1024), h100.sm_count));
    }
}

TEST_CASE("resident warps per SM of the first wave, by hand", "[choose_tile]") {
  const Target h100 = load_target("h100");
  TileCandidate t;
  t.cols_per_thread = 1;
  // 32 A-tiles at n = 4096, 1024 threads (1 block per SM): 128 blocks of 32 warps on 132 SMs.
  t.m1 = 16, t.n1 = 1024, t.min_blocks_per_sm = 1;
  CHECK(resident_warps_per_sm(32, 4096, t, h100) == Approx(128.0 * 32 / 132));
  // 16 A-tiles of 32 rows, 512 threads (2 blocks per SM): 128 blocks of 16 warps.
  t.m1 = 32, t.n1 = 512, t.min_blocks_per_sm = 2;
  CHECK(resident_warps_per_sm(16, 4096, t, h100) == Approx(128.0 * 16 / 132));
  // More blocks than one wave holds: only the wave counts (2 blocks of 16 warps on every SM).
  CHECK(resident_warps_per_sm(300, 4096, t, h100) == Approx(32.0));
}

// A uniform matrix of `rows` rows planned for n on the H100.
Plan uniform_plan(int64_t rows, int64_t cols, double sparsity, int64_t n) {
  GeneratorOptions g;
  g.rows = rows, g.cols = cols, g.sparsity = sparsity, g.seed = 7;
  PlanOptions options;
  options.n = n;
  options.threads = 1;
  return plan_tiles(generate_matrix(g), load_target("h100"), options);
}

TEST_CASE("heuristic: M1 = 32 where it keeps more than three quarters of M1 = 16's warps per SM", "[choose_tile]") {
  const Target h100 = load_target("h100");
  const auto fits_all = [](const PlannedCandidate&) { return true; };
  std::string why;
  // 2048 rows at n = 4096 (the transformer FFN): 128 or 64 A-tiles, both fill the SMs with 1024
  // threads each; M1 = 32 halves the loads of B per FMA (study 16: 1.09-1.36x).
  {
    const Plan plan = uniform_plan(2048, 64, 0.9, 4096);
    const PlannedCandidate* c = choose_tile_by_heuristic(plan, h100, fits_all, why);
    REQUIRE(c != nullptr);
    CHECK(c->tile.m1 == 32);
    CHECK(c->tile.n1 == 1024);
    CHECK(c->tile.cols_per_thread == 1);
    CHECK_THAT(why, Catch::Contains("above 0.75"));
  }
  // 512 rows at n = 4096 (the projections): 16 A-tiles of 32 rows keep half the warps.
  {
    const Plan plan = uniform_plan(512, 64, 0.9, 4096);
    const PlannedCandidate* c = choose_tile_by_heuristic(plan, h100, fits_all, why);
    REQUIRE(c != nullptr);
    CHECK(c->tile.m1 == 16);
    CHECK(c->tile.n1 == 1024);
    CHECK_THAT(why, Catch::Contains("not above 0.75"));
    // Where M1 = 16 exceeds the compile-time limit, M1 = 32 whatever the warps.
    const PlannedCandidate* wide =
        choose_tile_by_heuristic(plan, h100, [](const PlannedCandidate& p) { return p.tile.m1 != 16; }, why);
    REQUIRE(wide != nullptr);
    CHECK(wide->tile.m1 == 32);
    CHECK_THAT(why, Catch::Contains("M1 = 16 would exceed the compile-time limit"));
    // Where M1 = 32 does not fit but M1 = 16 does, M1 = 16.
    const PlannedCandidate* narrow =
        choose_tile_by_heuristic(plan, h100, [](const PlannedCandidate& p) { return p.tile.m1 != 32; }, why);
    REQUIRE(narrow != nullptr);
    CHECK(narrow->tile.m1 == 16);
    // Neither fits: M1 = 32, for the size guard to refuse with its message.
    const PlannedCandidate* none = choose_tile_by_heuristic(plan, h100, [](const PlannedCandidate&) { return false; }, why);
    REQUIRE(none != nullptr);
    CHECK(none->tile.m1 == 32);
    CHECK_THAT(why, Catch::Contains("no tile of the design fits"));
  }
  // The decision follows the share, for shapes on both sides of it.
  for (const int64_t rows : {64, 128, 256, 512, 1024, 2048})
    for (const int64_t n : {1568, 4096, 6272, 25088}) {
      const Plan plan = uniform_plan(rows, 64, 0.9, n);
      const PlannedCandidate* c = choose_tile_by_heuristic(plan, h100, fits_all, why);
      REQUIRE(c != nullptr);
      const auto a_tiles = [&](int32_t m1) { return plan.for_m1(m1).tiling.num_blocks(); };
      const auto warps = [&](int32_t m1) {
        TileCandidate t;
        t.m1 = m1, t.cols_per_thread = 1, t.n1 = static_cast<int32_t>(balanced_threads(a_tiles(m1), n, h100));
        t.min_blocks_per_sm = min_blocks_for_register_budget(t.n1, h100.registers_per_sm);
        return resident_warps_per_sm(a_tiles(m1), n, t, h100);
      };
      INFO(rows << " rows at n = " << n << ": " << why);
      CHECK(c->tile.m1 == (warps(32) > kWiderTileWarpShare * warps(16) ? 32 : 16));
      CHECK(c->tile.n1 == balanced_threads(a_tiles(c->tile.m1), n, h100));
    }
}

TEST_CASE("heuristic: one A-tile of M1 = 64 where A's 33-64 non-empty rows fill a wave with it", "[choose_tile]") {
  const Target h100 = load_target("h100");
  const auto fits_all = [](const PlannedCandidate&) { return true; };
  std::string why;
  // The ResNet-50 layers of 64 rows at n = 100352 (64 x 256 at 90%): 64x384 ran 1.05-1.22x the
  // warp share's 16x1024 on the H100 (choose_tile.h, kSingleTileMinWaveFill).
  const Plan plan = uniform_plan(64, 256, 0.9, 100352);
  const PlannedCandidate* c = choose_tile_by_heuristic(plan, h100, fits_all, why);
  REQUIRE(c != nullptr);
  CHECK(c->tile.m1 == 64);
  CHECK(c->tile.n1 == 384);
  CHECK(c->tile.cols_per_thread == 1);
  CHECK(c->tile.min_blocks_per_sm == kSingleTileBlocksPerSm);
  CHECK(c->verdict.rejected_by != Constraint::kRegister);
  CHECK_THAT(why, Catch::Contains("single-tile design") && Catch::Contains("0.99 of a wave"));
  // 384 threads: 262 blocks of one B-tile, two on the busiest SM; 448 leave it 896 columns, the
  // four-block widths (224) and the one-block ones are not the rule's.
  CHECK(single_tile_threads(plan, 1, h100) == 384);
  CHECK(busiest_sm_columns(1, 100352, 384, 2, 132) == 768);
  CHECK(busiest_sm_columns(1, 100352, 448, 2, 132) == 896);
  // Where the M1 = 64 tile would exceed the compile-time limit, the warp share decides as before.
  const PlannedCandidate* guarded =
      choose_tile_by_heuristic(plan, h100, [](const PlannedCandidate& p) { return p.tile.m1 != 64; }, why);
  REQUIRE(guarded != nullptr);
  CHECK(guarded->tile.m1 == 16);
  CHECK_THAT(why, Catch::Contains("not above 0.75"));
  // The same rows at n = 25088: 66 blocks of 384 fill a quarter of a wave; not measured, the warp
  // share decides.
  {
    const Plan narrow_n = uniform_plan(64, 256, 0.9, 25088);
    const PlannedCandidate* d = choose_tile_by_heuristic(narrow_n, h100, fits_all, why);
    REQUIRE(d != nullptr);
    CHECK(d->tile.m1 != 64);
    CHECK(unrolled_wave_fill(1, 25088, TileCandidate{64, 384, 1, 2}, h100) < kSingleTileMinWaveFill);
  }
  // Several A-tiles at M1 = 64 (128 and 512 rows): M1 = 64 lost 0.78-0.95x on such layers, the rule
  // is not theirs, whatever the width.
  for (const int64_t rows : {128, 512}) {
    const Plan several = uniform_plan(rows, 128, 0.9, 100352);
    const PlannedCandidate* d = choose_tile_by_heuristic(several, h100, fits_all, why);
    REQUIRE(d != nullptr);
    INFO(rows << " rows: " << why);
    CHECK(d->tile.m1 <= 32);
  }
  // 32 rows or fewer are one A-tile at M1 = 32 already: M1 = 64 would load nothing less.
  {
    const Plan few = uniform_plan(32, 256, 0.9, 100352);
    const PlannedCandidate* d = choose_tile_by_heuristic(few, h100, fits_all, why);
    REQUIRE(d != nullptr);
    CHECK(d->tile.m1 <= 32);
  }
}

TEST_CASE("tunable candidates: no tile wider than n rounded up to the warp reaches the ranker or the tuners", "[choose_tile][tunable]") {
  // A power-law graph at n = 128 (issue 25: 64x672 and 32x512 were picked from the fallback set).
  GeneratorOptions g;
  g.kind = GeneratorKind::kRmat;
  g.scale = 12;  // 4096 nodes, 16 edges each
  g.seed = 3;
  const Target h100 = load_target("h100");
  for (const int64_t n : {int64_t{32}, int64_t{100}, int64_t{128}, int64_t{4096}}) {
    PlanOptions options;
    options.n = n;
    options.threads = 1;
    const Plan plan = plan_tiles(generate_matrix(g), h100, options);
    const TunableCandidates t = tunable_candidates(plan, h100.warp_size);
    INFO("n = " << n << ": " << t.why);
    REQUIRE_FALSE(t.list.empty());
    const int64_t widest = (n + 31) / 32 * 32;
    for (const PlannedCandidate* c : t.list) {
      CHECK(c->tile.threads_per_block() <= widest);
      CHECK(c->verdict.rejected_by != Constraint::kRegister);
      if (!t.fallback) CHECK(c->verdict.accepted());
    }
    if (n <= 128) {
      CHECK(t.too_wide > 0);
      CHECK_THAT(t.why, Catch::Contains("wider than n = " + std::to_string(n)));
    } else {
      CHECK(t.too_wide == 0);
    }
  }
}

}  // namespace
}  // namespace spmmc
