#include "compiler/planning/reorder_rows.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "compiler/common/synthesize_values.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/tiling_stats.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

// A seeded random source for building test matrices.
struct Rng {
  uint64_t state;
  uint64_t next() { return state = splitmix64(state); }
  int32_t below(int32_t n) { return static_cast<int32_t>(next() % static_cast<uint64_t>(n)); }
};

Csr from_rows(int32_t cols, const std::vector<std::vector<int32_t>>& rows) {
  Csr a;
  a.rows = static_cast<int32_t>(rows.size());
  a.cols = cols;
  a.row_ptr.push_back(0);
  for (auto r : rows) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    for (int32_t c : r) {
      a.col_idx.push_back(c);
      a.values.push_back(1.0f);
    }
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  check_csr_invariants(a);
  return a;
}

std::vector<int32_t> random_columns(Rng& rng, int32_t cols, int32_t count) {
  std::set<int32_t> picked;
  while (static_cast<int32_t>(picked.size()) < count) picked.insert(rng.below(cols));
  return {picked.begin(), picked.end()};
}

// The tiling is a partition of the non-empty rows into tiles of at most M1 (plus the empty
// rows, listed apart), and every non-fallback assignment kept its tile within TH_nnz.
void check_tiling(const Csr& a, const RowTiling& t) {
  std::vector<int> seen(static_cast<size_t>(a.rows), 0);
  for (int32_t r : t.rows) ++seen[r];
  for (int32_t r : t.empty_rows) {
    CHECK(a.row_length(r) == 0);
    ++seen[r];
  }
  for (int32_t r = 0; r < a.rows; ++r) REQUIRE(seen[r] == 1);
  for (int32_t k = 0; k < t.num_tiles(); ++k) {
    const int32_t size = t.tile_ptr[k + 1] - t.tile_ptr[k];
    CHECK(size >= 1);
    CHECK(size <= t.m1);
  }
  if (t.method != ReorderMethod::kColumnOverlap) return;
  const std::set<int32_t> fallback(t.fallback_rows.begin(), t.fallback_rows.end());
  const TilingStats s = measure_tiling(a, t);
  for (int32_t k = 0; k < t.num_tiles(); ++k) {
    const int32_t last = t.rows[t.tile_ptr[k + 1] - 1];  // rows are listed in assignment order
    if (!fallback.count(last)) CHECK(s.nnz_per_tile[k] <= t.nnz_limit);
  }
}

TEST_CASE("reorder: a partition within M1 and TH_nnz, identical with both overlap searches", "[reorder]") {
  for (uint64_t seed : {1u, 2u, 3u}) {
    GeneratorOptions g;
    g.kind = seed == 3 ? GeneratorKind::kPatterns : GeneratorKind::kUniform;
    g.rows = 300;
    g.cols = 200;
    g.sparsity = 0.93;
    g.patterns = 7;
    g.seed = seed;
    Csr a = generate_matrix(g);
    for (int32_t m1 : {1, 2, 3, 4, 8, 32, 300, 1000}) {
      INFO("seed " << seed << " M1 " << m1);
      const RowTiling auto_search = reorder_rows_by_column_overlap(a, m1);
      check_tiling(a, auto_search);
      const RowTiling bits = reorder_rows_by_column_overlap(a, m1, OverlapSearch::kBitsets);
      const RowTiling index = reorder_rows_by_column_overlap(a, m1, OverlapSearch::kColumnIndex);
      CHECK(bits.rows == index.rows);
      CHECK(bits.tile_ptr == index.tile_ptr);
      CHECK(bits.fallback_rows == index.fallback_rows);
      CHECK(auto_search.rows == bits.rows);
      CHECK(auto_search.nnz_limit == Approx(static_cast<double>(a.nnz()) / auto_search.num_tiles()));
    }
  }
}

