#include "compiler/planning/vector_blocks.h"

#include <algorithm>
#include <array>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

constexpr int32_t kMaxWindowRows = 16;  // two of the swapped MMA's n = 8 (rows of A per window)
// The staged kernel's keys are used where they spare conflicts in this fraction of the blocks: on 12
// layers the keys ran 0.97-0.98x the residues at sparsity 0.5 (two more loads a chunk for each thread)
// and 1.04-1.10x at 0.8 and above (docs/design/precision.md).
constexpr double kMinKeyedGain = 0.05;

// A[row][col], 0 where there is no non-zero (columns of a row ascend).
float value_at(const Csr& a, int32_t row, int32_t col) {
  const auto first = a.col_idx.begin() + a.row_ptr[row], last = a.col_idx.begin() + a.row_ptr[row + 1];
  const auto it = std::lower_bound(first, last, col);
  return it != last && *it == col ? a.values[static_cast<size_t>(it - a.col_idx.begin())] : 0.0f;
}

// A window's non-empty columns (its vectors), ascending.
std::vector<int32_t> window_columns(const Csr& a, const RowTiling& tiling, int32_t t) {
  std::vector<int32_t> cols;
  for (int32_t i = tiling.tile_ptr[static_cast<size_t>(t)]; i < tiling.tile_ptr[static_cast<size_t>(t) + 1]; ++i) {
    const int32_t r = tiling.rows[static_cast<size_t>(i)];
    cols.insert(cols.end(), a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1]);
  }
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  return cols;
}

// The keys (0..7) of the `rows` rows of one chunk for one group of windows, whose vectors there are
// `sets` (rows of the chunk): a block of a window can have 8 distinct keys only where no key holds
// more of the window's vectors than the window has blocks there (ceil(count / 8)), so the keys
// minimise the excess, summed over the windows and keys. From the residues mod 8, each row in turn
// takes the key that lowers the excess most, until no row's does (a local minimum; deterministic).
// `excess` receives the summed excess of the residues (first) and of the keys returned.
std::vector<uint8_t> chunk_keys(const std::vector<std::vector<int32_t>>& sets, int32_t rows, int64_t (&excess_sum)[2]) {
  std::vector<uint8_t> key(static_cast<size_t>(rows));
  for (int32_t r = 0; r < rows; ++r) key[static_cast<size_t>(r)] = static_cast<uint8_t>(r & 7);
  const size_t windows = sets.size();
  std::vector<std::array<int32_t, 8>> count(windows);
  std::vector<int32_t> blocks(windows);
  std::vector<std::vector<uint32_t>> member(static_cast<size_t>(rows));  // the windows holding each row
  for (size_t w = 0; w < windows; ++w) {
    count[w].fill(0);
    blocks[w] = static_cast<int32_t>((sets[w].size() + 7) / 8);
    for (const int32_t r : sets[w]) {
      ++count[w][key[static_cast<size_t>(r)]];
      member[static_cast<size_t>(r)].push_back(static_cast<uint32_t>(w));
    }
  }
  const auto excess = [](int32_t c, int32_t b) { return c > b ? c - b : 0; };
  const auto total = [&] {
    int64_t sum = 0;
    for (size_t w = 0; w < windows; ++w)
      for (const int32_t c : count[w]) sum += excess(c, blocks[w]);
    return sum;
  };
  excess_sum[0] = total();
  for (int pass = 0; pass < 16; ++pass) {
    bool moved = false;
    for (int32_t r = 0; r < rows; ++r) {
      const std::vector<uint32_t>& in = member[static_cast<size_t>(r)];
      if (in.empty()) continue;
      const uint8_t from = key[static_cast<size_t>(r)];
      int32_t best_gain = 0;
      uint8_t best = from;
      for (uint8_t to = 0; to < 8; ++to) {
        if (to == from) continue;
        int32_t gain = 0;
        for (const uint32_t w : in) {
          const int32_t b = blocks[w], cf = count[w][from], ct = count[w][to];
          gain += excess(cf, b) + excess(ct, b) - excess(cf - 1, b) - excess(ct + 1, b);
        }
        if (gain > best_gain) best_gain = gain, best = to;
      }
      if (best == from) continue;
      for (const uint32_t w : in) --count[w][from], ++count[w][best];
      key[static_cast<size_t>(r)] = best;
      moved = true;
    }
    if (!moved) break;
  }
  excess_sum[1] = total();
  return key;
}

