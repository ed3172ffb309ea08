#include "tuner/tuning.h"

#include <fmt/format.h>

namespace spmmc {

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "Ok";
    case Outcome::kInvalid: return "Invalid";
    case Outcome::kCompileFailed: return "CompileFailed";
    case Outcome::kLaunchFailed: return "LaunchFailed";
    case Outcome::kWrongResult: return "WrongResult";
    case Outcome::kNotRun: return "NotRun";
  }
  return "?";
}

FamilyByTiming family_by_timing(const TuningResult& result, bool use_real, std::string_view mode) {
  FamilyByTiming out;
  if (!result.generic || result.generic->outcome != Outcome::kOk || result.chosen < 0 ||
      static_cast<size_t>(result.chosen) >= result.candidates.size())
    return out;
  const CandidateResult& chosen = result.candidates[static_cast<size_t>(result.chosen)];
  const bool real = use_real || chosen.real.outcome == Outcome::kOk;
  const Measurement& unrolled = real ? chosen.real : chosen.proxy;
  if (unrolled.outcome != Outcome::kOk) return out;
  out.decided = true;
  out.generic = result.generic->time.median_ms < unrolled.time.median_ms;
  out.why = fmt::format("--tune {}: the generic kernel ran {:.4g} ms, the {} of tile {} {:.4g} ms", mode,
                        result.generic->time.median_ms, real ? "real kernel" : "proxy", chosen.tile.label(),
                        unrolled.time.median_ms);
  return out;
}

}  // namespace spmmc
