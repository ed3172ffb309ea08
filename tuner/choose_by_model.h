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

// Ranks the plan's survivors (or, where none survived, every candidate the register constraint
// kept, as the tuners do) with `model` and returns the first; nullptr when there is no candidate.
// `why` says how many were ranked and the winner's score.
const PlannedCandidate* choose_tile_by_model(const Plan& plan, const RankerModel& model, std::string& why);

// `spmmc compile --tune rank`: the `k` of `candidates` that `model` ranks first, in their given
// (plan) order; all of them when there are at most k.
std::vector<const PlannedCandidate*> top_ranked_candidates(const std::vector<const PlannedCandidate*>& candidates,
                                                          const RankerModel& model, size_t k);

}  // namespace spmmc
