#include "compiler/common/synthesize_values.h"

#include <cmath>

#include "tests/test_util.h"

namespace spmmc {
namespace {

TEST_CASE("synthesis: deterministic, never zero, with the documented moments", "[synthesis]") {
  double sum = 0, sum_sq = 0, usum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const float v = synthesize_value(ValueKind::kNormal, 1, i / 500, i % 500);
    REQUIRE(v != 0.0f);
    REQUIRE(std::isfinite(v));
    sum += v;
    sum_sq += static_cast<double>(v) * v;
    const float u = synthesize_value(ValueKind::kUniform, 1, i / 500, i % 500);
    REQUIRE(u > -1.0f);
    REQUIRE(u < 1.0f);
    REQUIRE(u != 0.0f);
    usum += u;
  }
  CHECK(std::fabs(sum / n) < 0.01);
  CHECK(std::fabs(sum_sq / n - 1.0) < 0.01);
  CHECK(std::fabs(usum / n) < 0.01);
  CHECK(synthesize_value(ValueKind::kNormal, 9, 3, 4) == synthesize_value(ValueKind::kNormal, 9, 3, 4));
  CHECK(synthesize_value(ValueKind::kNormal, 9, 3, 4) != synthesize_value(ValueKind::kNormal, 10, 3, 4));
  CHECK(synthesize_value(ValueKind::kNormal, 9, 3, 4) != synthesize_value(ValueKind::kNormal, 9, 4, 3));
  CHECK(synthesize_value(ValueKind::kOnes, 9, 3, 4) == 1.0f);
}

TEST_CASE("synthesis: value kinds parse and print", "[synthesis]") {
  for (ValueKind k : {ValueKind::kNormal, ValueKind::kUniform, ValueKind::kOnes})
    CHECK(parse_value_kind(value_kind_name(k)) == k);
  CHECK(!parse_value_kind("gaussian"));
}

}  // namespace
}  // namespace spmmc
