#include "proxy/block_features.h"

#include <algorithm>

namespace spmmc {

std::vector<BlockFunction> block_functions(const Csr& a, const RowTiling& tiling) {
  std::vector<BlockFunction> out;
  std::vector<int32_t> seen(static_cast<size_t>(a.cols), -1);  // last tile that loaded each column
  for (int32_t t = 0; t < tiling.num_tiles(); ++t) {
    BlockFunction f;
    f.first_row_index = tiling.tile_ptr[t];
    f.rows = tiling.tile_ptr[t + 1] - tiling.tile_ptr[t];
    for (int32_t i = tiling.tile_ptr[t]; i < tiling.tile_ptr[t + 1]; ++i) {
      const int32_t row = tiling.rows[i];
      for (int32_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p) {
        ++f.fmas;
        if (seen[a.col_idx[p]] != t) {
          seen[a.col_idx[p]] = t;
          ++f.loads;
        }
      }
    }
    out.push_back(f);
  }
  const size_t empty = tiling.empty_rows.size();
  for (size_t first = 0; first < empty; first += static_cast<size_t>(tiling.m1)) {
    BlockFunction f;
    f.first_row_index = static_cast<int32_t>(first);
    f.rows = static_cast<int32_t>(std::min<size_t>(static_cast<size_t>(tiling.m1), empty - first));
    f.zero_tile = true;
    out.push_back(f);
  }
  return out;
}

}  // namespace spmmc
