// `spmmc compile --tune model` (issue 12): the tile the ranker puts first, without a GPU.
#pragma once

#include <filesystem>
#include <string>

#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"
#include "tuner/ranker.h"

namespace spmmc {

// The feature schema spmmc ranks with: CandidateFeatures' (compiler/planning/features.h).
FeatureSchema ranking_schema();

// Where spmmc looks for the ranker of `target` when none is given: <models>/<target name>.ranker.json,
// beside the targets folder (targets_dir()).
std::filesystem::path default_ranker_path(const Target& target);

// The model's pick only where the model can be trusted over the heuristic (issue 25): its scores
// separate its first candidate from the heuristic's pick by at least kModelScoreMargin. Scores are
// LambdaMART's (docs/design/ranker.md, "--tune model keeps the heuristic").
inline constexpr double kModelScoreMargin = 0.5;

struct ModelChoice {
  const PlannedCandidate* chosen = nullptr;  // nullptr only where there is no candidate and no heuristic
  bool heuristic_kept = false;
  std::string why;
};

// `spmmc compile --tune model`: ranks tunable_candidates(plan) (compiler/planning/plan_tiles.h) with
// `model` and takes its first, unless the heuristic's pick (`heuristic`, --tune none's tile; may be
// nullptr) is to be kept: the problem lies outside the model's training domain
// (tuner/ranker_domain.h; an empty domain is not checked), or the model's scores do not separate its
// first candidate from the heuristic's by kModelScoreMargin. `why` says which.
ModelChoice choose_tile_by_model(const Plan& plan, const Target& target, const RankerModel& model,
                                 const PlannedCandidate* heuristic);

// `spmmc compile --tune rank`: the `k` of `candidates` that `model` ranks first, in their given
// (plan) order; all of them when there are at most k.
std::vector<const PlannedCandidate*> top_ranked_candidates(const std::vector<const PlannedCandidate*>& candidates,
                                                          const RankerModel& model, size_t k);

}  // namespace spmmc
