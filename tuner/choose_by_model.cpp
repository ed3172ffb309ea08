#include "tuner/choose_by_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/planning/features.h"
#include "tuner/ranker_domain.h"

namespace spmmc {

FeatureSchema ranking_schema() { return {CandidateFeatures::kSchemaVersion, CandidateFeatures::names()}; }

std::filesystem::path default_ranker_path(const Target& target) {
  return targets_dir().parent_path() / (target.name + ".ranker.json");
}

ModelChoice choose_tile_by_model(const Plan& plan, const Target& target, const RankerModel& model,
                                 const PlannedCandidate* heuristic) {
  ModelChoice out;
  const TunableCandidates tunable = tunable_candidates(plan, target.warp_size);
  std::vector<const PlannedCandidate*> candidates = tunable.list;
  const auto keep_heuristic = [&](std::string why) {
    out.chosen = heuristic;
    out.heuristic_kept = true;
    out.why = "the heuristic's pick kept by --tune model: " + why;
    return out;
  };
  if (candidates.empty()) return heuristic ? keep_heuristic("no candidate to rank") : out;
  std::vector<std::vector<double>> rows;
  for (const auto* c : candidates) rows.push_back(c->features.values());
  if (heuristic && !model.domain().empty()) {
    if (const auto outside = outside_domain(model.domain(), describe_problem(rows, model.schema(), plan.shape.n)))
      return keep_heuristic(fmt::format("the layer is outside what the model was trained on ({})", *outside));
  }
  // The heuristic's pick is scored too, even where the tunable set left it out.
  size_t heuristic_row = std::find(candidates.begin(), candidates.end(), heuristic) - candidates.begin();
  if (heuristic && heuristic_row == candidates.size()) rows.push_back(heuristic->features.values());
  const std::vector<double> scores = model.predict(rows);
  size_t first = 0;
  for (size_t i = 1; i < candidates.size(); ++i)
    if (scores[i] > scores[first]) first = i;
  const std::string ranked = fmt::format("the ranker's first of {} (score {:.3g})", tunable.why, scores[first]);
  const bool departs = heuristic && candidates[first] != heuristic;
  // The score gap over the heuristic's pick, said whether the pick is kept or not.
  const std::string gap = departs ? fmt::format("{:.3g} above the heuristic's tile {} ({:.3g}; margin {})",
                                                scores[first] - scores[heuristic_row], heuristic->tile.label(),
                                                scores[heuristic_row], kModelScoreMargin)
                                  : std::string();
  if (departs && scores[first] - scores[heuristic_row] < kModelScoreMargin)
    return keep_heuristic(fmt::format("{} scores only {}", ranked, gap));
  out.chosen = candidates[first];
  out.heuristic_kept = out.chosen == heuristic;
  out.why = departs ? ranked + ", " + gap : ranked;
  return out;
}

std::vector<const PlannedCandidate*> top_ranked_candidates(const std::vector<const PlannedCandidate*>& candidates,
                                                          const RankerModel& model, size_t k) {
  if (candidates.size() <= k) return candidates;
  std::vector<std::vector<double>> rows;
  for (const auto* c : candidates) rows.push_back(c->features.values());
  std::vector<size_t> first = model.rank(rows);
  first.resize(k);
  std::sort(first.begin(), first.end());
  std::vector<const PlannedCandidate*> kept;
  for (size_t i : first) kept.push_back(candidates[i]);
  return kept;
}

}  // namespace spmmc
