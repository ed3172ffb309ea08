// compare_with_weights (verify/) on deliberately corrupted copies of an emitted kernel (its inline
// PTX, dispatch, launch table, column mapping, info object, generic-path arrays), with 1, 2 and 4
// columns per thread, in one kernel or several: each must be rejected, with the message naming
// the right entry, row, lane, tile or kernel at the right place.
#include "verify/compare_with_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "compiler/common/sha256.h"
#include "tests/test_util.h"
#include "tests/verify/verify_test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

uint32_t bits_of(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// 40 x 30, natural order in tiles of 8 rows: spmmc_tile_k holds rows 8k .. 8k+7 in slots 0 .. 7,
// slot s lane l accumulating in register a(s V + l). Row 8 has non-zeros; rows 33 and 38 are empty.
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

// FMAs per kernel that split base_matrix() into kernels of two tiles (the last: what is left).
int64_t two_tiles_per_kernel() {
  const Csr a = base_matrix();
  return std::max(a.row_ptr[16], std::max(a.row_ptr[32] - a.row_ptr[16], a.row_ptr[40] - a.row_ptr[32]));
}

struct Fixture {
  // V = lanes; one kernel, or kernels of at most `fmas_per_kernel` FMAs.
  explicit Fixture(int32_t lanes = 1, int64_t fmas_per_kernel = 0, int32_t k_parts = 1)
      : v(lanes),
        files(test::emit_kernel_files(dir.path, "vk", a, 8, ReorderMethod::kNone, 32 * lanes, lanes, fmas_per_kernel,
                                      k_parts)) {}

  int32_t v;
  test::TempDir dir;
  Csr a = base_matrix();
  test::EmittedFiles files;

  const std::string& cu() const { return files.kernel.cu; }
  // The start of spmmc_tile_K's function in the text.
  size_t tile_start(int k) const {
    const size_t at = cu().find(fmt::format("void spmmc_tile_{}(", k));
    REQUIRE(at != std::string::npos);
    return at;
  }
  // The start of the definition of the unrolled kernel vk_kernel_J.
  size_t kernel_start(int j) const { return test::kernel_start(cu(), fmt::format("vk_kernel_{}", j)); }
  // The offset of element `j` of spmmc_kernel_tiles's initialiser.
  size_t kernel_tiles_element(size_t j) const {
    size_t at = find("spmmc_kernel_tiles[spmmc_kernel_count] = {", 0);
    at = cu().find('{', at) + 1;
    for (size_t i = 0; i < j; ++i) at = cu().find_first_not_of(" \n", cu().find(',', at) + 1);
    return at;
  }
  // The offset of `what` at or after `from`.
  size_t find(const std::string& what, size_t from) const {
    const size_t at = cu().find(what, from);
    INFO("looking for '" << what << "'");
    REQUIRE(at != std::string::npos);
    return at;
  }
  // Writes `text` as a corrupted copy (beside the real header) and verifies it.
  test::Verified verify(const std::string& text, size_t max_reported = 1000) {
    const fs::path path = dir.path / "corrupt" / "vk.cu";
    fs::create_directories(path.parent_path());
    fs::copy_file(files.h, path.parent_path() / "vk.h", fs::copy_options::overwrite_existing);
    test::write_file(path, text);
    return test::verify_file(path, a, max_reported);
  }
};

// The PTX instruction of `text` starting at `at`, with its ';'.
std::string instruction_at(const std::string& text, size_t at) { return text.substr(at, text.find(';', at) + 1 - at); }

// The line of `text` holding offset `at`, with its newline.
std::string line_at(const std::string& text, size_t at) {
  const size_t start = text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) + 1 - start);
}

// The number after `prefix` at `at` ("a12" -> 12 for prefix "a").
int number_after(const std::string& text, size_t at) { return std::atoi(text.c_str() + at); }

void check_rejected(const test::Verified& v) {
  INFO(v.messages);
  CHECK(v.code.analyzed);
  CHECK_FALSE(v.result.match);
  CHECK(v.result.total_differences > 0);
}

TEST_CASE("verify rejects: a weight changed by one ulp", "[verify][corrupt]") {
  for (const int32_t lanes : {1, 2, 4}) {
    INFO("V = " << lanes);
    Fixture f(lanes);
    const std::string& cu = f.cu();
    const size_t at = f.find("fma.rn.f32 ", f.tile_start(1));
    const size_t literal = cu.find(",0f", at) + 1;
    const uint32_t bits = static_cast<uint32_t>(std::stoul(cu.substr(literal + 2, 8), nullptr, 16));
    float old_value = 0.0f;
    std::memcpy(&old_value, &bits, sizeof old_value);
    const float new_value = std::nextafter(old_value, INFINITY);
    const std::string text = cu.substr(0, literal) + test::ptx_float(new_value) + cu.substr(literal + 10);
    const test::Verified v = f.verify(text);
    check_rejected(v);
    INFO(v.messages);
    CHECK(v.result.total_differences == 1);
    REQUIRE(v.result.differences.size() == 1);
    const CodeDiagnostic& d = v.result.differences[0];
    CHECK_THAT(d.message, Catch::Contains(fmt::format("is {} in the code but {} in weights.mtx{}", hex_float(new_value),
                                                      hex_float(old_value), lanes > 1 ? " (lane 0)" : "")));
    CHECK_THAT(d.message, Catch::StartsWith("A("));
    CHECK(d.where.line == test::line_of(text, at));
    CHECK(d.where.column == test::column_of(text, at));
  }
}

