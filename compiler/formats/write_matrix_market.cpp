#include "compiler/formats/write_matrix_market.h"

#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "compiler/formats/chunked_text_output.h"

namespace spmmc {
namespace {

// "% line" for every line of `comment` ("%" alone for an empty line inside it).
void append_comment(fmt::memory_buffer& buffer, const std::string& comment) {
  if (comment.empty()) return;
  std::string_view rest(comment);
  for (;;) {
    const size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) fmt::format_to(std::back_inserter(buffer), "%\n");
    else fmt::format_to(std::back_inserter(buffer), "% {}\n", line);
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
    if (rest.empty()) break;  // a trailing newline ends the comment, it adds no empty line
  }
}

// fmt's shortest form of a float reads back as the same float when parsed as float. Readers
// that parse into a double and then round to float (SciPy and most others; not spmmc's own)
// round twice, and for exactly one float magnitude, bits 0x15ae43fd ("7.038531e-26"), that
// gives its neighbour (found by checking all 2^31 positive finite floats). For it print the
// double value of the float, which every reader converts exactly.
void append_entry(fmt::memory_buffer& buffer, int32_t row, int32_t col, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7FFFFFFFu) == 0x15ae43fdu) {
    fmt::format_to(std::back_inserter(buffer), FMT_COMPILE("{} {} {}\n"), row, col, static_cast<double>(value));
  } else {
    fmt::format_to(std::back_inserter(buffer), FMT_COMPILE("{} {} {}\n"), row, col, value);
  }
}

}  // namespace

void write_matrix_market(const Csr& csr, std::ostream& out, const std::string& comment) {
  ChunkedTextOutput text(out);
  fmt::memory_buffer& buffer = text.buffer();
  fmt::format_to(std::back_inserter(buffer), "%%MatrixMarket matrix coordinate real general\n");
  append_comment(buffer, comment);
  fmt::format_to(std::back_inserter(buffer), "{} {} {}\n", csr.rows, csr.cols, csr.nnz());
  for (int32_t r = 0; r < csr.rows; ++r) {
    for (int32_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; ++p) {
      append_entry(buffer, r + 1, csr.col_idx[p] + 1, csr.values[p]);
    }
    text.flush_if_full();
  }
  text.flush();
}

}  // namespace spmmc
