#include "compiler/planning/matrix_stats.h"

#include "tests/test_util.h"

namespace spmmc {
namespace {

TEST_CASE("stats: hand-computed small case", "[stats]") {
  // 4x5, rows of length 2, 0, 3, 1; column 4 empty.
  const Csr a = test::csr_from_dense(4, 5,
                                     {1, 0, -4, 0, 0,  //
                                      0, 0, 0, 0, 0,   //
                                      2, 3, 1, 0, 0,   //
                                      0, 0, 0, 0.5f, 0});
  const MatrixStats s = compute_matrix_stats(a);
  CHECK(s.nnz == 6);
  CHECK(s.density == Approx(0.3));
  CHECK(s.sparsity == Approx(0.7));
  CHECK(s.row_lengths.min == 0);
  CHECK(s.row_lengths.max == 3);
  CHECK(s.row_lengths.mean == Approx(1.5));
  CHECK(s.row_lengths.std == Approx(std::sqrt(1.25)));
  CHECK(s.row_lengths.empty == 1);
  CHECK(s.row_lengths.p50 == 1);
  CHECK(s.row_lengths.p90 == 3);
  CHECK(s.col_lengths.empty == 1);
  CHECK(s.col_lengths.max == 2);
  CHECK(s.row_length_histogram == std::vector<int64_t>{1, 1, 2});  // {0}, {1}, {2,3}
  CHECK(s.min_abs_value == 0.5f);
  CHECK(s.max_abs_value == 4.0f);
}

}  // namespace
}  // namespace spmmc
