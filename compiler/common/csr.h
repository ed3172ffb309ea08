// The one in-memory sparse matrix type of spmmc: CSR with 32-bit indices and float values.
//
// Invariants (checked by check_csr_invariants):
//  * rows >= 1, cols >= 1, both <= kMaxIndex;
//  * row_ptr has rows + 1 entries, row_ptr[0] == 0, non-decreasing, row_ptr[rows] == nnz;
//  * col_idx and values have nnz entries; within a row, column indices strictly increase
//    (sorted, no duplicates) and lie in [0, cols);
//  * every value is finite and non-zero (explicit zeros are dropped on input).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace spmmc {

// The largest dimension or non-zero count spmmc accepts: indices and offsets are int32.
inline constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

struct Csr {
  int32_t rows = 0;
  int32_t cols = 0;
  std::vector<int32_t> row_ptr;  // rows + 1
  std::vector<int32_t> col_idx;  // nnz
  std::vector<float> values;     // nnz

  int64_t nnz() const { return static_cast<int64_t>(col_idx.size()); }
  int32_t row_length(int32_t r) const { return row_ptr[r + 1] - row_ptr[r]; }
  // The most non-zeros of a row (0 for an empty A).
  int32_t longest_row() const {
    int32_t longest = 0;
    for (int32_t r = 0; r < rows; ++r) longest = row_length(r) > longest ? row_length(r) : longest;
    return longest;
  }
  // Bytes held by the three arrays (what "the CSR size" means in memory budgets).
  int64_t bytes() const {
    return static_cast<int64_t>(row_ptr.size() + col_idx.size() + values.size()) * 4;
  }

  friend bool operator==(const Csr& a, const Csr& b) {
    return a.rows == b.rows && a.cols == b.cols && a.row_ptr == b.row_ptr &&
           a.col_idx == b.col_idx && a.values == b.values;
  }
  friend bool operator!=(const Csr& a, const Csr& b) { return !(a == b); }
};

// Verifies every invariant above; a violation is a bug in spmmc (throws InternalError).
void check_csr_invariants(const Csr& csr);

}  // namespace spmmc
