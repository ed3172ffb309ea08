#include "compiler/formats/write_smtx.h"

#include <iterator>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "compiler/formats/chunked_text_output.h"

namespace spmmc {
namespace {

// Each number followed by one space, the line ended by '\n' (the DLMC layout).
void append_line(ChunkedTextOutput& text, const std::vector<int32_t>& numbers) {
  for (const int32_t v : numbers) {
    fmt::format_to(std::back_inserter(text.buffer()), FMT_COMPILE("{} "), v);
    text.flush_if_full();
  }
  text.buffer().push_back('\n');
}

}  // namespace

void write_smtx(const Csr& csr, std::ostream& out) {
  ChunkedTextOutput text(out);
  fmt::format_to(std::back_inserter(text.buffer()), "{}, {}, {}\n", csr.rows, csr.cols, csr.nnz());
  append_line(text, csr.row_ptr);
  append_line(text, csr.col_idx);
  text.flush();
}

}  // namespace spmmc
