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

// The model changes the B-tile width (N1, V) of the heuristic's tile, never its rows per block
// (M1), and not at all where that M1 is above kModelMaxM1 (the single-tile rule's 64): the
// heuristic's M1 rules were measured on every shared layer (docs/design/kernel.md), while the
// model's training data holds few tiles of 64 rows (40 of its 3 900 lines, the fastest in 1 of 97
// problems), and on the H100 every departure of the model below 0.95x the heuristic changed M1 or
// left M1 = 64 (docs/design/tuning.md, "--tune model").
inline constexpr int32_t kModelMaxM1 = 32;

struct ModelChoice {
  const PlannedCandidate* chosen = nullptr;  // nullptr only where there is no candidate and no heuristic
  bool heuristic_kept = false;
  bool generic = false;  // the model ranked the generic family first: emit it (`chosen` is then the heuristic's tile)
  // The model ranked the balanced family's candidate with this many pieces per warp first: emit it
  // (`chosen` is then the heuristic's tile); 0 where not.
  int32_t balanced_groups = 0;
  bool balanced_ranked = false;  // the balanced family's candidates were ranked (the family is the model's choice)
  std::string why;
};

// `spmmc compile --tune model`: ranks tunable_candidates(plan) (compiler/planning/plan_tiles.h) with
// `model` and takes its first, unless the heuristic's pick (`heuristic`, --tune none's tile; may be
// nullptr) is to be kept: the problem lies outside the model's training domain
// (tuner/ranker_domain.h; an empty domain is not checked), or the model's scores do not separate its
// first candidate from the heuristic's by kModelScoreMargin, or the first is a tile of another M1
// than the heuristic's or the heuristic's M1 is above kModelMaxM1. `why` says which.
// `generic`: the generic family's candidate (tuner/generic_candidate.h), ranked beside the tiles
// where the model was trained on generic kernels (its domain's generic_problems > 0); nullptr where
// the family is not free. `heuristic_generic`: the heuristic's kernel is the generic family (--tune
// none's rule for its tile), so the generic candidate's score is the heuristic's; a model never
// trained on generic kernels then keeps the heuristic.
// `balanced`: the balanced family's candidates (tuner/balanced_candidate.h), ranked beside the tiles
// and the generic candidate where the model was trained on them too (its domain's balanced_problems >
// 0); ignored otherwise (the file's family rules then decide as without a model).
// `heuristic_balanced`: where --tune none's file is the balanced family (its rule, over the generic
// family's), the one of `balanced` it would emit, scored as the heuristic's kernel.
ModelChoice choose_tile_by_model(const Plan& plan, const Target& target, const RankerModel& model,
                                 const PlannedCandidate* heuristic, const PlannedCandidate* generic = nullptr,
                                 bool heuristic_generic = false, const std::vector<const PlannedCandidate*>& balanced = {},
                                 const PlannedCandidate* heuristic_balanced = nullptr);

// `spmmc compile --tune rank`: the `k` of `candidates` (tiles: the generic kernel is timed by every
// search anyway, tuner/tune_with_proxies.h) that `model` ranks first, in their given
// (plan) order; all of them when there are at most k.
std::vector<const PlannedCandidate*> top_ranked_candidates(const std::vector<const PlannedCandidate*>& candidates,
                                                          const RankerModel& model, size_t k);

}  // namespace spmmc
