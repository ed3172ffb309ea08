#include "compiler/planning/small_n_dispatch.h"

#include "tests/test_util.h"

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

TEST_CASE("small-n dispatch: half of --n without a measurement", "[planning][small-n]") {
  CHECK(choose_generic_below_n(4096, std::nullopt, std::nullopt).generic_below_n == 2048);
  CHECK(choose_generic_below_n(6272, std::nullopt, 0.5).generic_below_n == 3136);  // one time alone is no measurement
  CHECK(choose_generic_below_n(1, std::nullopt, std::nullopt).generic_below_n == 1);
  CHECK(choose_generic_below_n(3, std::nullopt, std::nullopt).generic_below_n == 1);
  CHECK_THAT(choose_generic_below_n(64, std::nullopt, std::nullopt).why, Catch::Contains("not measured"));
}

TEST_CASE("small-n dispatch: where the generic kernel's time in proportion to n meets the kernel's", "[planning][small-n]") {
  // Measured on an H100 (mbnet contraction_1x1_5 at n = 6272): 0.0239 ms against 0.0386 ms.
  const SmallNDispatch d = choose_generic_below_n(6272, 0.0239, 0.0386);
  CHECK(d.generic_below_n == 3883);  // floor(6272 x 0.0239 / 0.0386)
  CHECK_THAT(d.why, Catch::Contains("measured at n = 6272") && Catch::Contains("3883"));
  CHECK(choose_generic_below_n(100, 0.01, 1.0).generic_below_n == 1);    // a far faster kernel: at least 1
  CHECK(choose_generic_below_n(100, 2.0, 1.0).generic_below_n == 100);   // a slower one: at most n
  CHECK(choose_generic_below_n(4096, 1.0, 2.0).generic_below_n == 2048);
  CHECK_THROWS_AS(choose_generic_below_n(0, std::nullopt, std::nullopt), InternalError);
  CHECK_THROWS_AS(choose_generic_below_n(64, 0.0, 1.0), InternalError);
}

}  // namespace
}  // namespace spmmc
