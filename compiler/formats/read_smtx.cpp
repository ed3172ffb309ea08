#include "compiler/formats/read_smtx.h"

#include <algorithm>

#include "compiler/common/diagnostics.h"
#include "compiler/common/text_scanner.h"
#include "compiler/formats/assemble_csr.h"
#include "compiler/formats/input_limits.h"

namespace spmmc {
namespace {

int64_t next_int(TextScanner& scanner, const char* what, int64_t index_in_line) {
  const SourceLocation where = SourceLocation::at_line(scanner.file(), scanner.line());
  std::string_view token;
  if (!scanner.next_token(token)) {
    fail_data(where, "line {} ends after {} {}{}", scanner.line(), index_in_line, what,
              scanner.at_end() ? " (file truncated?)" : "");
  }
  int64_t v;
  if (!parse_int64(token, v)) fail_data(where, "{} '{}' is not an integer", what, token);
  return v;
}

void expect_line_end(TextScanner& scanner, int64_t count, const char* what) {
  std::string_view token;
  if (scanner.next_token(token))
    fail_data(SourceLocation::at_line(scanner.file(), scanner.line()),
              "line {} has more than the {} {} expected ('{}' follows)", scanner.line(), count, what, token);
}

}  // namespace

Csr read_smtx(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report) {
  // Measured before the scanner buffers anything: the stream position moves ahead of it.
  const int64_t stream_bytes = remaining_stream_bytes(in);
  TextScanner scanner(in, file, /*comma_is_space=*/true);
  report.format = "smtx";
  report.detail = "DLMC topology";
  const SourceLocation header_where = SourceLocation::at_line(file, 1);
  if (scanner.at_end()) fail_data(header_where, "empty file: expected 'M, K, NNZ' on line 1");
  const int64_t rows = next_int(scanner, "header fields", 0);
  const int64_t cols = next_int(scanner, "header fields", 1);
  const int64_t nnz = next_int(scanner, "header fields", 2);
  expect_line_end(scanner, 3, "header fields (M, K, NNZ)");
  check_matrix_shape(rows, cols, header_where);
  check_entry_count(nnz, "NNZ", header_where);
  if (static_cast<double>(nnz) > static_cast<double>(rows) * static_cast<double>(cols))
    fail_data(header_where, "NNZ {} is more than the {}x{} matrix has cells", nnz, rows, cols);
  // The file holds at least 2 bytes per offset and index; refuse headers it cannot back.
  const int64_t remaining = stream_bytes < 0 ? -1 : stream_bytes - scanner.offset();
  if (remaining >= 0 && (rows + 1 + nnz) * 2 > remaining + 2)
    fail_data(header_where, "header claims {} offsets and {} indices but only {} bytes follow (truncated?)",
              rows + 1, nnz, remaining);
  check_fits_in_memory(static_cast<double>(rows + 1 + 2 * nnz) * 4.0, "the matrix the header announces", header_where);

  Csr csr;
  csr.rows = static_cast<int32_t>(rows);
  csr.cols = static_cast<int32_t>(cols);
  if (!scanner.next_line()) fail_data(SourceLocation::at_line(file, 2), "file ends before the row offsets on line 2");
  csr.row_ptr.resize(static_cast<size_t>(rows) + 1);
  for (int64_t i = 0; i <= rows; ++i) {
    const int64_t off = next_int(scanner, "row offsets", i);
    const SourceLocation where = SourceLocation::at_line(file, scanner.line());
    if (i == 0 && off != 0) fail_data(where, "the first row offset must be 0, not {}", off);
    if (off < 0 || off > nnz) fail_data(where, "row offset {} (entry {}) out of range [0, {}]", off, i, nnz);
    if (i > 0 && off < csr.row_ptr[i - 1])
      fail_data(where, "row offsets decrease at entry {} ({} after {})", i, off, csr.row_ptr[i - 1]);
    csr.row_ptr[i] = static_cast<int32_t>(off);
  }
  expect_line_end(scanner, rows + 1, "row offsets (M+1)");
  if (csr.row_ptr[rows] != nnz)
    fail_data(SourceLocation::at_line(file, 2), "the last row offset is {}, but NNZ is {}", csr.row_ptr[rows], nnz);

  csr.col_idx.resize(static_cast<size_t>(nnz));
  if (nnz > 0 && !scanner.next_line())
    fail_data(SourceLocation::at_line(file, 3), "file ends before the column indices on line 3");
  for (int64_t i = 0; i < nnz; ++i) {
    const int64_t c = next_int(scanner, "column indices", i);
    if (c < 0 || c >= cols)
      fail_data(SourceLocation::at_line(file, scanner.line()), "column index {} (entry {}) out of range [0, {}]", c, i,
                cols - 1);
    csr.col_idx[i] = static_cast<int32_t>(c);
  }
  if (nnz > 0) expect_line_end(scanner, nnz, "column indices (NNZ)");
  // Only blank lines may follow.
  std::string_view token;
  while (scanner.next_line()) {
    if (scanner.next_token(token))
      fail_data(SourceLocation::at_line(file, scanner.line()), "unexpected '{}' after the column indices", token);
  }

  const ValueKind kind = options.values.value_or(ValueKind::kNormal);
  report.values_origin = describe_synthesis(kind, options.seed);
  report.stored_entries = nnz;
  csr.values.resize(static_cast<size_t>(nnz));
  for (int32_t r = 0; r < csr.rows; ++r)
    for (int32_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; ++p)
      csr.values[p] = synthesize_value(kind, options.seed, r, csr.col_idx[p]);
  // Sorts unsorted rows (values travel with their columns) and rejects repeated columns.
  AssemblyCounts counts;
  canonicalize_csr_rows(csr, DuplicatePolicy::kReject, SourceLocation::at_line(file, 3), counts);
  return csr;
}

}  // namespace spmmc
