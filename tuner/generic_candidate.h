// The generic family as a candidate the ranker scores (issue 25: the family is an axis of the
// candidates, not a rule after the tile). Its kernel has no tile: its launch follows from A and n
// (codegen/generic_launch.h), so one such candidate stands beside a problem's tiles, with the
// ranking features of that launch (compiler/planning/features.h, family 1).
#pragma once

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"

namespace spmmc {

// The label of a candidate in the tuning database and in reports: "generic" for the generic
// family, "balanced-gG" for the balanced family with G pieces per warp (tuner/balanced_candidate.h),
// the tile's label (TileCandidate::label) otherwise.
std::string candidate_label(const PlannedCandidate& c);

// The share of one wave that `grid` blocks of `threads` threads fill on `target`'s SMs (at most 1) and
// the warps they keep resident per SM, blocks per SM limited by the threads and blocks an SM holds
// and, where `registers_per_thread` > 0, by its registers: the launch features of the families'
// candidates (compiler/planning/features.h).
struct LaunchFill {
  double wave_fill = 1.0;
  double resident_warps_per_sm = 0.0;
};
LaunchFill launch_fill(int64_t grid, int64_t threads, const Target& target, int64_t registers_per_thread = 0);

// The generic family's candidate for A at plan.shape.n on `target`, as the tuners time it
// (time_generic_kernel: the launch with B and C 16-byte aligned, weights ahead). tile.family is
// kGeneric, tile.m1 and tile.n1 are the rows and columns of C of one block, tile.cols_per_thread
// its V; the features (family 1) describe that launch in the unrolled family's terms:
//   a_tile_num, b_tile_num, block_num  blocks along the rows, along the columns, both;
//   nnc_sum                            nnz: every product loads its row of B (no reuse in a block);
//   nnz_max                            the longest row: the products of the busiest thread;
//   blocks_per_a_tile                  1; b_tiles_per_block: the row blocks one block loops over
//                                      (grid.y is at most 65535);
//   wave_fill, resident_warps_per_sm   of the launch on `target`'s SMs, blocks per SM limited by
//                                      the threads and blocks an SM holds; kernels 1.
// `verdict` is left empty: no planning constraint applies to it. Needs a.rows >= 1.
PlannedCandidate generic_candidate(const Csr& a, const Plan& plan, const Target& target);

}  // namespace spmmc
