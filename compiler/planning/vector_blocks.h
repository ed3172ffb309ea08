// FlashSparse's storage of A for tensor cores (issue 26; ME-BCRS, flashsparse.txt §3.5), laid out
// for the swap-and-transpose MMA that a tensor-core kernel of spmmc will run: the rows of A in
// windows of 8 (a RowTiling of M1 = 8: its tiles, in order), each window's non-empty columns its
// 8 x 1 vectors, taken `k` at a time into blocks (k = 8: FP16/BF16 m16n8k8; k = 4: TF32 m16n8k4).
// A block is the right operand of one MMA, A^T (k vectors x 8 rows); its values are stored in the
// order the 32 lanes of a warp hold that operand, so that each lane loads one word per block.
// Only the last block of a window may be short of k vectors (in chunks, see below, any block of a
// chunk): its missing vectors are padded with the window's first column and zero values (ME-BCRS pads nothing in memory but the kernel reads
// a full block; the padding here is what the kernel will read, listed so it can be checked).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"

namespace spmmc {

struct VectorBlocks {
  int32_t k = 8;                      // vectors per block: 8 or 4
  int32_t rows = 8;                   // rows per window: 8 or 16 (k = 8 only)
  std::vector<int32_t> window_rows;   // `rows` per window: the rows of C it computes (-1: none, past the last row)
  std::vector<int32_t> window_block;  // windows + 1: window w owns blocks [window_block[w], window_block[w + 1])
  std::vector<int32_t> block_cols;    // k per block: the column of A (row of B) of each vector
  // With chunk_rows > 0 (the staged kernel): chunks = ceil(A's columns / chunk_rows) per window, and
  // window w's blocks whose vectors lie in columns [c * chunk_rows, (c + 1) * chunk_rows) are
  // [chunk_block[w * chunks + c], chunk_block[w * chunks + c + 1]) (windows * chunks + 1 entries;
  // chunk_block[w * chunks] = window_block[w]). Empty with chunk_rows = 0.
  int32_t chunk_rows = 0;
  int32_t chunks = 0;
  std::vector<int32_t> chunk_block;
  // With chunk_rows > 0: the staged kernel copies a chunk once for each group of group_windows
  // consecutive windows, and stores row r of it with its 16-byte pieces swizzled by a key (0..7) of
  // that group and chunk, keys[key_index(w, c, r)] (groups * chunks * chunk_rows entries; rows past
  // A's columns 0), chosen so that each window's vectors there spread over the keys.
  int32_t group_windows = 0;
  std::vector<uint8_t> keys;
  bool keyed = false;  // false: every key is its row's residue mod 8 (the keys would spare little)
  // rows * k values per block, lane-major: for k = 8, with H = rows / 8 words per lane, lane
  // l = 4 g + t's word h (0 .. H - 1) is values[8 rows b + 2 (H l + h)] and [... + 1]: row 8 h + g of
  // the window times the vectors 2t and 2t + 1 (the B fragment of the m16n8k8 MMA of rows 8h .. 8h + 7:
  // b0 = {B[2t][g], B[2t+1][g]}); for k = 4 (rows = 8), lane l holds A^T[t][g] at values[32 b + l]
  // (m16n8k4's b0 = B[t][g]).
  std::vector<float> values;
  int64_t vectors = 0;  // rows x 1 vectors (non-empty columns of windows), padding excluded
  int64_t padded = 0;   // padding vectors of the last blocks

  int32_t windows() const { return static_cast<int32_t>(window_block.size()) - 1; }
  size_t key_index(int32_t window, int32_t chunk, int32_t row) const {
    return (static_cast<size_t>(window / group_windows) * static_cast<size_t>(chunks) + static_cast<size_t>(chunk)) *
               static_cast<size_t>(chunk_rows) +
           static_cast<size_t>(row);
  }
  int32_t blocks() const { return static_cast<int32_t>(block_cols.size()) / k; }
};

// Builds the blocks of A for the windows of `tiling` (M1 = 8, or 16 with k = 8; its tiles in order, then its empty
// rows are not computed: their rows of C are zero and the kernel stores them separately). A
// window's vectors are its non-empty columns in ascending order. With `chunk_rows` > 0 (a multiple
// of 8; k = 8 only), for the staged kernel that holds chunk_rows rows of B at a time in shared
// memory for `group_windows` windows at once: no block spans two chunks, a window's vectors of a
// chunk take ceil(count / 8) blocks, each row of a chunk has a key per group (`keys`), and a window's
// vectors are dealt to its blocks so that a block's 8 vectors have distinct keys as far as the keys
// allow, the places left over (any block's, not only the last's) padded with rows of the chunk of keys
// the block lacks (the kernel's ldmatrix reads of B in shared memory are then free of bank conflicts,
// kernel_tensor_core.cuh).
// Deterministic.
VectorBlocks build_vector_blocks(const Csr& a, const RowTiling& tiling, int32_t k, int32_t chunk_rows = 0,
                                 int32_t group_windows = 8);

}  // namespace spmmc
