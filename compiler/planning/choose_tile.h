// The tile choice of `spmmc compile --tune none`: a documented heuristic over the planned
// candidates, until the ranker (a later issue) replaces it.
#pragma once

#include <functional>
#include <string>

#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"

namespace spmmc {

// The design's default first (docs/design/kernel.md, measured on an H100): V = 1, N1 = threads
// per block = n rounded up to the warp size, at most 1024, the register budget's minimum blocks
// per SM (64 registers per thread), and M1 = 16 rows per tile, which ran fastest; M1 = 32 (about
// 0.85x the speed, 3x faster to compile) where M1 = 16 does not `fit` (the size guard's compile
// time), and M1 = 32 still when neither fits: larger tiles would spill under the budget, so the
// size guard refuses it with its message instead. Candidates rejected by the register constraint
// never qualify; one rejected for load balance or too few blocks does: the design's mapping loops
// blocks over B-tiles, so it keeps the SMs busy either way.
// When the design has no candidate (the register constraint), the older rule over the planning
// survivors (docs/emitted-code.md): M1 <= 64 and N1 <= 256 in full waves, the largest tile area
// M1 x N1, then the fewest loads of B (smallest NNC_sum), then the larger N1, widening step by
// step; when nothing survived the constraints, candidates rejected only for too few thread blocks
// or for load balance compete instead. Returns nullptr only when the register constraint removed
// everything; `why` says what decided.
const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target,
                                                 const std::function<bool(const PlannedCandidate&)>& fits, std::string& why);

}  // namespace spmmc
