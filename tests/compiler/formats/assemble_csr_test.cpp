#include "compiler/formats/assemble_csr.h"

#include <algorithm>
#include <map>
#include <random>

#include "tests/test_util.h"

namespace spmmc {
namespace {

TEST_CASE("assemble: shuffled entries give the same CSR as sorted ones", "[assemble]") {
  std::mt19937 rng(3);
  const int32_t rows = 37, cols = 53;
  std::map<std::pair<int32_t, int32_t>, float> expected;
  CooEntries coo;
  for (int i = 0; i < 400; ++i) {
    const int32_t r = static_cast<int32_t>(rng() % rows), c = static_cast<int32_t>(rng() % cols);
    const float v = static_cast<float>(rng() % 7) + 1.0f;  // small integers: sums are exact
    coo.push(r, c, v);
    expected[{r, c}] += v;
  }
  AssemblyCounts counts;
  const Csr a = assemble_csr_from_coo(std::move(coo), rows, cols, DuplicatePolicy::kSum, {}, counts);
  check_csr_invariants(a);
  CHECK(a.nnz() == static_cast<int64_t>(expected.size()));
  CHECK(counts.duplicates_summed == 400 - static_cast<int64_t>(expected.size()));
  auto it = expected.begin();
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p, ++it) {
      CHECK(it->first == std::make_pair(r, a.col_idx[p]));
      CHECK(it->second == a.values[p]);
    }
}

TEST_CASE("assemble: duplicates are summed in file order", "[assemble]") {
  CooEntries coo;
  coo.push(0, 1, 1e8f);
  coo.push(0, 0, 1.0f);
  coo.push(0, 1, 1.0f);
  coo.push(0, 1, -1e8f);
  AssemblyCounts counts;
  const Csr a = assemble_csr_from_coo(std::move(coo), 1, 2, DuplicatePolicy::kSum, {}, counts);
  // (1e8 + 1) - 1e8 in float is 0: the sum cancels and the entry is dropped.
  CHECK(a.col_idx == std::vector<int32_t>{0});
  CHECK(counts.zeros_dropped == 1);
}

TEST_CASE("assemble: rejecting duplicates names the row and column", "[assemble][errors]") {
  CooEntries coo;
  coo.push(1, 2, 1.0f);
  coo.push(1, 2, 1.0f);
  AssemblyCounts counts;
  const UserError e = test::expect_user_error([&] {
    assemble_csr_from_coo(std::move(coo), 2, 3, DuplicatePolicy::kReject, SourceLocation::whole("f"), counts);
  });
  CHECK(e.message() == "row 1 lists column 2 more than once");
}

TEST_CASE("assemble: empty input and empty rows", "[assemble]") {
  AssemblyCounts counts;
  const Csr a = assemble_csr_from_coo(CooEntries{}, 4, 4, DuplicatePolicy::kSum, {}, counts);
  CHECK(a.nnz() == 0);
  CHECK(a.row_ptr == std::vector<int32_t>(5, 0));
}

// Fuzz finding: duplicate sums beyond float range became inf, which broke the CSR invariants
// (an InternalError) instead of being reported as bad input.
TEST_CASE("assemble: duplicates that add up beyond float32 are a data error", "[assemble][errors]") {
  for (const float v : {3e38f, -3e38f}) {
    CooEntries coo;
    coo.push(0, 1, 1.0f);
    coo.push(1, 0, v);
    coo.push(1, 0, v);
    AssemblyCounts counts;
    const UserError e = test::expect_user_error([&] {
      assemble_csr_from_coo(std::move(coo), 2, 2, DuplicatePolicy::kSum, SourceLocation::whole("f"), counts);
    });
    CHECK(e.code() == ExitCode::kDataError);
    CHECK(e.message() == "duplicate entries at row 1, column 0 (0-based) add up to more than the float32 range");
  }
  // Large values that stay in range are still summed.
  CooEntries coo;
  coo.push(0, 0, 2e38f);
  coo.push(0, 0, 1e38f);
  AssemblyCounts counts;
  const Csr a = assemble_csr_from_coo(std::move(coo), 1, 1, DuplicatePolicy::kSum, {}, counts);
  CHECK(a.values == std::vector<float>{3e38f});
}

// Fuzz finding: canonicalize_csr_rows indexed col_idx[begin] with begin == size() for empty
// trailing rows (undefined behaviour; an abort under _GLIBCXX_ASSERTIONS, which the sanitised
// fuzz-corpus-* tests use). Here: the smtx path, rows empty at the start, middle and end.
TEST_CASE("canonicalize: empty rows anywhere, and no entries at all", "[assemble]") {
  Csr csr;
  csr.rows = 5;
  csr.cols = 3;
  csr.row_ptr = {0, 0, 2, 2, 3, 3};
  csr.col_idx = {2, 0, 1};
  csr.values = {1.0f, 2.0f, 3.0f};
  AssemblyCounts counts;
  canonicalize_csr_rows(csr, DuplicatePolicy::kReject, {}, counts);
  check_csr_invariants(csr);
  CHECK(csr.row_ptr == std::vector<int32_t>{0, 0, 2, 2, 3, 3});
  CHECK(csr.col_idx == std::vector<int32_t>{0, 2, 1});
  CHECK(csr.values == std::vector<float>{2.0f, 1.0f, 3.0f});

  Csr empty;
  empty.rows = 2;
  empty.cols = 2;
  empty.row_ptr = {0, 0, 0};
  canonicalize_csr_rows(empty, DuplicatePolicy::kReject, {}, counts);
  check_csr_invariants(empty);
  CHECK(empty.nnz() == 0);
}

}  // namespace
}  // namespace spmmc
