// Ranking features of a tile candidate: LO-SpMM Table 1, computed from the reordered tiles, and
// the launch axes of the kernel design (docs/design/kernel.md) that Table 1 predates.
// The struct is versioned: a trained model records the schema version it was trained on and is
// refused by a build with another one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/planning/constraints.h"
#include "compiler/planning/tile_space.h"
#include "compiler/planning/tiling_stats.h"

namespace spmmc {

struct CandidateFeatures {
  static constexpr int kSchemaVersion = 2;  // 2: + cols_per_thread, threads_per_block, min_blocks_per_sm

  int64_t a_tile_num = 0;  // A-tiles (non-empty rows / M1, rounded up, after reordering)
  int64_t b_tile_num = 0;  // ceil(n / N1)
  int64_t block_num = 0;   // a_tile_num * b_tile_num
  double sparsity = 0.0;   // 1 - nnz / (M K)
  int64_t nnc_sum = 0;     // sum over A-tiles of their non-empty columns
  int64_t nnz_max = 0;     // most non-zeros in one A-tile
  int64_t m1 = 0;
  int64_t n1 = 0;
  int64_t k = 0;           // columns of A (rows of B)
  int64_t cols_per_thread = 1;    // V: adjacent columns of C per thread
  int64_t threads_per_block = 0;  // N1 / V
  int64_t min_blocks_per_sm = 1;  // __launch_bounds__' second argument: the register cap

  // The features in the order of names(), as the ranker consumes them.
  std::vector<double> values() const;
  static const std::vector<std::string>& names();
};

CandidateFeatures compute_features(const TileCandidate& c, const ProblemShape& shape, int64_t nnz,
                                   const TilingStats& tiling);

}  // namespace spmmc
