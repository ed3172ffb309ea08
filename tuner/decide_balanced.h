// Whether a timed search's file becomes the balanced family (issue 28, docs/design/balanced.md): the
// balanced kernel replaces the kernel the search decided on (decide_against_heuristic.h) only where
// it was measured faster by kBeatHeuristicBy at n and at every other batch size the file serves, so
// that no family is emitted where the kernel it replaces measured faster.
#pragma once

#include <string>

#include "tuner/tuning.h"

namespace spmmc {

struct BalancedDecision {
  bool balanced = false;
  std::string why;  // the times compared, or what was not measured
};

// From `result` (its decision required): result.balanced against the decided kernel at n (the generic
// kernel, result.generic, where the decision is the generic family; else the emitted tile's real
// kernel, decision->emitted_ms) and, for each of result.batch_sizes, against the faster of what the
// file would run there (its unrolled kernel or its generic path). Anything not measured keeps the
// decided kernel. `mode` names the search in `why`.
BalancedDecision decide_balanced(const TuningResult& result, std::string_view mode);

}  // namespace spmmc
