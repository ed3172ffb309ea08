// The balanced family as one more contender of the tuners (docs/design/balanced.md): its kernel for
// A, in the NVRTC form of what `spmmc compile --family balanced` emits
// (codegen/families/balanced/kernel_balanced.cuh), compiled, checked against the float64 product and
// timed by check_real_kernels.h like a real candidate, launched as the emitted entry point launches
// it (codegen/families/balanced/balanced_launch.h). Like the generic family's, its kernel compiles in
// seconds whatever A (A's arrays and its pieces are tables, not code).
#pragma once

#include <string>

#include <cstdint>
#include <vector>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/common/csr.h"
#include "runtime/cuda_driver.h"
#include "tuner/check_real_kernels.h"
#include "tuner/tuning.h"

namespace spmmc {

// The balanced kernel for A with rows cut at `piece_length` products, once per entry of `groups`
// (pieces per warp: 1, 2 or 4; schedule_balanced), compiled in parallel, each checked and timed for
// options.n columns, in a worker process when options.worker is set; one Measurement per entry, in
// order. Never throws for a kernel's own failures: they are its Measurement's outcome (CompileFailed
// with NVRTC's log, LaunchFailed, WrongResult). `reference`: as for check_and_time_real_kernels
// (computed here when none).
std::vector<Measurement> time_balanced_kernels(const Csr& a, int32_t piece_length, const std::vector<int32_t>& groups,
                                               const GpuContext& gpu, const TuningOptions& options,
                                               const ReferenceProduct* reference = nullptr);

// What time_balanced_kernels compiles for `arch` and one entry of `groups`: the NVRTC form of the
// balanced family's file (EmittedKernel::nvrtc_cu, named balanced_family.cu, and nvrtc_options). Also
// for studies without a GPU (tools/studies/nvrtc_form_time.cpp).
EmittedKernel emit_balanced_nvrtc_form(const Csr& a, int32_t piece_length, int32_t groups, const std::string& arch);

}  // namespace spmmc
