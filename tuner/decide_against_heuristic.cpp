#include "tuner/decide_against_heuristic.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

struct Contender {
  std::string name;  // "the heuristic's kernel (tile 16x1024)", "the generic kernel", ...
  int32_t chosen = -1;
  bool generic = false;
  const Measurement* real = nullptr;

  bool ok() const { return real && real->outcome == Outcome::kOk && real->time.median_ms > 0.0; }
  double ms() const { return real->time.median_ms; }
};

}  // namespace

Decision decide_against_heuristic(const TuningResult& result, const HeuristicPick& heuristic, bool generic_allowed,
                                  std::string_view mode) {
  SPMMC_CHECK(heuristic.index >= 0 && static_cast<size_t>(heuristic.index) < result.candidates.size(),
              "the heuristic's pick must be one of the tuned candidates");
  const auto tile_of = [&](int32_t i) { return result.candidates[static_cast<size_t>(i)].tile.label(); };
  const Measurement* generic = result.generic ? &*result.generic : nullptr;

  Contender base;
  base.chosen = heuristic.index;
  base.generic = heuristic.generic;
  base.real = heuristic.generic ? generic : &result.candidates[static_cast<size_t>(heuristic.index)].real;
  base.name = heuristic.generic ? "the heuristic's kernel (the generic family)"
                                : fmt::format("the heuristic's kernel (tile {})", tile_of(heuristic.index));

  std::vector<Contender> others;
  if (result.chosen >= 0 && (result.chosen != heuristic.index || heuristic.generic))
    others.push_back({fmt::format("the --tune {} pick's kernel (tile {})", mode, tile_of(result.chosen)), result.chosen,
                      false, &result.candidates[static_cast<size_t>(result.chosen)].real});
  if (generic_allowed && !heuristic.generic && generic)
    others.push_back({"the generic family's kernel", heuristic.index, true, generic});

  const Contender* best = nullptr;
  for (const Contender& c : others)
    if (c.ok() && (!best || c.ms() < best->ms())) best = &c;

  Decision d;
  const auto take = [&](const Contender& c) {
    d.chosen = c.chosen;
    d.generic = c.generic;
    d.heuristic_kept = &c == &base;
    if (c.ok()) d.emitted_ms = c.ms();
  };
  if (base.ok()) d.heuristic_ms = base.ms();
  // Not measured at all (its compile was beyond the search's budget): nothing measured can be said
  // to beat it, so it is kept. (Measured and failed: it cannot be emitted as it is, below.)
  const bool base_skipped = !base.real || base.real->outcome == Outcome::kNotRun;
  if (base_skipped) {
    take(base);
    d.why = fmt::format("--tune {}: {} was not measured ({}), so it is kept", mode, base.name,
                        base.real && !base.real->detail.empty() ? base.real->detail : "not timed");
  } else if (base.ok() && (!best || best->ms() >= base.ms() * (1.0 - kBeatHeuristicBy))) {
    take(base);
    d.why = best ? fmt::format("--tune {}: {} ran {:.4g} ms; {} ran {:.4g} ms, not {:.0f}% faster: the heuristic's kept",
                               mode, base.name, base.ms(), best->name, best->ms(), 100.0 * kBeatHeuristicBy)
                 : fmt::format("--tune {}: {} ran {:.4g} ms; no other kernel was measured", mode, base.name, base.ms());
  } else if (best) {
    take(*best);
    d.why = base.ok() ? fmt::format("--tune {}: {} ran {:.4g} ms, {:.2f}x faster than {} ({:.4g} ms)", mode, best->name,
                                    best->ms(), base.ms() / best->ms(), base.name, base.ms())
                      : fmt::format("--tune {}: {} ran {:.4g} ms; {} could not be measured ({})", mode, best->name,
                                    best->ms(), base.name,
                                    base.real ? std::string(outcome_name(base.real->outcome)) : "not timed");
  } else {
    take(base);
    d.why = fmt::format("--tune {}: no real kernel could be measured; {} is kept unmeasured", mode, base.name);
  }
  return d;
}

}  // namespace spmmc
