#include "codegen/print_tensor_core.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "codegen/embedded_templates.h"
#include "codegen/fill_template.h"
#include "compiler/common/diagnostics.h"
#include "compiler/planning/tiling_stats.h"
#include "compiler/planning/vector_blocks.h"

namespace spmmc {
namespace {

// The staged kernel's chunk of B in shared memory: 64 rows of 64 columns, 8 KB in fp16 and bf16, and
// its warps' words of A and offsets for the chunk (two buffers of each), within the 48 KB of a block's
// static shared memory (staged_shared_bytes); with windows of 16 rows whose blocks in a chunk would
// need more (8 blocks: 50.8 KB), chunks of kTcNarrowChunkRows rows (7 blocks at most: 43.75 KB).
constexpr int32_t kTcChunkRows = 64;
constexpr int32_t kTcNarrowChunkRows = 56;
constexpr int64_t kTcMaxStaticShared = 48 * 1024;
constexpr int32_t kTcStagedWarps = kTensorCoreStagedWarps;
// At most this many entries of spmmc_tc_chunk_block (windows x chunks): above, A is a very wide
// sparse matrix, which the rule below leaves to the direct kernel anyway.
constexpr int64_t kTcMaxChunkEntries = int64_t{1} << 20;

// Windows of 16 rows where they fill at least this fraction of the staged kernel's warps
// (tensor_core_tall_windows): on an H200 the ten 64-row layers (half) ran 0.84-1.00x the 8-row
// windows, and layers whose 32 windows of 16 rows and one of empty rows fill 0.82 ran 0.90-1.11x.
constexpr double kTcMinStagedWarpFill = 0.75;

// The staged kernel copies every row of B's slab into shared memory for each block of 8 windows;
// it pays where the windows reuse those rows: where 8 windows' vectors are at least
// kTcStagedMinReuse times A's columns (each staged row feeds that many windows' MMAs on average),
// as on pruned DNN layers up to sparsity 0.95 or so; graphs, whose windows read a few of K rows, keep
// the direct kernel. And where K spans at least two chunks: with one, the copy cannot overlap any
// MMA. Measured on an H100 with the form emitted now (docs/benchmarks.md, *The staged
// tensor-core kernel*, straight-line copies): 1.02-1.21x the direct kernel at 2.03-3.47, 0.91x at
// 1.93, 0.62-0.79x at 0.86-1.75, and 0.95x at 2.83 where K is one chunk (64 columns).
// fp16 and bf16 only (the tf32 template has no staged form yet).
constexpr double kTcStagedMinReuse = 2.0;
// Its launch has a block per 64 columns and 8 windows, 4 resident per SM with windows of 8 rows (3
// with 16: the template's spmmc_tc_staged_blocks_per_sm); with less than 0.9 of a wave it lost to the
// direct kernel (0.66-0.78x at 0.03-0.8 waves), so it runs from the n whose launch has
// kTcStagedMinWave of the resident blocks per SM of the target.
constexpr double kTcStagedMinWave = 0.9;
int32_t staged_blocks_per_sm(int32_t window_rows) { return window_rows == 16 ? 3 : 4; }

// The direct kernel splits K (2 or 4 warps per window) where its launch would have at most
// kTcSplitWarpsPerSm warps per SM with the split, and each warp's share of a window averages at least
// kTcMinSplitBlocks blocks. Measured on an H200 (docs/benchmarks.md, *Split K in the direct kernel*):
// with 2-8 warps per SM unsplit, 4 warps per window ran 1.66-2.67x one; with 12-16, 2 ran 1.12-1.36x
// (4: 1.08-1.28x); with 24, splitting lost (0.84-0.92x).
constexpr int64_t kTcSplitWarpsPerSm = 32;
constexpr int64_t kTcMinSplitBlocks = 4;

// The n below which the direct kernel takes `parts` warps per window (the template's
// spmmc_tc_split{2,4}_below_n; 0: never): those whose launch (a warp per window, part and 64 columns)
// stays within kTcSplitWarpsPerSm warps per SM of the target.
int64_t split_below_n(int64_t windows, int64_t blocks, int64_t parts, int64_t sm_count) {
  if (windows < 1 || blocks < kTcMinSplitBlocks * parts * windows) return 0;
  const int64_t slabs = kTcSplitWarpsPerSm * std::max<int64_t>(sm_count, 1) / (parts * windows);
  return slabs >= 1 ? 64 * slabs + 1 : 0;
}

// The staged kernel's static shared memory (the template's slab, words and offsets) for chunks of
// `chunk_rows` rows, windows of `window_rows` rows and at most `chunk_blocks` blocks of a window in a chunk.
int64_t staged_shared_bytes(int32_t chunk_rows, int32_t window_rows, int32_t chunk_blocks) {
  const int64_t word_pieces = std::max<int64_t>(8 * (window_rows / 8) * chunk_blocks, 64);
  return 2 * (int64_t{chunk_rows} * 128 + kTcStagedWarps * (word_pieces + chunk_blocks) * 16);
}

// The most blocks a window has in one chunk of `v` (the template's spmmc_tc_chunk_blocks; at least 1).
int32_t max_chunk_blocks(const VectorBlocks& v) {
  int32_t most = 1;
  for (size_t i = 0; i + 1 < v.chunk_block.size(); ++i) most = std::max(most, v.chunk_block[i + 1] - v.chunk_block[i]);
  return most;
}

// The rule, from the windows' non-empty columns (their vectors: measure_tiling's NNC per tile).
bool staged(const TilingStats& stats, int32_t cols, DType dtype) {
  int64_t windows = 0;
  for (const int32_t nnc : stats.nnc_per_tile) windows += nnc > 0;
  const int64_t chunks = (cols + kTcChunkRows - 1) / kTcChunkRows;
  return dtype != DType::kTf32 && windows > 0 && chunks >= 2 &&
         8.0 * static_cast<double>(stats.nnc_sum) >= kTcStagedMinReuse * static_cast<double>(cols) * static_cast<double>(windows) &&
         (static_cast<int64_t>(stats.nnc_per_tile.size()) + 1) * chunks <= kTcMaxChunkEntries;
}

// The first n (a multiple of 64) whose staged launch (a block per 8 of `windows` and 64 columns) has
// kTcStagedMinWave of the resident blocks per SM of the target's `sm_count`.
int64_t staged_from_n(int64_t windows, int32_t window_rows, int64_t sm_count) {
  const int64_t groups = (windows + 7) / 8;
  const auto min_blocks = static_cast<int64_t>(std::ceil(kTcStagedMinWave * staged_blocks_per_sm(window_rows) *
                                                         static_cast<double>(std::max<int64_t>(sm_count, 1))));
  return 64 * ((min_blocks + groups - 1) / groups);
}

// Where the vectors of a staged file lie in their chunk's copy of B in shared memory, in bytes, one
// per vector in block order: 16 (8 r + key) for its row r of the chunk and r's key for the window's
// group and the chunk (the template's spmmc_tc_piece, whose 16-byte pieces of a row are swizzled by
// its key; a lane xors in 16 q for its piece q). A block's vectors lie in one chunk
// (build_vector_blocks), that of its first vector.
std::vector<int32_t> staged_offsets(const VectorBlocks& v) {
  std::vector<int32_t> out;
  out.reserve(v.block_cols.size());
  for (int32_t w = 0; w < v.windows(); ++w)
    for (int32_t b = v.window_block[static_cast<size_t>(w)]; b < v.window_block[static_cast<size_t>(w) + 1]; ++b) {
      const int32_t chunk = v.block_cols[static_cast<size_t>(8 * b)] / v.chunk_rows;
      for (int32_t j = 0; j < 8; ++j) {
        const int32_t r = v.block_cols[static_cast<size_t>(8 * b + j)] - chunk * v.chunk_rows;
        SPMMC_CHECK(r >= 0 && r < v.chunk_rows, "a block's vectors lie in one chunk");
        out.push_back(16 * (8 * r + v.keys[v.key_index(w, chunk, r)]));
      }
    }
  return out;
}

}  // namespace

bool tensor_core_staged(const Csr& a, const RowTiling& windows, DType dtype, int64_t sm_count, int64_t tuned_n) {
  const int64_t from_n = staged_from_n(windows.num_blocks(), windows.m1, sm_count);
  return staged(measure_tiling(a, windows), a.cols, dtype) && (tuned_n == 0 || from_n <= tuned_n);
}

bool tensor_core_tall_windows(const Csr& a, const RowTiling& windows, DType dtype, int64_t sm_count, int64_t tuned_n) {
  SPMMC_CHECK(windows.m1 == 16, "the windows of 16 rows");
  const int64_t count = windows.num_blocks(), groups = (count + kTcStagedWarps - 1) / kTcStagedWarps;
  return dtype != DType::kTf32 && tensor_core_staged(a, windows, dtype, sm_count, tuned_n) &&
         static_cast<double>(count) >= kTcMinStagedWarpFill * static_cast<double>(kTcStagedWarps * groups);
}

TensorCoreCode print_tensor_core(const Csr& a, const RowTiling& windows, DType dtype, int64_t sm_count, int64_t tuned_n) {
  SPMMC_CHECK(dtype == DType::kFp16 || dtype == DType::kBf16 || dtype == DType::kTf32,
              "the tensor-core family takes fp16, bf16 or tf32");
  const bool tf32 = dtype == DType::kTf32;
  // Vectors per block: the MMA's K (m16n8k8 for fp16 and bf16, m16n8k4 for tf32).
  // The staged form in chunks of 64 rows, or of A's columns rounded up to 4 where there are fewer.
  // Not where the file is tuned for an n below the staged kernel's: its blocks, cut at the chunks,
  // carry more padding for the direct kernel that would run there (0.70x cuSPARSE FP16 instead of
  // 0.83x on a 512 x 4608 ResNet-50 layer at n = 1568, H100).
  const int64_t from_n = staged_from_n(windows.num_blocks(), windows.m1, sm_count);
  const int32_t chunk_rows =
      tensor_core_staged(a, windows, dtype, sm_count, tuned_n) ? std::min(kTcChunkRows, (a.cols + 7) / 8 * 8) : 0;
  VectorBlocks v = build_vector_blocks(a, windows, tf32 ? 4 : 8, chunk_rows, kTcStagedWarps);
  if (chunk_rows > 0 && staged_shared_bytes(chunk_rows, v.rows, max_chunk_blocks(v)) > kTcMaxStaticShared)
    v = build_vector_blocks(a, windows, 8, kTcNarrowChunkRows, kTcStagedWarps);
  const int32_t chunk_blocks = chunk_rows > 0 ? max_chunk_blocks(v) : 0;
  SPMMC_CHECK(chunk_rows == 0 || staged_shared_bytes(v.chunk_rows, v.rows, chunk_blocks) <= kTcMaxStaticShared,
              "the staged kernel's shared memory fits a block's static 48 KB");
  TensorCoreCode out;
  out.chunk_rows = v.chunk_rows;
  out.k = v.k;
  out.vectors = v.vectors;
  out.padded = v.padded;
  out.blocks = v.blocks();
  // The windows of the empty rows: v.rows rows each, no blocks (their rows of C are stored as zeros).
  std::vector<int32_t> rows = v.window_rows, window_block = v.window_block, chunk_block = v.chunk_block;
  const auto height = static_cast<size_t>(v.rows);
  for (size_t i = 0; i < windows.empty_rows.size(); i += height) {
    for (size_t j = i; j < i + height; ++j) rows.push_back(j < windows.empty_rows.size() ? windows.empty_rows[j] : -1);
    window_block.push_back(window_block.back());
    // Their chunks have no blocks: chunk_block's last entry (all blocks) repeated.
    if (v.chunk_rows > 0) chunk_block.insert(chunk_block.end(), static_cast<size_t>(v.chunks), chunk_block.back());
  }
  out.windows = static_cast<int32_t>(window_block.size()) - 1;
  SPMMC_CHECK(out.windows >= 1 && out.blocks >= 1, "the tensor-core family needs a matrix with non-zeros");
  const auto number = [](int32_t x) { return std::to_string(x); };
  // fp16 and bf16: the columns as 4 pairs per block (lane 4g + t loads vectors 2t and 2t + 1); tf32:
  // 4 columns per block (lane 4g + t loads vector t).
  const std::string cols =
      tf32 ? joined_items(v.block_cols.size(), 16, [&](size_t i) { return number(v.block_cols[i]); })
           : joined_items(v.block_cols.size() / 2, 8, [&](size_t i) {
               return fmt::format("{{{}, {}}}", v.block_cols[2 * i], v.block_cols[2 * i + 1]);
             });
  // fp16 and bf16: lane l's word holds its two values (vectors 2t, 2t + 1 of row g), the first in
  // the low half; tf32: its one value (vector t of row g), a float's bits (A's values are tf32 already).
  const std::string a_bits =
      tf32 ? joined_items(v.values.size(), 8, [&](size_t i) {
               const float value = v.values[i];
               SPMMC_CHECK(round_to_dtype(value, dtype) == value, "A's values are rounded to tf32 before printing");
               uint32_t bits = 0;
               std::memcpy(&bits, &value, sizeof bits);
               return fmt::format("0x{:08x}u", bits);
             })
           : joined_items(v.values.size() / 2, 8, [&](size_t i) {
               const uint32_t lo = to_half_bits(v.values[2 * i], dtype), hi = to_half_bits(v.values[2 * i + 1], dtype);
               return fmt::format("0x{:08x}u", lo | (hi << 16));
             });
  std::map<std::string, std::string> values = {{"HEADER_COMMENT", ""},
                                               {"WINDOWS", std::to_string(out.windows)},
                                               {"WINDOW_BLOCK", joined_items(window_block.size(), 16, [&](size_t i) { return number(window_block[i]); })},
                                               {"WINDOW_ROWS", joined_items(rows.size(), 16, [&](size_t i) { return number(rows[i]); })},
                                               {"COLS", cols},
                                               {"A_BITS", a_bits}};
  SPMMC_CHECK(out.windows == windows.num_blocks(), "a window per tile of M1 rows and per M1 empty rows");
  out.staged_from_n = v.chunk_rows == 0 ? 0 : from_n;
  // A thread's offset into a chunk of B (row * n + column) is an int in the staged kernel.
  out.staged_max_n = v.chunk_rows == 0 ? 0 : (int64_t{0x7fffffff} - 64) / v.chunk_rows;
  // The keys of the groups of windows of the empty rows (which copy the chunks but read none): the
  // residues mod 8.
  std::vector<uint8_t> keys = v.keys;
  if (v.chunk_rows > 0)
    while (keys.size() < static_cast<size_t>((out.windows + kTcStagedWarps - 1) / kTcStagedWarps) *
                             static_cast<size_t>(v.chunks) * static_cast<size_t>(v.chunk_rows))
      keys.push_back(static_cast<uint8_t>(keys.size() % 8));
  const std::vector<int32_t> offsets = v.chunk_rows > 0 ? staged_offsets(v) : std::vector<int32_t>();
  if (!tf32)
    values["STAGED_TABLES"] =
      v.chunk_rows == 0
          ? std::string()
          : fmt::format("#define SPMMC_TC_STAGED 1\n"
                        "constexpr int spmmc_tc_k = {};             // A's columns: the rows of B\n"
                        "constexpr int spmmc_tc_chunk_rows = {};  // rows of B in shared memory at a time\n"
                        "constexpr int spmmc_tc_chunks = {};\n"
                        "constexpr int spmmc_tc_chunk_blocks = {};  // a window's blocks in one chunk, at most\n"
                        "constexpr int64_t spmmc_tc_staged_from_n = {};  // the staged kernel from this n (its launch "
                        "fills {} SMs)\n"
                        "constexpr int64_t spmmc_tc_staged_max_n = {};  // and up to this n (a thread's offsets into a "
                        "chunk of B are ints)\n"
                        "__device__ const int spmmc_tc_chunk_block[] = {{{}}};\n"
                        "constexpr int spmmc_tc_keyed = {};  // 1: the copy reads spmmc_tc_keys; 0: every key is its row's residue mod 8\n"
                        "__device__ const unsigned char spmmc_tc_keys[] = {{{}}};\n"
                        "alignas(16) __device__ const unsigned short spmmc_tc_offsets[] = {{{}}};\n",
                        a.cols, v.chunk_rows, v.chunks, chunk_blocks, out.staged_from_n, sm_count, out.staged_max_n,
                        joined_items(chunk_block.size(), 16, [&](size_t i) { return number(chunk_block[i]); }),
                        v.keyed ? 1 : 0, joined_items(keys.size(), 32, [&](size_t i) { return number(keys[i]); }),
                        joined_items(offsets.size(), 16, [&](size_t i) { return number(offsets[i]); }));
  if (!tf32) {
    values["ROWS"] = std::to_string(v.rows);
    // nvcc and NVRTC allocate the 16-row direct kernel differently unless its registers are fixed
    // (the template says why).
    values["DIRECT_REGISTERS"] = v.rows == 16 ? "__maxnreg__(72)" : "__launch_bounds__(spmmc_tc_threads)";
    // Split K by the windows with blocks (those of the empty rows have none).
    const int64_t computing = v.windows();
    out.split2_below_n = split_below_n(computing, v.blocks(), 2, sm_count);
    out.split4_below_n = split_below_n(computing, v.blocks(), 4, sm_count);
    values["SPLIT2_BELOW_N"] = std::to_string(out.split2_below_n);
    values["SPLIT4_BELOW_N"] = std::to_string(out.split4_below_n);
  }
  if (!tf32) values["MMA"] = dtype == DType::kFp16 ? "SPMMC_MMA_M16N8K8_F16" : "SPMMC_MMA_M16N8K8_BF16";
  const char* const template_name = tf32 ? "kernel_tensor_core_tf32.cuh" : "kernel_tensor_core.cuh";
  out.code = fill_template(embedded_template(template_name), values, template_name);
  return out;
}

}  // namespace spmmc
