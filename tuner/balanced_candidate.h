// The balanced family as candidates the ranker scores (issue 28: one choice across families), beside
// the tiles and the generic family's candidate (tuner/generic_candidate.h). Its kernel has no tile:
// its launch follows from A's schedule of pieces (codegen/families/balanced/balanced_schedule.h) and
// n, one candidate per number of pieces per warp G, with the ranking features of that launch
// (compiler/planning/features.h, family 2).
#pragma once

#include <cstdint>

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"

namespace spmmc {

// The pieces per warp a collection and a search try (docs/design/balanced.md).
inline constexpr int32_t kBalancedGroupsTried[] = {1, 2, 4};

// The balanced family's candidate for A at plan.shape.n on `target` with `groups` pieces per warp (1,
// 2 or 4) and rows cut at `piece_length` products, as the tuners time it (time_balanced_kernels: B
// and C 16-byte aligned). tile.family is kBalanced, tile.m1 the slots of a block (16 G), tile.n1 the
// columns of C of one block (32 / G lanes x V), tile.cols_per_thread V, tile.min_blocks_per_sm the
// kernel's launch bound (1 for one piece per warp, 2 for several). The features (family 2), in the
// unrolled family's terms:
//   a_tile_num, b_tile_num, block_num  the schedule's blocks, the column blocks, both;
//   nnc_sum                            nnz: every product loads its row of B (no reuse in a block);
//   nnz_max                            the longest piece: the products of the busiest slot;
//   m1, n1, cols_per_thread            as the tile's; threads_per_block 32 x 16;
//   blocks_per_a_tile, b_tiles_per_block  1: one block per (schedule block, column block);
//   wave_fill, resident_warps_per_sm   of the launch on `target`'s SMs, blocks per SM limited by the
//                                      threads, the blocks and the registers (64 per thread) an SM
//                                      holds; kernels 1.
// `verdict` is left empty: no planning constraint applies. Needs a.rows >= 1.
PlannedCandidate balanced_candidate(const Csr& a, const Plan& plan, const Target& target, int32_t piece_length,
                                    int32_t groups);

}  // namespace spmmc
