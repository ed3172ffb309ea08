// Measurements made up for the tuner's pure tests (no GPU).
#pragma once

#include "tuner/tuning.h"

namespace spmmc::test {

// A kernel that measured Ok with this median.
inline Measurement ok_measurement(double median_ms) {
  Measurement m;
  m.outcome = Outcome::kOk;
  m.time.median_ms = median_ms;
  return m;
}

}  // namespace spmmc::test
