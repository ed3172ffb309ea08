// What tuning gained over the heuristic (--tune none), as `spmmc compile` reports it (issue 25):
// the "versus_heuristic" object of NAME.json and the clause of its one-line summary.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/planning/plan_tiles.h"
#include "tuner/compare_with_sgemm.h"
#include "tuner/tuning.h"

namespace spmmc {

struct HeuristicComparison {
  // null where nothing was decided against the heuristic (--tune none, --tile). Otherwise
  //   {"tile": "16x1024", "family": "unrolled"|"generic", "kept": true|false, "why": "...",
  //    "measured": true|false, and where measured "heuristic_ms", "emitted_ms", "speedup"
  //    (heuristic_ms / emitted_ms), and "sgemm_ms" where SGEMM was timed}.
  nlohmann::ordered_json json;
  // "the heuristic's kernel 0.0412 ms, this one 0.0350 ms (1.18x); SGEMM 0.0900 ms", or "" when
  // nothing was measured.
  std::string summary;
};

// `decision`: the timed search's or the model's (none: null json); `heuristic`: --tune none's pick
// and `heuristic_generic` its family by the rule; `sgemm`: compare_with_sgemm's result.
HeuristicComparison compare_with_heuristic(const std::optional<Decision>& decision, const PlannedCandidate* heuristic,
                                           bool heuristic_generic, const SgemmComparison& sgemm);

}  // namespace spmmc