// One chunk's vectors (ascending columns, those of chunk `chunk` of `chunk_rows` rows, keyed by
// `key`, a key for each of the chunk's `rows` rows) placed in ceil(count / 8) blocks of 8 so that the 8 rows an
// ldmatrix of the staged kernel reads have distinct keys as far as the keys allow: the keys taken in
// order of their counts (most first), their columns dealt to the blocks in turn, so a key with c
// columns is in min(c, blocks) blocks, at most ceil(c / blocks) times in one. The blocks' empty places
// are padding, encoded as -1 - column with a row of the chunk whose key the block lacks (any row of
// the chunk is in its copy; padding values are zeros), else the chunk's first vector.
std::vector<int32_t> spread_keys(const std::vector<int32_t>& cols, int32_t chunk, int32_t chunk_rows, const uint8_t* key,
                                 int32_t rows) {
  const int32_t base = chunk * chunk_rows;
  const auto key_of = [&](int32_t col) { return key[static_cast<size_t>(col - base)]; };
  std::vector<int32_t> bucket[8];
  for (const int32_t c : cols) bucket[key_of(c)].push_back(c);
  int32_t order[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  std::stable_sort(order, order + 8, [&](int32_t x, int32_t y) { return bucket[x].size() > bucket[y].size(); });
  const size_t blocks = (cols.size() + 7) / 8;
  std::vector<std::vector<int32_t>> dealt(blocks);
  size_t i = 0;
  for (const int32_t k : order)
    for (const int32_t c : bucket[k]) dealt[i++ % blocks].push_back(c);
  int32_t row_of_key[8];  // a row of the chunk with each key (-1: none)
  std::fill(row_of_key, row_of_key + 8, -1);
  for (int32_t r = rows; r-- > 0;) row_of_key[key[r]] = base + r;
  std::vector<int32_t> out;
  out.reserve(blocks * 8);
  for (std::vector<int32_t>& block : dealt) {
    bool has[8] = {};
    for (const int32_t c : block) has[key_of(c)] = true;
    std::sort(block.begin(), block.end());
    out.insert(out.end(), block.begin(), block.end());
    for (size_t j = block.size(); j < 8; ++j) {
      int32_t pad = cols.front();
      for (int32_t k = 0; k < 8; ++k)
        if (!has[k] && row_of_key[k] >= 0) {
          pad = row_of_key[k], has[k] = true;
          break;
        }
      out.push_back(-1 - pad);
    }
  }
  return out;
}

}  // namespace

