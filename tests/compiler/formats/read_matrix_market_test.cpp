#include "compiler/formats/read_matrix_market.h"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tests/test_util.h"

namespace spmmc {
namespace {

using test::expect_user_error;
using test::read_text;

Csr mtx(const std::string& text, ReadReport* report = nullptr, const ReadOptions& options = {}) {
  return read_text(MatrixFormat::kMatrixMarket, text, options, report);
}

TEST_CASE("mtx: coordinate real general with comments, blank lines and unsorted entries", "[mtx]") {
  ReadReport report;
  const Csr a = mtx(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "\n"
      "3 4 4\n"
      "3 4 -1.5e0\n"
      "1 2 2\n"
      "\n"
      "% comment between entries\n"
      "1 1 0.25\n"
      "2 3 7\n",
      &report);
  CHECK(a.rows == 3);
  CHECK(a.cols == 4);
  CHECK(a.row_ptr == std::vector<int32_t>{0, 2, 3, 4});
  CHECK(a.col_idx == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(a.values == std::vector<float>{0.25f, 2.0f, 7.0f, -1.5f});
  CHECK(report.format == "matrix-market");
  CHECK(report.detail == "coordinate real general");
  CHECK(report.values_origin == "file");
  CHECK(report.stored_entries == 4);
}

TEST_CASE("mtx: CRLF line ends and upper-case banner words", "[mtx]") {
  const Csr a = mtx("%%MatrixMarket MATRIX Coordinate REAL General\r\n2 2 1\r\n2 1 3\r\n");
  CHECK(a.nnz() == 1);
  CHECK(a.values[0] == 3.0f);
}

TEST_CASE("mtx: duplicates are summed (even beyond the cell count) and explicit zeros dropped, both counted", "[mtx]") {
  ReadReport report;
  const Csr a = mtx(
      "%%MatrixMarket matrix coordinate real general\n2 2 5\n"
      "1 1 1\n1 1 2\n2 2 0\n2 1 1\n2 1 -1\n",
      &report);
  CHECK(a.nnz() == 1);
  CHECK(a.values[0] == 3.0f);
  CHECK(report.duplicates_summed == 2);
  CHECK(report.explicit_zeros_dropped == 2);  // the stored zero and the cancelled sum
}

TEST_CASE("mtx: integer field", "[mtx]") {
  const Csr a = mtx("%%MatrixMarket matrix coordinate integer general\n1 3 2\n1 3 -4\n1 1 9\n");
  CHECK(a.values == std::vector<float>{9.0f, -4.0f});
}

TEST_CASE("mtx: symmetric is mirrored without doubling the diagonal", "[mtx]") {
  ReadReport report;
  const Csr a = mtx("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 5\n2 1 2\n3 2 4\n", &report);
  CHECK(a.nnz() == 5);
  CHECK(a.row_ptr == std::vector<int32_t>{0, 2, 4, 5});
  CHECK(a.col_idx == std::vector<int32_t>{0, 1, 0, 2, 1});
  CHECK(a.values == std::vector<float>{5, 2, 2, 4, 4});
  CHECK(report.mirrored_entries == 2);
}

TEST_CASE("mtx: symmetric stored as the upper triangle is accepted too", "[mtx]") {
  const Csr a = mtx("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 3\n");
  CHECK(a.nnz() == 2);
}

TEST_CASE("mtx: skew-symmetric mirrors with a negated value", "[mtx]") {
  const Csr a = mtx("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n");
  CHECK(a.col_idx == std::vector<int32_t>{1, 0});
  CHECK(a.values == std::vector<float>{-3.0f, 3.0f});
}

TEST_CASE("mtx: pattern gets ones by default and seeded values on request", "[mtx]") {
  ReadReport report;
  const Csr ones = mtx("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n", &report);
  CHECK(ones.values == std::vector<float>{1.0f, 1.0f});
  CHECK(report.values_origin == "synthesised: ones");

  ReadOptions options;
  options.values = ValueKind::kNormal;
  options.seed = 7;
  const Csr sym = mtx("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n", nullptr, options);
  REQUIRE(sym.nnz() == 3);
  CHECK(sym.values[0] == sym.values[1]);  // (0,1) and (1,0) mirror each other
  CHECK(sym.values[0] != 1.0f);
}

TEST_CASE("mtx: array real general is column-major, zeros dropped, threshold prunes", "[mtx]") {
  ReadReport report;
  const std::string text = "%%MatrixMarket matrix array real general\n2 3\n1\n0\n0\n2\n0.5\n-3\n";
  const Csr a = mtx(text, &report);
  CHECK(a.row_ptr == std::vector<int32_t>{0, 2, 4});
  CHECK(a.col_idx == std::vector<int32_t>{0, 2, 1, 2});
  CHECK(a.values == std::vector<float>{1.0f, 0.5f, 2.0f, -3.0f});
  CHECK(report.explicit_zeros_dropped == 2);

  ReadOptions options;
  options.threshold = 1.0;
  ReadReport pruned;
  const Csr b = mtx(text, &pruned, options);
  CHECK(b.nnz() == 2);
  CHECK(pruned.pruned_by_threshold == 2);
}

TEST_CASE("mtx: values round to the nearest float once, not via double", "[mtx]") {
  const Csr a = mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0.1\n");
  CHECK(a.values[0] == 0.1f);
  // 7.038531e-26 is the shortest form of the float with bits 0x15ae43fd; parsed as a double
  // and then rounded to float it would become the neighbour 0x15ae43fe.
  const Csr b = mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 7.038531e-26\n");
  uint32_t bits;
  std::memcpy(&bits, &b.values[0], 4);
  CHECK(bits == 0x15ae43fdu);
  // The shortest form of FLT_MAX is above FLT_MAX but rounds to it.
  CHECK(mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 3.4028235e+38\n").values[0] == FLT_MAX);
}

struct BadCase {
  const char* name;
  const char* text;
  int64_t line;
  const char* message_part;
};

TEST_CASE("mtx: malformed input is a data error naming the line", "[mtx][errors]") {
  const BadCase cases[] = {
      {"empty file", "", 1, "banner"},
      {"missing banner", "3 3 1\n1 1 1\n", 1, "banner"},
      {"wrong banner", "%%MatrixMarkt matrix coordinate real general\n1 1 0\n", 1, "banner"},
      {"incomplete banner", "%%MatrixMarket matrix coordinate\n1 1 0\n", 1, "incomplete banner"},
      {"vector object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 1, "unsupported object"},
      {"complex field", "%%MatrixMarket matrix coordinate complex general\n1 1 0\n", 1, "complex"},
      {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1, "hermitian"},
      {"bad format", "%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "unknown format"},
      {"array pattern", "%%MatrixMarket matrix array pattern general\n1 1\n", 1, "array pattern"},
      {"no size line", "%%MatrixMarket matrix coordinate real general\n% only a comment\n", 3, "size line"},
      {"zero rows", "%%MatrixMarket matrix coordinate real general\n0 3 0\n", 2, "at least 1"},
      {"negative cols", "%%MatrixMarket matrix coordinate real general\n3 -3 0\n", 2, "at least 1"},
      {"absurd rows", "%%MatrixMarket matrix coordinate real general\n99999999999 3 0\n", 2, "not supported"},
      {"negative nnz", "%%MatrixMarket matrix coordinate real general\n3 3 -1\n", 2, "negative"},
      {"size line extra", "%%MatrixMarket matrix coordinate real general\n2 2 1 9\n1 1 1\n", 2, "unexpected '9'"},
      {"non-numeric size", "%%MatrixMarket matrix coordinate real general\n2 x 1\n1 1 1\n", 2, "not an integer"},
      {"truncated", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n", 5, "truncated"},
      {"too many entries", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n", 4, "more entries"},
      {"row out of range", "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", 3, "row index 3 out of range [1, 2]"},
      {"column zero", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 0 1\n", 3, "column index 0 out of range"},
      {"missing value", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", 3, "missing value"},
      {"extra field", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 1\n", 3, "unexpected"},
      {"non-numeric value", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n", 3, "not a number"},
      {"nan", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 nan\n", 3, "not finite"},
      {"inf", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 -inf\n", 3, "not finite"},
      {"float overflow", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e39\n", 3, "float32 range"},
      {"double overflow", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e999\n", 3, "float32 range"},
      {"fractional integer", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, "not an integer"},
      {"fractional index", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1.0 1 1\n", 3, "not an integer"},
      {"non-square symmetric", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", 2, "square"},
      {"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", 3, "diagonal"},
      {"both triangles", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 3 1\n", 4, "both sides"},
      {"array truncated", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 6, "truncated"},
  };
  for (const BadCase& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { mtx(c.text); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == "test");
      CHECK(e.where().line == c.line);
      CHECK_THAT(e.message(), Catch::Contains(c.message_part));
    }
  }
}

TEST_CASE("mtx: a diagnostic reads file:line: error: message", "[mtx][errors]") {
  const UserError e = expect_user_error([] { mtx("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n"); });
  CHECK(std::string(e.what()) == "test:3: error: row index 3 out of range [1, 2]");
}

TEST_CASE("mtx: a lying entry count does not allocate what it claims", "[mtx][errors]") {
  // 2^31-2 entries declared in a 60-byte file: the reservation is capped by the file size and
  // the count check reports the truncation.
  const UserError e = expect_user_error(
      [] { mtx("%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 2147483646\n1 1 1\n"); });
  CHECK_THAT(e.message(), Catch::Contains("truncated"));
}

TEST_CASE("mtx: duplicates adding up beyond float32 are a data error", "[mtx][errors]") {
  // Fuzz finding (tests/fuzz/corpus/mtx/regress_duplicate_sum_overflow*.mtx).
  for (const char* text : {"%%MatrixMarket matrix coordinate real general\n1 1 2\n1 1 3e38\n1 1 3e38\n",
                           "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 -3e38\n2 1 -3e38\n"}) {
    const UserError e = expect_user_error([&] { mtx(text); });
    CHECK(e.code() == ExitCode::kDataError);
    CHECK_THAT(e.message(), Catch::Contains("float32 range"));
  }
}

namespace {
// Sets SPMMC_MEMORY_LIMIT_MB for the lifetime of the object.
struct MemoryLimit {
  explicit MemoryLimit(const char* mb) { setenv("SPMMC_MEMORY_LIMIT_MB", mb, 1); }
  ~MemoryLimit() { unsetenv("SPMMC_MEMORY_LIMIT_MB"); }
};
}  // namespace

TEST_CASE("mtx: the rows a size line announces count against the memory budget before allocating", "[mtx][errors]") {
  // Fuzz finding (regress_oom_rows_without_entries.mtx): a 62-byte file announcing 1.5e9 rows and
  // no entries made the reader allocate a 6 GB row_ptr; only the entries were checked.
  const std::string text = "%%MatrixMarket matrix coordinate real general\n1000000 2 0\n";
  {
    const MemoryLimit limit("4");  // MiB; the row offsets alone need 8 MB
    const UserError e = expect_user_error([&] { mtx(text); });
    CHECK(e.where().line == 2);
    CHECK_THAT(e.message(), Catch::Contains("SPMMC_MEMORY_LIMIT_MB limit of 4 MiB"));
  }
  {
    const MemoryLimit limit("not a number");  // ignored: physical memory is the budget
    CHECK(mtx(text).rows == 1000000);
  }
  CHECK(mtx(text).rows == 1000000);
}

TEST_CASE("mtx: the columns a size line announces count against the memory budget too", "[mtx][errors]") {
  // A 2^31 - 1 square matrix with one entry: every command counts per column what it read, and
  // spmmc inspect was killed by the system at 24 GB where the rows alone fitted the budget.
  const std::string text = "%%MatrixMarket matrix coordinate real general\n2 1000000 1\n1 1 1\n";
  {
    const MemoryLimit limit("3");  // MiB; the columns' counts need 4 MB
    const UserError e = expect_user_error([&] { mtx(text); });
    CHECK(e.where().line == 2);
    CHECK_THAT(e.message(), Catch::Contains("SPMMC_MEMORY_LIMIT_MB limit of 3 MiB"));
  }
  CHECK(mtx(text).cols == 1000000);
}

}  // namespace
}  // namespace spmmc