TEST_CASE("reorder: empty rows are left out and listed, none and length keep their orders", "[reorder]") {
  const Csr a = from_rows(6, {{0, 1}, {}, {2, 3, 4}, {5}, {}, {0}});
  const RowTiling overlap = reorder_rows_by_column_overlap(a, 2);
  check_tiling(a, overlap);
  CHECK(overlap.empty_rows == std::vector<int32_t>{1, 4});
  CHECK(overlap.num_tiles() == 2);  // ceil(4 non-empty rows / 2)

  const RowTiling none = tile_rows(a, 4, ReorderMethod::kNone);
  CHECK(none.rows == std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  CHECK(none.tile_ptr == std::vector<int32_t>{0, 4, 6});
  CHECK(none.empty_rows.empty());

  const RowTiling length = tile_rows(a, 4, ReorderMethod::kRowLength);
  check_tiling(a, length);
  CHECK(length.rows == std::vector<int32_t>{3, 5, 0, 2});  // by length, stable
  CHECK(length.tile_ptr == std::vector<int32_t>{0, 4});
}

TEST_CASE("reorder: Algorithm 1 by hand on a small case", "[reorder]") {
  // Rows (sorted by length): r3 {5}, r5 {0}, r0 {0,1}, r4 {0,1}, r2 {2,3,4}, r1 {2,3,4,5}.
  // 6 rows, M1 = 2: 3 tiles, TH_nnz = 13 / 3 = 4.33.
  //   r3 -> t0 (all empty: merged nnc 1 everywhere; lowest id)      t0 {5}
  //   r5 -> t1 (t0 merged nnc 2, empty tiles 1)                       t1 {0}
  //   r0 -> t1 (t1 merged nnc 2 = t2's 2, lower id; nnz 3 <= 4.33)    t1 {0,1} full
  //   r4 -> t2 (t0: {0,1,5} nnc 3; t2: 2)                             t2 {0,1}
  //   r2 -> t0 (t0: {2,3,4,5} nnc 4, nnz 4; t2: {0..4} nnc 5)         t0 full
  //   r1 -> t2 (the only open tile; nnz 6 > 4.33: a fallback)
  const Csr a = from_rows(6, {{0, 1}, {2, 3, 4, 5}, {2, 3, 4}, {5}, {0, 1}, {0}});
  const RowTiling t = reorder_rows_by_column_overlap(a, 2);
  CHECK(t.rows == std::vector<int32_t>{3, 2, 5, 0, 4, 1});
  CHECK(t.tile_ptr == std::vector<int32_t>{0, 2, 4, 6});
  CHECK(t.fallback_rows == std::vector<int32_t>{1});
  const TilingStats s = measure_tiling(a, t);
  CHECK(s.nnc_per_tile == std::vector<int32_t>{4, 2, 6});
  CHECK(s.nnz_per_tile == std::vector<int32_t>{4, 3, 6});
}

TEST_CASE("reorder: shuffled repeated row patterns are regrouped into tiles of identical rows", "[reorder]") {
  Rng rng{42};
  const int32_t cols = 256, m1 = 8, patterns = 5, nnz_per_row = 20;
  std::vector<std::vector<int32_t>> pattern_cols;
  for (int p = 0; p < patterns; ++p) pattern_cols.push_back(random_columns(rng, cols, nnz_per_row));
  std::vector<std::vector<int32_t>> rows;
  for (int p = 0; p < patterns; ++p)
    for (int i = 0; i < m1 * (p + 1); ++i) rows.push_back(pattern_cols[p]);  // 8, 16, ... rows
  for (size_t i = rows.size() - 1; i > 0; --i) std::swap(rows[i], rows[static_cast<size_t>(rng.below(static_cast<int32_t>(i + 1)))]);
  const Csr a = from_rows(cols, rows);
  const RowTiling t = reorder_rows_by_column_overlap(a, m1);
  check_tiling(a, t);
  const TilingStats s = measure_tiling(a, t);
  CHECK(s.max_nnc == nnz_per_row);
  CHECK(s.nnc_sum == static_cast<int64_t>(t.num_tiles()) * nnz_per_row);
  const TilingStats natural = measure_tiling(a, tile_rows(a, m1, ReorderMethod::kNone));
  CHECK(natural.max_nnc > nnz_per_row);  // the shuffle did mix them
}

TEST_CASE("reorder: above the work budget a hub column is not credited to the tiles that hold it", "[reorder]") {
  // Rows (all of length 2, so in row order): r0 {1,2}, r1 {0,3}, r2 {0,4}, r3 {5,6}; M1 = 2:
  // 2 tiles, TH_nnz = 4. Column 0 is the only one with two non-zeros (the hub).
  //   r0 -> t0 (both empty); r1 -> t1 (t0 merged nnc 4, t1 2).
  //   r2, exact: t1 holds column 0 (merged nnc 3, t0 4) -> t1; r3 -> t0.      tiles {r0,r3} {r1,r2}
  //   r2, column 0 left out: merged nnc 4 in both -> t0 (lower id); r3 -> t1. tiles {r0,r2} {r1,r3}
  // The column index's estimate: 4 rows x 32 + 6 columns of 1 x min(2, 1) / 2 + column 0's
  // 2 x min(2, 2) / 2 = 133; a budget of 132 leaves column 0 out, and only it.
  const Csr a = from_rows(7, {{1, 2}, {0, 3}, {0, 4}, {5, 6}});
  const RowTiling exact = reorder_rows_by_column_overlap(a, 2, OverlapSearch::kColumnIndex);
  CHECK(exact.rows == std::vector<int32_t>{0, 3, 1, 2});
  CHECK(exact.hub_columns == 0);
  CHECK(exact.hub_min_nnz == 0);
  const RowTiling capped = reorder_rows_by_column_overlap(a, 2, OverlapSearch::kColumnIndex, 132.0);
  check_tiling(a, capped);
  CHECK(capped.rows == std::vector<int32_t>{0, 2, 1, 3});
  CHECK(capped.tile_ptr == std::vector<int32_t>{0, 2, 4});
  CHECK(capped.hub_columns == 1);
  CHECK(capped.hub_min_nnz == 2);
  // The tiles' nnc still counts the hub column: {1,2,0,4} and {0,3,5,6}.
  CHECK(measure_tiling(a, capped).nnc_per_tile == std::vector<int32_t>{4, 4});
  // Budget 0: every column is left out; here the same tiles as without column 0.
  const RowTiling none = reorder_rows_by_column_overlap(a, 2, OverlapSearch::kColumnIndex, 0.0);
  CHECK(none.hub_columns == 7);
  CHECK(none.rows == std::vector<int32_t>{0, 2, 1, 3});
  // The bitsets are exact whatever the budget; kAuto takes them here (their cost, 24, fits).
  CHECK(reorder_rows_by_column_overlap(a, 2, OverlapSearch::kBitsets, 0.0).rows == exact.rows);
  CHECK(reorder_rows_by_column_overlap(a, 2, OverlapSearch::kAuto, 132.0).rows == exact.rows);
}

TEST_CASE("reorder: the work budget leaves out the longest columns of a power-law graph, and nothing within it",
          "[reorder]") {
  GeneratorOptions g;
  g.kind = GeneratorKind::kRmat;
  g.scale = 11;  // 2048 nodes, ~30k edges: within the default budget
  g.seed = 5;
  const Csr a = generate_matrix(g);
  std::vector<int32_t> col_len(static_cast<size_t>(a.cols), 0);
  for (int32_t c : a.col_idx) ++col_len[c];
  for (int32_t m1 : {4, 32}) {
    INFO("M1 " << m1);
    const RowTiling exact = reorder_rows_by_column_overlap(a, m1);
    CHECK(exact.hub_columns == 0);
    CHECK(exact.rows == reorder_rows_by_column_overlap(a, m1, OverlapSearch::kBitsets).rows);
    const RowTiling capped = reorder_rows_by_column_overlap(a, m1, OverlapSearch::kColumnIndex, 2e5);
    check_tiling(a, capped);  // a partition; every non-fallback assignment within TH_nnz
    REQUIRE(capped.hub_columns > 0);
    // The hubs are exactly the columns of at least hub_min_nnz non-zeros: the longest ones.
    CHECK(std::count_if(col_len.begin(), col_len.end(), [&](int32_t d) { return d >= capped.hub_min_nnz; }) ==
          capped.hub_columns);
    CHECK(capped.hub_columns < a.cols / 4);
    CHECK(capped.rows != exact.rows);
    // What it costs: NNC_sum within 10% of the exact search's on this graph.
    const TilingStats e = measure_tiling(a, exact), c = measure_tiling(a, capped);
    INFO("NNC_sum " << e.nnc_sum << " -> " << c.nnc_sum << ", max nnc " << e.max_nnc << " -> " << c.max_nnc);
    CHECK(static_cast<double>(c.nnc_sum) <= 1.1 * static_cast<double>(e.nnc_sum));
  }
}

// LO-SpMM §4.3: a 1024 x 1024 matrix at sparsity 0.98 in 32 blocks of 32 rows; block i and
// block i + 16 share a fraction R of their non-zero positions (row by row); adjacent blocks
// (2j, 2j + 1) have non-zero counts in the ratio 1 : ratio.
Csr similar_blocks(double similarity, double ratio, uint64_t seed) {
  Rng rng{seed};
  const int32_t n = 1024, block = 32;
  const double mean_row = 0.02 * n;
  std::vector<std::vector<int32_t>> rows(static_cast<size_t>(n));
  for (int32_t b = 0; b < 16; ++b) {
    const double weight = (b % 2 == 0) ? 2.0 / (1.0 + ratio) : 2.0 * ratio / (1.0 + ratio);
    const int32_t len = static_cast<int32_t>(mean_row * weight + 0.5);
    const int32_t shared = static_cast<int32_t>(similarity * len + 0.5);
    for (int32_t i = 0; i < block; ++i) {
      std::vector<int32_t>& first = rows[static_cast<size_t>(b * block + i)];
      std::vector<int32_t>& second = rows[static_cast<size_t>((b + 16) * block + i)];
      first = random_columns(rng, n, len);
      second.assign(first.begin(), first.begin() + shared);
      while (static_cast<int32_t>(second.size()) < len) {
        const int32_t c = rng.below(n);
        if (std::find(second.begin(), second.end(), c) == second.end() &&
            std::find(first.begin(), first.end(), c) == first.end())
          second.push_back(c);
      }
    }
  }
  return from_rows(n, rows);
}

TEST_CASE("reorder: never a larger max nnc than the natural order on the LO-SpMM 4.3 matrices", "[reorder]") {
  for (double ratio : {1.0, 2.0, 3.0}) {
    for (double similarity : {0.0, 0.3, 0.6, 0.9}) {
      const Csr a = similar_blocks(similarity, ratio, 7);
      const RowTiling t = reorder_rows_by_column_overlap(a, 32);
      check_tiling(a, t);
      const TilingStats after = measure_tiling(a, t);
      const TilingStats before = measure_tiling(a, tile_rows(a, 32, ReorderMethod::kNone));
      INFO("R " << similarity << " ratio " << ratio << ": max nnc " << before.max_nnc << " -> " << after.max_nnc
                << ", COV " << before.nnz_cov << " -> " << after.nnz_cov);
      CHECK(after.max_nnc <= before.max_nnc);
      CHECK(after.nnz_cov <= 0.25);
    }
  }
}

TEST_CASE("reorder: method names", "[reorder]") {
  for (ReorderMethod m : {ReorderMethod::kColumnOverlap, ReorderMethod::kNone, ReorderMethod::kRowLength})
    CHECK(parse_reorder_method(reorder_method_name(m)) == m);
  CHECK(!parse_reorder_method("hypergraph"));
}

}  // namespace
}  // namespace spmmc
