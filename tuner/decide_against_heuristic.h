// The decision rule every timed tuning mode ends with (issue 25): `spmmc compile` never emits a
// kernel measured slower than the heuristic's (--tune none's) real kernel for the same layer. The
// contenders are real kernels only (a proxy's time is not its kernel's): the heuristic's kernel (its
// tile unrolled, or the generic family's kernel where the heuristic's family rule picks generic),
// the search's pick unrolled, and the generic family's kernel (the family is an axis of the
// decision, not a rule applied after the tile). docs/design/tuning.md.
#pragma once

#include <cstdint>
#include <string_view>

#include "tuner/tuning.h"

namespace spmmc {

// Another kernel replaces the heuristic's only where its median is at least this much faster: the
// medians of the same kernel in two timing runs differ by up to ~1-2% on the H100 with L2 flushed
// (docs/design/tuning.md), so smaller gains are noise and would make the output flip between runs.
inline constexpr double kBeatHeuristicBy = 0.02;

// Decides from `result`'s real measurements: result.candidates[heuristic.index].real (or
// result.generic where heuristic.generic), result.candidates[result.chosen].real, and
// result.generic where `generic_allowed` (--family auto). Where the heuristic's kernel was not
// measured (NotRun: its compile was beyond TuningOptions::max_real_compile_seconds), it is kept:
// nothing measured beats an unmeasured kernel. Where it was measured and failed (it cannot be emitted
// as it is), the fastest measured contender wins, and where none was, the heuristic's pick is kept
// unmeasured. `mode` names the search in `why`. heuristic.index must be a valid index.
Decision decide_against_heuristic(const TuningResult& result, const HeuristicPick& heuristic, bool generic_allowed,
                                  std::string_view mode);

}  // namespace spmmc
