// Planning: the front of the pipeline up to the ranker. For every M1 of the tile space it
// reorders the rows (LO-SpMM Algorithm 1), then applies the three constraints to every
// (M1, N1) candidate and computes the ranking features of the survivors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/constraints.h"
#include "compiler/planning/features.h"
#include "compiler/planning/reorder_rows.h"
#include "compiler/planning/target.h"
#include "compiler/planning/tile_space.h"
#include "compiler/planning/tiling_stats.h"

namespace spmmc {

struct PlanOptions {
  int64_t n = 0;                                     // columns of B and C
  ReorderMethod reorder = ReorderMethod::kColumnOverlap;
  ConstraintSettings constraints;
  TileSpaceAxes axes;                                // empty: default_tile_axes(target)
  unsigned threads = 0;                              // M1 values reordered in parallel; 0: all cores
  int64_t fmas_per_kernel = 0;                       // the split of the unrolled code (feature `kernels`); 0: one kernel
};

// One M1: its tiling with the chosen method, and the natural-order tiling it is compared with.
struct M1Plan {
  int32_t m1 = 0;
  RowTiling tiling;
  TilingStats before;  // ReorderMethod::kNone
  TilingStats after;   // options.reorder
  double seconds = 0.0;
};

struct PlannedCandidate {
  TileCandidate tile;
  Verdict verdict;
  CandidateFeatures features;  // computed for every candidate; the ranker reads the survivors'
};

struct Plan {
  ProblemShape shape;
  int64_t nnz = 0;
  std::vector<M1Plan> per_m1;               // in the order of the M1 axis
  std::vector<PlannedCandidate> candidates; // the whole space, M1-major
  // Space size after each constraint: [0] all, [1] after register, [2] hardware, [3] balance.
  int64_t remaining[4] = {0, 0, 0, 0};
  double seconds = 0.0;

  std::vector<const PlannedCandidate*> survivors() const;
  const M1Plan& for_m1(int32_t m1) const;
  // The tiling whose A-tiles order the rows of the generic family's kernel: M1 = `rows_per_block`
  // (the rows of one of its blocks, codegen/generic_launch.h) where the M1 axis has it, else the
  // largest M1 below it, else the smallest.
  const M1Plan& for_generic(int32_t rows_per_block) const;
};

// The candidates every tuning mode chooses among (the ranker, the proxies, the real kernels,
// spmmc collect): the survivors of every constraint or, where none survived, the candidates the
// register constraint kept (`fallback`); in both cases without the tiles whose threads cannot all
// have a column of C: N1 / V threads per block above ceil(n / V) rounded up to the warp size
// (e.g. 64x672 at n = 128), unless nothing else is left. `why` says which set it is, for reports.
struct TunableCandidates {
  std::vector<const PlannedCandidate*> list;
  bool fallback = false;    // none passed every constraint
  int64_t too_wide = 0;     // tiles left out for idle threads
  std::string why;          // "12 survivors" / "40 candidates kept by the register constraint (none passed every ...)"
};
TunableCandidates tunable_candidates(const Plan& plan, int64_t warp_size);

// At most `k` of `candidates`, evenly spaced in their order (the first always kept); all of them
// where k is 0 or there are at most k. Deterministic: --max-candidates and spmmc collect --sample.
std::vector<const PlannedCandidate*> evenly_spaced(const std::vector<const PlannedCandidate*>& candidates, size_t k);

// The index of `pick` in `candidates`, appending it where it is not there: the heuristic's pick,
// which every search and collection measures. -1 (nothing added) for nullptr.
int32_t index_adding(std::vector<const PlannedCandidate*>& candidates, const PlannedCandidate* pick);

// Plans C = A B for n columns on `target`. A must have at least one non-zero and the axes must
// be non-empty (checked).
Plan plan_tiles(const Csr& a, const Target& target, const PlanOptions& options);

// The peak memory `spmmc compile` needs for A with the default axes, from planning through the
// emitted file: per row (a reordering and a tiling per M1), per column and per non-zero. Measured
// (peak resident set less the program's ~100 MB): 69 bytes per row (10^7 rows, one non-zero), 8
// per column (10^8 columns), 147 per non-zero (an R-MAT graph of 2.1M). The commands check it
// against the machine's memory before planning, so that a file announcing 2^31 rows is refused
// with its size, not killed by the system.
double planning_memory_bytes(const Csr& a);

}  // namespace spmmc
