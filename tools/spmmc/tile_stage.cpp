#include "tools/spmmc/tile_stage.h"

#include <vector>

#include <fmt/format.h>

#include "compiler/planning/choose_tile.h"
#include "tools/spmmc/tune_stage.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "tuner/balanced_candidate.h"
#include "tuner/choose_by_model.h"
#include "tuner/generic_candidate.h"

namespace spmmc::cli {
namespace {

// The timed search (--tune rank|proxy|exhaustive in float32): its decision's tile, and the report's
// "tuning".
void choose_by_search(const CompileOptions& o, const Csr& a, const Plan& plan, const UnrolledRules& rules, bool family_auto,
                      int32_t piece_length, int64_t fmas_per_kernel, TileChoice& t) {
  if (o.tune == "rank" && !o.ranker)  // said even under --tune auto: the fallback times every survivor's proxy
    print_warning(fmt::format("--tune rank: no ranker for the target '{}' ({} does not exist; train one with spmmc "
                              "train-ranker, docs/design/ranker.md): timing proxies over every survivor",
                              o.target.name, o.ranker_path));
  TuneRequest request;
  request.mode = o.tune;
  request.n = o.plan.n;
  request.fmas_per_kernel = fmas_per_kernel;
  request.time_generic = o.family == "auto";                        // the generic family's kernel is a contender
  request.balanced_piece_length = family_auto ? piece_length : 0;  // and the balanced family's, after the decision
  if (o.balanced_groups) request.balanced_groups = {*o.balanced_groups};
  if (!o.piece_length) request.balanced_shorter_piece_lengths = shorter_piece_lengths_to_try(piece_length);
  request.quiet = o.quiet;
  request.ranker = o.ranker ? &*o.ranker : nullptr;
  request.top_k = o.top_k;
  request.heuristic = t.heuristic;
  request.heuristic_generic = t.heuristic_generic;
  request.emittable = [&rules](const PlannedCandidate& c) { return rules.fits_size_guard(c); };
  request.batch_sizes.assign(o.batch_sizes.points.begin(), o.batch_sizes.points.end() - 1);
  std::vector<const PlannedCandidate*> candidates;
  if (t.heuristic) t.tuned = run_tuning(request, a, plan, o.target, *o.gpu, o.tuning, candidates);
  if (t.tuned) {
    t.tuning = tuning_json(o.tune, *t.tuned, *o.gpu);
    if (o.tune == "rank")
      t.tuning["ranker"] = o.ranker ? nlohmann::ordered_json{{"model", o.ranker_path}, {"top_k", o.top_k}} : nlohmann::ordered_json(nullptr);
  }
  if (!t.tuned || !t.tuned->decision) return;
  t.decision = t.tuned->decision;
  t.chosen = candidates[static_cast<size_t>(t.decision->chosen)];
  const std::string search =
      o.tune == "exhaustive" ? fmt::format("every real kernel of {} candidates", candidates.size())
      : o.tune == "rank" && o.ranker
          ? fmt::format("the proxies of the {} candidates the model ranked first ({})", candidates.size(), o.ranker_path)
          : fmt::format("the proxies of {} candidates", candidates.size());
  t.why = t.decision->heuristic_kept ? fmt::format("{} (kept after timing {})", t.why, search)
          : t.decision->generic      ? fmt::format("the generic family, faster than the heuristic's kernel (timed beside {})", search)
                                     : fmt::format("the fastest of {}, faster than the heuristic's kernel for real", search);
  if (!t.decision->emitted_ms)
    print_warning(fmt::format("--tune {}: no kernel could be measured (see \"tuning\" in the report); using the heuristic", o.tune));
}

// --tune model with a ranker: its first candidate, the generic family and the balanced family's
// candidates among them where the family is free (the balanced ones in float32 and tf32, with rows cut
// at `piece_length` products).
void choose_by_model(const CompileOptions& o, const Csr& a, const Plan& plan, const UnrolledRules& rules, bool family_auto,
                     int32_t piece_length, TileChoice& t) {
  const PlannedCandidate generic_pick = generic_candidate(a, plan, o.target);
  std::vector<PlannedCandidate> balanced_picks;
  std::vector<const PlannedCandidate*> balanced;
  const PlannedCandidate* heuristic_balanced = nullptr;
  if (family_auto && (o.dtype == DType::kFp32 || o.tf32) && a.rows >= 1) {
    for (const int32_t g : kBalancedGroupsTried) balanced_picks.push_back(balanced_candidate(a, plan, o.target, piece_length, g));
    // Where --tune none's file is the balanced family (its rule over the generic family), the
    // heuristic's kernel is the candidate with the rule's pieces per warp.
    std::string rule_why;
    const bool by_rule = t.heuristic_generic && balanced_by_rule(a, rule_why);
    const int32_t rule_groups = default_balanced_groups(a, o.plan.n);
    for (const PlannedCandidate& c : balanced_picks) {
      balanced.push_back(&c);
      if (by_rule && c.tile.m1 == rule_groups * kBalancedWarps) heuristic_balanced = &c;
    }
  }
  const ModelChoice by_model = choose_tile_by_model(plan, o.target, *o.ranker, t.heuristic,
                                                    family_auto ? &generic_pick : nullptr, t.heuristic_generic, balanced,
                                                    heuristic_balanced);
  const std::string heuristic_why = t.why;
  t.chosen = by_model.chosen;
  t.model_generic = by_model.generic;
  t.model_balanced_groups = by_model.balanced_groups;
  t.model_ranked_balanced = by_model.balanced_ranked;
  t.why = by_model.why + " (model " + o.ranker_path + ")";
  // The model scored the pick's unrolled kernel: where the family rule would emit that tile
  // generic, what it scored is not what would be emitted.
  std::string pick_family_why;
  if (t.heuristic && t.chosen != t.heuristic && family_auto && rules.generic_by_rule(*t.chosen, pick_family_why)) {
    t.why = fmt::format("{}; the model's pick (tile {}) was not taken: the family rule makes it the generic family ({}), "
                        "not the unrolled kernel the model scored", heuristic_why, t.chosen->tile.label(), pick_family_why);
    t.chosen = t.heuristic;
  }
  Decision d;
  // Kept: the heuristic's tile in the family its file would have (the balanced family's with the
  // rule's pieces per warp, where the model ranked that family).
  const int32_t heuristic_groups =
      by_model.balanced_ranked && heuristic_balanced ? heuristic_balanced->tile.m1 / kBalancedWarps : 0;
  d.heuristic_kept = t.chosen == t.heuristic && t.model_generic == (t.heuristic_generic && heuristic_groups == 0) &&
                     t.model_balanced_groups == heuristic_groups;
  d.generic = t.model_generic || t.model_balanced_groups > 0;
  d.why = t.why;
  t.decision = d;
}

}  // namespace

TileChoice choose_tile_stage(const CompileOptions& o, const Csr& a, const Plan& plan, const UnrolledRules& rules,
                             bool family_auto, int32_t piece_length, int64_t fmas_per_kernel) {
  TileChoice t;
  if (o.tile) {
    t.chosen = &plan.candidates.front();
    t.why = "--tile";
    return t;
  }
  // The heuristic's pick (--tune none's tile and family): what --tune none emits, and what every
  // other mode is measured against and falls back to (docs/design/tuning.md).
  t.heuristic = choose_tile_by_heuristic(
      plan, o.target, [&rules](const PlannedCandidate& c) { return rules.fits_size_guard(c); }, t.why);
  t.heuristic_generic = t.heuristic && family_auto && rules.generic_by_rule(*t.heuristic, t.heuristic_family_why);
  const std::string heuristic_why = t.why;
  if (o.gpu && o.dtype == DType::kFp32)
    choose_by_search(o, a, plan, rules, family_auto, piece_length, fmas_per_kernel, t);
  else if (o.tune == "model" && o.ranker)
    choose_by_model(o, a, plan, rules, family_auto, piece_length, t);
  if (!t.chosen) {
    t.chosen = t.heuristic;
    t.why = heuristic_why;
    if (o.auto_without_gpu)
      t.why += " (--tune auto without a usable GPU of the target's architecture takes the heuristic: nothing could check "
               "another pick against its kernel; --tune model takes the ranker's)";
    if (o.tune == "model") {
      if (!o.tune_auto)
        print_warning(fmt::format("--tune model: no ranker for the target '{}' ({} does not exist; train one with "
                                  "spmmc train-ranker, docs/design/ranker.md): using the heuristic",
                                  o.target.name, o.ranker_path));
      t.why = "heuristic (no ranker model for the target): " + t.why;
    }
  }
  if (!t.chosen)
    throw UserError(ExitCode::kDataError, SourceLocation::whole(o.path),
                    "every tile candidate exceeds the register limits of the target (see 'spmmc plan'); give --tile");
  return t;
}

}  // namespace spmmc::cli
