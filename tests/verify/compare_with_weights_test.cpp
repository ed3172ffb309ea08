// compare_with_weights (verify/) on deliberately corrupted copies of an emitted kernel: each
// must be rejected, with the message naming the right entry, row or tile at the right place.
#include "verify/compare_with_weights.h"

#include <cmath>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

#include "compiler/sha256.h"
#include "tests/test_util.h"
#include "tests/verify/verify_test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

// 40 x 30, natural order in tiles of 8 rows: tile_k holds rows 8k .. 8k+7 as acc0 .. acc7.
// Row 8 has non-zeros; rows 33 and 38 are empty.
Csr base_matrix(uint32_t seed = 11) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::bernoulli_distribution present(0.3);
  return test::make_matrix(40, 30, [&](int32_t r, int32_t c) {
    const bool on = present(rng);
    const float v = value(rng);
    if (r == 33 || r == 38) return 0.0f;
    if (r == 8 && c == 2) return 0.75f;
    return on ? v : 0.0f;
  });
}

struct Fixture {
  test::TempDir dir;
  Csr a = base_matrix();
  test::EmittedFiles files = test::emit_kernel_files(dir.path, "vk", a, 8, ReorderMethod::kNone);

  // The start of tile_K's function in the text.
  size_t tile_start(int k) const {
    const size_t at = files.kernel.cu.find(fmt::format("void tile_{}(", k));
    REQUIRE(at != std::string::npos);
    return at;
  }
  // Writes `text` as a corrupted copy (beside the real header) and verifies it.
  test::Verified verify(const std::string& text) {
    const fs::path path = dir.path / "corrupt" / "vk.cu";
    fs::create_directories(path.parent_path());
    fs::copy_file(files.h, path.parent_path() / "vk.h", fs::copy_options::overwrite_existing);
    test::write_file(path, text);
    return test::verify_file(path, a);
  }
};

// The line of `text` holding offset `at`, without its newline.
std::string line_at(const std::string& text, size_t at) {
  const size_t start = text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) - start);
}

void check_rejected(const test::Verified& v) {
  INFO(v.messages);
  CHECK(v.code.analyzed);
  CHECK_FALSE(v.result.match);
  CHECK(v.result.total_differences > 0);
}

TEST_CASE("verify rejects: a weight changed by one ulp", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.files.kernel.cu;
  const size_t at = cu.find("fmaf(", f.tile_start(1)) + 5;
  const std::string literal = cu.substr(at, cu.find(", x", at) - at);  // e.g. -0x1.3c697ep-2f
  const float old_value = std::strtof(literal.c_str(), nullptr);
  const float new_value = std::nextafter(old_value, INFINITY);
  const std::string text = cu.substr(0, at) + fmt::format("{:a}f", new_value) + cu.substr(at + literal.size());
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK(v.result.total_differences == 1);
  REQUIRE(v.result.differences.size() == 1);
  const CodeDiagnostic& d = v.result.differences[0];
  CHECK_THAT(d.message, Catch::Contains(fmt::format("is {} in the code but {} in weights.mtx", hex_float(new_value),
                                                    hex_float(old_value))));
  CHECK_THAT(d.message, Catch::StartsWith("A("));
  CHECK(d.where.line == test::line_of(text, at));
  CHECK(d.where.column == 3);
}

TEST_CASE("verify rejects: a load of the wrong column", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.files.kernel.cu;
  // tile_1's second load: y = __ldg(b + K * n); load column 29 instead (or 28 when K is 29).
  const size_t load = cu.find("  y = __ldg(b + ", f.tile_start(1));
  const std::string original = line_at(cu, load);
  const std::string column = original.find("(b + 29 *") == std::string::npos ? "29" : "28";
  const std::string text = test::replace_first(cu, original, "  y = __ldg(b + " + column + " * n);", load);
  const test::Verified v = f.verify(text);
  check_rejected(v);
  INFO(v.messages);
  CHECK_THAT(v.messages, Catch::Contains(", " + column + ")"));
  CHECK_THAT(v.messages, Catch::Contains("missing: A("));
}

TEST_CASE("verify rejects: a load outside B", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.files.kernel.cu;
  const size_t load = cu.find("  y = __ldg(b + ", f.tile_start(2));
  const std::string text = test::replace_first(cu, line_at(cu, load), "  y = __ldg(b + 1000 * n);", load);
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("column 1000 is outside A, which has 30 columns in weights.mtx"));
}

TEST_CASE("verify rejects: a deleted FMA", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.files.kernel.cu;
  const size_t fma = cu.find("  acc", cu.find("x = __ldg", f.tile_start(2)));
  const std::string line = line_at(cu, fma);
  REQUIRE(line.find("fmaf(") != std::string::npos);
  const int slot = std::atoi(line.c_str() + line.find("acc") + 3);
  const int row = 16 + slot;
  const std::string text = test::replace_first(cu, line + "\n", "", fma);
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK(v.result.rows_differing == 1);
  CHECK_THAT(v.messages, Catch::Contains(fmt::format("row {} of A has {} non-zeros in weights.mtx, {} in", row,
                                                     f.a.row_length(row), f.a.row_length(row) - 1)));
  CHECK_THAT(v.messages, Catch::Contains(fmt::format("missing: A({}, ", row)));
  CHECK(v.result.code_nnz == f.a.nnz() - 1);
}

