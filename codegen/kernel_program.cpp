#include "codegen/kernel_program.h"

#include <algorithm>
#include <map>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

TileProgram tile_program(const Csr& a, const int32_t* rows, int32_t count) {
  TileProgram t;
  t.rows.assign(rows, rows + count);
  std::map<int32_t, std::vector<TileFma>> by_column;  // ascending columns; slots ascend within each
  for (int32_t slot = 0; slot < count; ++slot)
    for (int32_t p = a.row_ptr[rows[slot]]; p < a.row_ptr[rows[slot] + 1]; ++p)
      by_column[a.col_idx[p]].push_back({slot, a.values[p]});
  t.columns.reserve(by_column.size());
  for (auto& [col, fmas] : by_column) t.columns.push_back({col, std::move(fmas)});
  return t;
}

}  // namespace

int64_t TileProgram::fmas() const {
  int64_t total = 0;
  for (const TileColumn& c : columns) total += static_cast<int64_t>(c.fmas.size());
  return total;
}

int64_t KernelProgram::fmas() const {
  int64_t total = 0;
  for (const TileProgram& t : tiles) total += t.fmas();
  return total;
}

int64_t KernelProgram::loads() const {
  int64_t total = 0;
  for (const TileProgram& t : tiles) total += static_cast<int64_t>(t.columns.size());
  return total;
}

KernelProgram build_kernel_program(const Csr& a, const RowTiling& tiling, const TileCandidate& tile) {
  SPMMC_CHECK(tiling.m1 == tile.m1, "the tiling was made for another M1");
  SPMMC_CHECK(tile.cols_per_thread == 1 || tile.cols_per_thread == 2 || tile.cols_per_thread == 4,
              "columns per thread must be 1, 2 or 4");
  SPMMC_CHECK(tile.n1 % tile.cols_per_thread == 0, "N1 must be a multiple of the columns per thread");
  KernelProgram k;
  k.m = a.rows;
  k.k = a.cols;
  k.launch.m1 = tile.m1;
  k.launch.cols_per_thread = tile.cols_per_thread;
  k.launch.threads = tile.threads_per_block();
  k.launch.min_blocks_per_sm = tile.min_blocks_per_sm;
  for (int32_t t = 0; t < tiling.num_tiles(); ++t)
    k.tiles.push_back(tile_program(a, &tiling.rows[tiling.tile_ptr[t]], tiling.tile_ptr[t + 1] - tiling.tile_ptr[t]));
  for (size_t first = 0; first < tiling.empty_rows.size(); first += static_cast<size_t>(tile.m1)) {
    const auto count = static_cast<int32_t>(std::min<size_t>(static_cast<size_t>(tile.m1), tiling.empty_rows.size() - first));
    k.tiles.push_back(tile_program(a, &tiling.empty_rows[first], count));
  }
  int64_t stored = 0;
  for (const TileProgram& t : k.tiles) stored += static_cast<int64_t>(t.rows.size());
  SPMMC_CHECK(stored == a.rows, "every row of C must be stored exactly once");
  SPMMC_CHECK(k.fmas() == a.nnz(), "every non-zero must become exactly one FMA");
  return k;
}

}  // namespace spmmc
