#include "compiler/formats/read_matrix_market.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "compiler/common/diagnostics.h"
#include "compiler/common/text_scanner.h"
#include "compiler/formats/assemble_csr.h"
#include "compiler/formats/input_limits.h"

namespace spmmc {
namespace {

enum class Field { kReal, kInteger, kPattern };
enum class Symmetry { kGeneral, kSymmetric, kSkewSymmetric };

struct Header {
  bool coordinate = true;
  Field field = Field::kReal;
  Symmetry symmetry = Symmetry::kGeneral;
  std::string text;  // "coordinate real symmetric"
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

Header parse_banner(TextScanner& scanner) {
  const SourceLocation where = SourceLocation::at_line(scanner.file(), 1);
  std::string_view token;
  if (!scanner.next_token(token) || token != "%%MatrixMarket") {
    fail_data(where, "missing Matrix Market banner: the first line must start with '%%MatrixMarket'");
  }
  std::string words[4];
  for (auto& w : words) {
    if (!scanner.next_token(token))
      fail_data(where, "incomplete banner: expected '%%MatrixMarket matrix <format> <field> <symmetry>'");
    w = lower(token);
  }
  if (scanner.next_token(token)) fail_data(where, "unexpected '{}' after the banner's four words", token);
  if (words[0] != "matrix") fail_data(where, "unsupported object '{}': only 'matrix' is supported", words[0]);
  Header h;
  if (words[1] == "coordinate") h.coordinate = true;
  else if (words[1] == "array") h.coordinate = false;
  else fail_data(where, "unknown format '{}': expected 'coordinate' or 'array'", words[1]);
  if (words[2] == "real" || words[2] == "double") h.field = Field::kReal;
  else if (words[2] == "integer") h.field = Field::kInteger;
  else if (words[2] == "pattern") h.field = Field::kPattern;
  else if (words[2] == "complex") fail_data(where, "complex matrices are not supported (spmmc computes in real float32)");
  else fail_data(where, "unknown field '{}': expected real, integer or pattern", words[2]);
  if (words[3] == "general") h.symmetry = Symmetry::kGeneral;
  else if (words[3] == "symmetric") h.symmetry = Symmetry::kSymmetric;
  else if (words[3] == "skew-symmetric") h.symmetry = Symmetry::kSkewSymmetric;
  else if (words[3] == "hermitian") fail_data(where, "hermitian matrices are not supported (they are complex)");
  else fail_data(where, "unknown symmetry '{}': expected general, symmetric or skew-symmetric", words[3]);
  if (!h.coordinate && h.field == Field::kPattern)
    fail_data(where, "'array pattern' is not a valid Matrix Market type");
  if (!h.coordinate && h.symmetry != Symmetry::kGeneral)
    fail_data(where, "'array {}' is not supported: only 'array real general' and 'array integer general'", words[3]);
  if (h.field == Field::kPattern && h.symmetry == Symmetry::kSkewSymmetric)
    fail_data(where, "'pattern skew-symmetric' has no defined values");
  h.text = words[1] + " " + words[2] + " " + words[3];
  return h;
}

// Moves to the first token of the next line that is neither blank nor a comment.
bool next_data_line(TextScanner& scanner, std::string_view& first_token) {
  for (;;) {
    if (scanner.at_end()) return false;
    if (scanner.peek() != '%' && scanner.next_token(first_token)) return true;
    if (!scanner.next_line()) return false;
  }
}

int64_t expect_int(TextScanner& scanner, std::string_view token, const char* what) {
  int64_t v;
  if (!parse_int64(token, v))
    fail_data(SourceLocation::at_line(scanner.file(), scanner.line()), "{} '{}' is not an integer", what, token);
  return v;
}

std::string_view expect_token(TextScanner& scanner, const char* what) {
  std::string_view token;
  if (!scanner.next_token(token))
    fail_data(SourceLocation::at_line(scanner.file(), scanner.line()), "missing {} on this line", what);
  return token;
}

void expect_end_of_line(TextScanner& scanner, const char* line_kind) {
  std::string_view token;
  if (scanner.next_token(token))
    fail_data(SourceLocation::at_line(scanner.file(), scanner.line()), "unexpected '{}' at the end of {}", token, line_kind);
}

// Parses a value token of the given field; returns it as float, rejecting non-finite values and
// values beyond float range.
float parse_value(TextScanner& scanner, std::string_view token, Field field) {
  const SourceLocation where = SourceLocation::at_line(scanner.file(), scanner.line());
  float v;
  if (field == Field::kInteger) {
    int64_t i;
    if (!parse_int64(token, i)) fail_data(where, "value '{}' is not an integer (the banner says 'integer')", token);
    v = static_cast<float>(i);
  } else if (!parse_float(token, v)) {
    fail_data(where, "value '{}' is not a number", token);
  }
  if (!std::isfinite(v)) {
    const bool numeral = std::any_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (numeral) fail_data(where, "value '{}' is beyond the float32 range", token);
    fail_data(where, "value '{}' is not finite", token);
  }
  return v;
}

}  // namespace

Csr read_matrix_market(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report) {
  // Measured before the scanner buffers anything: the stream position moves ahead of it.
  const int64_t stream_bytes = remaining_stream_bytes(in);
  TextScanner scanner(in, file);
  const Header header = parse_banner(scanner);
  if (header.coordinate && options.threshold > 0)
    throw UserError(ExitCode::kUsage, SourceLocation::whole(file), kThresholdIsForDenseInput);
  report.format = "matrix-market";
  report.detail = header.text;
  scanner.next_line();

  std::string_view token;
  if (!next_data_line(scanner, token))
    fail_data(SourceLocation::at_line(file, scanner.line()), "file ends before the size line");
  const int64_t size_line = scanner.line();
  const SourceLocation size_where = SourceLocation::at_line(file, size_line);
  const int64_t rows = expect_int(scanner, token, "row count");
  const int64_t cols = expect_int(scanner, expect_token(scanner, "column count"), "column count");
  int64_t declared = 0;
  if (header.coordinate) declared = expect_int(scanner, expect_token(scanner, "entry count"), "entry count");
  expect_end_of_line(scanner, "the size line");
  check_matrix_shape(rows, cols, size_where);
  if (header.symmetry != Symmetry::kGeneral && rows != cols)
    fail_data(size_where, "a {} matrix must be square, this one is {}x{}", header.text, rows, cols);
  const int64_t expected = header.coordinate ? declared : rows * cols;
  if (header.coordinate) check_entry_count(declared, "the entry count", size_where);
  report.stored_entries = expected;

  // Reserve what the header announces, but never more than the file can hold: an entry takes
  // at least 4 bytes ("1 1\n"). A lying header then fails at the count check, not in malloc.
  int64_t reserve = header.coordinate ? declared : 0;
  const int64_t remaining = stream_bytes < 0 ? -1 : stream_bytes - scanner.offset();
  if (remaining >= 0) reserve = std::min(reserve, remaining / 4 + 1);
  if (header.symmetry != Symmetry::kGeneral) reserve *= 2;
  // 12 bytes per entry, plus row_ptr and the bucket cursors of assemble_csr_from_coo (4 bytes
  // per row each), and the count per column that every command makes of what it read (spmmc
  // inspect peaked at 8 bytes per row and 4 per column): a tiny file may announce 2^31 x 2^31.
  check_fits_in_memory(static_cast<double>(reserve) * 12.0 + static_cast<double>(rows + 1) * 8.0 +
                           static_cast<double>(cols) * 4.0,
                       "the matrix announced by the size line", size_where);
  CooEntries coo;
  coo.reserve(static_cast<size_t>(reserve));

  const bool synthesised = header.field == Field::kPattern;
  const ValueKind kind = options.values.value_or(ValueKind::kOnes);
  report.values_origin = synthesised ? describe_synthesis(kind, options.seed) : "file";
  int64_t first_lower_line = 0, first_upper_line = 0;
  int64_t seen = 0;
  int64_t array_dropped_zeros = 0;
  scanner.next_line();
  while (next_data_line(scanner, token)) {
    const SourceLocation where = SourceLocation::at_line(file, scanner.line());
    if (seen == expected)
      fail_data(where, "more entries than the {} declared on line {}", expected, size_line);
    int64_t r, c;
    float v;
    if (header.coordinate) {
      r = expect_int(scanner, token, "row index");
      c = expect_int(scanner, expect_token(scanner, "column index"), "column index");
      if (r < 1 || r > rows) fail_data(where, "row index {} out of range [1, {}]", r, rows);
      if (c < 1 || c > cols) fail_data(where, "column index {} out of range [1, {}]", c, cols);
      --r;
      --c;
      if (synthesised) {
        // Keyed on the lower triangle so that mirrored entries get the same value.
        v = synthesize_value(kind, options.seed, static_cast<int32_t>(std::max(r, c)), static_cast<int32_t>(std::min(r, c)));
      } else {
        v = parse_value(scanner, expect_token(scanner, "value"), header.field);
      }
      expect_end_of_line(scanner, "the entry");
    } else {
      // Array: column-major, every entry present.
      r = seen % rows;
      c = seen / rows;
      v = parse_value(scanner, token, header.field);
      expect_end_of_line(scanner, "the entry");
      if (std::fabs(static_cast<double>(v)) <= options.threshold) {
        if (v == 0.0f) ++array_dropped_zeros;
        else ++report.pruned_by_threshold;
        ++seen;
        scanner.next_line();
        continue;
      }
    }
    ++seen;
    if (header.symmetry == Symmetry::kSkewSymmetric && r == c)
      fail_data(where, "a skew-symmetric matrix has only zeros on its diagonal, but entry ({}, {}) is stored", r + 1, c + 1);
    if (header.symmetry != Symmetry::kGeneral && r != c) {
      if (r > c && first_lower_line == 0) first_lower_line = scanner.line();
      if (r < c && first_upper_line == 0) first_upper_line = scanner.line();
      if (first_lower_line && first_upper_line)
        fail_data(where,
                  "{} file stores entries on both sides of the diagonal (line {} below, line {} above): "
                  "store one triangle only",
                  header.text, first_lower_line, first_upper_line);
    }
    if (static_cast<int64_t>(coo.size()) + 2 > kMaxIndex)
      fail_data(where, "more than {} non-zeros are not supported (32-bit offsets)", kMaxIndex);
    coo.push(static_cast<int32_t>(r), static_cast<int32_t>(c), v);
    if (header.symmetry != Symmetry::kGeneral && r != c) {
      coo.push(static_cast<int32_t>(c), static_cast<int32_t>(r), header.symmetry == Symmetry::kSkewSymmetric ? -v : v);
      ++report.mirrored_entries;
    }
    scanner.next_line();
  }
  if (seen < expected) {
    fail_data(SourceLocation::at_line(file, scanner.line()),
              "file ends after {} of the {} entries declared on line {} (truncated?)", seen, expected, size_line);
  }

  AssemblyCounts counts;
  Csr csr = assemble_csr_from_coo(std::move(coo), static_cast<int32_t>(rows), static_cast<int32_t>(cols),
                                  DuplicatePolicy::kSum, SourceLocation::whole(file), counts);
  report.duplicates_summed = counts.duplicates_summed;
  report.explicit_zeros_dropped = counts.zeros_dropped + array_dropped_zeros;
  return csr;
}

}  // namespace spmmc
