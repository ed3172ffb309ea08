#include "tuner/tuning.h"

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

const std::pair<int32_t, Measurement>* TuningResult::best_balanced() const {
  const std::pair<int32_t, Measurement>* best = nullptr;
  for (const auto& tried : balanced_tried) {
    const bool ok = tried.second.outcome == Outcome::kOk;
    if (!best || (ok && (best->second.outcome != Outcome::kOk || tried.second.time.median_ms < best->second.time.median_ms)))
      best = &tried;
  }
  return best;
}

}  // namespace spmmc
