// Measures of a row tiling: what reordering is judged by and what the load-balance constraint
// and the ranking features read.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"

namespace spmmc {

struct TilingStats {
  int32_t tiles = 0;
  int64_t max_nnc = 0;     // largest number of non-empty columns in a tile
  double mean_nnc = 0.0;
  int64_t nnc_sum = 0;     // NNC_sum of LO-SpMM Table 1
  int64_t max_nnz = 0;     // NNZ_max of Table 1
  double mean_nnz = 0.0;
  double nnz_cov = 0.0;    // COV_row: std / mean of non-zeros per tile (population std)
  int64_t empty_rows = 0;  // rows of A without non-zeros (stored as zeros whatever the tiling: the size guard)
  std::vector<int32_t> nnc_per_tile;
  std::vector<int32_t> nnz_per_tile;
};

TilingStats measure_tiling(const Csr& a, const RowTiling& tiling);

}  // namespace spmmc
