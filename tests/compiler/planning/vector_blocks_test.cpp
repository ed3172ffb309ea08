// build_vector_blocks (FlashSparse's ME-BCRS for the swap-and-transpose MMA): a hand-checked
// window, and a CPU model of the tensor-core computation that reads the blocks exactly as the
// 32 lanes of a warp hold the MMA operands, which must reproduce C = A B.
#include "compiler/planning/vector_blocks.h"

#include <cmath>
#include <vector>

#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/grow_row_tiles.h"
#include "compiler/planning/tiling_stats.h"
#include "runtime/reference_spmm.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

// The right operands of block b (A^T: k vectors x the window's rows, 8 per MMA) as the lanes hold
// them: for k = 8 lane 4g + t's word h (of rows / 8) holds rows 2t, 2t + 1 of column 8h + g; for
// k = 4 row t of column g.
std::vector<std::vector<double>> right_operand(const VectorBlocks& vb, int32_t b) {
  const int32_t words = vb.rows / 8;
  std::vector<std::vector<double>> op(static_cast<size_t>(vb.k), std::vector<double>(static_cast<size_t>(vb.rows), 0.0));
  for (int32_t lane = 0; lane < 32; ++lane) {
    const int32_t g = lane / 4, t = lane % 4;
    for (int32_t h = 0; h < words; ++h) {
      const size_t word = static_cast<size_t>(32 * words * b + words * lane + h), column = static_cast<size_t>(8 * h + g);
      if (vb.k == 8) {
        op[static_cast<size_t>(2 * t)][column] = vb.values[2 * word];
        op[static_cast<size_t>(2 * t + 1)][column] = vb.values[2 * word + 1];
      } else {
        op[static_cast<size_t>(t)][column] = vb.values[word];
      }
    }
  }
  return op;
}

// C = A B by the swapped MMA: per window, per 16 columns of C, per block: D (16 x 8) = B^T
// gathered (16 columns of C x k rows of B) times the right operand, added to C^T's window.
std::vector<double> model_spmm(const VectorBlocks& vb, int32_t rows, const std::vector<float>& b, int64_t n) {
  std::vector<double> c(static_cast<size_t>(rows) * static_cast<size_t>(n), 0.0);
  for (int32_t w = 0; w < vb.windows(); ++w)
    for (int32_t blk = vb.window_block[static_cast<size_t>(w)]; blk < vb.window_block[static_cast<size_t>(w) + 1]; ++blk) {
      const auto op = right_operand(vb, blk);
      for (int64_t n0 = 0; n0 < n; n0 += 16)
        for (int64_t m = 0; m < 16 && n0 + m < n; ++m)
          for (int32_t r = 0; r < vb.rows; ++r) {
            const int32_t row = vb.window_rows[static_cast<size_t>(vb.rows * w + r)];
            if (row < 0) continue;
            double d = 0.0;
            for (int32_t kk = 0; kk < vb.k; ++kk) {
              const int32_t col = vb.block_cols[static_cast<size_t>(blk * vb.k + kk)];
              d += static_cast<double>(b[static_cast<size_t>(col) * static_cast<size_t>(n) + static_cast<size_t>(n0 + m)]) *
                   op[static_cast<size_t>(kk)][static_cast<size_t>(r)];
            }
            c[static_cast<size_t>(row) * static_cast<size_t>(n) + static_cast<size_t>(n0 + m)] += d;
          }
    }
  return c;
}

Csr from_dense(int32_t rows, int32_t cols, const std::vector<float>& d) { return test::csr_from_dense(rows, cols, d); }

TEST_CASE("vector blocks: one window by hand, k = 8 and k = 4", "[vector-blocks]") {
  // 3 rows (one window, 5 empty row slots), columns 1, 4, 6, 9, 10 non-empty: 5 vectors.
  const Csr a = from_dense(3, 12, {0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,  //
                                   0, 0, 0, 0, 3, 0, 4, 0, 0, 5, 0, 0,  //
                                   0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0});
  const RowTiling natural = tile_rows(a, 8, ReorderMethod::kNone);
  const VectorBlocks v8 = build_vector_blocks(a, natural, 8);
  CHECK(v8.windows() == 1);
  CHECK(v8.window_rows == std::vector<int32_t>{0, 1, 2, -1, -1, -1, -1, -1});
  CHECK(v8.vectors == 5);
  CHECK(v8.blocks() == 1);
  CHECK(v8.padded == 3);
  CHECK(v8.block_cols == std::vector<int32_t>{1, 4, 6, 9, 10, 1, 1, 1});  // padded with the first column
  REQUIRE(v8.values.size() == 64);
  // Lane 4g + t holds A[row g][vector 2t], A[row g][vector 2t + 1]: row 1 (g = 1), vectors 2, 3
  // (columns 6, 9) are lane 5's: 4 and 5.
  CHECK(v8.values[2 * 5] == 4.0f);
  CHECK(v8.values[2 * 5 + 1] == 5.0f);
  CHECK(v8.values[2 * 0] == 1.0f);       // row 0, column 1
  CHECK(v8.values[2 * 0 + 1] == 2.0f);   // row 0, column 4
  CHECK(v8.values[2 * 10] == 7.0f);      // row 2 (g = 2), vector 4 (t = 2): column 10
  CHECK(v8.values[2 * 10 + 1] == 0.0f);  // vector 5: padding
  const VectorBlocks v4 = build_vector_blocks(a, natural, 4);
  CHECK(v4.blocks() == 2);
  CHECK(v4.padded == 3);
  CHECK(v4.block_cols == std::vector<int32_t>{1, 4, 6, 9, 10, 1, 1, 1});
  CHECK(v4.values[32 + 4 * 2 + 0] == 7.0f);  // block 1, row 2, vector 4 (its first): lane 8
}

