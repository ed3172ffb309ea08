#include "codegen/families/balanced/balanced_launch.h"

#include <algorithm>

#include "compiler/common/diagnostics.h"

namespace spmmc {

namespace {

// grid (blocks, y, z) with y * z blocks of `columns` columns over n, y at most 65535 (the launch's rule).
void set_grid(BalancedLaunch& l, int64_t n, int64_t columns, int32_t blocks) {
  const int64_t column_blocks = (n + columns - 1) / columns;
  const int64_t y = std::min<int64_t>(column_blocks, 65535), z = (column_blocks + y - 1) / y;
  SPMMC_CHECK(z <= 65535, "n is beyond the balanced launch's grid");
  l.grid_x = static_cast<unsigned>(blocks);
  l.grid_y = static_cast<unsigned>(y);
  l.grid_z = static_cast<unsigned>(z);
}

}  // namespace

BalancedLaunch balanced_launch(int64_t n, int64_t alignment, int32_t blocks, int32_t warps, int32_t groups) {
  SPMMC_CHECK(n >= 1 && blocks >= 1 && warps >= 1 && (groups == 1 || groups == 2 || groups == 4),
              "a balanced launch needs n, blocks and warps of at least one, 1, 2 or 4 pieces per warp");
  BalancedLaunch l;
  const int64_t lanes = 32 / groups;
  const bool by4 = n >= 4 * lanes && n % 4 == 0 && alignment % 16 == 0;
  const bool by2 = n >= 2 * lanes && n % 2 == 0 && alignment % 8 == 0;
  l.cols_per_lane = by4 ? 4 : by2 ? 2 : 1;
  l.symbol = by4 ? kBalancedKernelV4 : by2 ? kBalancedKernelV2 : kBalancedKernelV1;
  set_grid(l, n, lanes * l.cols_per_lane, blocks);
  l.block_x = static_cast<unsigned>(32 * warps);
  return l;
}

BalancedLaunch balanced_pairs_launch(int64_t n, int32_t blocks, int32_t warps) {
  SPMMC_CHECK(n >= 1 && blocks >= 1 && warps >= 2 && warps % 2 == 0,
              "a launch of the pairs kernel needs n and blocks of at least one and an even number of warps");
  BalancedLaunch l;
  l.symbol = kBalancedPairsKernel;
  set_grid(l, n, 16, blocks);
  l.block_x = static_cast<unsigned>(16 * warps);
  return l;
}

}  // namespace spmmc
