#include "compiler/assemble_csr.h"

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

}  // namespace
}  // namespace spmmc