TEST_CASE("verify rejects: a load of the wrong column", "[verify][corrupt]") {
  for (const int32_t lanes : {1, 2}) {
    INFO("V = " << lanes);
    Fixture f(lanes);
    const std::string& cu = f.cu();
    // spmmc_tile_1's second load of B: mad.wide.u32 p1,%2,K,%0; load row 29 instead (or 28 when K is 29).
    const size_t at = f.find("mad.wide.u32 p1,%2,", f.tile_start(1));
    const std::string original = instruction_at(cu, at);
    REQUIRE_THAT(original, Catch::EndsWith(",%0;"));
    const std::string column = original == "mad.wide.u32 p1,%2,29,%0;" ? "28" : "29";
    const std::string text = test::replace_first(cu, original, "mad.wide.u32 p1,%2," + column + ",%0;", at);
    const test::Verified v = f.verify(text);
    check_rejected(v);
    INFO(v.messages);
    CHECK_THAT(v.messages, Catch::Contains(", " + column + ")"));
    CHECK_THAT(v.messages, Catch::Contains("missing: A("));
  }
}

TEST_CASE("verify rejects: a load outside B", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.cu();
  const size_t at = f.find("mad.wide.u32 p1,%2,", f.tile_start(2));
  const std::string text = test::replace_first(cu, instruction_at(cu, at), "mad.wide.u32 p1,%2,1000,%0;", at);
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_2 loads row 1000 of B, but B has 30 rows (A has 30 columns in weights.mtx)"));
  CHECK_THAT(v.messages, Catch::Contains("column 1000 is outside A, which has 30 columns in weights.mtx"));
}

TEST_CASE("verify rejects: a deleted FMA", "[verify][corrupt]") {
  for (const int32_t lanes : {1, 2, 4}) {
    INFO("V = " << lanes);
    Fixture f(lanes);
    const std::string& cu = f.cu();
    const size_t fma = f.find("fma.rn.f32 a", f.find("ld.global", f.tile_start(2)));
    const int slot = number_after(cu, fma + 12) / lanes;
    const int row = 16 + slot;
    // The product's FMA in every lane: V consecutive instructions.
    size_t end = fma;
    for (int32_t lane = 0; lane < lanes; ++lane) end = cu.find(';', end) + 1;
    const std::string text = cu.substr(0, fma) + cu.substr(end);
    const test::Verified v = f.verify(text);
    check_rejected(v);
    INFO(v.messages);
    CHECK(v.result.rows_differing == 1);
    CHECK_THAT(v.messages, Catch::Contains(fmt::format("row {} of A has {} non-zeros in weights.mtx, {} in", row,
                                                       f.a.row_length(row), f.a.row_length(row) - 1)));
    CHECK_THAT(v.messages, Catch::Contains(fmt::format("missing: A({}, ", row)));
    CHECK_THAT(v.messages, !Catch::Contains("lane"));
    CHECK(v.result.code_nnz == f.a.nnz() - 1);
  }
  // One lane's FMA only: that lane differs.
  Fixture f(2);
  const std::string& cu = f.cu();
  const size_t lane0 = f.find("fma.rn.f32 a", f.find("ld.global", f.tile_start(2)));
  const size_t lane1 = cu.find(';', lane0) + 1;
  const int row = 16 + number_after(cu, lane1 + 12) / 2;
  const test::Verified v = f.verify(cu.substr(0, lane1) + cu.substr(cu.find(';', lane1) + 1));
  check_rejected(v);
  CHECK(v.result.rows_differing == 1);
  CHECK_THAT(v.messages, Catch::Contains(fmt::format("row {} of A has {} non-zeros in weights.mtx, {} in {} (lane 1)", row,
                                                     f.a.row_length(row), f.a.row_length(row) - 1, v.code.file)));
}

TEST_CASE("verify rejects: a duplicated FMA", "[verify][corrupt]") {
  for (const int32_t lanes : {1, 2}) {
    INFO("V = " << lanes);
    Fixture f(lanes);
    const std::string& cu = f.cu();
    const size_t fma = f.find("fma.rn.f32 a", f.find("ld.global", f.tile_start(3)));
    const std::string instruction = instruction_at(cu, fma);
    const int row = 24 + number_after(cu, fma + 12) / lanes;
    const std::string text = cu.substr(0, fma) + instruction + cu.substr(fma);
    const test::Verified v = f.verify(text);
    check_rejected(v);
    INFO(v.messages);
    // The first is where it was; the copy comes first in the text now.
    CHECK_THAT(v.messages, Catch::Contains(fmt::format("of C 2 times (first at {}:{}:{})", v.code.file,
                                                       test::line_of(text, fma), test::column_of(text, fma))));
    CHECK_THAT(v.messages, Catch::Contains(fmt::format("is multiplied into row {} of C", row)));
    if (lanes > 1) CHECK_THAT(v.messages, Catch::Contains("(lane 0)"));
  }
}

TEST_CASE("verify rejects: a store to the wrong row", "[verify][corrupt]") {
  for (const int32_t lanes : {1, 4}) {
    INFO("V = " << lanes);
    Fixture f(lanes);
    const size_t at = f.find(",%2,8,%1;st.global", f.tile_start(1));
    const std::string text = test::replace_first(f.cu(), ",%2,8,%1;", ",%2,9,%1;", at);
    const test::Verified v = f.verify(text);
    check_rejected(v);
    CHECK_THAT(v.messages, Catch::Contains("row 8 of C is never written (row 8 of A has"));
    CHECK_THAT(v.messages, Catch::Contains("row 9 of C is written 2 times (spmmc_tile_1 in block 1"));
  }
}

