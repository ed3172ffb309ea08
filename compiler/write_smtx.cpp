#include "compiler/write_smtx.h"

#include <iterator>

#include <fmt/compile.h>
#include <fmt/format.h>

namespace spmmc {
namespace {

constexpr size_t kFlushBytes = size_t{1} << 20;

void flush(fmt::memory_buffer& buffer, std::ostream& out) {
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  buffer.clear();
}

// Each number followed by one space, the line ended by '\n' (the DLMC layout).
void append_line(fmt::memory_buffer& buffer, std::ostream& out, const std::vector<int32_t>& numbers) {
  for (const int32_t v : numbers) {
    fmt::format_to(std::back_inserter(buffer), FMT_COMPILE("{} "), v);
    if (buffer.size() >= kFlushBytes) flush(buffer, out);
  }
  buffer.push_back('\n');
}

}  // namespace

void write_smtx(const Csr& csr, std::ostream& out) {
  fmt::memory_buffer buffer;
  buffer.reserve(kFlushBytes + 64);
  fmt::format_to(std::back_inserter(buffer), "{}, {}, {}\n", csr.rows, csr.cols, csr.nnz());
  append_line(buffer, out, csr.row_ptr);
  append_line(buffer, out, csr.col_idx);
  flush(buffer, out);
}

}  // namespace spmmc
