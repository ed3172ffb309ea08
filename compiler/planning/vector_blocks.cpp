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

// One chunk's vectors (ascending columns, those of chunk `chunk` of `chunk_rows` rows of B's
// `k_rows`) placed in ceil(count / 8) blocks of 8 so that the 8 rows an ldmatrix of the staged kernel
// reads have distinct residues mod 8 as far as the chunk's columns allow: the residues taken in
// order of their counts (most first), their columns dealt to the blocks in turn, so a residue with c
// columns is in min(c, blocks) blocks, at most ceil(c / blocks) times in one. The blocks' empty places
// are padding, encoded as -1 - column with a column of a residue the block lacks (any row of the
// chunk is in its copy; padding values are zeros), else the chunk's first vector.
std::vector<int32_t> spread_residues(const std::vector<int32_t>& cols, int32_t chunk, int32_t chunk_rows, int32_t k_rows) {
  std::vector<int32_t> bucket[8];
  for (const int32_t c : cols) bucket[c & 7].push_back(c);
  int32_t order[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::stable_sort(order, order + 8, [&](int32_t x, int32_t y) { return bucket[x].size() > bucket[y].size(); });
  const size_t blocks = (cols.size() + 7) / 8;
  std::vector<std::vector<int32_t>> dealt(blocks);
  size_t i = 0;
  for (const int32_t r : order)
    for (const int32_t c : bucket[r]) dealt[i++ % blocks].push_back(c);
  const int32_t base = chunk * chunk_rows, end = std::min(base + chunk_rows, k_rows);
  std::vector<int32_t> out;
  out.reserve(blocks * 8);
  for (std::vector<int32_t>& block : dealt) {
    bool has[8] = {};
    for (const int32_t c : block) has[c & 7] = true;
    std::sort(block.begin(), block.end());
    out.insert(out.end(), block.begin(), block.end());
    for (size_t j = block.size(); j < 8; ++j) {
      int32_t pad = cols.front();
      for (int32_t r = 0; r < 8; ++r) {
        const int32_t c = base + ((r - base) & 7);  // the chunk's first row of residue r
        if (!has[r] && c < end) {
          pad = c, has[r] = true;
          break;
        }
      }
      out.push_back(-1 - pad);
    }
  }
  return out;
}

}  // namespace

VectorBlocks build_vector_blocks(const Csr& a, const RowTiling& tiling, int32_t k, int32_t chunk_rows) {
  SPMMC_CHECK(k == 8 || k == 4, "a block holds 8 (FP16/BF16) or 4 (TF32) vectors");
  SPMMC_CHECK(tiling.m1 == kWindowRows, "the windows are tiles of 8 rows");
  SPMMC_CHECK(chunk_rows == 0 || (k == 8 && chunk_rows % 8 == 0 && chunk_rows > 0),
              "chunks of B (the staged kernel) are a positive multiple of 8 rows, with blocks of 8 vectors");
  VectorBlocks out;
  out.k = k;
  out.chunk_rows = chunk_rows;
  out.chunks = chunk_rows > 0 ? (a.cols + chunk_rows - 1) / chunk_rows : 0;
  out.window_block.push_back(0);
  const int32_t per_block = 8 * k;  // values of one block: 8 rows x k vectors
  std::vector<int32_t> cols, group;
  // The blocks of one group of vectors (a window's, or its vectors in one chunk), the last padded
  // with the group's first column and zero values; a vector -1 - c is padding too, at column c.
  const auto add_blocks = [&](const int32_t (&rows)[kWindowRows], const std::vector<int32_t>& vecs) {
    const auto blocks = static_cast<int32_t>((vecs.size() + static_cast<size_t>(k) - 1) / static_cast<size_t>(k));
    for (int32_t b = 0; b < blocks; ++b) {
      const size_t base = out.values.size();
      out.values.resize(base + static_cast<size_t>(per_block), 0.0f);
      for (int32_t j = 0; j < k; ++j) {
        const size_t v = static_cast<size_t>(b) * static_cast<size_t>(k) + static_cast<size_t>(j);
        const bool padding = v >= vecs.size() || vecs[v] < 0;
        out.padded += padding;
        const int32_t col = v >= vecs.size() ? vecs.front() : vecs[v] < 0 ? -1 - vecs[v] : vecs[v];
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
  };
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
    if (chunk_rows == 0) {
      add_blocks(rows, cols);
    } else {
      size_t i = 0;
      for (int32_t c = 0; c < out.chunks; ++c) {
        out.chunk_block.push_back(static_cast<int32_t>(out.block_cols.size()) / k);
        group.clear();
        for (; i < cols.size() && cols[i] < (c + 1) * chunk_rows; ++i) group.push_back(cols[i]);
        if (!group.empty()) add_blocks(rows, spread_residues(group, c, chunk_rows, a.cols));
      }
    }
    out.window_block.push_back(static_cast<int32_t>(out.block_cols.size()) / k);
  }
  if (chunk_rows > 0) out.chunk_block.push_back(out.window_block.back());
  return out;
}

}  // namespace spmmc
