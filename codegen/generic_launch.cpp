#include "codegen/generic_launch.h"

#include <algorithm>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {

int64_t generic_split_below(const Csr& a, int64_t sms) {
  return a.longest_row() <= kGenericShortRow && int64_t{a.rows} >= kGenericV1FromRowsPerSm * std::max<int64_t>(sms, 1) ? 1 : kGenericSplitBelow;
}

bool generic_warp_wide(const Csr& a, DType dtype) {
  return int64_t{a.cols} >= kGenericWarpWideMinK && (dtype == DType::kFp32 || dtype == DType::kTf32);
}

int64_t generic_warp_strided_from(const Csr& a) {
  return int64_t{a.cols} > kGenericWarpStridedShortK ? kGenericWarpStridedLongKFrom : kGenericWarpStridedFrom;
}

namespace {

// Whether the wide warp kernel's launch over `rows` rows and `column_blocks` blocks of kGenericWarpColumns
// columns (at most 65535 launched) fills the SMs: ceil(rows / 32) x those blocks at least 31/32 of them.
bool warp_wide_fills(int64_t rows, int64_t column_blocks, int64_t sms) {
  const int64_t wide_rows = (rows + kGenericWarpWideRows - 1) / kGenericWarpWideRows;
  return 32 * wide_rows * std::min<int64_t>(column_blocks, 65535) >= 31 * sms;
}

}  // namespace

int64_t generic_warp_wide_from_n(const Csr& a, DType dtype, int64_t sms) {
  if (!generic_warp_wide(a, dtype) || a.rows < 1 || sms < 1) return 0;
  int64_t column_blocks = 1;  // the least that fills (at most 31/32 x sms: one row block each)
  while (!warp_wide_fills(a.rows, column_blocks, sms)) ++column_blocks;
  return std::max<int64_t>(kGenericWarpFrom, kGenericWarpColumns * (column_blocks - 1) + 1);
}

GenericShape generic_shape(const Csr& a, int sms, bool weights_ahead, DType dtype) {
  return {a.rows, a.nnz(), sms, weights_ahead, generic_split_below(a, sms), generic_warp_wide(a, dtype),
          generic_warp_strided_from(a)};
}

GenericLaunch generic_launch(const GenericShape& a, int64_t n, bool aligned16) {
  const int32_t rows = a.rows;
  SPMMC_CHECK(rows >= 1 && n >= 1 && a.sms >= 1 && a.split_below >= 1 && a.split_below <= 33,
              fmt::format("the generic launch of {} rows for n = {} on {} SMs (split below {})", rows, n, a.sms,
                          a.split_below));
  GenericLaunch l;
  if (n < a.split_below) {
    const int32_t warps = kGenericSplitThreads / 32;
    l.symbol = kGenericKernelSplit;
    l.grid_x = static_cast<unsigned>(std::min<int64_t>((int64_t{rows} + warps - 1) / warps, 65535));
    l.block_x = kGenericSplitThreads;
    l.rows_per_block = warps;
    l.columns_per_block = n;
    return l;
  }
  int64_t width = 256 / kGenericRowsPerBlock, rows_per_block = kGenericRowsPerBlock;  // V = 4
  const int64_t v4_warps = (n / 4 + width - 1) / width * std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, 65535) * 8;
  const bool v4_fills = n >= kGenericV4WideFrom && v4_warps >= int64_t{a.sms} * kGenericV4WideWarps;
  l.cols_per_thread = n % 4 == 0 && aligned16 && (n >= kGenericV4From || v4_fills) ? 4 : 1;
  const bool adjacent = l.cols_per_thread == 4;  // a warp per row's lanes: four adjacent columns, or 32 apart
  const int64_t warp_from = adjacent ? kGenericWarpFrom : a.warp_strided_from;
  if (warp_from > 0 && n >= warp_from && n <= kGenericWarpMaxN) {  // a warp per row
    const int64_t columns = (n + kGenericWarpColumns - 1) / kGenericWarpColumns;
    const bool wide = a.warp_wide && warp_wide_fills(rows, columns, a.sms);
    const int32_t warp_rows = wide ? kGenericWarpWideRows : kGenericWarpRows;
    l.symbol = adjacent ? (wide ? kGenericKernelWarpWide : kGenericKernelWarp)
                        : (wide ? kGenericKernelWarpWideStrided : kGenericKernelWarpStrided);
    l.grid_x = static_cast<unsigned>((int64_t{rows} + warp_rows - 1) / warp_rows);
    l.grid_y = static_cast<unsigned>(std::min<int64_t>(columns, 65535));
    l.block_x = 32 * warp_rows;
    l.rows_per_block = warp_rows;
    l.columns_per_block = kGenericWarpColumns;
    l.loops_over_columns = true;
    return l;
  }
  l.symbol = l.cols_per_thread == 4 ? kGenericKernelV4 : kGenericKernelV1;
  const int64_t threads = (n + l.cols_per_thread - 1) / l.cols_per_thread;  // per row
  if (l.cols_per_thread == 1) {
    width = 1;
    while (width < threads && width < 32) width *= 2;
    if (threads > 32) width = (threads + 31) / 32 * 32;
    width = std::min<int64_t>(width, 128);
    rows_per_block = 128 / width;
  }
  const int64_t x = (threads + width - 1) / width;
  const int64_t y = (rows + rows_per_block - 1) / rows_per_block;
  SPMMC_CHECK(x <= 0x7fffffff, fmt::format("n = {}: {} blocks of the generic kernel along the columns", n, x));
  l.grid_x = static_cast<unsigned>(x);
  l.grid_y = static_cast<unsigned>(std::min<int64_t>(y, 65535));
  l.block_x = static_cast<unsigned>(width);
  l.block_y = static_cast<unsigned>(rows_per_block);
  l.rows_per_block = rows_per_block;
  l.columns_per_block = width * l.cols_per_thread;
  if (l.cols_per_thread == 1) {
    const int64_t warps = int64_t{l.grid_x} * l.grid_y * ((width * rows_per_block + 31) / 32);
    const int64_t resident = int64_t{a.sms} * kGenericV1ResidentWarps;
    const bool long_rows = a.products >= kGenericV1LongRow * rows;
    if (a.weights_ahead) l.batch = long_rows ? (warps <= resident ? 32 : 8) : 2 * warps <= resident ? 32 : 2 * warps <= 3 * resident ? 16 : 8;
    else l.batch = long_rows ? (warps <= 2 * resident ? 32 : 16) : 2 * warps <= 5 * resident ? 16 : 8;
    l.symbol = l.batch == 32 ? kGenericKernelV1 : l.batch == 16 ? kGenericKernelV1B16 : kGenericKernelV1B8;
  }
  return l;
}

}  // namespace spmmc
