#include "codegen/kernel_program.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// The tile of `rows` for the columns [col_begin, col_end) of A.
TileProgram tile_program(const Csr& a, const int32_t* rows, int32_t count, int32_t col_begin, int32_t col_end) {
  TileProgram t;
  t.rows.assign(rows, rows + count);
  std::map<int32_t, std::vector<TileFma>> by_column;  // ascending columns; slots ascend within each
  for (int32_t slot = 0; slot < count; ++slot)
    for (int32_t p = a.row_ptr[rows[slot]]; p < a.row_ptr[rows[slot] + 1]; ++p)
      if (a.col_idx[p] >= col_begin && a.col_idx[p] < col_end) by_column[a.col_idx[p]].push_back({slot, a.values[p]});
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

bool has_dependent_launch(const std::string& arch) {
  int sm = 0;
  return std::sscanf(arch.c_str(), "sm_%d", &sm) == 1 && sm >= 90;
}

int64_t default_fmas_per_kernel(int64_t nnz, int64_t n, const std::string& arch) {
  if (!has_dependent_launch(arch)) return std::max(kMinFmasPerKernel, nnz);
  const double run_seconds = 2.0 * static_cast<double>(nnz) * static_cast<double>(n) / kAssumedFlopsPerSecond;
  const double kernels = std::max(1.0, std::floor(kKernelShareOfRunTime * run_seconds / kSecondsPerKernel));
  const auto even = static_cast<int64_t>(std::ceil(static_cast<double>(nnz) / kernels));
  return std::max(kMinFmasPerKernel, even);
}

std::vector<int32_t> split_k(const Csr& a, int32_t parts) {
  SPMMC_CHECK(parts >= 1 && parts <= a.cols, "the ranges of K must be between 1 and K");
  std::vector<int64_t> per_column(static_cast<size_t>(a.cols), 0);
  for (int64_t p = 0; p < a.nnz(); ++p) ++per_column[static_cast<size_t>(a.col_idx[static_cast<size_t>(p)])];
  std::vector<int32_t> begin = {0};
  int64_t seen = 0;
  for (int32_t c = 0; c < a.cols && static_cast<int32_t>(begin.size()) < parts; ++c) {
    // Close range r (begin.size() ranges open so far) once it holds its share of the non-zeros,
    // leaving at least one column for each range still to come.
    const auto r = static_cast<int64_t>(begin.size());
    const bool share = seen * parts >= r * a.nnz() && seen > 0;
    const bool must = a.cols - c <= parts - r;  // one column left for this range and each after it
    if ((share && c > begin.back()) || must) begin.push_back(c);
    seen += per_column[static_cast<size_t>(c)];
  }
  begin.push_back(a.cols);
  return begin;
}

int32_t KernelProgram::tiles_of(int32_t kernel) const {
  const int32_t end = kernel + 1 < kernels() ? first_tile(kernel + 1) : static_cast<int32_t>(tiles.size());
  return end - first_tile(kernel);
}

KernelProgram build_kernel_program(const Csr& a, const RowTiling& tiling, const TileCandidate& tile,
                                   int64_t fmas_per_kernel, int32_t k_parts) {
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
  k.k_part_begin = split_k(a, k_parts);
  for (int32_t part = 0; part < k_parts; ++part) {
    const int32_t begin = k.k_part_begin[static_cast<size_t>(part)], end = k.k_part_begin[static_cast<size_t>(part) + 1];
    for (int32_t t = 0; t < tiling.num_tiles(); ++t) {
      TileProgram tp = tile_program(a, &tiling.rows[tiling.tile_ptr[t]], tiling.tile_ptr[t + 1] - tiling.tile_ptr[t], begin, end);
      tp.k_part = part;
      if (part == 0 || !tp.columns.empty()) k.tiles.push_back(std::move(tp));
    }
    if (part > 0) continue;
    for (size_t first = 0; first < tiling.empty_rows.size(); first += static_cast<size_t>(tile.m1)) {
      const auto count = static_cast<int32_t>(std::min<size_t>(static_cast<size_t>(tile.m1), tiling.empty_rows.size() - first));
      k.tiles.push_back(tile_program(a, &tiling.empty_rows[first], count, 0, 0));
    }
  }
  int64_t stored = 0;
  for (const TileProgram& t : k.tiles)
    if (!t.accumulates()) stored += static_cast<int64_t>(t.rows.size());
  SPMMC_CHECK(stored == a.rows, "every row of C must be stored exactly once");
  SPMMC_CHECK(!k.tiles.empty(), "a matrix without rows has no kernel");
  int64_t in_kernel = 0;
  for (size_t t = 0; t < k.tiles.size(); ++t) {
    const int64_t fmas = k.tiles[t].fmas();
    const bool new_part = t > 0 && k.tiles[t].k_part != k.tiles[t - 1].k_part;
    if (k.kernel_first_tile.empty() || new_part ||
        (fmas_per_kernel > 0 && in_kernel > 0 && in_kernel + fmas > fmas_per_kernel)) {
      k.kernel_first_tile.push_back(static_cast<int32_t>(t));
      in_kernel = 0;
    }
    in_kernel += fmas;
  }
  SPMMC_CHECK(k.fmas() == a.nnz(), "every non-zero must become exactly one FMA");
  return k;
}

}  // namespace spmmc
