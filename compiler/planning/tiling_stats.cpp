#include "compiler/planning/tiling_stats.h"

#include <algorithm>
#include <cmath>

namespace spmmc {

TilingStats measure_tiling(const Csr& a, const RowTiling& tiling) {
  TilingStats s;
  for (int32_t r = 0; r < a.rows; ++r) s.empty_rows += a.row_length(r) == 0;
  s.tiles = tiling.num_tiles();
  if (s.tiles <= 0) return s;
  // stamp[c] == t + 1 when column c was already counted for tile t.
  std::vector<int32_t> stamp(static_cast<size_t>(a.cols), 0);
  s.nnc_per_tile.resize(static_cast<size_t>(s.tiles));
  s.nnz_per_tile.resize(static_cast<size_t>(s.tiles));
  double sum_nnz = 0.0, sum_sq = 0.0;
  for (int32_t t = 0; t < s.tiles; ++t) {
    int32_t nnc = 0, nnz = 0;
    for (int32_t i = tiling.tile_ptr[t]; i < tiling.tile_ptr[t + 1]; ++i) {
      const int32_t r = tiling.rows[i];
      nnz += a.row_length(r);
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
        const int32_t c = a.col_idx[p];
        if (stamp[c] != t + 1) {
          stamp[c] = t + 1;
          ++nnc;
        }
      }
    }
    s.nnc_per_tile[t] = nnc;
    s.nnz_per_tile[t] = nnz;
    s.nnc_sum += nnc;
    s.max_nnc = std::max<int64_t>(s.max_nnc, nnc);
    s.max_nnz = std::max<int64_t>(s.max_nnz, nnz);
    sum_nnz += nnz;
    sum_sq += static_cast<double>(nnz) * nnz;
  }
  s.mean_nnc = static_cast<double>(s.nnc_sum) / s.tiles;
  s.mean_nnz = sum_nnz / s.tiles;
  const double variance = std::max(0.0, sum_sq / s.tiles - s.mean_nnz * s.mean_nnz);
  s.nnz_cov = s.mean_nnz > 0 ? std::sqrt(variance) / s.mean_nnz : 0.0;
  return s;
}

}  // namespace spmmc
