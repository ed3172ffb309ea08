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

}  // namespace spmmc
