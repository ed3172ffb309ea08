#include "compiler/planning/target.h"

#include "tests/test_util.h"

namespace spmmc {
namespace {

TEST_CASE("targets: the bundled descriptions load", "[target]") {
  const auto names = list_targets();
  CHECK(std::find(names.begin(), names.end(), "h100") != names.end());
  for (const auto& name : names) {
    INFO(name);
    const Target t = load_target(name);
    CHECK(t.name == name);
    CHECK(t.warp_size == 32);
  }
  const Target h100 = load_target("h100");
  CHECK(h100.arch == "sm_90");
  CHECK(h100.sm_count == 132);
  CHECK(h100.registers_per_sm == 65536);
  CHECK(target_for_arch("sm_90").name == "h100");
  CHECK(target_for_arch("sm_75").name == "rtx2080ti");
}

TEST_CASE("targets: unknown names and arches are usage errors listing what exists", "[target][errors]") {
  const UserError name = test::expect_user_error([] { load_target("h200x"); });
  CHECK(name.code() == ExitCode::kUsage);
  CHECK_THAT(name.message(), Catch::Contains("h100"));
  const UserError arch = test::expect_user_error([] { target_for_arch("sm_10"); });
  CHECK(arch.code() == ExitCode::kUsage);
  CHECK_THAT(arch.message(), Catch::Contains("sm_90"));
}

TEST_CASE("targets: malformed descriptions are data errors naming the field", "[target][errors]") {
  const std::string good = test::read_file(std::string(SPMMC_TEST_DATA) + "/targets/lo-spmm-fig3.json");
  CHECK(parse_target(good, "t.json").sm_count == 8);
  const struct {
    std::string from, to, part;
  } cases[] = {
      {"\"sm_count\": 8", "\"sm_count\": 0", "'sm_count' must be a positive integer"},
      {"\"sm_count\": 8,", "", "'sm_count' is missing"},
      {"\"warp_size\": 2", "\"warp_size\": \"2\"", "'warp_size' must be a positive integer"},
      {"\"arch\": \"toy\"", "\"arch\": \"\"", "'arch' must be a non-empty string"},
      {"\"max_registers_per_block\": 24", "\"max_registers_per_block\": 48", "exceeds registers_per_sm"},
      {"{", "[", "invalid JSON"},
  };
  for (const auto& c : cases) {
    INFO(c.part);
    std::string text = good;
    const size_t at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    const UserError e = test::expect_user_error([&] { parse_target(text, "t.json"); });
    CHECK(e.code() == ExitCode::kDataError);
    CHECK(e.where().file == "t.json");
    CHECK_THAT(e.message(), Catch::Contains(c.part));
  }
}

}  // namespace
}  // namespace spmmc