TEST_CASE("vector blocks: one window of 16 rows by hand (two words per lane)", "[vector-blocks]") {
  // 10 rows (one window of 16, 6 empty row slots); columns 2, 5, 7 non-empty: 3 vectors.
  std::vector<float> d(10 * 8, 0.0f);
  d[0 * 8 + 2] = 1, d[1 * 8 + 5] = 2, d[8 * 8 + 7] = 3, d[9 * 8 + 2] = 4, d[9 * 8 + 5] = 5;
  const Csr a = from_dense(10, 8, d);
  const RowTiling natural = tile_rows(a, 16, ReorderMethod::kNone);
  const VectorBlocks v = build_vector_blocks(a, natural, 8);
  CHECK(v.rows == 16);
  CHECK(v.windows() == 1);
  REQUIRE(v.window_rows.size() == 16);
  CHECK(v.window_rows[9] == 9);
  CHECK(v.window_rows[10] == -1);
  CHECK(v.vectors == 3);
  CHECK(v.blocks() == 1);
  CHECK(v.block_cols == std::vector<int32_t>{2, 5, 7, 2, 2, 2, 2, 2});
  REQUIRE(v.values.size() == 128);
  // Lane 4g + t's words 2l (rows 0-7) and 2l + 1 (rows 8-15), each vectors 2t and 2t + 1 of its row.
  CHECK(v.values[2 * (2 * 0)] == 1.0f);          // row 0 (g 0, h 0), vector 0 (column 2): lane 0, word 0
  CHECK(v.values[2 * (2 * 4) + 1] == 2.0f);      // row 1 (g 1, h 0), vector 1 (column 5): lane 4, word 0, high
  CHECK(v.values[2 * (2 * 1 + 1)] == 3.0f);      // row 8 (g 0, h 1), vector 2 (column 7): lane 1, word 1, low
  CHECK(v.values[2 * (2 * 4 + 1)] == 4.0f);      // row 9 (g 1, h 1), vector 0: lane 4, word 1, low
  CHECK(v.values[2 * (2 * 4 + 1) + 1] == 5.0f);  // row 9, vector 1: lane 4, word 1, high
  CHECK_THROWS(build_vector_blocks(a, natural, 4));  // tf32's m16n8k4 kernel has windows of 8 rows
}

TEST_CASE("vector blocks: the lanes' operands reproduce C = A B, every order, k = 8 and 4", "[vector-blocks]") {
  for (const GeneratorKind kind : {GeneratorKind::kUniform, GeneratorKind::kPatterns, GeneratorKind::kRmat}) {
    GeneratorOptions g;
    g.kind = kind;
    if (kind == GeneratorKind::kRmat) {
      g.scale = 8;  // 256 nodes
    } else {
      g.rows = 203, g.cols = 150, g.sparsity = 0.93;
    }
    g.seed = 11;
    const Csr a = generate_matrix(g);
    const int64_t n = 37;  // not a multiple of 16: the last columns' tile is partial
    std::vector<float> b(static_cast<size_t>(a.cols) * n);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 7919) % 17) / 8.0f - 1.0f;
    const std::vector<double> want = reference_spmm(a, b, n);
    for (const ReorderMethod method : {ReorderMethod::kNone, ReorderMethod::kColumnOverlap, ReorderMethod::kGrow})
    for (const int32_t height : {8, 16}) {
      const RowTiling windows = tile_rows(a, height, method);
      const TilingStats stats = measure_tiling(a, windows);
      for (const int32_t k : {8, 4}) {
        if (k == 4 && height == 16) continue;  // tf32: windows of 8 rows
        INFO("kind " << static_cast<int>(kind) << ", " << reorder_method_name(method) << ", " << height << " rows, k = " << k);
        const VectorBlocks vb = build_vector_blocks(a, windows, k);
        CHECK(vb.vectors == stats.nnc_sum);  // a window's vectors are its tile's non-empty columns
        int64_t groups = 0;
        for (const int32_t nnc : stats.nnc_per_tile) groups += (nnc + k - 1) / k;
        CHECK(vb.blocks() == groups);
        CHECK(vb.padded == int64_t{vb.blocks()} * k - vb.vectors);
        const std::vector<double> got = model_spmm(vb, a.rows, b, n);
        double worst = 0.0;
        for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
        CHECK(worst < 1e-9);
      }
    }
  }
}

