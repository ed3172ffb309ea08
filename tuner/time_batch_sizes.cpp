#include "tuner/time_batch_sizes.h"

#include "compiler/common/diagnostics.h"
#include "tuner/time_balanced_kernel.h"
#include "tuner/time_generic_kernel.h"
#include "tuner/tune_exhaustively.h"

namespace spmmc {

std::vector<BatchSizeMeasurement> time_batch_sizes(const Csr& a, const Plan& plan, const TileCandidate* tile,
                                                   const std::vector<int64_t>& sizes, const GpuContext& gpu,
                                                   const TuningOptions& options) {
  SPMMC_CHECK(options.generic_tiling != nullptr, "timing batch sizes needs the generic kernel's tiling");
  std::vector<BatchSizeMeasurement> out;
  for (const int64_t n : sizes) {
    TuningOptions at = options;
    at.n = n;
    at.progress = nullptr;
    BatchSizeMeasurement m;
    m.n = n;
    const ReferenceProduct reference = reference_product(a, at);
    if (tile) m.family = measure_real_candidates(a, plan, {*tile}, gpu, at, &reference).front();
    m.generic = time_generic_kernel(a, *options.generic_tiling, gpu, at, &reference);
    if (options.balanced_piece_length > 0)
      m.balanced = time_balanced_kernels(a, options.balanced_piece_length, {options.balanced_groups}, gpu, at, &reference).front();
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace spmmc