TEST_CASE("verify rejects: a duplicated FMA", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.files.kernel.cu;
  const size_t fma = cu.find("  acc", cu.find("x = __ldg", f.tile_start(3)));
  const std::string line = line_at(cu, fma);
  const int row = 24 + std::atoi(line.c_str() + line.find("acc") + 3);
  const std::string text = test::replace_first(cu, line + "\n", line + "\n" + line + "\n", fma);
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains(fmt::format("of C 2 times (first at {}:{}:3)", v.code.file, test::line_of(text, fma))));
  CHECK_THAT(v.messages, Catch::Contains(fmt::format("is multiplied into row {} of C", row)));
}

TEST_CASE("verify rejects: a store to the wrong row", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.files.kernel.cu, "c[8 * n] = acc0;", "c[9 * n] = acc0;");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("row 8 of C is never written (row 8 of A has"));
  CHECK_THAT(v.messages, Catch::Contains("row 9 of C is written 2 times (tile_1 in block 1"));
}

TEST_CASE("verify rejects: a removed store", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.files.kernel.cu, "  c[8 * n] = acc0;\n", "");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK(v.result.total_differences == 1);
  CHECK_THAT(v.messages, Catch::Contains("row 8 of C is never written (row 8 of A has"));
  CHECK_THAT(v.messages, Catch::Contains("acc0 of tile_1 sums its products but is never stored"));
  // An empty row's store removed: nothing to point at but the row.
  const std::string zero = test::replace_first(f.files.kernel.cu, "  c[33 * n] = acc1;\n", "");
  const test::Verified w = f.verify(zero);
  check_rejected(w);
  CHECK_THAT(w.messages, Catch::Contains("row 33 of C is never written\n"));
}

TEST_CASE("verify rejects: a case that calls the wrong tile", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.files.kernel.cu, "case 1: tile_1(", "case 1: tile_0(");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("row 0 of C is written 2 times (tile_0 in block 0"));
  CHECK_THAT(v.messages, Catch::Contains("tile_0 in block 1"));
  CHECK_THAT(v.messages, Catch::Contains("row 8 of C is never written (row 8 of A has"));
  CHECK_THAT(v.messages, Catch::Contains("tile_1 stores it here, but no block calls tile_1"));
  REQUIRE(v.code.uncalled_tiles.size() == 1);
  CHECK(v.code.uncalled_tiles[0].function == "tile_1");
}

TEST_CASE("verify rejects: a case label no block takes", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.files.kernel.cu, "case 2: tile_2(", "case 99: tile_2(");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("row 16 of C is never written"));
  REQUIRE_FALSE(v.code.notes.empty());
  CHECK_THAT(v.code.notes[0], Catch::Contains("case 99 is never taken: the grid has 5 blocks along x"));
}

TEST_CASE("verify rejects: a missing break runs the next tile too", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.files.kernel.cu, "case 1: tile_1(B + col, C + col, n); break;",
                                               "case 1: tile_1(B + col, C + col, n);");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("row 16 of C is written 2 times (tile_2 in block 1"));
}

TEST_CASE("verify rejects: code generated for other weights", "[verify][corrupt]") {
  Fixture f;
  const Csr other = base_matrix(12);
  const test::Verified v = test::verify_file(f.files.cu, other, 10);
  check_rejected(v);
  CHECK(v.result.differences.size() == 10);
  CHECK(v.result.total_differences > 10);
  REQUIRE(v.result.differences.size() > 1);
  CHECK_THAT(v.result.differences[0].message, Catch::Contains("the info object says nnz = "));
  CHECK_THAT(v.messages,
             Catch::Contains(fmt::format("weights_sha256 is '{}', but weights.mtx hashes to {}: the code was generated for "
                                         "other weights",
                                         weights_sha256(f.a), weights_sha256(other))));
  CHECK_THAT(v.messages, Catch::Contains("row 0 of A has"));
  // The same topology, one value one ulp off.
  Csr nudged = f.a;
  nudged.values[5] = std::nextafter(nudged.values[5], 10.0f);
  const test::Verified w = test::verify_file(f.files.cu, nudged);
  check_rejected(w);
  CHECK(w.result.total_differences == 2);
  CHECK_THAT(w.messages, Catch::Contains(fmt::format("in the code but {} in weights.mtx", hex_float(nudged.values[5]))));
}

TEST_CASE("verify rejects: an edited info object", "[verify][corrupt]") {
  Fixture f;
  const std::string rows = test::replace_first(f.files.kernel.cu, "\"vk\",\n    40,", "\"vk\",\n    41,");
  const test::Verified v = f.verify(rows);
  check_rejected(v);
  CHECK(v.result.total_differences == 1);
  CHECK_THAT(v.messages, Catch::Contains("the info object says m = 41, but weights.mtx has 40 rows"));
  const std::string hash = test::replace_first(f.files.kernel.cu, "\"" + weights_sha256(f.a) + "\"", "\"0123\"");
  const test::Verified w = f.verify(hash);
  check_rejected(w);
  CHECK_THAT(w.messages, Catch::Contains("weights_sha256 is '0123'"));
  CHECK_THAT(w.messages, Catch::Contains("the info object was edited"));
}

TEST_CASE("verify rejects: a launch grid of the wrong size", "[verify][corrupt]") {
  Fixture f;
  const std::string text =
      test::replace_first(f.files.kernel.cu, "grid(static_cast<unsigned>(spmmc_a_tiles)", "grid(static_cast<unsigned>(spmmc_a_tiles - 1)");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK(v.code.grid_x == 4);
  CHECK_THAT(v.messages, Catch::Contains("the info object says a_tiles = 5, but the launch has 4 blocks along x"));
  CHECK_THAT(v.messages, Catch::Contains("row 32 of C is never written"));
  CHECK_THAT(v.messages, Catch::Contains("tile_4 stores it here, but no block calls tile_4"));
}

}  // namespace
}  // namespace spmmc
