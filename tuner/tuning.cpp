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

const BalancedTrial* TuningResult::best_balanced() const {
  const BalancedTrial* best = nullptr;
  for (const BalancedTrial& tried : balanced_tried) {
    const Measurement& m = tried.measurement;
    if (!best || (m.outcome == Outcome::kOk && (best->measurement.outcome != Outcome::kOk ||
                                                  m.time.median_ms < best->measurement.time.median_ms)))
      best = &tried;
  }
  return best;
}

}  // namespace spmmc
