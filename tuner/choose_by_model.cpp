#include "tuner/choose_by_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/planning/features.h"
#include "tuner/generic_candidate.h"
#include "tuner/ranker_domain.h"

namespace spmmc {

FeatureSchema ranking_schema() { return {CandidateFeatures::kSchemaVersion, CandidateFeatures::names()}; }

std::filesystem::path default_ranker_path(const Target& target) {
  return targets_dir().parent_path() / (target.name + ".ranker.json");
}

ModelChoice choose_tile_by_model(const Plan& plan, const Target& target, const RankerModel& model,
                                 const PlannedCandidate* heuristic, const PlannedCandidate* generic,
                                 bool heuristic_generic, const std::vector<const PlannedCandidate*>& balanced,
                                 const PlannedCandidate* heuristic_balanced) {
  ModelChoice out;
  const TunableCandidates tunable = tunable_candidates(plan, target.warp_size);
  std::vector<const PlannedCandidate*> candidates = tunable.list;
  // Ranked only beside a heuristic's tile: a generic pick is emitted with that tile's plan.
  const bool rank_generic = generic != nullptr && heuristic != nullptr && model.domain().generic_problems > 0;
  // The balanced family replaces the generic one in a file: ranked only where that is ranked too.
  const bool rank_balanced = rank_generic && !balanced.empty() && model.domain().balanced_problems > 0;
  if (!rank_balanced) heuristic_balanced = nullptr;
  const auto keep_heuristic = [&](std::string why) {
    out.chosen = heuristic;
    out.heuristic_kept = true;
    out.why = "the heuristic's pick kept by --tune model: " + why;
    return out;
  };
  if (candidates.empty()) return heuristic ? keep_heuristic("no candidate to rank") : out;
  if (heuristic && heuristic_generic && !rank_generic)
    return keep_heuristic("its kernel is the generic family, which the model was not trained on");
  if (rank_generic) candidates.push_back(generic);
  if (rank_balanced) candidates.insert(candidates.end(), balanced.begin(), balanced.end());
  std::vector<std::vector<double>> rows;
  for (const auto* c : candidates) rows.push_back(c->features.values());
  if (heuristic && !model.domain().empty()) {
    if (const auto outside = outside_domain(model.domain(), describe_problem(rows, model.schema(), plan.shape.n)))
      return keep_heuristic(fmt::format("the layer is outside what the model was trained on ({})", *outside));
  }
  // The heuristic's pick is scored too, even where the tunable set left it out; where its kernel is
  // the generic family, it is the generic candidate, or the balanced one its file would take.
  const PlannedCandidate* heuristic_candidate = heuristic && heuristic_balanced ? heuristic_balanced
                                                : heuristic && heuristic_generic ? generic
                                                                                 : heuristic;
  size_t heuristic_row = std::find(candidates.begin(), candidates.end(), heuristic_candidate) - candidates.begin();
  if (heuristic && heuristic_row == candidates.size()) rows.push_back(heuristic->features.values());
  const std::vector<double> scores = model.predict(rows);
  size_t first = 0;
  for (size_t i = 1; i < candidates.size(); ++i)
    if (scores[i] > scores[first]) first = i;
  const std::string ranked = fmt::format("the ranker's first of {} (score {:.3g})", tunable.why, scores[first]);
  const bool departs = heuristic && candidates[first] != heuristic_candidate;
  // The score gap over the heuristic's pick, said whether the pick is kept or not.
  const std::string heuristic_name =
      heuristic_balanced ? fmt::format("kernel (the balanced family, {})", candidate_label(*heuristic_balanced))
      : heuristic_generic ? "kernel (the generic family)"
                          : fmt::format("tile {}", heuristic ? heuristic->tile.label() : "");
  const std::string gap = departs ? fmt::format("{:.3g} above the heuristic's {} ({:.3g}; margin {})",
                                                scores[first] - scores[heuristic_row], heuristic_name,
                                                scores[heuristic_row], kModelScoreMargin)
                                  : std::string();
  if (departs && scores[first] - scores[heuristic_row] < kModelScoreMargin)
    return keep_heuristic(fmt::format("{} scores only {}", ranked, gap));
  // Between tiles: the width only, within the heuristic's rows per block (kModelMaxM1).
  const PlannedCandidate* pick = candidates[first];
  if (departs && !heuristic_generic && pick->tile.family == KernelFamily::kUnrolled &&
      (pick->tile.m1 != heuristic->tile.m1 || heuristic->tile.m1 > kModelMaxM1))
    return keep_heuristic(fmt::format(
        "{} is tile {}, {} ({}); the model changes only the width of tiles of at most {} rows", ranked,
        pick->tile.label(),
        pick->tile.m1 != heuristic->tile.m1 ? fmt::format("another M1 than the heuristic's tile {}", heuristic->tile.label())
                                            : fmt::format("and the heuristic's tile {} has {} rows", heuristic->tile.label(),
                                                          heuristic->tile.m1),
        gap, kModelMaxM1));
  out.generic = candidates[first] == generic && rank_generic;
  out.balanced_ranked = rank_balanced;
  if (candidates[first]->tile.family == KernelFamily::kBalanced) out.balanced_groups = candidates[first]->tile.m1 / kBalancedWarps;
  out.chosen = out.generic || out.balanced_groups > 0 ? heuristic : candidates[first];
  out.heuristic_kept = heuristic != nullptr && !departs;
  const std::string what = out.generic              ? "the generic family, " + ranked
                           : out.balanced_groups > 0 ? fmt::format("the balanced family ({}), {}",
                                                                   candidate_label(*candidates[first]), ranked)
                                                     : ranked;
  out.why = departs ? what + ", " + gap : what;
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
