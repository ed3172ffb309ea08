#include "compiler/planning/features.h"

#include <algorithm>

#include "compiler/planning/choose_tile.h"

namespace spmmc {

std::vector<double> CandidateFeatures::values() const {
  return {static_cast<double>(a_tile_num), static_cast<double>(b_tile_num), static_cast<double>(block_num), sparsity,
          static_cast<double>(nnc_sum),    static_cast<double>(nnz_max),    static_cast<double>(m1),        static_cast<double>(n1),
          static_cast<double>(k),          static_cast<double>(cols_per_thread), static_cast<double>(threads_per_block),
          static_cast<double>(min_blocks_per_sm), static_cast<double>(blocks_per_a_tile),
          static_cast<double>(b_tiles_per_block), wave_fill, resident_warps_per_sm, static_cast<double>(kernels),
          static_cast<double>(family)};
}

const std::vector<std::string>& CandidateFeatures::names() {
  static const std::vector<std::string> kNames = {"a_tile_num", "b_tile_num", "block_num", "sparsity", "nnc_sum",
                                                  "nnz_max",    "m1",         "n1",        "k",
                                                  "cols_per_thread", "threads_per_block", "min_blocks_per_sm",
                                                  "blocks_per_a_tile", "b_tiles_per_block", "wave_fill",
                                                  "resident_warps_per_sm", "kernels", "family"};
  return kNames;
}

CandidateFeatures compute_features(const TileCandidate& c, const ProblemShape& shape, int64_t nnz, const TilingStats& tiling,
                                   const Target& target, int64_t fmas_per_kernel) {
  CandidateFeatures f;
  f.a_tile_num = tiling.tiles;
  f.b_tile_num = (shape.n + c.n1 - 1) / c.n1;
  f.block_num = f.a_tile_num * f.b_tile_num;
  f.sparsity = 1.0 - static_cast<double>(nnz) / (static_cast<double>(shape.m) * static_cast<double>(shape.k));
  f.nnc_sum = tiling.nnc_sum;
  f.nnz_max = tiling.max_nnz;
  f.m1 = c.m1;
  f.n1 = c.n1;
  f.k = shape.k;
  f.cols_per_thread = c.cols_per_thread;
  f.threads_per_block = c.threads_per_block();
  f.min_blocks_per_sm = c.min_blocks_per_sm;
  derive_launch_features(f, target, fmas_per_kernel > 0 ? std::max<int64_t>(1, (nnz + fmas_per_kernel - 1) / fmas_per_kernel) : 1);
  return f;
}

void derive_launch_features(CandidateFeatures& f, const Target& target, int64_t kernels) {
  TileCandidate tile;
  tile.m1 = static_cast<int32_t>(f.m1);
  tile.n1 = static_cast<int32_t>(f.n1);
  tile.cols_per_thread = static_cast<int32_t>(std::max<int64_t>(f.cols_per_thread, 1));
  tile.min_blocks_per_sm = static_cast<int32_t>(std::max<int64_t>(f.min_blocks_per_sm, 1));
  const int64_t n = f.b_tile_num * std::max<int64_t>(f.n1, 1);  // the widest n of these B-tiles: the same launch
  const int64_t wave = std::max<int64_t>(target.sm_count, 1) * tile.min_blocks_per_sm;
  f.blocks_per_a_tile = blocks_per_a_tile(f.a_tile_num, f.b_tile_num, wave);
  f.b_tiles_per_block = (f.b_tile_num + f.blocks_per_a_tile - 1) / f.blocks_per_a_tile;
  f.wave_fill = unrolled_wave_fill(f.a_tile_num, n, tile, target);
  f.resident_warps_per_sm = resident_warps_per_sm(f.a_tile_num, n, tile, target);
  f.kernels = std::max<int64_t>(kernels, 1);
}

}  // namespace spmmc
