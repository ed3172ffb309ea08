#include "compiler/common/csr.h"

#include <cmath>

#include "compiler/common/diagnostics.h"

namespace spmmc {

void check_csr_invariants(const Csr& csr) {
  SPMMC_CHECK(csr.rows >= 1 && csr.cols >= 1, fmt::format("shape {}x{}", csr.rows, csr.cols));
  SPMMC_CHECK(csr.row_ptr.size() == static_cast<size_t>(csr.rows) + 1, "row_ptr size");
  SPMMC_CHECK(csr.col_idx.size() == csr.values.size(), "col_idx and values differ in size");
  SPMMC_CHECK(csr.row_ptr.front() == 0, "row_ptr[0] != 0");
  SPMMC_CHECK(static_cast<int64_t>(csr.row_ptr.back()) == csr.nnz(), "row_ptr[rows] != nnz");
  for (int32_t r = 0; r < csr.rows; ++r) {
    SPMMC_CHECK(csr.row_ptr[r] <= csr.row_ptr[r + 1], fmt::format("row_ptr decreases at row {}", r));
    for (int32_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; ++p) {
      SPMMC_CHECK(csr.col_idx[p] >= 0 && csr.col_idx[p] < csr.cols,
                  fmt::format("column {} out of range in row {}", csr.col_idx[p], r));
      SPMMC_CHECK(p == csr.row_ptr[r] || csr.col_idx[p - 1] < csr.col_idx[p],
                  fmt::format("columns not strictly increasing in row {}", r));
      SPMMC_CHECK(std::isfinite(csr.values[p]) && csr.values[p] != 0.0f,
                  fmt::format("value at row {} column {} is zero or not finite", r, csr.col_idx[p]));
    }
  }
}

}  // namespace spmmc
