#include "compiler/formats/read_smtx.h"

#include "compiler/common/synthesize_values.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

using test::expect_user_error;
using test::read_text;

Csr smtx(const std::string& text, const ReadOptions& options = {}, ReadReport* report = nullptr) {
  return read_text(MatrixFormat::kSmtx, text, options, report);
}

TEST_CASE("smtx: topology with seeded normal values by default", "[smtx]") {
  ReadReport report;
  const Csr a = smtx("3, 4, 4\n0 2 2 4\n3 1 0 2\n", {}, &report);
  CHECK(a.row_ptr == std::vector<int32_t>{0, 2, 2, 4});
  CHECK(a.col_idx == std::vector<int32_t>{1, 3, 0, 2});  // row 0 was unsorted
  CHECK(a.values[0] == synthesize_value(ValueKind::kNormal, 0, 0, 1));
  CHECK(a.values[1] == synthesize_value(ValueKind::kNormal, 0, 0, 3));
  CHECK(a.values[3] == synthesize_value(ValueKind::kNormal, 0, 2, 2));
  CHECK(report.values_origin == "synthesised: normal(0,1), seed 0");
}

TEST_CASE("smtx: --values and --seed change values, not topology", "[smtx]") {
  ReadOptions ones;
  ones.values = ValueKind::kOnes;
  CHECK(smtx("1, 3, 2\n0 2\n0 2\n", ones).values == std::vector<float>{1.0f, 1.0f});
  ReadOptions seeded;
  seeded.seed = 42;
  const Csr a = smtx("1, 3, 2\n0 2\n0 2\n");
  const Csr b = smtx("1, 3, 2\n0 2\n0 2\n", seeded);
  CHECK(a.col_idx == b.col_idx);
  CHECK(a.values != b.values);
}

TEST_CASE("smtx: no non-zeros", "[smtx]") {
  const Csr a = smtx("2, 2, 0\n0 0 0\n");
  CHECK(a.nnz() == 0);
}

TEST_CASE("smtx: malformed input is a data error naming the line", "[smtx][errors]") {
  struct Case {
    const char* name;
    const char* text;
    int64_t line;
    const char* part;
  } cases[] = {
      {"empty", "", 1, "empty file"},
      {"short header", "3, 4\n", 1, "header"},
      {"long header", "3, 4, 1, 9\n0 1 1 1\n0\n", 1, "more than"},
      {"zero rows", "0, 4, 0\n0\n", 1, "at least 1"},
      {"absurd", "3000000000, 4, 0\n", 1, "not supported"},
      {"nnz too big", "2, 2, 5\n0 0 5\n0 1 0 1 0\n", 1, "more than"},
      {"header beyond file", "1000000, 1000000, 1000000\n0 1\n", 1, "truncated"},
      {"non-numeric", "2, x, 1\n", 1, "not an integer"},
      {"no offsets", "2, 2, 1\n", 1, "truncated"},
      {"empty offsets line", "1, 1, 0\n\n\n\n", 2, "ends after 0 row offsets"},
      {"short offsets", "2, 2, 1\n0 1\n1\n", 2, "ends after 2 row offsets"},
      {"long offsets", "2, 2, 1\n0 1 1 1\n1\n", 2, "more than"},
      {"first offset", "2, 2, 1\n1 1 1\n1\n", 2, "first row offset"},
      {"decreasing offsets", "3, 2, 2\n0 2 1 2\n0 1\n", 2, "decrease"},
      {"last offset", "2, 2, 2\n0 1 1\n0 1\n", 2, "last row offset"},
      {"no indices", "2, 2, 1\n0 1 1\n", 3, "column indices"},
      {"truncated indices", "2, 2, 3\n0 2 3\n0 1\n", 3, "ends after 2"},
      {"index out of range", "2, 2, 1\n0 1 1\n2\n", 3, "out of range [0, 1]"},
      {"negative index", "2, 2, 1\n0 1 1\n-1\n", 3, "out of range"},
      {"duplicate column", "1, 3, 2\n0 2\n1 1\n", 3, "more than once"},
      {"trailing garbage", "1, 3, 1\n0 1\n1\nx\n", 4, "unexpected 'x'"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { smtx(c.text); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().line == c.line);
      CHECK_THAT(e.message(), Catch::Contains(c.part));
    }
  }
}

}  // namespace
}  // namespace spmmc
