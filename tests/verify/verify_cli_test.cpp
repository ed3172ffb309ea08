// spmmc verify end to end: kernels written by `spmmc compile` (1, 2 and 4 columns per thread, one
// kernel or several) verify (exit 0), corrupted copies are refused (exit 65, file:line:column
// diagnostics), the JSON report, the read options (a .smtx with --seed), missing files (66) and
// usage errors (64).
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/test_util.h"
#include "tests/verify/verify_test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

struct Compiled {
  test::TempDir dir;
  fs::path weights, cu;
  nlohmann::json report;
};

// The 64 x 48 matrix of these tests, written to c.weights.
void write_weights(Compiled& c) {
  c.weights = c.dir.path / "a.mtx";
  const auto r = run_spmmc({"gen", "uniform", "--rows", "64", "--cols", "48", "--sparsity", "0.8", "--seed", "3", "-q", "-o",
                            c.weights.string()});
  REQUIRE(r.exit_code == 0);
}

// That matrix compiled with tiles of 8 rows (`tile`: M1 x N1 x V).
void compile(Compiled& c, const std::vector<std::string>& extra = {}, const std::string& tile = "8x32") {
  write_weights(c);
  std::vector<std::string> args = {"compile", c.weights.string(), "--n", "64", "--name", "layer0", "--tile", tile,
                                   "-o", (c.dir.path / "out").string(), "--quiet", "--reproducible"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_spmmc(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  c.cu = c.dir.path / "out" / "layer0.cu";
  c.report = nlohmann::json::parse(test::read_file(c.dir.path / "out" / "layer0.json"));
}

TEST_CASE("verify cli: a compiled kernel matches, with a one-line summary", "[verify][cli]") {
  Compiled c;
  compile(c);
  const auto r = run_spmmc({"verify", c.cu.string(), "--against", c.weights.string()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::StartsWith("spmmc verify: " + c.cu.string() + " matches a.mtx: 64 x 48, "));
  CHECK_THAT(r.out, Catch::Contains("8 tile functions, 1 column per thread"));
  const auto per_tile = run_spmmc({"verify", c.cu.string(), "--against", c.weights.string(), "--per-tile"});
  CHECK(per_tile.exit_code == 0);
  CHECK_THAT(per_tile.out, Catch::Contains("statements"));
  CHECK_THAT(per_tile.out, Catch::Contains("\nspmmc_tile_7 "));
}

TEST_CASE("verify cli: kernels with 1 2 and 4 columns per thread match and a lane mix does not", "[verify][cli]") {
  for (const auto& [tile, lanes] : std::vector<std::pair<std::string, int>>{{"8x64", 1}, {"8x128x2", 2}, {"16x256x4", 4}}) {
    INFO("--tile " << tile);
    Compiled c;
    compile(c, {}, tile);
    const auto r = run_spmmc({"verify", c.cu.string(), "--against", c.weights.string(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["match"] == true);
    CHECK(j["columns"]["cols_per_thread"] == lanes);
    CHECK(j["info"]["cols_per_thread"] == lanes);
    CHECK(j["columns"]["n1"] == c.report["choice"]["n1"]);
    CHECK(j["columns"]["threads"] == c.report["choice"]["n1"].get<int>() / lanes);
    CHECK(j["totals"]["fmas"] == c.report["kernel"]["fmas"].get<int64_t>() * lanes);
    CHECK(j["totals"]["loads"] == c.report["kernel"]["loads_per_thread"]);
    CHECK(j["code_nnz"] == c.report["input"]["nnz"]);
    if (lanes == 1) continue;
    // Lane 1 of the first product multiplies lane 0 of B.
    const std::string cu = test::read_file(c.cu);
    const size_t lane1 = cu.find(",x1,", cu.find("fma.rn.f32", cu.find("void spmmc_tile_0(")));
    REQUIRE(lane1 != std::string::npos);
    const fs::path bad = c.cu.parent_path() / "layer0_mixed.cu";
    test::write_file(bad, cu.substr(0, lane1) + ",x0," + cu.substr(lane1 + 4));
    const auto m = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
    CHECK(m.exit_code == 65);
    CHECK_THAT(m.err, Catch::Contains(bad.string() + ":"));
    CHECK_THAT(m.err, Catch::Contains("the lanes are mixed"));
  }
}

TEST_CASE("verify cli: the JSON report", "[verify][cli]") {
  Compiled c;
  compile(c);
  const auto r = run_spmmc({"verify", c.cu.string(), "--against", c.weights.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "spmmc.verify/1");
  CHECK(j["match"] == true);
  CHECK(j["parsed"] == true);
  CHECK(j["analyzed"] == true);
  CHECK(j["kernel"] == "layer0_kernel_0");
  CHECK(j["weights_shape"]["rows"] == 64);
  CHECK(j["weights_shape"]["cols"] == 48);
  CHECK(j["weights_shape"]["nnz"] == c.report["input"]["nnz"]);
  CHECK(j["weights_shape"]["sha256"] == c.report["input"]["weights_sha256"]);
  CHECK(j["info"]["weights_sha256"] == c.report["input"]["weights_sha256"]);
  CHECK(j["info"]["m1"] == 8);
  CHECK(j["info"]["cols_per_thread"] == 1);
  CHECK(j["entry_point"] == "layer0");
  CHECK(j["columns"]["cols_per_thread"] == 1);
  CHECK(j["generic_path"]["row_ptr"] == 65);
  CHECK(j["code_nnz"] == c.report["input"]["nnz"]);
  CHECK(j["rows_written"] == 64);
  CHECK(j["total_differences"] == 0);
  CHECK(j["differences"].empty());
  CHECK(j["grid_x"] == c.report["kernel"]["tiles"]);
  // The kernels in launch order ("kernel" is the first, "grid_x" their total): one here.
  REQUIRE(j.contains("kernels"));
  REQUIRE(j["kernels"].size() == c.report["kernel"]["kernels"].get<size_t>());
  REQUIRE(j["kernels"].size() == 1);
  CHECK(j["kernels"][0]["function"] == "layer0_kernel_0");
  CHECK(j["kernels"][0]["line"] > 0);
  CHECK(j["kernels"][0]["grid_x"] == c.report["kernel"]["tiles"]);
  CHECK(j["kernels"][0]["cases"] == c.report["kernel"]["tiles"]);
  CHECK(j["kernels"][0]["waits_for_previous"] == true);
  CHECK(j["totals"]["tiles"] == c.report["kernel"]["tiles"]);
  CHECK(j["totals"]["fmas"] == c.report["kernel"]["fmas"]);
  CHECK(j["totals"]["loads"] == c.report["kernel"]["loads_per_thread"]);
  REQUIRE(j["tiles"].size() == c.report["kernel"]["tiles"].get<size_t>());
  for (const auto& t : j["tiles"]) {
    for (const char* key : {"function", "line", "blocks", "rows", "statements", "loads", "fmas", "dead_loads"})
      CHECK(t.contains(key));
    CHECK(t["blocks"].size() == 1);
  }
  for (const char* key : {"read_weights", "parse", "analyze", "compare"}) CHECK(j["seconds"].contains(key));
}

TEST_CASE("verify cli: a file of the generic family matches, a changed weight, an added kernel or a row twice does not",
          "[verify][cli]") {
  Compiled c;
  write_weights(c);
  const auto compiled = run_spmmc({"compile", c.weights.string(), "--n", "64", "--name", "layer0", "--family", "generic", "-o",
                                   (c.dir.path / "out").string(), "--quiet"});
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  c.cu = c.dir.path / "out" / "layer0.cu";
  const auto r = run_spmmc({"verify", c.cu.string(), "--against", c.weights.string()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("matches a.mtx: 64 x 48, "));
  CHECK_THAT(r.out, Catch::Contains("the generic family"));
  const std::string cu = test::read_file(c.cu);
  const fs::path bad = c.cu.parent_path() / "layer0_bad.cu";
  // One weight's bits changed in spmmc_weight_bits.
  const size_t bits = cu.find("0x", cu.find("spmmc_weight_bits[] = {"));
  REQUIRE(bits != std::string::npos);
  std::string changed = cu;
  changed[bits + 2] = changed[bits + 2] == '3' ? 'b' : '3';  // the sign and top exponent bits
  test::write_file(bad, changed);
  const auto w = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
  CHECK(w.exit_code == 65);
  CHECK_THAT(w.err, Catch::Contains("error: spmmc_weight_bits[0] is"));
  // A __global__ function besides the generic kernel would run unchecked: refused.
  const std::string extra = "__global__ void layer0_extra(const float* B, float* C, int64_t n) { C[0] = B[0] + n; }\n";
  test::write_file(bad, test::replace_first(cu, "extern \"C\" cudaError_t layer0(", extra + "extern \"C\" cudaError_t layer0("));
  const auto k = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
  CHECK(k.exit_code == 65);
  CHECK_THAT(k.err, Catch::Contains("the __global__ function layer0_extra besides the generic kernels"));
  // The rows' order with its first row twice (and so some row never written): refused.
  const std::string order = "spmmc_generic_order[] = {";
  const size_t at = cu.find(order);
  REQUIRE(at != std::string::npos);
  const size_t first = at + order.size(), comma = cu.find(',', first), second = cu.find_first_not_of(' ', comma + 1),
               second_end = cu.find_first_of(",}", second);
  const std::string row = cu.substr(first, comma - first);
  test::write_file(bad, cu.substr(0, second) + row + cu.substr(second_end));
  const auto o = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
  CHECK(o.exit_code == 65);
  CHECK_THAT(o.err, Catch::Contains("error: spmmc_generic_order[1] is row " + row + " again (also element 0)"));
}

TEST_CASE("verify cli: A's arrays on the host are read from their bytes, and the copy's table pairs each with its own",
          "[verify][cli][arrays]") {
  Compiled c;
  write_weights(c);
  for (const char* family : {"generic", "balanced", "unrolled"}) {
    INFO("--family " << family);
    const fs::path out = c.dir.path / family;
    const auto compiled = run_spmmc({"compile", c.weights.string(), "--n", "64", "--name", "layer0", "--family", family,
                                     "--arrays", "host", "-o", out.string(), "--quiet"});
    INFO(compiled.err);
    REQUIRE(compiled.exit_code == 0);
    const auto r = run_spmmc({"verify", (out / "layer0.cu").string(), "--against", c.weights.string()});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("matches a.mtx: 64 x 48, "));
  }
  const fs::path cu = c.dir.path / "generic" / "layer0.cu";
  const std::string text = test::read_file(cu);
  const fs::path bad = cu.parent_path() / "layer0_bad.cu";
  const auto refused = [&](const std::string& changed, const std::string& message) {
    test::write_file(bad, changed);
    const auto v = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
    INFO(v.err);
    CHECK(v.exit_code == 65);
    CHECK_THAT(v.err, Catch::Contains(message));
  };
  // The first 64 bytes of the weights (their first line) replaced by as many 'A's: 0x41414141 is 12.07,
  // no weight of this matrix.
  const size_t line = text.find('\n', text.find("const char* const spmmc_weight_bits_host[] = {")) + 1;
  refused(text.substr(0, line) + "\"" + std::string(64, 'A') + "\"" + text.substr(text.find('\n', line)),
          "error: spmmc_weight_bits[0] is");
  // The table copying one array's bytes into another, or leaving one out.
  refused(test::replace_first(text, "{&spmmc_col_idx, spmmc_col_idx_host,", "{&spmmc_col_idx, spmmc_weight_bits_host,"),
          "spmmc_host_arrays copies spmmc_weight_bits_host into spmmc_col_idx");
  refused(test::replace_first(text, "    {&spmmc_col_idx, spmmc_col_idx_host, sizeof(spmmc_col_idx)},\n", ""),
          "spmmc_col_idx_host is not in spmmc_host_arrays: spmmc_col_idx would keep zeros");
  // Bytes of another size than the array's.
  refused(test::replace_first(text, "const char* const spmmc_col_idx_host[] = {\n", "const char* const spmmc_col_idx_host[] = {\n\"abcd\"\n"),
          "but spmmc_col_idx_host holds");
}

TEST_CASE("verify cli: a corrupted copy exits 65 naming the difference", "[verify][cli]") {
  Compiled c;
  compile(c);
  const std::string cu = test::read_file(c.cu);
  const fs::path bad = c.cu.parent_path() / "layer0_bad.cu";
  // The line of spmmc_tile_3's PTX that stores one row of C.
  const size_t store = cu.find(",%1;st.global", cu.find("void spmmc_tile_3("));
  REQUIRE(store != std::string::npos);
  const size_t line_start = cu.rfind('\n', store) + 1;
  const std::string line = cu.substr(line_start, cu.find('\n', store) + 1 - line_start);
  test::write_file(bad, test::replace_first(cu, line, ""));
  const auto r = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
  CHECK(r.exit_code == 65);
  CHECK_THAT(r.err, Catch::Contains(bad.string() + ":"));
  CHECK_THAT(r.err, Catch::Contains(": error: row "));
  CHECK_THAT(r.err, Catch::Contains("of C is never written"));
  CHECK_THAT(r.out, Catch::Contains("does not match a.mtx: 1 difference, 1 row of C differing"));
  const auto j = run_spmmc({"verify", bad.string(), "--against", c.weights.string(), "--json"});
  CHECK(j.exit_code == 65);
  const auto report = nlohmann::json::parse(j.out);
  CHECK(report["match"] == false);
  CHECK(report["total_differences"] == 1);
  REQUIRE(report["differences"].size() == 1);
  CHECK(report["differences"][0]["line"].get<int>() > 0);
  CHECK_THAT(report["differences"][0]["message"].get<std::string>(), Catch::Contains("never written"));
  // Truncated: Clang's errors, file:line:column.
  test::write_file(bad, cu.substr(0, cu.size() / 3));
  const auto t = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
  CHECK(t.exit_code == 65);
  CHECK_THAT(t.err, Catch::Contains(": error: expected"));
  CHECK_THAT(t.out, Catch::Contains("does not parse"));
  CHECK_THAT(t.err, !Catch::Contains("errors generated"));
  // --max-errors bounds the details, not the count.
  const auto other = c.dir.path / "b.mtx";
  REQUIRE(run_spmmc({"gen", "uniform", "--rows", "64", "--cols", "48", "--sparsity", "0.8", "--seed", "4", "-q", "-o",
                     other.string()}).exit_code == 0);
  const auto m = run_spmmc({"verify", c.cu.string(), "--against", other.string(), "--max-errors", "3"});
  CHECK(m.exit_code == 65);
  CHECK_THAT(m.err, Catch::Contains("generated for other weights"));
  CHECK_THAT(m.err, Catch::Contains("more differences not shown (--max-errors)"));
}

TEST_CASE("verify cli: a kernel split by --fmas-per-kernel matches, a wrong launch table does not", "[verify][cli]") {
  Compiled c;
  compile(c, {"--fmas-per-kernel", "64"});
  const std::string cu = test::read_file(c.cu);
  REQUIRE(cu.find("layer0_kernel_2(") != std::string::npos);
  const auto r = run_spmmc({"verify", c.cu.string(), "--against", c.weights.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["match"] == true);
  CHECK(j["kernel"] == "layer0_kernel_0");
  CHECK(j["grid_x"] == c.report["kernel"]["tiles"]);
  REQUIRE(j.contains("kernels"));
  REQUIRE(j["kernels"].size() == c.report["kernel"]["kernels"].get<size_t>());
  int64_t blocks = 0;
  for (size_t k = 0; k < j["kernels"].size(); ++k) {
    const auto& kernel = j["kernels"][k];
    CHECK(kernel["function"] == fmt::format("layer0_kernel_{}", k));
    CHECK(kernel["grid_x"].get<int64_t>() > 0);
    CHECK(kernel["cases"] == kernel["grid_x"]);
    CHECK(kernel["waits_for_previous"] == true);
    blocks += kernel["grid_x"].get<int64_t>();
  }
  CHECK(blocks == j["grid_x"].get<int64_t>());
  // One block fewer for the first kernel: the last tile of it never runs.
  const std::string table = "spmmc_kernel_tiles[spmmc_kernel_count] = {";
  const size_t at = cu.find(table);
  REQUIRE(at != std::string::npos);
  const size_t first = at + table.size();
  const int tiles = std::stoi(cu.substr(first));
  const fs::path bad = c.cu.parent_path() / "layer0_table.cu";
  test::write_file(bad, cu.substr(0, first) + std::to_string(tiles - 1) + cu.substr(cu.find(',', first)));
  const auto m = run_spmmc({"verify", bad.string(), "--against", c.weights.string()});
  CHECK(m.exit_code == 65);
  CHECK_THAT(m.err, Catch::Contains(fmt::format("{}:{}:{}: error: spmmc_kernel_tiles[0] is {}, but layer0_kernel_0 "
                                                "(spmmc_kernels[0]) has {} case",
                                                bad.string(), test::line_of(cu, first), test::column_of(cu, first), tiles - 1,
                                                tiles)));
  CHECK_THAT(m.err, Catch::Contains("of C is never written"));
}

TEST_CASE("verify cli: read options are the compile's (a .smtx with --seed)", "[verify][cli]") {
  test::TempDir dir;
  const fs::path smtx = dir.path / "t.smtx";
  REQUIRE(run_spmmc({"gen", "magnitude", "--rows", "48", "--cols", "40", "--sparsity", "0.85", "--seed", "5", "-q", "-o",
                     smtx.string()}).exit_code == 0);
  const auto compiled = run_spmmc({"compile", smtx.string(), "--seed", "7", "--n", "64", "--name", "t", "--tile", "16x32",
                                   "-o", dir.path.string(), "--quiet"});
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  const std::string cu = (dir.path / "t.cu").string();
  CHECK(run_spmmc({"verify", cu, "--against", smtx.string(), "--seed", "7"}).exit_code == 0);
  const auto wrong = run_spmmc({"verify", cu, "--against", smtx.string(), "--seed", "8"});
  CHECK(wrong.exit_code == 65);
  CHECK_THAT(wrong.err, Catch::Contains("generated for other weights"));
  CHECK_THAT(wrong.err, Catch::Contains("in the code but"));
}

TEST_CASE("verify cli: missing files exit 66, bad invocations 64", "[verify][cli]") {
  Compiled c;
  compile(c);
  const auto no_cu = run_spmmc({"verify", (c.dir.path / "absent.cu").string(), "--against", c.weights.string()});
  CHECK(no_cu.exit_code == 66);
  CHECK_THAT(no_cu.err, Catch::Contains("absent.cu: error: cannot open the emitted kernel"));
  const auto no_weights = run_spmmc({"verify", c.cu.string(), "--against", (c.dir.path / "absent.mtx").string()});
  CHECK(no_weights.exit_code == 66);
  CHECK_THAT(no_weights.err, Catch::Contains("absent.mtx"));
  const auto no_against = run_spmmc({"verify", c.cu.string()});
  CHECK(no_against.exit_code == 64);
  CHECK_THAT(no_against.err, Catch::Contains("--against"));
  CHECK(run_spmmc({"verify", "--against", c.weights.string()}).exit_code == 64);
  CHECK(run_spmmc({"verify", c.cu.string(), "--against", c.weights.string(), "--max-errors", "0"}).exit_code == 64);
  const auto help = run_spmmc({"verify", "--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::StartsWith("usage: spmmc verify NAME.cu --against WEIGHTS"));
  CHECK_THAT(run_spmmc({"--help"}).out, Catch::Contains("verify"));
}

}  // namespace
}  // namespace spmmc
