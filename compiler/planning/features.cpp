#include "compiler/planning/features.h"

namespace spmmc {

std::vector<double> CandidateFeatures::values() const {
  return {static_cast<double>(a_tile_num), static_cast<double>(b_tile_num), static_cast<double>(block_num), sparsity,
          static_cast<double>(nnc_sum),    static_cast<double>(nnz_max),    static_cast<double>(m1),        static_cast<double>(n1),
          static_cast<double>(k),          static_cast<double>(cols_per_thread), static_cast<double>(threads_per_block),
          static_cast<double>(min_blocks_per_sm)};
}

const std::vector<std::string>& CandidateFeatures::names() {
  static const std::vector<std::string> kNames = {"a_tile_num", "b_tile_num", "block_num", "sparsity", "nnc_sum",
                                                  "nnz_max",    "m1",         "n1",        "k",
                                                  "cols_per_thread", "threads_per_block", "min_blocks_per_sm"};
  return kNames;
}

CandidateFeatures compute_features(const TileCandidate& c, const ProblemShape& shape, int64_t nnz, const TilingStats& tiling) {
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
  return f;
}

}  // namespace spmmc
