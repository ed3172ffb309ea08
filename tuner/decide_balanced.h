// Whether a timed search's file becomes the balanced family (issue 28, docs/design/balanced.md): the
// balanced kernel replaces the kernel the search decided on (decide_against_heuristic.h) only where
// it was measured faster by kBeatHeuristicBy at n and at every other batch size the file serves, so
// that no family is emitted where the kernel it replaces measured faster.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/tuning.h"

namespace spmmc {

// From `result` (its decision required): result.best_balanced() against the decided kernel at n (the generic
// kernel, result.generic, where the decision is the generic family; else the emitted tile's real
// kernel, decision->emitted_ms) and, for each of result.batch_sizes, against the faster of what the
// file would run there (its unrolled kernel or its generic path). Anything not measured keeps the
// decided kernel. `mode` names the search in `why`.
BalancedDecision decide_balanced(const TuningResult& result, std::string_view mode);

// The next piece length a search times (at the fastest shape's pieces per warp), or 0 where it is done:
// after result.balanced_tried's shapes at the rule's length, the first of `shorter` (longest first) below
// it, then the next one below the last timed for as long as that last one is the fastest so far
// (result.best_balanced()); none where no shape ran correctly.
int32_t next_balanced_piece_length(const TuningResult& result, int32_t rule_length, const std::vector<int32_t>& shorter);

// What a timed search emits (result.decision required): the family it decided on (the generic family
// or the unrolled kernel of its pick), or the balanced family where result.balanced_decision says the
// balanced kernel replaces that; a decision for the generic family stays one where it did not.
// `decision` is the search's, made the balanced kernel's (its time and reason, not the heuristic's
// kernel) where that replaced it: what the report compares with the heuristic.
struct SearchedFamily {
  bool generic = false;   // the generic family's file (the balanced family's is one)
  bool balanced = false;  // with the balanced kernel
  std::string why;
  Decision decision;
};
SearchedFamily family_of_search(const TuningResult& result);

}  // namespace spmmc
