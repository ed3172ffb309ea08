// The launch of the tensor-core family's kernels, as the emitted entry point makes it
// (codegen/templates/kernel_tensor_core.cuh, spmmc_launch_tc), for the tuner, which compiles the NVRTC
// form of a tensor-core file (EmitOptions::tensor_core with nvrtc_form) and times it as users will run
// it. The tests' host emulation checks this rule against the emitted launch.
#pragma once

#include <cstdint>

#include "codegen/print_tensor_core.h"

namespace spmmc {

// The kernels' names in the template (both: fp16 and bf16; the direct one: tf32).
inline constexpr const char* kTensorCoreKernel = "spmmc_tc_kernel";
inline constexpr const char* kTensorCoreStagedKernel = "spmmc_tc_staged_kernel";

struct TensorCoreLaunch {
  const char* symbol = kTensorCoreKernel;
  unsigned grid_x = 1, grid_y = 1;
  unsigned block_x = 128;
  int parts = 1;  // the direct kernel's warps per window (split K)
};

// The launch of `code`'s kernel for n columns (n a multiple of 8, B and C 16-byte aligned: the entry
// point takes the generic path otherwise): grid.x the 64-column slabs; the staged kernel (8 windows a
// block, 256 threads) from code.staged_from_n up to code.staged_max_n, else the direct kernel (128
// threads, 4 / parts windows a block, parts = 4 below code.split4_below_n, 2 below
// code.split2_below_n); grid.y the blocks of windows, at most 65535 (the kernels loop over the rest).
TensorCoreLaunch tensor_core_launch(const TensorCoreCode& code, int64_t n);

}  // namespace spmmc
