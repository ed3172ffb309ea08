// Exhaustive evaluation: every candidate's real kernel (the emitter's NVRTC form) is compiled,
// checked against the float64 CPU reference and timed; the fastest correct one wins. Slow (each
// compile takes seconds to minutes), so it runs under a time budget; it exists to validate the
// proxies and to produce training data. The proxies are timed first, so one run records both.
#pragma once

#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "runtime/cuda_driver.h"
#include "tuner/check_real_kernels.h"
#include "tuner/tuning.h"

namespace spmmc {

// Each candidate's real kernels are emitted with options.fmas_per_kernel (split as spmmc compile
// splits them) and timed as the chain they run as. Candidates not compiled within
// options.budget_seconds are recorded as NotRun; a kernel that faults ends the search with what
// was measured before it (check_real_kernels.h). With options.generic_tiling, the generic family's
// kernel is checked and timed after them (`generic`, tuner/time_generic_kernel.h); with
// options.time_sgemm, cuBLAS SGEMM for the dense layer once, last (`sgemm`, tuner/time_sgemm.h).
TuningResult tune_exhaustively(const Csr& a, const Plan& plan, const std::vector<const PlannedCandidate*>& candidates,
                               const GpuContext& gpu, const TuningOptions& options);

// The candidates' real kernels, emitted and split as tune_exhaustively does it
// (options.fmas_per_kernel), compiled in parallel, checked and timed (in a worker when
// options.worker is set), one Measurement per tile in order: --tune proxy uses it where a proxy
// would not be smaller than the real code and to check its pick against the generic kernel
// (tune_with_proxies.h).
// `reference`: as for check_and_time_real_kernels (computed here when none).
std::vector<Measurement> measure_real_candidates(const Csr& a, const Plan& plan, const std::vector<TileCandidate>& tiles,
                                                 const GpuContext& gpu, const TuningOptions& options,
                                                 const ReferenceProduct* reference = nullptr);

}  // namespace spmmc