VectorBlocks build_vector_blocks(const Csr& a, const RowTiling& tiling, int32_t k, int32_t chunk_rows,
                                 int32_t group_windows) {
  SPMMC_CHECK(k == 8 || k == 4, "a block holds 8 (FP16/BF16) or 4 (TF32) vectors");
  SPMMC_CHECK(tiling.m1 == 8 || (tiling.m1 == kMaxWindowRows && k == 8),
              "the windows are tiles of 8 rows, or of 16 with blocks of 8 vectors");
  SPMMC_CHECK(chunk_rows == 0 || (k == 8 && chunk_rows % 8 == 0 && chunk_rows > 0 && group_windows > 0),
              "chunks of B (the staged kernel) are a positive multiple of 8 rows, with blocks of 8 vectors");
  VectorBlocks out;
  out.k = k;
  out.rows = tiling.m1;
  out.chunk_rows = chunk_rows;
  out.chunks = chunk_rows > 0 ? (a.cols + chunk_rows - 1) / chunk_rows : 0;
  out.window_block.push_back(0);
  const int32_t window_rows = tiling.m1, words = window_rows / 8;  // words per lane and block (k = 8)
  const int32_t per_block = window_rows * k;  // values of one block: the window's rows x k vectors
  std::vector<int32_t> group;
  // The blocks of one group of vectors (a window's, or its vectors in one chunk), the last padded
  // with the group's first column and zero values; a vector -1 - c is padding too, at column c.
  const auto add_blocks = [&](const int32_t (&rows)[kMaxWindowRows], const std::vector<int32_t>& vecs) {
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
        for (int32_t r = 0; r < window_rows; ++r) {
          if (rows[r] < 0) continue;
          const float w = value_at(a, rows[r], col);
          // Lane 4g + t holds vectors 2t, 2t + 1 (k = 8) of row 8h + g in its word h, or vector t (k = 4) of row g.
          const int32_t g = r % 8, h = r / 8;
          const size_t at = k == 8 ? static_cast<size_t>(2 * (words * (4 * g + j / 2) + h) + j % 2) : static_cast<size_t>(4 * g + j);
          out.values[base + at] = w;
        }
      }
    }
  };
  const int32_t windows = tiling.num_tiles();
  std::vector<std::vector<int32_t>> columns(static_cast<size_t>(windows));
  for (int32_t t = 0; t < windows; ++t) columns[static_cast<size_t>(t)] = window_columns(a, tiling, t);
  // The staged kernel's keys: per group of windows and chunk, computed from the group's vectors there.
  if (chunk_rows > 0) {
    out.group_windows = group_windows;
    const int32_t groups = (windows + group_windows - 1) / group_windows;
    out.keys.reserve(static_cast<size_t>(groups) * static_cast<size_t>(out.chunks) * static_cast<size_t>(chunk_rows));
    std::vector<std::vector<int32_t>> sets;
    int64_t excess[2] = {0, 0}, blocks = 0;  // summed over the groups and chunks: residues', keys'
    for (int32_t gr = 0; gr < groups; ++gr)
      for (int32_t c = 0; c < out.chunks; ++c) {
        const int32_t base = c * chunk_rows, rows = std::min(chunk_rows, a.cols - base);
        sets.clear();
        for (int32_t w = gr * group_windows; w < std::min(windows, (gr + 1) * group_windows); ++w) {
          const std::vector<int32_t>& cw = columns[static_cast<size_t>(w)];
          std::vector<int32_t>& set = sets.emplace_back();
          for (auto it = std::lower_bound(cw.begin(), cw.end(), base); it != cw.end() && *it < base + rows; ++it)
            set.push_back(*it - base);
        }
        int64_t chunk_excess[2];
        const std::vector<uint8_t> key = chunk_keys(sets, rows, chunk_excess);
        excess[0] += chunk_excess[0], excess[1] += chunk_excess[1];
        for (const std::vector<int32_t>& set : sets) blocks += static_cast<int64_t>((set.size() + 7) / 8);
        out.keys.insert(out.keys.end(), key.begin(), key.end());
        out.keys.resize(out.keys.size() + static_cast<size_t>(chunk_rows - rows), 0);  // rows past A's columns
      }
    // The keys where they spare conflicts in at least kMinKeyedGain of the blocks (a rough count: a
    // vector in excess shares a block with another of its key); elsewhere (a dense chunk's vectors
    // spread over the residues already) the residues, which the kernel computes instead of loading.
    out.keyed = static_cast<double>(excess[0] - excess[1]) >= kMinKeyedGain * static_cast<double>(blocks);
    if (!out.keyed)
      for (size_t i = 0; i < out.keys.size(); ++i) out.keys[i] = static_cast<uint8_t>((i % static_cast<size_t>(chunk_rows)) & 7);
  }
  for (int32_t t = 0; t < windows; ++t) {
    const int32_t first = tiling.tile_ptr[static_cast<size_t>(t)], count = tiling.tile_ptr[static_cast<size_t>(t) + 1] - first;
    SPMMC_CHECK(count >= 1 && count <= window_rows, "a window has 1 to M1 rows");
    int32_t rows[kMaxWindowRows];
    for (int32_t i = 0; i < kMaxWindowRows; ++i) rows[i] = i < count ? tiling.rows[static_cast<size_t>(first + i)] : -1;
    out.window_rows.insert(out.window_rows.end(), rows, rows + window_rows);
    const std::vector<int32_t>& cols = columns[static_cast<size_t>(t)];
    out.vectors += static_cast<int64_t>(cols.size());
    if (chunk_rows == 0) {
      add_blocks(rows, cols);
    } else {
      size_t i = 0;
      for (int32_t c = 0; c < out.chunks; ++c) {
        out.chunk_block.push_back(static_cast<int32_t>(out.block_cols.size()) / k);
        group.clear();
        for (; i < cols.size() && cols[i] < (c + 1) * chunk_rows; ++i) group.push_back(cols[i]);
        if (group.empty()) continue;
        add_blocks(rows, spread_keys(group, c, chunk_rows, &out.keys[out.key_index(t, c, 0)],
                                     std::min(chunk_rows, a.cols - c * chunk_rows)));
      }
    }
    out.window_block.push_back(static_cast<int32_t>(out.block_cols.size()) / k);
  }
  if (chunk_rows > 0) out.chunk_block.push_back(out.window_block.back());
  return out;
}

}  // namespace spmmc
