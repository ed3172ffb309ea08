// The launch of the balanced family's kernel as the emitted entry point makes it
// (kernel_balanced.cuh, spmmc_launch_balanced), for the tuner, which compiles the family's NVRTC form
// (EmitOptions::balanced with nvrtc_form) and times it as users will run it. The tests' host
// emulation checks this rule against the emitted launch.
#pragma once

#include <cstdint>

namespace spmmc {

// The kernels' names, four, two and one columns per lane (kernel_balanced.cuh).
inline constexpr const char* kBalancedKernelV4 = "spmmc_balanced_v4";
inline constexpr const char* kBalancedKernelV2 = "spmmc_balanced_v2";
inline constexpr const char* kBalancedKernelV1 = "spmmc_balanced_v1";
inline constexpr const char* kBalancedKernels[] = {kBalancedKernelV4, kBalancedKernelV2, kBalancedKernelV1};
// The small-n path's pairs kernel: two pieces per warp, V = 1 (kernel_balanced.cuh).
inline constexpr const char* kBalancedPairsKernel = "spmmc_balanced_pairs_v1";

struct BalancedLaunch {
  const char* symbol = kBalancedKernelV1;
  int32_t cols_per_lane = 1;  // V
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1;
};

// The launch over n columns of a schedule of `blocks` blocks of `warps` warps, `groups` pieces per warp
// (L = 32 / groups lanes each), B and C aligned to `alignment` bytes: V = 4 where n >= 4 L is a
// multiple of 4 and the alignment is 16, else V = 2 where n >= 2 L is even and it is 8, else 1; grid
// (blocks, y, z) with y * z blocks of L x V columns, y at most 65535. n must be at least 1 and its
// column blocks at most 65535 x 65535.
BalancedLaunch balanced_launch(int64_t n, int64_t alignment, int32_t blocks, int32_t warps, int32_t groups = 1);

// The pairs kernel's launch over n columns of a schedule of `blocks` blocks of `warps` warps of one piece
// each: V = 1, grid (blocks, y, z) with y * z blocks of 16 columns as above, blocks of warps / 2 warps.
BalancedLaunch balanced_pairs_launch(int64_t n, int32_t blocks, int32_t warps);

}  // namespace spmmc
