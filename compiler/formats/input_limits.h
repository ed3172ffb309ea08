// Sanity limits every reader applies before it allocates anything a file claims it needs.
#pragma once

#include <cstdint>
#include <istream>
#include <string_view>

#include "compiler/common/diagnostics.h"

namespace spmmc {

// Throws a data error unless 1 <= rows, cols <= kMaxIndex.
void check_matrix_shape(int64_t rows, int64_t cols, const SourceLocation& where);

// Throws a data error unless 0 <= count <= kMaxIndex (counts of non-zeros or entries).
void check_entry_count(int64_t count, std::string_view what, const SourceLocation& where);

// Throws a data error when `bytes` (what the file claims it needs, e.g. for a dense array or
// the entries it announces) exceeds the physical memory of this machine, or the budget set in
// the environment variable SPMMC_MEMORY_LIMIT_MB (a positive number) when that is set.
void check_fits_in_memory(double bytes, std::string_view what, const SourceLocation& where);

// Physical memory of this machine in bytes.
double physical_memory_bytes();

// The size of a seekable stream's remaining content, or -1 when it cannot be known.
int64_t remaining_stream_bytes(std::istream& in);

}  // namespace spmmc