TEST_CASE("verify rejects: a removed store", "[verify][corrupt]") {
  for (const int32_t lanes : {1, 2}) {
    INFO("V = " << lanes);
    Fixture f(lanes);
    const std::string& cu = f.cu();
    const std::string text = test::replace_first(cu, line_at(cu, f.find(",%2,8,%1;st.global", f.tile_start(1))), "");
    const test::Verified v = f.verify(text);
    check_rejected(v);
    CHECK(v.result.total_differences == 1);
    CHECK_THAT(v.messages, Catch::Contains("row 8 of C is never written (row 8 of A has"));
    CHECK_THAT(v.messages, Catch::Contains("a0 of spmmc_tile_1 sums its products but is never stored"));
    // An empty row's store removed: nothing to point at but the row.
    const std::string zero = test::replace_first(cu, line_at(cu, f.find(",%2,33,%1;st.global", f.tile_start(4))), "");
    const test::Verified w = f.verify(zero);
    check_rejected(w);
    CHECK_THAT(w.messages, Catch::Contains("row 33 of C is never written\n"));
  }
  // One lane of a vector store dropped.
  Fixture f(2);
  const size_t at = f.find(",%2,8,%1;st.global.v2.f32", f.tile_start(1));
  const std::string store = instruction_at(f.cu(), f.cu().find("st.global", at));
  const std::string regs = store.substr(store.find('{') + 1, store.find('}') - store.find('{') - 1);  // "a0,a1"
  const std::string address = store.substr(store.find('['), store.find(']') + 1 - store.find('['));
  const std::string text =
      test::replace_first(f.cu(), store, "st.global.f32 " + address + "," + regs.substr(0, regs.find(',')) + ";", at);
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK(v.result.total_differences == 1);
  CHECK_THAT(v.messages, Catch::Contains("C(8, col + 1) is never written: spmmc_tile_1 stores lane 0 of row 8 only"));
}

TEST_CASE("verify rejects: a case that calls the wrong tile", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.cu(), "case 1: spmmc_tile_1(", "case 1: spmmc_tile_0(");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("row 0 of C is written 2 times (spmmc_tile_0 in block 0"));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_0 in block 1"));
  CHECK_THAT(v.messages, Catch::Contains("row 8 of C is never written (row 8 of A has"));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_1 stores it here, but no block calls spmmc_tile_1"));
  REQUIRE(v.code.uncalled_tiles.size() == 1);
  CHECK(v.code.uncalled_tiles[0].function == "spmmc_tile_1");
}

TEST_CASE("verify rejects: a case label no block takes", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.cu(), "case 2: spmmc_tile_2(", "case 99: spmmc_tile_2(");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("row 16 of C is never written"));
  REQUIRE_FALSE(v.code.notes.empty());
  CHECK_THAT(v.code.notes[0], Catch::Contains("case 99 of vk_kernel_0 is never taken: spmmc_kernels[0] launches it with 5 "
                                              "blocks along x"));
}

TEST_CASE("verify rejects: a missing break runs the next tile too", "[verify][corrupt]") {
  Fixture f;
  const std::string text =
      test::replace_first(f.cu(), "case 1: spmmc_tile_1(b, c, ld); break;", "case 1: spmmc_tile_1(b, c, ld);");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK_THAT(v.messages, Catch::Contains("row 16 of C is written 2 times (spmmc_tile_2 in block 1"));
}

TEST_CASE("verify rejects: code generated for other weights", "[verify][corrupt]") {
  Fixture f;
  const Csr other = base_matrix(12);
  const test::Verified v = test::verify_file(f.files.cu, other, 10);
  check_rejected(v);
  CHECK(v.result.differences.size() == 10);
  CHECK(v.result.total_differences > 10);
  CHECK_THAT(v.result.differences[0].message, Catch::Contains("the info object says nnz = "));
  const test::Verified all = test::verify_file(f.files.cu, other);
  CHECK(all.result.total_differences == v.result.total_differences);
  CHECK_THAT(all.messages,
             Catch::Contains(fmt::format("weights_sha256 is '{}', but weights.mtx hashes to {}: the code was generated for "
                                         "other weights",
                                         weights_sha256(f.a), weights_sha256(other))));
  CHECK_THAT(all.messages, Catch::Contains("spmmc_row_ptr[1] is "));
  CHECK_THAT(all.messages, Catch::Contains("row 0 of A has"));
  // The same topology, one value one ulp off: the FMA, the generic path's bits, the hash.
  Csr nudged = f.a;
  nudged.values[5] = std::nextafter(nudged.values[5], 10.0f);
  const test::Verified w = test::verify_file(f.files.cu, nudged);
  check_rejected(w);
  INFO(w.messages);
  CHECK(w.result.total_differences == 3);
  CHECK(w.result.rows_differing == 1);
  CHECK_THAT(w.messages, Catch::Contains(fmt::format("in the code but {} in weights.mtx", hex_float(nudged.values[5]))));
  CHECK_THAT(w.messages, Catch::Contains(fmt::format("spmmc_weight_bits[5] is 0x{:08x} ({}), but A(", bits_of(f.a.values[5]),
                                                     hex_float(f.a.values[5]))));
}

