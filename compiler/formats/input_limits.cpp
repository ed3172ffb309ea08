#include "compiler/formats/input_limits.h"

#include <unistd.h>

#include <cstdlib>
#include <istream>

#include "compiler/common/csr.h"

namespace spmmc {

void check_matrix_shape(int64_t rows, int64_t cols, const SourceLocation& where) {
  if (rows < 1 || cols < 1)
    fail_data(where, "matrix shape {}x{}: both dimensions must be at least 1", rows, cols);
  if (rows > kMaxIndex || cols > kMaxIndex)
    fail_data(where, "matrix shape {}x{}: dimensions above {} are not supported (32-bit indices)",
              rows, cols, kMaxIndex);
}

void check_entry_count(int64_t count, std::string_view what, const SourceLocation& where) {
  if (count < 0) fail_data(where, "{} is negative ({})", what, count);
  if (count > kMaxIndex)
    fail_data(where, "{} is {}: more than {} is not supported (32-bit offsets)", what, count, kMaxIndex);
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 1e18;  // unknown: do not refuse
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

void check_fits_in_memory(double bytes, std::string_view what, const SourceLocation& where) {
  // SPMMC_MEMORY_LIMIT_MB lowers the budget below physical memory (containers, tests, fuzzing).
  const char* env = std::getenv("SPMMC_MEMORY_LIMIT_MB");
  char* end = nullptr;
  const double limit_mb = env ? std::strtod(env, &end) : 0.0;
  if (env && end != env && *end == '\0' && limit_mb > 0) {
    const double limit = limit_mb * (1u << 20);
    if (bytes > limit)
      fail_data(where, "{} would need {:.1f} MiB, more than the SPMMC_MEMORY_LIMIT_MB limit of {} MiB", what,
                bytes / (1u << 20), limit_mb);
    return;
  }
  const double limit = physical_memory_bytes();
  if (bytes > limit)
    fail_data(where, "{} would need {:.1f} GiB, more than this machine's {:.1f} GiB of memory", what,
              bytes / (1u << 30), limit / (1u << 30));
}

int64_t remaining_stream_bytes(std::istream& in) {
  const std::streampos here = in.tellg();
  if (here == std::streampos(-1)) {
    in.clear();
    return -1;
  }
  in.seekg(0, std::ios::end);
  const std::streampos end = in.tellg();
  in.seekg(here);
  if (end == std::streampos(-1) || !in) {
    in.clear();
    in.seekg(here);
    return -1;
  }
  return static_cast<int64_t>(end - here);
}

}  // namespace spmmc
