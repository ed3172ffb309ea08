#include "tuner/choose_by_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/planning/features.h"

namespace spmmc {

FeatureSchema ranking_schema() { return {CandidateFeatures::kSchemaVersion, CandidateFeatures::names()}; }

std::filesystem::path default_ranker_path(const Target& target) {
  return targets_dir().parent_path() / (target.name + ".ranker.json");
}

const PlannedCandidate* choose_tile_by_model(const Plan& plan, const RankerModel& model, std::string& why) {
  std::vector<const PlannedCandidate*> candidates = plan.survivors();
  const bool fallback = candidates.empty();
  if (fallback)
    for (const auto& c : plan.candidates)
      if (c.verdict.rejected_by != Constraint::kRegister) candidates.push_back(&c);
  if (candidates.empty()) return nullptr;
  std::vector<std::vector<double>> rows;
  for (const auto* c : candidates) rows.push_back(c->features.values());
  const std::vector<double> scores = model.predict(rows);
  const std::vector<size_t> order = model.rank(rows);
  why = fmt::format("the ranker's first of {} {} (score {:.4g}; the next {:.4g})", candidates.size(),
                    fallback ? "candidates kept by the register constraint (none passed every constraint)" : "survivors",
                    scores[order[0]], order.size() > 1 ? scores[order[1]] : scores[order[0]]);
  return candidates[order[0]];
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
