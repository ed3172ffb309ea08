// Proxy-based evaluation (LO-SpMM §5): one proxy per (M1, V, blocks per SM of the launch
// bounds, launch-bound class of the threads per block) is built
// (proxy/build_proxy.h), all are compiled with NVRTC in parallel, and every candidate is timed
// by launching its proxy with the candidate's N1, grid and occupancy-aligning shared memory
// (proxy/align_occupancy.h). The fastest proxy time picks the candidate.
#pragma once

#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "runtime/cuda_driver.h"
#include "tuner/tuning.h"

namespace spmmc {

// The launch-bound class of a block's threads: <= 256, <= 512 and <= 1024 get separate proxies,
// each compiled with __launch_bounds__(the most threads it is launched with, the group's blocks
// per SM), so each proxy's register budget is close to that of the real kernels it stands for
// (those use __launch_bounds__(threads, min_blocks_per_sm)).
int32_t launch_bound_class(int32_t threads);

// Times the proxy of every candidate (all from `plan`, for A) on `gpu`. Failures are recorded
// per candidate; `chosen` is the fastest proxy. With options.generic_tiling, the generic family's
// real kernel is timed after the proxies (`generic`, tuner/time_generic_kernel.h); with
// options.heuristic, the heuristic's real kernel and the pick's (docs/design/tuning.md; none of
// the search where the heuristic's is beyond options.max_real_compile_seconds, and no proxy for a
// candidate whose own real kernel is beyond it: it could never be measured against the heuristic's); with
// options.time_sgemm, cuBLAS SGEMM for the dense layer last (`sgemm`, tuner/time_sgemm.h).
TuningResult tune_with_proxies(const Csr& a, const Plan& plan, const std::vector<const PlannedCandidate*>& candidates,
                               const GpuContext& gpu, const TuningOptions& options);

}  // namespace spmmc
