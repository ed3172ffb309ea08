#include "codegen/families/balanced/balanced_launch.h"

#include <algorithm>

#include "compiler/common/diagnostics.h"

namespace spmmc {

BalancedLaunch balanced_launch(int64_t n, int64_t alignment, int32_t blocks, int32_t warps, int32_t groups) {
  SPMMC_CHECK(n >= 1 && blocks >= 1 && warps >= 1 && (groups == 1 || groups == 2 || groups == 4),
              "a balanced launch needs n, blocks and warps of at least one, 1, 2 or 4 pieces per warp");
  BalancedLaunch l;
  const int64_t lanes = 32 / groups;
  const bool by4 = n >= 4 * lanes && n % 4 == 0 && alignment % 16 == 0;
  const bool by2 = n >= 2 * lanes && n % 2 == 0 && alignment % 8 == 0;
  l.cols_per_lane = by4 ? 4 : by2 ? 2 : 1;
  l.symbol = by4 ? kBalancedKernelV4 : by2 ? kBalancedKernelV2 : kBalancedKernelV1;
  const int64_t column_blocks = (n + lanes * l.cols_per_lane - 1) / (lanes * l.cols_per_lane);
  const int64_t y = std::min<int64_t>(column_blocks, 65535), z = (column_blocks + y - 1) / y;
  SPMMC_CHECK(z <= 65535, "n is beyond the balanced launch's grid");
  l.grid_x = static_cast<unsigned>(blocks);
  l.grid_y = static_cast<unsigned>(y);
  l.grid_z = static_cast<unsigned>(z);
  l.block_x = static_cast<unsigned>(32 * warps);
  return l;
}

BalancedLaunch balanced_pairs_launch(int64_t n, int32_t blocks, int32_t warps) {
  SPMMC_CHECK(n >= 1 && n <= 16 * int64_t{65535} && blocks >= 1 && warps >= 2 && warps % 2 == 0,
              "a launch of the pairs kernel needs n in [1, 16 x 65535], blocks of at least one and an even number of warps");
  BalancedLaunch l;
  l.symbol = kBalancedPairsKernel;
  l.grid_x = static_cast<unsigned>(blocks);
  l.grid_y = static_cast<unsigned>((n + 15) / 16);
  l.block_x = static_cast<unsigned>(16 * warps);
  return l;
}

}  // namespace spmmc