TEST_CASE("verify rejects: an edited info object", "[verify][corrupt]") {
  Fixture f(2);
  const std::string columns = test::replace_first(f.cu(), "spmmc_rows,\n    30,", "spmmc_rows,\n    31,");
  const test::Verified v = f.verify(columns);
  check_rejected(v);
  CHECK(v.result.total_differences == 1);
  CHECK_THAT(v.messages, Catch::Contains("the info object says k = 31, but weights.mtx has 30 columns"));
  const std::string rows = test::replace_first(f.cu(), "constexpr int spmmc_rows = 40;", "constexpr int spmmc_rows = 41;");
  const test::Verified r = f.verify(rows);
  check_rejected(r);
  CHECK(r.result.total_differences == 1);
  CHECK_THAT(r.messages, Catch::Contains("the info object says m = 41, but weights.mtx has 40 rows"));
  const std::string lanes = test::replace_first(f.cu(), "    spmmc_v,\n    spmmc_a_tiles,", "    1,\n    spmmc_a_tiles,");
  const test::Verified l = f.verify(lanes);
  check_rejected(l);
  CHECK(l.result.total_differences == 1);
  CHECK_THAT(l.messages, Catch::Contains("the info object says cols_per_thread = 1, but each thread of vk_kernel_0 computes "
                                         "2 columns (threadIdx.x * 2)"));
  const std::string name = test::replace_first(f.cu(), "\"vk\",\n", "\"vq\",\n");
  const test::Verified n = f.verify(name);
  check_rejected(n);
  CHECK_THAT(n.messages, Catch::Contains("the info object's name is 'vq', but the entry point (that launches the unrolled "
                                         "kernels) is 'vk'"));
  const std::string layout = test::replace_first(f.cu(), "\"row-major\",", "\"column-major\",");
  const test::Verified b = f.verify(layout);
  check_rejected(b);
  CHECK(b.result.total_differences == 1);
  CHECK_THAT(b.messages, Catch::Contains("the info object says b_layout = 'column-major', but the code is 'row-major'"));
  const std::string hash = test::replace_first(f.cu(), "\"" + weights_sha256(f.a) + "\"", "\"0123\"");
  const test::Verified w = f.verify(hash);
  check_rejected(w);
  CHECK_THAT(w.messages, Catch::Contains("weights_sha256 is '0123'"));
  CHECK_THAT(w.messages, Catch::Contains("the info object was edited"));
}

TEST_CASE("verify rejects: a launch grid of the wrong size", "[verify][corrupt]") {
  Fixture f;
  const std::string text = test::replace_first(f.cu(), "spmmc_kernel_tiles[spmmc_kernel_count] = {5};",
                                               "spmmc_kernel_tiles[spmmc_kernel_count] = {4};");
  const test::Verified v = f.verify(text);
  check_rejected(v);
  CHECK(v.code.grid_x == 4);
  CHECK_THAT(v.messages, Catch::Contains("the info object says a_tiles = 5, but the launches have 4 blocks along x in all"));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_kernel_tiles[0] is 4, but vk_kernel_0 (spmmc_kernels[0]) has 5 cases in its "
                                         "switch (blockIdx.x): the tiles of the last cases never run"));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_a_tiles is 5, but spmmc_kernel_tiles adds up to 4 blocks along x"));
  CHECK_THAT(v.messages, Catch::Contains("row 32 of C is never written"));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_4 stores it here, but no block calls spmmc_tile_4"));
}

TEST_CASE("verify rejects: a launch or column mapping that does not cover C", "[verify][corrupt]") {
  Fixture f(2);
  const std::string launch = "config.blockDim = dim3(spmmc_threads);";
  // Half the threads: columns skipped.
  const test::Verified half = f.verify(test::replace_first(f.cu(), launch, "config.blockDim = dim3(spmmc_threads / 2);"));
  check_rejected(half);
  CHECK(half.result.total_differences == 1);
  CHECK_THAT(half.messages, Catch::Contains("the launch has blocks of 16 threads of 2 columns each (32 columns), but col "
                                            "advances 64 per B-tile in vk_kernel_0: some columns of C are never computed"));
  // Twice the threads: more than the launch bounds allow, and B-tiles overlap.
  const test::Verified twice = f.verify(test::replace_first(f.cu(), launch, "config.blockDim = dim3(spmmc_threads * 2);"));
  check_rejected(twice);
  CHECK_THAT(twice.messages, Catch::Contains("threads of neighbouring B-tiles compute the same columns"));
  CHECK_THAT(twice.messages, Catch::Contains("the launch has 64 threads per block, more than vk_kernel_0's "
                                             "__launch_bounds__(32): it would fail to launch"));
  // One column per thread in the index, two in the PTX: lanes of another thread's columns.
  const test::Verified narrow = f.verify(test::replace_first(f.cu(), "static_cast<int64_t>(threadIdx.x) * spmmc_v",
                                                             "static_cast<int64_t>(threadIdx.x)"));
  check_rejected(narrow);
  CHECK_THAT(narrow.messages, Catch::Contains("stores C(0, col + 1), but a thread has 1 column (col .. col + 0): it writes "
                                              "another thread's column"));
  CHECK_THAT(narrow.messages, Catch::Contains("the info object says cols_per_thread = 2, but each thread of vk_kernel_0 "
                                              "computes 1 column (threadIdx.x * 1)"));
  // B-tiles counted with another width.
  const test::Verified tiles = f.verify(test::replace_first(f.cu(), "const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;",
                                                            "const int64_t b_tiles = (n + 31) / 32;"));
  check_rejected(tiles);
  CHECK_THAT(tiles.messages, Catch::Contains("the loop counts B-tiles of 32 columns, but col advances 64 per B-tile"));
  // No guard: threads past n.
  const test::Verified open = f.verify(test::replace_first(f.cu(), "    if (col >= n) continue;", "   "));
  check_rejected(open);
  CHECK(open.result.total_differences == 1);
  CHECK_THAT(open.messages, Catch::Contains("no `if (col >= n) continue;` before the dispatch of vk_kernel_0:"));
}

