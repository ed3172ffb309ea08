// Turning entries into a canonical CSR (sorted columns, no duplicates, no zeros), shared by
// every reader. Memory stays near the size of the final CSR: the row bucketing is in place.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/common/diagnostics.h"

namespace spmmc {

// Entries in any order, 0-based, already range-checked by the reader.
struct CooEntries {
  std::vector<int32_t> row;
  std::vector<int32_t> col;
  std::vector<float> value;

  void reserve(size_t n) { row.reserve(n); col.reserve(n); value.reserve(n); }
  void push(int32_t r, int32_t c, float v) { row.push_back(r); col.push_back(c); value.push_back(v); }
  size_t size() const { return row.size(); }
};

// What to do with two entries at the same (row, column).
enum class DuplicatePolicy {
  kSum,     // Matrix Market, SciPy: duplicates add up
  kReject,  // topology-only formats: a repeated column is a malformed file
};

struct AssemblyCounts {
  int64_t duplicates_summed = 0;
  int64_t zeros_dropped = 0;  // stored zeros plus duplicate sums that cancelled to zero
};

// Builds the CSR of a rows x cols matrix from `coo` (consumed). Sorts by row in place, then
// canonicalises each row as canonicalize_csr_rows does.
Csr assemble_csr_from_coo(CooEntries&& coo, int32_t rows, int32_t cols, DuplicatePolicy policy,
                          const SourceLocation& where, AssemblyCounts& counts);

// Sorts the columns of every row of `csr`, merges duplicates by `policy` (kReject: a data
// error naming the row and column at `where`), and drops zero values. row_ptr must already be
// a valid offset array and column indices in range.
void canonicalize_csr_rows(Csr& csr, DuplicatePolicy policy, const SourceLocation& where,
                           AssemblyCounts& counts);

}  // namespace spmmc
