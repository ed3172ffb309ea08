#include "tuner/compare_with_heuristic.h"

#include <fmt/format.h>

namespace spmmc {

HeuristicComparison compare_with_heuristic(const std::optional<Decision>& decision, const PlannedCandidate* heuristic,
                                           bool heuristic_generic, const SgemmComparison& sgemm) {
  HeuristicComparison out;
  if (!decision || !heuristic) return out;
  const Decision& d = *decision;
  out.json = {{"tile", heuristic->tile.label()},
              {"family", heuristic_generic ? "generic" : "unrolled"},
              {"kept", d.heuristic_kept},
              {"why", d.why}};
  const bool measured = d.heuristic_ms && d.emitted_ms;
  out.json["measured"] = measured;
  if (!measured) return out;
  const double speedup = *d.heuristic_ms / *d.emitted_ms;
  out.json["heuristic_ms"] = *d.heuristic_ms;
  out.json["emitted_ms"] = *d.emitted_ms;
  out.json["speedup"] = speedup;
  out.summary = d.heuristic_kept ? fmt::format("the heuristic's kernel {:.4g} ms (kept)", *d.heuristic_ms)
                                 : fmt::format("the heuristic's kernel {:.4g} ms, this one {:.4g} ms ({:.2f}x)",
                                               *d.heuristic_ms, *d.emitted_ms, speedup);
  if (sgemm.json.is_object() && sgemm.json.value("available", false)) {
    const double sgemm_ms = sgemm.json.at("median_ms").get<double>();
    out.json["sgemm_ms"] = sgemm_ms;
    out.summary += fmt::format("; cuBLAS SGEMM {:.4g} ms", sgemm_ms);
  }
  return out;
}

}  // namespace spmmc