TEST_CASE("verify rejects: a lane mix in a vector FMA", "[verify][corrupt]") {
  for (const int32_t lanes : {2, 4}) {
    INFO("V = " << lanes);
    Fixture f(lanes);
    const std::string& cu = f.cu();
    // The second FMA after the first load of spmmc_tile_1 is lane 1 of the first product:
    // fma.rn.f32 a(sV+1),x(jV+1),W,a(sV+1). Multiply x(jV) (lane 0) instead.
    const size_t lane0 = f.find("fma.rn.f32 a", f.find("ld.global", f.tile_start(1)));
    const size_t lane1 = cu.find("fma.rn.f32 a", lane0 + 1);
    const std::string instruction = instruction_at(cu, lane1);
    const size_t x = instruction.find(",x") + 2;
    const int element = std::atoi(instruction.c_str() + x);
    REQUIRE(element % lanes == 1);
    const std::string mixed = instruction.substr(0, x) + std::to_string(element - 1) +
                              instruction.substr(instruction.find(',', x));
    const std::string text = cu.substr(0, lane1) + mixed + cu.substr(lane1 + instruction.size());
    const test::Verified v = f.verify(text);
    check_rejected(v);
    INFO(v.messages);
    CHECK(v.result.total_differences == 1);
    REQUIRE(v.result.differences.size() == 1);
    CHECK_THAT(v.result.differences[0].message, Catch::Contains("col + 0) into C("));
    CHECK_THAT(v.result.differences[0].message, Catch::EndsWith(", col + 1): the lanes are mixed"));
    CHECK(v.result.differences[0].where.line == test::line_of(text, lane1));
    CHECK(v.result.differences[0].where.column == test::column_of(text, lane1));
  }
}

TEST_CASE("verify rejects: products summed out of column order", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.cu();
  // An accumulator of spmmc_tile_1 with FMAs on two lines (two columns): move the first to the
  // end of the second line, after the later column's FMA.
  const size_t begin = f.tile_start(1), end = f.tile_start(2);
  for (size_t fma = cu.find("fma.rn.f32 a", begin); fma < end; fma = cu.find("fma.rn.f32 a", fma + 1)) {
    const std::string instruction = instruction_at(cu, fma);
    const std::string acc = instruction.substr(11, instruction.find(',') - 11);
    const size_t line_end = cu.find("\\n\"", fma);
    const size_t later = cu.find("fma.rn.f32 " + acc + ",", line_end);
    if (later > end) continue;
    const size_t later_end = cu.find("\\n\"", later);
    std::string text = cu.substr(0, later_end) + instruction + cu.substr(later_end);
    text = text.substr(0, fma) + text.substr(fma + instruction.size());
    const test::Verified v = f.verify(text);
    check_rejected(v);
    INFO(v.messages);
    CHECK(v.result.total_differences == 1);
    CHECK_THAT(v.messages, Catch::Contains("not in column order, so the rounding differs from the generic path"));
    return;
  }
  FAIL("no accumulator of spmmc_tile_1 has two FMAs");
}

TEST_CASE("verify rejects: a wrong generic-path CSR entry", "[verify][corrupt]") {
  Fixture f;
  const std::string& cu = f.cu();
  // The element `index` of the array `name`, replaced by `value`.
  const auto edit = [&](const std::string& name, size_t index, const std::string& value) {
    size_t at = f.find(name + "[] = {", 0) + name.size() + 6;
    for (size_t i = 0; i < index; ++i) at = cu.find(',', at) + 1;
    while (cu[at] == ' ' || cu[at] == '\n') ++at;
    const size_t stop = cu.find_first_of(",}", at);
    return std::make_pair(cu.substr(0, at) + value + cu.substr(stop), at);
  };
  const auto [columns, column_at] = edit("spmmc_col_idx", 5, std::to_string((f.a.col_idx[5] + 1) % 30));
  const test::Verified c = f.verify(columns);
  check_rejected(c);
  CHECK(c.result.total_differences == 1);
  CHECK(c.result.rows_differing == 0);
  CHECK_THAT(c.messages, Catch::Contains(fmt::format("spmmc_col_idx[5] is {}, but non-zero 5 is A(", (f.a.col_idx[5] + 1) % 30)));
  REQUIRE(c.result.differences.size() == 1);
  CHECK(c.result.differences[0].where.line == test::line_of(columns, column_at));
  CHECK(c.result.differences[0].where.column == test::column_of(columns, column_at));
  const auto [bits, bits_at] = edit("spmmc_weight_bits", 3, fmt::format("0x{:08x}u", bits_of(f.a.values[3]) ^ 1u));
  const test::Verified b = f.verify(bits);
  check_rejected(b);
  CHECK(b.result.total_differences == 1);
  CHECK_THAT(b.messages, Catch::Contains(fmt::format("spmmc_weight_bits[3] is 0x{:08x}", bits_of(f.a.values[3]) ^ 1u)));
  CHECK_THAT(b.messages, Catch::Contains(fmt::format("is {} (0x{:08x}) in weights.mtx", hex_float(f.a.values[3]),
                                                     bits_of(f.a.values[3]))));
  const auto [rows, rows_at] = edit("spmmc_row_ptr", 2, std::to_string(f.a.row_ptr[2] + 1));
  const test::Verified r = f.verify(rows);
  check_rejected(r);
  CHECK(r.result.total_differences == 1);
  CHECK_THAT(r.messages, Catch::Contains(fmt::format("spmmc_row_ptr[2] is {}, but row 1 of A ends at {} in weights.mtx",
                                                     f.a.row_ptr[2] + 1, f.a.row_ptr[2])));
  // Where each slot's row begins and ends: element 1 is where the row of slot 0 ends.
  const auto [spans, spans_at] = edit("spmmc_generic_span", 1, "999");
  const test::Verified s = f.verify(spans);
  check_rejected(s);
  CHECK(s.result.total_differences == 1);
  CHECK_THAT(s.messages, Catch::Contains("spmmc_generic_span[1] is 999, but slot 0 is row "));
  CHECK_THAT(s.messages, Catch::Contains(" of A, which ends at "));
  const test::Verified shorter = f.verify(test::replace_first(cu, "__device__ const int spmmc_row_ptr[] = {0, ",
                                                              "__device__ const int spmmc_row_ptr[] = {"));
  check_rejected(shorter);
  CHECK_THAT(shorter.messages, Catch::Contains("spmmc_row_ptr has 40 elements, but weights.mtx needs 41"));
}

