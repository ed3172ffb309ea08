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

// The order of one chunk's vectors (ascending columns) in its blocks: position j of each block
// takes, where it can, a column whose residue mod 4 is j / 2, else one of the residue with the most
// columns left (so vectors 0, 2, 4, 6 and vectors 1, 3, 5, 7 of a block have distinct residues as
// far as the chunk's columns allow).
std::vector<int32_t> spread_residues(const std::vector<int32_t>& cols) {
  std::vector<int32_t> bucket[4];
  for (const int32_t c : cols) bucket[c & 3].push_back(c);
  size_t next[4] = {0, 0, 0, 0};
  std::vector<int32_t> out;
  out.reserve(cols.size());
  for (size_t j = 0; out.size() < cols.size(); j = (j + 1) % 8) {
    size_t r = j / 2;
    if (next[r] == bucket[r].size())
      for (size_t q = 0; q < 4; ++q)
        if (bucket[q].size() - next[q] > bucket[r].size() - next[r]) r = q;
    out.push_back(bucket[r][next[r]++]);
  }
  return out;
}

}  // namespace

VectorBlocks build_vector_blocks(const Csr& a, const RowTiling& tiling, int32_t k, int32_t chunk_rows) {
  SPMMC_CHECK(k == 8 || k == 4, "a block holds 8 (FP16/BF16) or 4 (TF32) vectors");
  SPMMC_CHECK(tiling.m1 == kWindowRows, "the windows are tiles of 8 rows");
  SPMMC_CHECK(chunk_rows == 0 || (k == 8 && chunk_rows % 4 == 0 && chunk_rows > 0),
              "chunks of B (the staged kernel) are a positive multiple of 4 rows, with blocks of 8 vectors");
  VectorBlocks out;
  out.k = k;
  out.chunk_rows = chunk_rows;
  out.chunks = chunk_rows > 0 ? (a.cols + chunk_rows - 1) / chunk_rows : 0;
  out.window_block.push_back(0);
  const int32_t per_block = 8 * k;  // values of one block: 8 rows x k vectors
  std::vector<int32_t> cols, group;
  // The blocks of one group of vectors (a window's, or its vectors in one chunk), the last padded
  // with the group's first column and zero values.
  const auto add_blocks = [&](const int32_t (&rows)[kWindowRows], const std::vector<int32_t>& vecs) {
    const auto blocks = static_cast<int32_t>((vecs.size() + static_cast<size_t>(k) - 1) / static_cast<size_t>(k));
    for (int32_t b = 0; b < blocks; ++b) {
      const size_t base = out.values.size();
      out.values.resize(base + static_cast<size_t>(per_block), 0.0f);
      for (int32_t j = 0; j < k; ++j) {
        const size_t v = static_cast<size_t>(b) * static_cast<size_t>(k) + static_cast<size_t>(j);
        const bool padding = v >= vecs.size();
        out.padded += padding;
        const int32_t col = padding ? vecs.front() : vecs[v];
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
        if (!group.empty()) add_blocks(rows, spread_residues(group));
      }
    }
    out.window_block.push_back(static_cast<int32_t>(out.block_cols.size()) / k);
  }
  if (chunk_rows > 0) out.chunk_block.push_back(out.window_block.back());
  return out;
}

}  // namespace spmmc
