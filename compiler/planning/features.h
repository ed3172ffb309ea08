// Ranking features of a tile candidate: LO-SpMM Table 1, computed from the reordered tiles.
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
  static constexpr int kSchemaVersion = 1;

  int64_t a_tile_num = 0;  // A-tiles (non-empty rows / M1, rounded up, after reordering)
  int64_t b_tile_num = 0;  // ceil(n / N1)
  int64_t block_num = 0;   // a_tile_num * b_tile_num
  double sparsity = 0.0;   // 1 - nnz / (M K)
  int64_t nnc_sum = 0;     // sum over A-tiles of their non-empty columns
  int64_t nnz_max = 0;     // most non-zeros in one A-tile
  int64_t m1 = 0;
  int64_t n1 = 0;
  int64_t k = 0;           // columns of A (rows of B)

  // The features in the order of names(), as the ranker consumes them.
  std::vector<double> values() const;
  static const std::vector<std::string>& names();
};

CandidateFeatures compute_features(const TileCandidate& c, const ProblemShape& shape, int64_t nnz,
                                   const TilingStats& tiling);

}  // namespace spmmc