// ---- files of several kernels ---------------------------------------------------------------------

// Kernels of two tiles each (the last: what is left): vk_kernel_0 runs tiles 0, 1, vk_kernel_1
// tiles 2, 3, ...
struct SplitFixture : Fixture {
  explicit SplitFixture(int32_t lanes = 1) : Fixture(lanes, two_tiles_per_kernel()) {
    const std::vector<int32_t>& tiles = files.kernel.kernel_tiles;
    REQUIRE(tiles.size() == 3);
    REQUIRE(tiles[0] == 2);
    REQUIRE(tiles[1] == 2);
  }
};

TEST_CASE("verify: a file of several kernels matches, each tile in its own block", "[verify][kernels]") {
  for (const int32_t lanes : {1, 2, 4}) {
    INFO("V = " << lanes);
    SplitFixture f(lanes);
    const test::Verified v = f.verify(f.cu());
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(v.result.match);
    CHECK(v.result.total_differences == 0);
    CHECK(v.code.notes.empty());
    REQUIRE(v.code.kernels.size() == 3);
    CHECK(v.code.kernel == "vk_kernel_0");
    CHECK(v.code.kernels[2].function == "vk_kernel_2");
    CHECK(v.code.kernels[1].where.line == test::line_of(f.cu(), f.kernel_start(1)));
    REQUIRE(v.code.launch.launches.size() == 3);
    CHECK(v.code.launch.launches[1].function == "vk_kernel_1");
    CHECK(v.code.launch.launches[1].grid_x == 2);
    CHECK(v.code.launch.launches[2].grid_x == 1);
    CHECK(v.code.grid_x == 5);
    REQUIRE(v.code.kernels[1].cases.size() == 2);
    CHECK(v.code.kernels[1].cases[1].label == 1);
    CHECK(v.code.kernels[1].cases[1].tiles == std::vector<int32_t>{3});
    REQUIRE(v.code.tiles.size() == 5);
    for (size_t t = 0; t < v.code.tiles.size(); ++t) CHECK(v.code.tiles[t].blocks == std::vector<int64_t>{static_cast<int64_t>(t)});
    REQUIRE(v.code.blocks.size() == 5);
    CHECK(v.code.blocks[3].launch == 1);
    CHECK(v.code.blocks[3].block == 1);
    CHECK(v.code.blocks[3].tiles == std::vector<int32_t>{3});
  }
}

TEST_CASE("verify rejects: a tile dispatched by two kernels", "[verify][corrupt][kernels]") {
  SplitFixture f;
  // vk_kernel_1's case 0 runs spmmc_tile_1 (vk_kernel_0's case 1) instead of spmmc_tile_2.
  const size_t edit = f.find("case 0: spmmc_tile_2(", f.kernel_start(1));
  const std::string text = test::replace_first(f.cu(), "case 0: spmmc_tile_2(", "case 0: spmmc_tile_1(", edit);
  const size_t first = f.find("case 1: spmmc_tile_1(", f.kernel_start(0));
  const test::Verified v = f.verify(text);
  check_rejected(v);
  INFO(v.messages);
  const auto twice = std::find_if(v.result.differences.begin(), v.result.differences.end(), [](const CodeDiagnostic& d) {
    return d.message.find("is dispatched") != std::string::npos;
  });
  REQUIRE(twice != v.result.differences.end());
  CHECK(twice->message == fmt::format("spmmc_tile_1 is dispatched 2 times: by case 0 of vk_kernel_1 here and by case 1 of "
                                      "vk_kernel_0 at {}:{}:{}",
                                      v.code.file, test::line_of(text, first), test::column_of(text, first)));
  CHECK(twice->where.line == test::line_of(text, edit));
  CHECK(twice->where.column == test::column_of(text, edit));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_2 is defined but dispatched by no case of any unrolled kernel"));
  CHECK_THAT(v.messages, Catch::Contains("of C is written 2 times (spmmc_tile_1 in block 1 of vk_kernel_0 at "));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_1 in block 0 of vk_kernel_1 at "));
  CHECK_THAT(v.messages, Catch::Contains("row 16 of C is never written"));
}

