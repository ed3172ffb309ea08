#include "compiler/planning/grow_row_tiles.h"

#include <algorithm>
#include <vector>

#include "compiler/common/diagnostics.h"

namespace spmmc {

RowTiling grow_row_tiles(const Csr& a, int32_t m1) {
  SPMMC_CHECK(m1 >= 1, "M1 must be at least 1");
  RowTiling tiling;
  tiling.m1 = m1;
  tiling.method = ReorderMethod::kGrow;
  std::vector<int32_t> longest, shortest;  // the non-empty rows, by length
  for (int32_t r = 0; r < a.rows; ++r) (a.row_length(r) == 0 ? tiling.empty_rows : longest).push_back(r);
  std::stable_sort(longest.begin(), longest.end(), [&](int32_t x, int32_t y) { return a.row_length(x) > a.row_length(y); });
  shortest = longest;
  std::stable_sort(shortest.begin(), shortest.end(), [&](int32_t x, int32_t y) { return a.row_length(x) < a.row_length(y); });
  // The rows of each column (A transposed), ascending.
  std::vector<int32_t> col_ptr(static_cast<size_t>(a.cols) + 1, 0), col_rows(static_cast<size_t>(a.nnz()));
  for (const int32_t c : a.col_idx) ++col_ptr[static_cast<size_t>(c) + 1];
  for (size_t c = 0; c < static_cast<size_t>(a.cols); ++c) col_ptr[c + 1] += col_ptr[c];
  std::vector<int32_t> fill(col_ptr.begin(), col_ptr.end() - 1);
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) col_rows[static_cast<size_t>(fill[static_cast<size_t>(a.col_idx[p])]++)] = r;

  std::vector<char> assigned(static_cast<size_t>(a.rows), 0);
  std::vector<int32_t> column_tile(static_cast<size_t>(a.cols), -1);  // the tile a column was last added to
  std::vector<int32_t> candidate_tile(static_cast<size_t>(a.rows), -1);
  std::vector<int32_t> shared(static_cast<size_t>(a.rows), 0);  // a candidate's columns in the tile
  std::vector<int32_t> candidates;
  int32_t tile = -1;
  const auto add = [&](int32_t row) {
    assigned[static_cast<size_t>(row)] = 1;
    tiling.rows.push_back(row);
    for (int32_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p) {
      const int32_t c = a.col_idx[p];
      if (column_tile[static_cast<size_t>(c)] == tile) continue;
      column_tile[static_cast<size_t>(c)] = tile;
      for (int32_t q = col_ptr[static_cast<size_t>(c)]; q < col_ptr[static_cast<size_t>(c) + 1]; ++q) {
        const int32_t r = col_rows[static_cast<size_t>(q)];
        if (assigned[static_cast<size_t>(r)]) continue;
        if (candidate_tile[static_cast<size_t>(r)] != tile) {
          candidate_tile[static_cast<size_t>(r)] = tile;
          shared[static_cast<size_t>(r)] = 0;
          candidates.push_back(r);
        }
        ++shared[static_cast<size_t>(r)];
      }
    }
  };
  tiling.tile_ptr.push_back(0);
  size_t next_seed = 0, next_short = 0;
  for (;;) {
    while (next_seed < longest.size() && assigned[static_cast<size_t>(longest[next_seed])]) ++next_seed;
    if (next_seed == longest.size()) break;
    ++tile;
    candidates.clear();
    add(longest[next_seed]);
    for (int32_t size = 1; size < m1; ++size) {
      int32_t best = -1, best_new = 0, best_shared = 0;
      for (const int32_t r : candidates) {
        if (assigned[static_cast<size_t>(r)]) continue;
        const int32_t s = shared[static_cast<size_t>(r)], added = a.row_length(r) - s;
        if (best < 0 || added < best_new || (added == best_new && (s > best_shared || (s == best_shared && r < best))))
          best = r, best_new = added, best_shared = s;
      }
      if (best < 0) {  // no row shares a column with the tile: the shortest left adds the fewest
        while (next_short < shortest.size() && assigned[static_cast<size_t>(shortest[next_short])]) ++next_short;
        if (next_short == shortest.size()) break;
        best = shortest[next_short];
      }
      add(best);
    }
    tiling.tile_ptr.push_back(static_cast<int32_t>(tiling.rows.size()));
  }
  return tiling;
}

}  // namespace spmmc
