// The three constraints of LO-SpMM §3.2-3.4 that remove tile candidates before anything is
// compiled. Each says why it rejected a candidate (after taco's isLowerable(stmt, &reason)).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/planning/target.h"
#include "compiler/planning/tile_space.h"
#include "compiler/planning/tiling_stats.h"

namespace spmmc {

enum class Constraint { kNone, kRegister, kHardware, kBalance };
std::string_view constraint_name(Constraint c);  // "register", "hardware", "balance"

struct ConstraintSettings {
  double max_row_cov = 0.25;    // TH_row: COV of non-zeros across A-tiles
  double max_col_waste = 0.25;  // TH_col: padded fraction of B columns
  // Registers a thread needs besides its M1 x cols_per_thread accumulators: for the unrolled
  // kernel, the current and the prefetched B value (2 per column) plus 6 for addressing
  // (64-bit B and C pointers, n, the column index). 0 counts accumulators only, as the toy
  // example of LO-SpMM Fig. 3 does.
  int32_t extra_registers_per_column = 2;
  int32_t addressing_registers = 6;
};

struct ProblemShape {
  int64_t m = 0;  // rows of A and C
  int64_t k = 0;  // columns of A, rows of B
  int64_t n = 0;  // columns of B and C
};

struct Verdict {
  Constraint rejected_by = Constraint::kNone;
  std::string reason;  // empty when accepted
  bool accepted() const { return rejected_by == Constraint::kNone; }
};

// Estimated registers per thread of a candidate's kernel (see ConstraintSettings).
int64_t estimate_registers_per_thread(const TileCandidate& c, const ConstraintSettings& settings);

// Applies, in order, the register resource constraint (registers per thread within the
// target's per-thread limit; per block, in allocation units, within the per-block limit), the
// hardware utilisation constraint (N1 a multiple of the warp size, at most the block's thread
// limit, and Eq. 1: at least half as many thread blocks as SMs, counting the A-tiles of the
// tiling), and the load balancing constraint (COV_row <= TH_row, WASTE_col <= TH_col). Returns
// the first that rejects, with its reason.
Verdict check_constraints(const TileCandidate& c, const ProblemShape& shape, const Target& target,
                          const TilingStats& tiling, const ConstraintSettings& settings);

// WASTE_col: the fraction of the ceil(n / N1) * N1 columns the B tiles span that lie beyond n.
double column_waste(int64_t n, int32_t n1);

}  // namespace spmmc