TEST_CASE("vector blocks in chunks (the staged kernel): blocks within a chunk, keys spread, C = A B", "[vector-blocks]") {
  const int32_t height = GENERATE(8, 16);
  INFO("windows of " << height << " rows");
  GeneratorOptions g;
  // Sparser for 16-row windows, whose vectors of a chunk would otherwise fill it (residues balanced already).
  g.rows = 203, g.cols = 300, g.sparsity = height == 8 ? 0.8 : 0.95, g.seed = 5;
  const Csr a = generate_matrix(g);
  const int64_t n = 24;
  std::vector<float> b(static_cast<size_t>(a.cols) * n);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 7919) % 17) / 8.0f - 1.0f;
  const std::vector<double> want = reference_spmm(a, b, n);
  const RowTiling windows = tile_rows(a, height, ReorderMethod::kGrow);
  const VectorBlocks whole = build_vector_blocks(a, windows, 8);
  CHECK(whole.chunk_block.empty());
  CHECK(whole.chunks == 0);
  const int32_t rows = height == 8 ? 64 : 56;  // 56: what a file of 16-row windows may take
  const int32_t chunks = (300 + rows - 1) / rows;
  const VectorBlocks vb = build_vector_blocks(a, windows, 8, rows);
  CHECK(vb.chunk_rows == rows);
  CHECK(vb.chunks == chunks);
  CHECK(vb.vectors == whole.vectors);
  REQUIRE(vb.chunk_block.size() == static_cast<size_t>(vb.windows()) * chunks + 1);
  CHECK(vb.chunk_block.back() == vb.blocks());
  int64_t conflicts = 0, residue_conflicts = 0, reads = 0, expected_blocks = 0;
  for (int32_t w = 0; w < vb.windows(); ++w) {
    CHECK(vb.chunk_block[static_cast<size_t>(w) * chunks] == vb.window_block[static_cast<size_t>(w)]);
    for (int32_t c = 0; c < chunks; ++c) {
      const int32_t first = vb.chunk_block[static_cast<size_t>(w * chunks + c)],
                    end = vb.chunk_block[static_cast<size_t>(w * chunks + c) + 1];
      // The window's vectors in this chunk, from the whole (unchunked) blocks.
      int64_t in_chunk = 0;
      for (int32_t blk = whole.window_block[static_cast<size_t>(w)]; blk < whole.window_block[static_cast<size_t>(w) + 1]; ++blk)
        for (int32_t j = 0; j < 8; ++j) {
          const size_t v = static_cast<size_t>(blk * 8 + j);
          const bool padding = blk + 1 == whole.window_block[static_cast<size_t>(w) + 1] && j > 0 &&
                               whole.block_cols[v] == whole.block_cols[static_cast<size_t>(whole.window_block[static_cast<size_t>(w)] * 8)];
          in_chunk += !padding && whole.block_cols[v] / rows == c;
        }
      CHECK(end - first == (in_chunk + 7) / 8);
      expected_blocks += (in_chunk + 7) / 8;
      for (int32_t blk = first; blk < end; ++blk) {
        for (int32_t j = 0; j < 8; ++j) CHECK(vb.block_cols[static_cast<size_t>(blk * 8 + j)] / rows == c);
        // The 8 rows of a block (padding included): keys repeated = bank conflicts of the kernel's
        // ldmatrix.
        bool seen[8] = {}, seen_residue[8] = {};
        for (int32_t j = 0; j < 8; ++j) {
          const int32_t col = vb.block_cols[static_cast<size_t>(blk * 8 + j)];
          const int32_t key = vb.keys[vb.key_index(w, c, col - c * rows)];
          conflicts += seen[key];
          residue_conflicts += seen_residue[col & 7];
          seen[key] = seen_residue[col & 7] = true;
          ++reads;
        }
      }
    }
  }
  CHECK(vb.blocks() == expected_blocks);
  // A key per row of each chunk and group of 8 windows, 0 to 7 (0 past A's columns).
  REQUIRE(vb.group_windows == 8);
  CHECK(vb.keys.size() == static_cast<size_t>((vb.windows() + 7) / 8) * chunks * rows);
  CHECK(std::all_of(vb.keys.begin(), vb.keys.end(), [](uint8_t k) { return k < 8; }));
  // The keys spread each window's vectors of a chunk over the 8 keys better than the residues of
  // their columns would, the padding taking the keys left.
  INFO(conflicts << " repeated keys in " << reads << " reads (the residues mod 8 would repeat " << residue_conflicts << ")");
  CHECK(conflicts * 2 < residue_conflicts);
  CHECK(conflicts * 40 < reads);
  const std::vector<double> got = model_spmm(vb, a.rows, b, n);
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  CHECK(worst < 1e-9);
  CHECK_THROWS(build_vector_blocks(a, windows, 4, rows));  // tf32's blocks of 4 have no staged form
  CHECK_THROWS(build_vector_blocks(a, windows, 8, 6));     // not a multiple of 4
}

}  // namespace
}  // namespace spmmc
