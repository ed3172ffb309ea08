// grow_row_tiles (--reorder grow): a partition of the non-empty rows into tiles of at most M1,
// grown by the row that adds the fewest columns; a hand-checked case; deterministic.
#include "compiler/planning/grow_row_tiles.h"

#include <algorithm>
#include <vector>

#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/tiling_stats.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

Csr from_rows(int32_t cols, const std::vector<std::vector<int32_t>>& rows) {
  Csr a;
  a.rows = static_cast<int32_t>(rows.size());
  a.cols = cols;
  a.row_ptr.push_back(0);
  for (const auto& r : rows) {
    for (const int32_t c : r) a.col_idx.push_back(c), a.values.push_back(1.0f);
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  check_csr_invariants(a);
  return a;
}

// Every non-empty row in exactly one tile of at most m1 rows, every empty row listed once.
void check_partition(const Csr& a, const RowTiling& t) {
  REQUIRE(t.tile_ptr.front() == 0);
  REQUIRE(t.tile_ptr.back() == static_cast<int32_t>(t.rows.size()));
  for (int32_t i = 0; i < t.num_tiles(); ++i) {
    CHECK(t.tile_ptr[i + 1] - t.tile_ptr[i] >= 1);
    CHECK(t.tile_ptr[i + 1] - t.tile_ptr[i] <= t.m1);
  }
  std::vector<int> seen(static_cast<size_t>(a.rows), 0);
  for (const int32_t r : t.rows) {
    CHECK(a.row_length(r) > 0);
    ++seen[static_cast<size_t>(r)];
  }
  for (const int32_t r : t.empty_rows) {
    CHECK(a.row_length(r) == 0);
    ++seen[static_cast<size_t>(r)];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
}

TEST_CASE("grow_row_tiles: rows of two interleaved patterns go to two tiles", "[reorder]") {
  // Even rows use columns {0, 1}, odd rows {2, 3}; row 8 is empty. Natural order (M1 = 4): two
  // tiles of 4 columns each; grown: the even rows together and the odd rows together, 2 each.
  const Csr a = from_rows(5, {{0, 1}, {2, 3}, {0, 1}, {2, 3}, {0, 1}, {2, 3}, {0, 1}, {2, 3, 4}, {}});
  const RowTiling t = grow_row_tiles(a, 4);
  check_partition(a, t);
  CHECK(t.method == ReorderMethod::kGrow);
  CHECK(reorder_method_name(t.method) == "grow");
  CHECK(t.empty_rows == std::vector<int32_t>{8});
  // The longest row (7) seeds the first tile; the odd rows add no column to it.
  CHECK(t.tile_ptr == std::vector<int32_t>{0, 4, 8});
  CHECK(t.rows == std::vector<int32_t>{7, 1, 3, 5, 0, 2, 4, 6});
  CHECK(measure_tiling(a, t).nnc_sum == 3 + 2);
  CHECK(measure_tiling(a, tile_rows(a, 4, ReorderMethod::kNone)).nnc_sum == 4 + 5);  // rows 0-3, 4-7 (row 8: none)
}

TEST_CASE("grow_row_tiles: rows that share nothing take the shortest next", "[reorder]") {
  const Csr a = from_rows(6, {{0, 1, 2}, {3}, {4, 5}});
  const RowTiling t = grow_row_tiles(a, 2);
  check_partition(a, t);
  CHECK(t.rows == std::vector<int32_t>{0, 1, 2});  // seed 0 (3 non-zeros), then the shortest (row 1)
  CHECK(t.tile_ptr == std::vector<int32_t>{0, 2, 3});
}

TEST_CASE("grow_row_tiles: a partition for every M1 on generated matrices, deterministic, fewer columns than LO-SpMM's "
          "order on banded rows",
          "[reorder]") {
  for (const GeneratorKind kind : {GeneratorKind::kUniform, GeneratorKind::kPatterns, GeneratorKind::kBlocks}) {
    GeneratorOptions g;
    g.kind = kind;
    g.rows = 300, g.cols = 200, g.sparsity = 0.9, g.seed = 7;
    const Csr a = generate_matrix(g);
    for (const int32_t m1 : {1, 2, 8, 16, 64, 512}) {
      INFO("kind " << static_cast<int>(kind) << ", M1 " << m1);
      const RowTiling t = grow_row_tiles(a, m1);
      check_partition(a, t);
      const RowTiling again = grow_row_tiles(a, m1);
      CHECK(again.rows == t.rows);
      CHECK(again.tile_ptr == t.tile_ptr);
    }
  }
  // A band (row i uses columns i .. i+3): consecutive rows share the most; the growth keeps them
  // together (7 columns per full tile at M1 = 4, as the natural order), where Algorithm 1's
  // balance by row length scatters them.
  std::vector<std::vector<int32_t>> band;
  for (int32_t i = 0; i < 64; ++i) band.push_back({i, i + 1, i + 2, i + 3});
  const Csr b = from_rows(67, band);
  const int64_t grown = measure_tiling(b, grow_row_tiles(b, 4)).nnc_sum;
  CHECK(grown == measure_tiling(b, tile_rows(b, 4, ReorderMethod::kNone)).nnc_sum);
  CHECK(grown < measure_tiling(b, tile_rows(b, 4, ReorderMethod::kColumnOverlap)).nnc_sum);
}

}  // namespace
}  // namespace spmmc
