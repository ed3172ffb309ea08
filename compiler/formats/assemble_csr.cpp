#include "compiler/formats/assemble_csr.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace spmmc {
namespace {

// Releases a vector's memory (clear() keeps the capacity).
template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

// Shrinks only when at least a quarter of the capacity is unused: shrink_to_fit copies.
template <typename T>
void shrink_if_wasteful(std::vector<T>& v) {
  if (v.capacity() - v.size() > v.capacity() / 4) v.shrink_to_fit();
}

bool row_is_strictly_sorted(const int32_t* cols, int32_t n) {
  for (int32_t i = 1; i < n; ++i)
    if (cols[i - 1] >= cols[i]) return false;
  return true;
}

}  // namespace

Csr assemble_csr_from_coo(CooEntries&& coo, int32_t rows, int32_t cols, DuplicatePolicy policy,
                          const SourceLocation& where, AssemblyCounts& counts) {
  const size_t n = coo.size();
  SPMMC_CHECK(n <= static_cast<size_t>(kMaxIndex), "too many entries for int32 offsets");
  Csr csr;
  csr.rows = rows;
  csr.cols = cols;
  csr.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  bool sorted_by_row = true;
  for (size_t i = 0; i < n; ++i) {
    ++csr.row_ptr[coo.row[i] + 1];
    if (i > 0 && coo.row[i] < coo.row[i - 1]) sorted_by_row = false;
  }
  for (int32_t r = 0; r < rows; ++r) csr.row_ptr[r + 1] += csr.row_ptr[r];

  if (sorted_by_row) {
    release(coo.row);
    csr.col_idx = std::move(coo.col);
    csr.values = std::move(coo.value);
  } else {
    // Counting sort by row, stable (duplicates keep file order). Each entry's row is replaced
    // in place by its destination, then columns and values are scattered one array at a time:
    // peak memory is 16 bytes per entry (destinations, one source, one target array), and the
    // scatter's writes are far cheaper than an in-place permutation's random swaps.
    std::vector<int32_t> next(csr.row_ptr.begin(), csr.row_ptr.end() - 1);
    std::vector<int32_t>& destination = coo.row;
    for (size_t i = 0; i < n; ++i) destination[i] = next[destination[i]]++;
    release(next);
    csr.col_idx.resize(n);
    for (size_t i = 0; i < n; ++i) csr.col_idx[destination[i]] = coo.col[i];
    release(coo.col);
    csr.values.resize(n);
    for (size_t i = 0; i < n; ++i) csr.values[destination[i]] = coo.value[i];
    release(coo.value);
    release(destination);
  }
  canonicalize_csr_rows(csr, policy, where, counts);
  return csr;
}

void canonicalize_csr_rows(Csr& csr, DuplicatePolicy policy, const SourceLocation& where,
                           AssemblyCounts& counts) {
  std::vector<std::pair<int32_t, float>> scratch;
  int32_t out = 0;   // write position
  int32_t begin = 0; // read position of the current row (row_ptr is rewritten as we go)
  for (int32_t r = 0; r < csr.rows; ++r) {
    const int32_t end = csr.row_ptr[r + 1];
    const int32_t len = end - begin;
    // data() + begin, not &col_idx[begin]: begin == size() for empty trailing rows.
    if (!row_is_strictly_sorted(csr.col_idx.data() + begin, len)) {
      scratch.resize(len);
      for (int32_t i = 0; i < len; ++i) scratch[i] = {csr.col_idx[begin + i], csr.values[begin + i]};
      // Stable: duplicates are summed in file order, so results do not depend on the sort.
      std::stable_sort(scratch.begin(), scratch.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (int32_t i = 0; i < len; ++i) {
        csr.col_idx[begin + i] = scratch[i].first;
        csr.values[begin + i] = scratch[i].second;
      }
    }
    const int32_t row_start = out;
    for (int32_t p = begin; p < end; ++p) {
      const int32_t c = csr.col_idx[p];
      const float v = csr.values[p];
      // Duplicates are adjacent after sorting: compare with the last entry written.
      if (out > row_start && csr.col_idx[out - 1] == c) {
        if (policy == DuplicatePolicy::kReject)
          fail_data(where, "row {} lists column {} more than once", r, c);
        ++counts.duplicates_summed;
        csr.values[out - 1] += v;
        if (!std::isfinite(csr.values[out - 1]))
          fail_data(where, "duplicate entries at row {}, column {} (0-based) add up to more than the float32 range",
                    r, c);
        continue;
      }
      csr.col_idx[out] = c;
      csr.values[out] = v;
      ++out;
    }
    // Drop zeros (stored zeros and cancelled sums) in a second sweep over the kept entries.
    int32_t kept = row_start;
    for (int32_t p = row_start; p < out; ++p) {
      if (csr.values[p] == 0.0f) {
        ++counts.zeros_dropped;
        continue;
      }
      csr.col_idx[kept] = csr.col_idx[p];
      csr.values[kept] = csr.values[p];
      ++kept;
    }
    out = kept;
    begin = end;
    csr.row_ptr[r + 1] = out;
  }
  csr.col_idx.resize(out);
  csr.values.resize(out);
  shrink_if_wasteful(csr.col_idx);
  shrink_if_wasteful(csr.values);
}

}  // namespace spmmc
