#include "codegen/kernel_program.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

int64_t default_fmas_per_kernel(int64_t nnz, int64_t n, const std::string& arch) {
  int sm = 0;
  if (std::sscanf(arch.c_str(), "sm_%d", &sm) != 1 || sm < 90) return std::max(kMinFmasPerKernel, nnz);
  const double run_seconds = 2.0 * static_cast<double>(nnz) * static_cast<double>(n) / kAssumedFlopsPerSecond;
  const double kernels = std::max(1.0, std::floor(kKernelShareOfRunTime * run_seconds / kSecondsPerKernel));
  const auto even = static_cast<int64_t>(std::ceil(static_cast<double>(nnz) / kernels));
  return std::max(kMinFmasPerKernel, even);
}

int32_t KernelProgram::tiles_of(int32_t kernel) const {
  const int32_t end = kernel + 1 < kernels() ? first_tile(kernel + 1) : static_cast<int32_t>(tiles.size());
  return end - first_tile(kernel);
}

KernelProgram build_kernel_program(const Csr& a, const RowTiling& tiling, const TileCandidate& tile,
                                   int64_t fmas_per_kernel) {
  SPMMC_CHECK(fmas_per_kernel >= 0, "FMAs per kernel must not be negative");
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
  SPMMC_CHECK(!k.tiles.empty(), "a matrix without rows has no kernel");
  int64_t in_kernel = 0;
  for (size_t t = 0; t < k.tiles.size(); ++t) {
    const int64_t fmas = k.tiles[t].fmas();
    if (k.kernel_first_tile.empty() || (fmas_per_kernel > 0 && in_kernel > 0 && in_kernel + fmas > fmas_per_kernel)) {
      k.kernel_first_tile.push_back(static_cast<int32_t>(t));
      in_kernel = 0;
    }
    in_kernel += fmas;
  }
  SPMMC_CHECK(k.fmas() == a.nnz(), "every non-zero must become exactly one FMA");
  return k;
}

}  // namespace spmmc
