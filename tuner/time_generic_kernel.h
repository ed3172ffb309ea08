// The generic family as one more contender of the tuners (docs/design/kernel.md, item 10): its
// kernel for A, in the NVRTC form of what `spmmc compile --family generic` emits
// (codegen/templates/kernel_generic.cuh), compiled, checked against the float64 product and timed
// by check_real_kernels.h like a real candidate, launched as the emitted entry point launches it
// (codegen/generic_launch.h). Its kernel compiles in seconds whatever the layer (no unrolled code),
// so both tuners time it for real, where --tune proxy times the unrolled candidates by proxies.
#pragma once

#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"
#include "runtime/cuda_driver.h"
#include "tuner/check_real_kernels.h"
#include "tuner/tuning.h"

namespace spmmc {

// The generic kernel for A, its rows in the order of `tiling`'s A-tiles (heaviest first, as
// emitted), for options.n columns, in a worker process when options.worker is set. Never throws
// for the kernel's own failures: they are the Measurement's outcome (CompileFailed with NVRTC's log,
// LaunchFailed, WrongResult).
// `reference`: as for check_and_time_real_kernels (computed here when none).
Measurement time_generic_kernel(const Csr& a, const RowTiling& tiling, const GpuContext& gpu, const TuningOptions& options,
                                const ReferenceProduct* reference = nullptr);

}  // namespace spmmc