TEST_CASE("verify rejects: a tile missing from every dispatch", "[verify][corrupt][kernels]") {
  SplitFixture f;
  // vk_kernel_1's last case (spmmc_tile_3) removed: it has one case, launched with two blocks.
  const std::string text = test::replace_first(f.cu(), "      case 1: spmmc_tile_3(b, c, ld); break;\n", "", f.kernel_start(1));
  const test::Verified v = f.verify(text);
  check_rejected(v);
  INFO(v.messages);
  REQUIRE(v.code.uncalled_tiles.size() == 1);
  const auto never = std::find_if(v.result.differences.begin(), v.result.differences.end(), [](const CodeDiagnostic& d) {
    return d.message == "spmmc_tile_3 is defined but dispatched by no case of any unrolled kernel";
  });
  REQUIRE(never != v.result.differences.end());
  const size_t definition = text.find("spmmc_tile_3(const float*");
  CHECK(never->where.line == test::line_of(text, definition));
  CHECK(never->where.column == test::column_of(text, definition));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_kernel_tiles[1] is 2, but vk_kernel_1 (spmmc_kernels[1]) has 1 case in its "
                                         "switch (blockIdx.x): some blocks run no tile"));
  CHECK_THAT(v.messages, Catch::Contains("row 24 of C is never written (row 24 of A has"));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_3 stores it here, but no block calls spmmc_tile_3"));
  CHECK_THAT(v.messages, !Catch::Contains("is dispatched 2 times"));
}

TEST_CASE("verify rejects: a wrong spmmc_kernel_tiles entry", "[verify][corrupt][kernels]") {
  for (const int32_t lanes : {1, 2}) {
    INFO("V = " << lanes);
    SplitFixture f(lanes);
    // Launch 1 with one block: vk_kernel_1's case 1 (spmmc_tile_3) never runs.
    const size_t at = f.kernel_tiles_element(1);
    REQUIRE(f.cu().compare(at, 2, "2,") == 0);
    const std::string fewer = f.cu().substr(0, at) + "1" + f.cu().substr(at + 1);
    const test::Verified v = f.verify(fewer);
    check_rejected(v);
    INFO(v.messages);
    const auto entry = std::find_if(v.result.differences.begin(), v.result.differences.end(), [](const CodeDiagnostic& d) {
      return d.message.rfind("spmmc_kernel_tiles[1] is 1", 0) == 0;
    });
    REQUIRE(entry != v.result.differences.end());
    CHECK(entry->message == "spmmc_kernel_tiles[1] is 1, but vk_kernel_1 (spmmc_kernels[1]) has 2 cases in its switch "
                            "(blockIdx.x): the tiles of the last cases never run");
    CHECK(entry->where.line == test::line_of(fewer, at));
    CHECK(entry->where.column == test::column_of(fewer, at));
    CHECK_THAT(v.messages, Catch::Contains("spmmc_a_tiles is 5, but spmmc_kernel_tiles adds up to 4 blocks along x"));
    CHECK_THAT(v.messages, Catch::Contains("the info object says a_tiles = 5, but the launches have 4 blocks along x in all"));
    CHECK_THAT(v.messages, Catch::Contains("spmmc_tile_3 stores it here, but no block calls spmmc_tile_3"));
    REQUIRE(v.code.notes.size() == 1);
    CHECK_THAT(v.code.notes[0], Catch::Contains("case 1 of vk_kernel_1 is never taken: spmmc_kernels[1] launches it with 1 "
                                                "block along x"));
    // One block more: a block that runs nothing, and the tables no longer add up.
    const std::string more = f.cu().substr(0, at) + "3" + f.cu().substr(at + 1);
    const test::Verified m = f.verify(more);
    check_rejected(m);
    CHECK_THAT(m.messages, Catch::Contains("spmmc_kernel_tiles[1] is 3, but vk_kernel_1 (spmmc_kernels[1]) has 2 cases in its "
                                           "switch (blockIdx.x): some blocks run no tile"));
    CHECK_THAT(m.messages, Catch::Contains("spmmc_a_tiles is 5, but spmmc_kernel_tiles adds up to 6 blocks along x"));
    CHECK(m.result.rows_differing == 0);
  }
}

TEST_CASE("verify rejects: a kernel table that launches a kernel twice and another never", "[verify][corrupt][kernels]") {
  SplitFixture f;
  const size_t at = f.find("reinterpret_cast<const void*>(&vk_kernel_2)", 0);
  const std::string text = test::replace_first(f.cu(), "&vk_kernel_2)", "&vk_kernel_0)", at);
  const test::Verified v = f.verify(text);
  check_rejected(v);
  INFO(v.messages);
  CHECK_THAT(v.messages, Catch::Contains(fmt::format("{}:{}:{}: spmmc_kernels[2] launches vk_kernel_0 again (as spmmc_kernels[0] "
                                                     "at ",
                                                     v.code.file, test::line_of(text, at), test::column_of(text, at))));
  CHECK_THAT(v.messages, Catch::Contains(fmt::format("{}:{}:", v.code.file, test::line_of(text, f.kernel_start(2)))));
  CHECK_THAT(v.messages, Catch::Contains("vk_kernel_2 is not in spmmc_kernels: it is never launched"));
  CHECK_THAT(v.messages, Catch::Contains("spmmc_kernel_tiles[2] is 1, but vk_kernel_0 (spmmc_kernels[2]) has 2 cases"));
  CHECK_THAT(v.messages, Catch::Contains("row 0 of C is written 2 times (spmmc_tile_0 in block 0 of vk_kernel_0 "
                                         "(spmmc_kernels[0]) at "));
  // The count of kernels below the kernels in the file (the tables' sizes follow it).
  const std::string fewer = test::replace_first(
      test::replace_first(f.cu(), "spmmc_kernel_count = 3;", "spmmc_kernel_count = 2;"), ",\n    reinterpret_cast<const void*>(&vk_kernel_2)", "");
  const test::Verified c = f.verify(test::replace_first(fewer, "{2, 2, 1}", "{2, 2}"));
  check_rejected(c);
  CHECK_THAT(c.messages, Catch::Contains("spmmc_kernel_count is 2, but the file has 3 unrolled kernels"));
  CHECK_THAT(c.messages, Catch::Contains("vk_kernel_2 is not in spmmc_kernels: it is never launched"));
}

