// spmmc inspect on safetensors files: tensor listing, --tensor, exit codes.
#include <nlohmann/json.hpp>

#include "tests/test_util.h"

namespace spmmc {
namespace {

using test::run_spmmc;

const std::string kMulti = std::string(SPMMC_TEST_DATA) + "/safetensors/multi.safetensors";

TEST_CASE("cli: inspect a safetensors file without --tensor lists the tensors and exits 64", "[cli][safetensors]") {
  const auto r = run_spmmc({"inspect", kMulti});
  CHECK(r.exit_code == 64);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::StartsWith(kMulti + ": error: the file holds 6 tensors; pick one with --tensor NAME:\n"));
  for (const char* name : {"bias", "idx", "w_bf16", "w_f16", "w_f32", "w_f64"}) CHECK_THAT(r.err, Catch::Contains(name));
  CHECK_THAT(r.err, Catch::Contains("w_f32   F32    [3, 4]  yes"));
}

TEST_CASE("cli: inspect --tensor NAME reads that tensor", "[cli][safetensors]") {
  const auto r = run_spmmc({"inspect", kMulti, "--tensor", "w_f32"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("safetensors (F32 [3, 4]), tensor 'w_f32'"));
  CHECK_THAT(r.out, Catch::Contains("3 x 4"));
  CHECK_THAT(r.out, Catch::Contains("nnz           5"));

  const auto json = run_spmmc({"inspect", kMulti, "--tensor", "w_bf16", "--threshold", "0.2", "--json"});
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["format"] == "safetensors");
  CHECK(j["tensor"] == "w_bf16");
  CHECK(j["rows"] == 2);
  CHECK(j["cols"] == 3);
  CHECK(j["nnz"] == 3);  // 1, -3, 3.140625; 0.125 pruned
  CHECK(j["values"]["pruned_by_threshold"] == 1);
}

TEST_CASE("cli: inspect --tensor with an unknown or unusable name exits 65", "[cli][safetensors][errors]") {
  const auto nope = run_spmmc({"inspect", kMulti, "--tensor", "nope"});
  CHECK(nope.exit_code == 65);
  CHECK_THAT(nope.err, Catch::StartsWith(kMulti + ": error: no tensor named 'nope'"));
  const auto bias = run_spmmc({"inspect", kMulti, "--tensor", "bias"});
  CHECK(bias.exit_code == 65);
  CHECK_THAT(bias.err, Catch::StartsWith(kMulti + ":byte "));
  CHECK_THAT(bias.err, Catch::Contains("1-D"));
}

}  // namespace
}  // namespace spmmc
