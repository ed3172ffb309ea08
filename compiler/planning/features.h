// Ranking features of a tile candidate: LO-SpMM Table 1, computed from the reordered tiles, the
// launch axes of the kernel design (docs/design/kernel.md) that Table 1 predates, and (schema 3)
// the launch the emitter makes of them on the target: blocks looping over B-tiles, the wave they
// fill, the warps they keep resident, the kernels of the layer.
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
  // 2: + cols_per_thread, threads_per_block, min_blocks_per_sm
  // 3: + blocks_per_a_tile, b_tiles_per_block, wave_fill, resident_warps_per_sm, kernels
  // 4: + family
  static constexpr int kSchemaVersion = 4;

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
  // The launch (codegen/templates/kernel.cu, spmmc_grid_y), with the target's SMs and the launch
  // bound's blocks per SM as the wave:
  int64_t blocks_per_a_tile = 1;      // grid.y (blocks_per_a_tile of tile_space.h)
  int64_t b_tiles_per_block = 1;      // B-tiles the busiest block loops over: ceil(b_tile_num / grid.y)
  double wave_fill = 1.0;             // unrolled_wave_fill: share of one wave the blocks fill (<= 1)
  double resident_warps_per_sm = 0;   // resident_warps_per_sm of choose_tile.h
  int64_t kernels = 1;                // kernels of the unrolled code: ceil(nnz / FMAs per kernel)
  // The family the candidate's kernel belongs to (schema 4): 0 the unrolled family, 1 the generic
  // family, whose features describe its data-driven launch (tuner/generic_candidate.h).
  int64_t family = 0;

  // The features in the order of names(), as the ranker consumes them.
  std::vector<double> values() const;
  static const std::vector<std::string>& names();
};

struct Target;

// `fmas_per_kernel`: the split of the unrolled code the compile will use (0: one kernel).
CandidateFeatures compute_features(const TileCandidate& c, const ProblemShape& shape, int64_t nnz,
                                   const TilingStats& tiling, const Target& target, int64_t fmas_per_kernel);

// Sets the launch features of `f` (schema 3, unrolled family) from its schema-2 features and the target, with
// `kernels` as counted: what compute_features does, and how `spmmc train-ranker` reads lines
// collected under schema 2 (which stored the kernel count beside the features).
void derive_launch_features(CandidateFeatures& f, const Target& target, int64_t kernels);

}  // namespace spmmc
