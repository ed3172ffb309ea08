#include "compiler/planning/vector_blocks.h"

#include <algorithm>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

constexpr int32_t kWindowRows = 8;  // the n = 8 of the swapped MMA: rows of A per window

// A[row][col], 0 where there is no non-zero (columns of a row ascend).
float value_at(const Csr& a, int32_t row, int32_t col) {
  const auto first = a.col_idx.begin() + a.row_ptr[row], last = a.col_idx.begin() + a.row_ptr[row + 1];
  const auto it = std::lower_bound(first, last, col);
  return it != last && *it == col ? a.values[static_cast<size_t>(it - a.col_idx.begin())] : 0.0f;
}

}  // namespace

VectorBlocks build_vector_blocks(const Csr& a, const RowTiling& tiling, int32_t k) {
  SPMMC_CHECK(k == 8 || k == 4, "a block holds 8 (FP16/BF16) or 4 (TF32) vectors");
  SPMMC_CHECK(tiling.m1 == kWindowRows, "the windows are tiles of 8 rows");
  VectorBlocks out;
  out.k = k;
  out.window_block.push_back(0);
  const int32_t per_block = 8 * k;  // values of one block: 8 rows x k vectors
  std::vector<int32_t> cols;
  for (int32_t t = 0; t < tiling.num_tiles(); ++t) {
    const int32_t first = tiling.tile_ptr[static_cast<size_t>(t)], count = tiling.tile_ptr[static_cast<size_t>(t) + 1] - first;
    SPMMC_CHECK(count >= 1 && count <= kWindowRows, "a window has 1 to 8 rows");
    int32_t rows[kWindowRows];
    for (int32_t i = 0; i < kWindowRows; ++i) rows[i] = i < count ? tiling.rows[static_cast<size_t>(first + i)] : -1;
    out.window_rows.insert(out.window_rows.end(), rows, rows + kWindowRows);
    cols.clear();
    for (int32_t i = 0; i < count; ++i)
      cols.insert(cols.end(), a.col_idx.begin() + a.row_ptr[rows[i]], a.col_idx.begin() + a.row_ptr[rows[i] + 1]);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    out.vectors += static_cast<int64_t>(cols.size());
    const auto blocks = static_cast<int32_t>((cols.size() + static_cast<size_t>(k) - 1) / static_cast<size_t>(k));
    for (int32_t b = 0; b < blocks; ++b) {
      const size_t base = out.values.size();
      out.values.resize(base + static_cast<size_t>(per_block), 0.0f);
      for (int32_t j = 0; j < k; ++j) {
        const size_t v = static_cast<size_t>(b) * static_cast<size_t>(k) + static_cast<size_t>(j);
        const bool padding = v >= cols.size();
        out.padded += padding;
        const int32_t col = padding ? cols.front() : cols[v];
        out.block_cols.push_back(col);
        if (padding) continue;  // zero values
        for (int32_t g = 0; g < kWindowRows; ++g) {
          if (rows[g] < 0) continue;
          const float w = value_at(a, rows[g], col);
          // Lane 4g + t holds vectors 2t, 2t + 1 (k = 8) or vector t (k = 4) of row g.
          const size_t at = k == 8 ? static_cast<size_t>(2 * (4 * g + j / 2) + j % 2) : static_cast<size_t>(4 * g + j);
          out.values[base + at] = w;
        }
      }
    }
    out.window_block.push_back(out.window_block.back() + blocks);
  }
  return out;
}

}  // namespace spmmc
