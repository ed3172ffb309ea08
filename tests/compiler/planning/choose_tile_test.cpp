#include "compiler/planning/choose_tile.h"

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

}  // namespace
}  // namespace spmmc
