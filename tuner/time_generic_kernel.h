// The generic family as one more contender of the tuners (docs/design/kernel.md, item 10): its
// kernel for A, in the NVRTC form of what `spmmc compile --family generic` emits
// (codegen/templates/kernel_generic.cuh), compiled, checked against the float64 product and timed
// by check_real_kernels.h like a real candidate, launched as the emitted entry point launches it
// (codegen/generic_launch.h). Its kernel compiles in seconds whatever the layer (no unrolled code),
// so both tuners time it for real, where --tune proxy times the unrolled candidates by proxies.
#pragma once

#include <string>

#include "codegen/emit_unrolled_kernel.h"
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

// What time_generic_kernel compiles for `arch`: the NVRTC form of the generic family's file
// (EmittedKernel::nvrtc_cu, named generic_family.cu, and nvrtc_options). Also for studies without a
// GPU (tools/studies/nvrtc_form_time.cpp).
EmittedKernel emit_generic_nvrtc_form(const Csr& a, const RowTiling& tiling, const std::string& arch);

}  // namespace spmmc
