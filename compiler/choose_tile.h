// The tile choice of `spmmc compile --tune none`: a documented heuristic over the planning
// survivors, until the ranker and proxies (later issues) replace it.
#pragma once

#include <string>

#include "compiler/plan_tiles.h"
#include "compiler/target.h"

namespace spmmc {

// Among the survivors, prefer those that put at least 1024 threads per SM to work (half of an
// H100 SM's 2048: enough warps to hide the latency of B's loads); among those, the smallest
// NNC_sum (fewest loads of B per column of C: the kernel is memory-bound, and larger A-tiles
// share columns), then N1 closest to 128, then the smaller M1. When no survivor reaches the
// thread count, all compete on the same keys. When nothing survived the constraints (small or
// irregular matrices), the candidates rejected only for too few thread blocks or for load
// balance compete instead: a kernel is always produced. Returns nullptr only when even the
// register constraint removed everything; `why` says what decided.
const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target, std::string& why);

}  // namespace spmmc