TEST_CASE("verify rejects: a kernel that does not wait for the one before it", "[verify][corrupt][kernels]") {
  SplitFixture f;
  const std::string text = test::replace_first(f.cu(), "  SPMMC_WAIT_FOR_PREVIOUS_KERNEL();\n", "", f.kernel_start(1));
  const test::Verified v = f.verify(text);
  check_rejected(v);
  INFO(v.messages);
  CHECK(v.result.total_differences == 1);
  CHECK_THAT(v.messages, Catch::StartsWith(fmt::format("{}:{}:", v.code.file, test::line_of(text, f.kernel_start(1)))));
  CHECK_THAT(v.messages, Catch::Contains("vk_kernel_1 (spmmc_kernels[1]) has no SPMMC_WAIT_FOR_PREVIOUS_KERNEL()"));
  // The first kernel need not wait: nothing runs before it.
  const test::Verified first = f.verify(test::replace_first(f.cu(), "  SPMMC_WAIT_FOR_PREVIOUS_KERNEL();\n", "", f.kernel_start(0)));
  CHECK(first.result.match);
}

TEST_CASE("verify: the split along K matches, its ranges added in order after the wait", "[verify][kparts]") {
  for (const int32_t lanes : {1, 2, 4}) {
    INFO("V = " << lanes);
    Fixture f(lanes, 0, 3);
    REQUIRE(f.files.kernel.k_part_begin.size() == 4);
    const test::Verified v = f.verify(f.cu());
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(v.result.match);
    CHECK(v.code.generic.k_part_begin.values.size() == 4);
    int64_t adding = 0;
    for (const AnalyzedTile& t : v.code.tiles) {
      for (const AnalyzedStore& st : t.stores) adding += st.adds;
      if (std::any_of(t.stores.begin(), t.stores.end(), [](const AnalyzedStore& st) { return st.adds; })) {
        CHECK(t.waits);
        CHECK_FALSE(t.reads_c_early);
      }
    }
    CHECK(adding > 0);
  }
}

TEST_CASE("verify rejects: a range of K added without waiting for the kernels before it", "[verify][corrupt][kparts]") {
  Fixture f(1, 0, 2);
  // The first wait inside a tile function (the kernels' own, SPMMC_WAIT_FOR_PREVIOUS_KERNEL, come
  // after the tiles in the text).
  const std::string text = test::replace_first(f.cu(), "griddepcontrol.wait;", "", f.find("griddepcontrol.wait;", f.tile_start(0)));
  const test::Verified v = f.verify(text);
  check_rejected(v);
  INFO(v.messages);
  CHECK_THAT(v.messages, Catch::Contains("reads C before griddepcontrol.wait"));
}

TEST_CASE("verify rejects: ranges of K that differ from the generic path's", "[verify][corrupt][kparts]") {
  Fixture f(1, 0, 2);
  const std::vector<int32_t>& b = f.files.kernel.k_part_begin;
  REQUIRE(b.size() == 3);
  // Move the generic path's boundary one column: the rows with a product in that column are
  // summed in another association there.
  const std::string from = fmt::format("spmmc_k_part_begin[] = {{0, {}, {}}}", b[1], b[2]);
  const std::string to = fmt::format("spmmc_k_part_begin[] = {{0, {}, {}}}", b[1] + 1, b[2]);
  REQUIRE(f.cu().find(from) != std::string::npos);
  const test::Verified v = f.verify(test::replace_first(f.cu(), from, to, 0));
  check_rejected(v);
  INFO(v.messages);
  CHECK_THAT(v.messages, Catch::Contains("sums the ranges of spmmc_k_part_begin (2) separately"));
  // And a boundary that does not rise is not a split of K.
  const std::string flat = fmt::format("spmmc_k_part_begin[] = {{0, {}, {}}}", b[2], b[2]);
  const test::Verified w = f.verify(test::replace_first(f.cu(), from, flat, 0));
  check_rejected(w);
  CHECK_THAT(w.messages, Catch::Contains("spmmc_k_part_begin is not a split of K"));
  // A generic path of one range while the unrolled tiles add ranges: the sums differ.
  const std::string one = fmt::format("spmmc_k_part_begin[] = {{0, {}}}", b[2]);
  const test::Verified x = f.verify(test::replace_first(f.cu(), from, one, 0));
  check_rejected(x);
  CHECK_THAT(x.messages, Catch::Contains("but the generic path has no ranges of K"));
}

}  // namespace
}  // namespace spmmc
