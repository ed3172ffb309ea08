#include "tuner/decide_balanced.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"
#include "tuner/decide_against_heuristic.h"

namespace spmmc {
namespace {

std::optional<double> ms_of(const Measurement& m) {
  if (m.outcome != Outcome::kOk || m.time.median_ms <= 0.0) return std::nullopt;
  return m.time.median_ms;
}

}  // namespace

BalancedDecision decide_balanced(const TuningResult& result, std::string_view mode) {
  SPMMC_CHECK(result.decision.has_value(), "the balanced family is decided after the search's decision");
  const Decision& d = *result.decision;
  BalancedDecision out;
  const BalancedTrial* best = result.best_balanced();
  if (!best) {
    out.why = "the balanced kernel was not timed";
    return out;
  }
  const std::optional<double> balanced = ms_of(best->measurement);
  if (!balanced) {
    out.why = fmt::format("the balanced kernel could not be measured ({}{}{})", outcome_name(best->measurement.outcome),
                          best->measurement.detail.empty() ? "" : ": ", best->measurement.detail);
    return out;
  }
  const std::string decided =
      d.generic ? "the generic kernel"
                : fmt::format("the unrolled kernel of tile {}", result.candidates.at(static_cast<size_t>(d.chosen)).tile.label());
  const std::optional<double> at_n = d.generic ? (result.generic ? ms_of(*result.generic) : std::nullopt) : d.emitted_ms;
  if (!at_n) {
    out.why = fmt::format("the balanced kernel ran {:.4g} ms; {} was not measured, so it is kept", *balanced, decided);
    return out;
  }
  const auto faster = [](double candidate, double kept) { return candidate < kept * (1.0 - kBeatHeuristicBy); };
  if (!faster(*balanced, *at_n)) {
    out.why = fmt::format("--tune {}: the balanced kernel ran {:.4g} ms, {} {:.4g} ms: kept", mode, *balanced, decided, *at_n);
    return out;
  }
  // The other batch sizes: the file's kernel there is its unrolled kernel or its generic path, whichever
  // is faster (the dispatch is placed from the same times).
  for (const BatchSizeMeasurement& b : result.batch_sizes) {
    const std::optional<double> family = d.generic ? std::nullopt : ms_of(b.family);
    const std::optional<double> generic = ms_of(b.generic);
    const std::optional<double> there = family && generic ? std::min(*family, *generic) : family ? family : generic;
    const std::optional<double> balanced_there = ms_of(b.balanced);
    if (!there || !balanced_there) {
      out.why = fmt::format("--tune {}: the balanced kernel ran {:.4g} ms against {}'s {:.4g} ms, but at n = {} {} was not "
                            "measured: kept",
                            mode, *balanced, decided, *at_n, b.n, balanced_there ? "the file's kernel" : "the balanced kernel");
      return out;
    }
    if (!faster(*balanced_there, *there)) {
      out.why = fmt::format("--tune {}: the balanced kernel ran {:.4g} ms against {}'s {:.4g} ms, but {:.4g} ms against "
                            "{:.4g} ms at n = {}: kept",
                            mode, *balanced, decided, *at_n, *balanced_there, *there, b.n);
      return out;
    }
  }
  out.balanced = true;
  out.why = fmt::format("--tune {}: the balanced kernel ran {:.4g} ms, {:.2f}x faster than {} ({:.4g} ms){}", mode, *balanced,
                        *at_n / *balanced, decided, *at_n,
                        result.batch_sizes.empty() ? "" : ", and faster at every other batch size timed");
  return out;
}

SearchedFamily family_of_search(const TuningResult& result) {
  SPMMC_CHECK(result.decision.has_value(), "the family of a search that decided");
  SearchedFamily out;
  out.decision = *result.decision;
  out.generic = out.decision.generic;
  out.why = out.decision.why;
  if (!result.balanced_decision) return out;
  const BalancedDecision& b = *result.balanced_decision;
  if (!b.balanced) {
    out.why += "; not the balanced family: " + b.why;
    return out;
  }
  out.generic = out.balanced = true;
  out.why = b.why;
  out.decision.heuristic_kept = false;
  out.decision.emitted_ms = result.best_balanced()->measurement.time.median_ms;
  out.decision.why = b.why;
  return out;
}

int32_t next_balanced_piece_length(const TuningResult& result, int32_t rule_length, const std::vector<int32_t>& shorter) {
  const BalancedTrial* best = result.best_balanced();
  if (!best || best->measurement.outcome != Outcome::kOk) return 0;
  const BalancedTrial& last = result.balanced_tried.back();
  if (last.piece_length != rule_length && &last != best) return 0;  // the last shorter one lost
  const auto next = std::find_if(shorter.begin(), shorter.end(), [&](int32_t l) { return l > 0 && l < last.piece_length; });
  return next == shorter.end() ? 0 : *next;
}

}  // namespace spmmc
