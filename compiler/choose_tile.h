// The tile choice of `spmmc compile --tune none`: a documented heuristic over the planning
// survivors, until the ranker and proxies (later issues) replace it.
#pragma once

#include <string>

#include "compiler/plan_tiles.h"
#include "compiler/target.h"

namespace spmmc {

// Prefers survivors with M1 <= 64 and N1 <= 256 that launch at least one thread block per SM
// in waves that keep the SMs busy (blocks >= 90% of waves x SMs); among those, the largest tile area M1 x N1 (each loaded element of B serves M1 rows, each warp
// loads wide rows of B), then the fewest loads of B (smallest NNC_sum), then the larger N1. The
// rule comes from a tile sweep on the GPU (docs/emitted-code.md): on 512-row layers, tiles of
// 8192 outputs (32x256, 64x128) ran 1.5-2.9x faster than smaller ones and M1 = 128 was slower.
// The preference widens step by step when nothing qualifies (drop the block and wave rule,
// then the size caps). When nothing survived the constraints (small or irregular matrices), candidates
// rejected only for too few thread blocks or for load balance compete instead: a kernel is
// always produced. Returns nullptr only when even the register constraint removed everything;
// `why` says what decided.
const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target, std::string& why);

}  // namespace spmmc
