// What spmmc compile says about the dense baseline after tuning: the "sgemm" object of NAME.json
// and, when cuBLAS SGEMM beat the chosen sparse kernel, the note it prints. Pure: from a
// TuningResult, no GPU.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tuner/tuning.h"

namespace spmmc {

struct SgemmComparison {
  // null when SGEMM was not timed (result.sgemm empty). Otherwise
  //   {"available": false, "why_unavailable": "..."} or
  //   {"available": true, "median_ms": S, then, where the emitted kernel's real time was measured
  //    (every timed search against the heuristic within its compile budget; --tune exhaustive),
  //    "compared_with": "real kernel" or "generic kernel", "chosen_ms": C,
  //    "faster_than_chosen": S < C, "ratio": C / S; otherwise "compared_with": null and
  //    "why_not_compared"}.
  nlohmann::ordered_json json;
  // When SGEMM is faster than the chosen candidate: the message of the note (without a prefix),
  // "cuBLAS SGEMM (dense, FP32) took S ms, the chosen sparse kernel C ms: at this sparsity the
  // dense layer is faster (R x)"; empty otherwise.
  std::string note;
};

// Compares result.sgemm with the emitted kernel's measured median time: the balanced family's kernel
// (result.best_balanced()) when `balanced_emitted`, the generic family's kernel (result.generic, real in
// both modes) when `generic_emitted`, else the chosen candidate's
// real kernel when `use_real` (--tune exhaustive) or when it was timed anyway (--tune proxy's
// finalists, TuningOptions::real_finalists). Otherwise (--tune proxy with no finalists, unrolled)
// it only reports SGEMM's time: a proxy is a reduced kernel whose time ranks the candidates but is
// not the emitted kernel's. "compared_with" says which: "real kernel", "generic kernel" or
// "balanced kernel".
SgemmComparison compare_with_sgemm(const TuningResult& result, bool use_real, bool generic_emitted = false,
                                   bool balanced_emitted = false);

}  // namespace spmmc
