#include "tuner/compare_with_sgemm.h"

#include <fmt/format.h>

namespace spmmc {

SgemmComparison compare_with_sgemm(const TuningResult& result, bool use_real, bool generic_emitted, bool balanced_emitted) {
  SgemmComparison out;
  if (!result.sgemm) return out;
  const SgemmTiming& sgemm = *result.sgemm;
  if (!sgemm.available) {
    out.json = {{"available", false}, {"why_unavailable", sgemm.why_unavailable}};
    return out;
  }
  out.json = {{"available", true}, {"median_ms", sgemm.median_ms}};
  // The family's kernel that the file holds instead of a tile's, where it was measured.
  const Measurement* family = balanced_emitted ? (result.best_balanced() ? &result.best_balanced()->measurement : nullptr)
                              : generic_emitted ? (result.generic ? &*result.generic : nullptr)
                                                : nullptr;
  const bool by_family = family && family->outcome == Outcome::kOk;
  const bool chosen_real = result.chosen >= 0 && static_cast<size_t>(result.chosen) < result.candidates.size() &&
                           result.candidates[static_cast<size_t>(result.chosen)].real.outcome == Outcome::kOk;
  if (!use_real && !by_family && !chosen_real) {
    // A proxy is a reduced kernel (docs/design/proxies.md): its time ranks candidates but is not
    // the chosen kernel's time, so it says nothing about SGEMM against the layer.
    out.json["compared_with"] = nullptr;
    out.json["why_not_compared"] =
        "the emitted kernel's real time was not measured (its compile was beyond the search's budget): a proxy's "
        "time is not the kernel's";
    return out;
  }
  if (!by_family && (result.chosen < 0 || static_cast<size_t>(result.chosen) >= result.candidates.size())) return out;
  const Measurement& m = by_family ? *family : result.candidates[static_cast<size_t>(result.chosen)].real;
  if (m.outcome != Outcome::kOk || m.time.median_ms <= 0.0 || sgemm.median_ms <= 0.0) return out;
  const double chosen_ms = m.time.median_ms;
  const bool faster = sgemm.median_ms < chosen_ms;
  const double ratio = chosen_ms / sgemm.median_ms;
  out.json["compared_with"] = !by_family ? "real kernel" : balanced_emitted ? "balanced kernel" : "generic kernel";
  out.json["chosen_ms"] = chosen_ms;
  out.json["faster_than_chosen"] = faster;
  out.json["ratio"] = ratio;
  if (faster)
    out.note = fmt::format("cuBLAS SGEMM (dense, FP32) took {:.4g} ms, the chosen sparse kernel {:.4g} ms: at this "
                           "sparsity the dense layer is faster ({:.2f}x)",
                           sgemm.median_ms, chosen_ms, ratio);
  return out;
}

}  // namespace spmmc
