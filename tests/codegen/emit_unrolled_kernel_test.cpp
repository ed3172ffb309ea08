// The unrolled emitter (codegen/emit_unrolled_kernel.h) on hand-computed tiny cases and on
// properties of larger ones: one FMA per non-zero with its exact literal, one load per
// non-empty column of a tile, stores to the original rows, zero tiles, determinism.
#include "codegen/emit_unrolled_kernel.h"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "codegen/fill_template.h"
#include "compiler/diagnostics.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

// A 3 x 4 matrix: row 0 = (1.5 at 0, -2 at 3), row 1 empty, row 2 = (0.25 at 0, 3 at 2).
Csr tiny() { return test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0}); }

EmittedKernel emit(const Csr& a, int32_t m1, ReorderMethod method, int32_t n1 = 32, RowTiling* out = nullptr) {
  const RowTiling tiling = tile_rows(a, m1, method);
  if (out) *out = tiling;
  TileCandidate tile;
  tile.m1 = m1;
  tile.n1 = n1;
  EmitOptions options;
  options.name = "k";
  options.provenance = "test";
  options.weights_sha256 = "abc";
  return emit_unrolled_kernel(a, tiling, tile, options);
}

// The text of tile_<id>'s function, from its signature to its closing brace.
std::string tile_function(const std::string& cu, int id) {
  const std::string head = "__device__ __forceinline__ void tile_" + std::to_string(id) + "(";
  const size_t start = cu.find(head);
  if (start == std::string::npos) return {};
  return cu.substr(start, cu.find("\n}\n", start) + 3 - start);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

TEST_CASE("emitter: the tiles of a hand-computed matrix in natural order", "[codegen][emit]") {
  const EmittedKernel k = emit(tiny(), 2, ReorderMethod::kNone);
  CHECK(tile_function(k.cu, 0) ==
        "__device__ __forceinline__ void tile_0(const float* __restrict__ b, float* __restrict__ c, int64_t n) {\n"
        "  float acc0 = 0.0f, acc1 = 0.0f;\n"
        "  float x = __ldg(b + 0 * n), y;\n"
        "  y = __ldg(b + 3 * n);\n"
        "  acc0 = fmaf(0x1.8p+0f, x, acc0);\n"
        "  x = y;\n"
        "  acc0 = fmaf(-0x1p+1f, x, acc0);\n"
        "  c[0 * n] = acc0;\n"
        "  c[1 * n] = acc1;\n"
        "}\n");
  CHECK(tile_function(k.cu, 1) ==
        "__device__ __forceinline__ void tile_1(const float* __restrict__ b, float* __restrict__ c, int64_t n) {\n"
        "  float acc0 = 0.0f;\n"
        "  float x = __ldg(b + 0 * n), y;\n"
        "  y = __ldg(b + 2 * n);\n"
        "  acc0 = fmaf(0x1p-2f, x, acc0);\n"
        "  x = y;\n"
        "  acc0 = fmaf(0x1.8p+1f, x, acc0);\n"
        "  c[2 * n] = acc0;\n"
        "}\n");
  CHECK(tile_function(k.cu, 2).empty());
  CHECK(k.tiles == 2);
  CHECK(k.fmas == 4);
  CHECK(k.loads == 4);
  CHECK(k.stores == 3);
  CHECK(count(k.cu, "constexpr int spmmc_a_tiles = 2;") == 1);
  CHECK(count(k.cu, "constexpr int spmmc_m1 = 2;") == 1);
  CHECK(count(k.cu, "constexpr int spmmc_n1 = 32;") == 1);
  CHECK(count(k.cu, "      case 0: tile_0(B + col, C + col, n); break;\n") == 1);
  CHECK(count(k.cu, "      case 1: tile_1(B + col, C + col, n); break;\n") == 1);
  CHECK(count(k.cu, "case ") == 2);
  CHECK(count(k.cu, "\"none\"") == 1);  // the reorder field of k_info()
  CHECK(count(k.cu, "extern \"C\" cudaError_t k(const float* B, float* C, int64_t n, cudaStream_t stream)") == 1);
  CHECK(count(k.cu, "extern \"C\" const spmmc_kernel_info* k_info(void)") == 1);
  CHECK(count(k.cu, "__global__ void __launch_bounds__(spmmc_n1)\n    k_kernel(const float* __restrict__ B") == 1);
  CHECK(count(k.cu, "/*@") == 0);  // every marker filled
  CHECK(count(k.h, "/*@") == 0);
  CHECK(count(k.h, "#ifndef SPMMC_k_H\n#define SPMMC_k_H\n") == 1);
  CHECK(count(k.h, "cudaError_t k(const float* B, float* C, int64_t n, cudaStream_t stream);") == 1);
  CHECK(count(k.h, "const spmmc_kernel_info* k_info(void);") == 1);
  CHECK(count(k.h, "#define SPMMC_KERNEL_ABI_VERSION 1") == 1);
}

TEST_CASE("emitter: names differing only in case get distinct include guards", "[codegen][emit]") {
  const Csr a = tiny();
  const RowTiling tiling = tile_rows(a, 2, ReorderMethod::kNone);
  TileCandidate tile;
  tile.m1 = 2;
  EmitOptions options;
  options.name = "layerA";
  const std::string lower = emit_unrolled_kernel(a, tiling, tile, options).h;
  options.name = "LAYERA";
  const std::string upper = emit_unrolled_kernel(a, tiling, tile, options).h;
  CHECK(count(lower, "#ifndef SPMMC_layerA_H") == 1);
  CHECK(count(upper, "#ifndef SPMMC_LAYERA_H") == 1);
}

TEST_CASE("emitter: overlap tiling shares loads and gives empty rows a zero tile", "[codegen][emit]") {
  RowTiling tiling;
  const EmittedKernel k = emit(tiny(), 2, ReorderMethod::kColumnOverlap, 64, &tiling);
  REQUIRE(tiling.rows == std::vector<int32_t>{0, 2});
  REQUIRE(tiling.empty_rows == std::vector<int32_t>{1});
  CHECK(tile_function(k.cu, 0) ==
        "__device__ __forceinline__ void tile_0(const float* __restrict__ b, float* __restrict__ c, int64_t n) {\n"
        "  float acc0 = 0.0f, acc1 = 0.0f;\n"
        "  float x = __ldg(b + 0 * n), y;\n"
        "  y = __ldg(b + 2 * n);\n"
        "  acc0 = fmaf(0x1.8p+0f, x, acc0);\n"
        "  acc1 = fmaf(0x1p-2f, x, acc1);\n"
        "  x = y;\n"
        "  y = __ldg(b + 3 * n);\n"
        "  acc1 = fmaf(0x1.8p+1f, x, acc1);\n"
        "  x = y;\n"
        "  acc0 = fmaf(-0x1p+1f, x, acc0);\n"
        "  c[0 * n] = acc0;\n"
        "  c[2 * n] = acc1;\n"
        "}\n");
  CHECK(tile_function(k.cu, 1) ==
        "__device__ __forceinline__ void tile_1(const float* __restrict__ b, float* __restrict__ c, int64_t n) {\n"
        "  (void)b;\n"
        "  c[1 * n] = 0.0f;\n"
        "}\n");
  CHECK(k.tiles == 2);
  CHECK(k.loads == 3);
  CHECK(k.fmas == 4);
  CHECK(k.stores == 3);
  CHECK(count(k.cu, "constexpr int spmmc_n1 = 64;") == 1);
  CHECK(count(k.cu, "\"overlap\"") == 1);
}

TEST_CASE("emitter: a tile of one column declares no prefetch register", "[codegen][emit]") {
  const Csr a = test::csr_from_dense(2, 3, {0, 0.5f, 0, 0, -4, 0});
  const EmittedKernel k = emit(a, 2, ReorderMethod::kNone);
  CHECK(tile_function(k.cu, 0) ==
        "__device__ __forceinline__ void tile_0(const float* __restrict__ b, float* __restrict__ c, int64_t n) {\n"
        "  float acc0 = 0.0f, acc1 = 0.0f;\n"
        "  float x = __ldg(b + 1 * n);\n"
        "  acc0 = fmaf(0x1p-1f, x, acc0);\n"
        "  acc1 = fmaf(-0x1p+2f, x, acc1);\n"
        "  c[0 * n] = acc0;\n"
        "  c[1 * n] = acc1;\n"
        "}\n");
}

// Properties on a seeded random matrix with empty rows and columns, for every method and M1.
TEST_CASE("emitter: one FMA per non-zero, one load per non-empty tile column, every row stored once", "[codegen][emit]") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::bernoulli_distribution present(0.15);
  const int32_t rows = 45, cols = 37;
  std::vector<float> dense(static_cast<size_t>(rows * cols));
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c)
      if (r % 7 != 3 && c % 5 != 2 && present(rng)) dense[static_cast<size_t>(r * cols + c)] = value(rng);
  const Csr a = test::csr_from_dense(rows, cols, dense);
  int32_t empty_rows = 0;
  for (int32_t r = 0; r < rows; ++r) empty_rows += a.row_length(r) == 0;
  REQUIRE(empty_rows >= 6);

  const std::regex load(R"(__ldg\(b \+ (\d+) \* n\))"), store(R"(c\[(\d+) \* n\] = )");
  for (const ReorderMethod method : {ReorderMethod::kColumnOverlap, ReorderMethod::kNone, ReorderMethod::kRowLength})
    for (const int32_t m1 : {1, 3, 8, 64}) {
      INFO(std::string(reorder_method_name(method)) << ", M1 = " << m1);
      RowTiling tiling;
      const EmittedKernel k = emit(a, m1, method, 32, &tiling);
      CHECK(count(k.cu, "fmaf(") == static_cast<size_t>(a.nnz()));
      CHECK(k.fmas == a.nnz());
      CHECK(k.stores == rows);
      int64_t loads = 0;
      std::multiset<int32_t> stored;
      int32_t zero_tiles = 0;
      for (int32_t t = 0; t < k.tiles; ++t) {
        const std::string f = tile_function(k.cu, t);
        REQUIRE(!f.empty());
        // The tile's rows, in accumulator order, from its stores.
        std::vector<int32_t> tile_rows_seen;
        for (std::sregex_iterator it(f.begin(), f.end(), store), end; it != end; ++it) tile_rows_seen.push_back(std::stoi((*it)[1]));
        REQUIRE(!tile_rows_seen.empty());
        REQUIRE(static_cast<int32_t>(tile_rows_seen.size()) <= m1);
        stored.insert(tile_rows_seen.begin(), tile_rows_seen.end());
        // Expected FMAs (as lines, a multiset) and columns of the tile.
        std::multiset<std::string> want_fmas, got_fmas;
        std::set<int32_t> want_cols;
        for (size_t slot = 0; slot < tile_rows_seen.size(); ++slot) {
          const int32_t r = tile_rows_seen[slot];
          for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
            want_cols.insert(a.col_idx[p]);
            want_fmas.insert("acc" + std::to_string(slot) + " = fmaf(" + float_literal(a.values[p]) + ", x, acc" + std::to_string(slot) + ");");
          }
          CHECK(count(f, "c[" + std::to_string(r) + " * n] = ") == 1);
        }
        for (size_t p = f.find("acc"); p != std::string::npos; p = f.find("\n  acc", p + 1)) {
          const size_t line = f.find("acc", p);
          const std::string text = f.substr(line, f.find('\n', line) - line);
          if (text.find("fmaf(") != std::string::npos) got_fmas.insert(text);
        }
        CHECK(got_fmas == want_fmas);
        std::multiset<int32_t> loaded;
        for (std::sregex_iterator it(f.begin(), f.end(), load), end; it != end; ++it) loaded.insert(std::stoi((*it)[1]));
        CHECK(loaded == std::multiset<int32_t>(want_cols.begin(), want_cols.end()));  // each column once, no other
        loads += static_cast<int64_t>(loaded.size());
        if (want_cols.empty()) {
          ++zero_tiles;
          CHECK(count(f, " = 0.0f;\n") == tile_rows_seen.size());
          CHECK(count(f, "__ldg") == 0);
        } else {
          for (size_t slot = 0; slot < tile_rows_seen.size(); ++slot)
            CHECK(count(f, "c[" + std::to_string(tile_rows_seen[slot]) + " * n] = acc" + std::to_string(slot) + ";\n") == 1);
        }
      }
      CHECK(tile_function(k.cu, k.tiles).empty());
      CHECK(loads == k.loads);
      std::multiset<int32_t> all_rows;
      for (int32_t r = 0; r < rows; ++r) all_rows.insert(r);
      CHECK(stored == all_rows);  // every row exactly once, at its original index
      if (method != ReorderMethod::kNone) CHECK(zero_tiles == (empty_rows + m1 - 1) / m1);
      if (method == ReorderMethod::kNone) CHECK(k.tiles == (rows + m1 - 1) / m1);
      // Deterministic: the same inputs give the same bytes.
      const EmittedKernel again = emit(a, m1, method);
      CHECK(again.cu == k.cu);
      CHECK(again.h == k.h);
    }
}

TEST_CASE("emitter: float_literal reads back as the same float, bit for bit", "[codegen][emit]") {
  auto round_trips = [](float v) {
    const std::string text = float_literal(v);
    if (text.size() < 2 || text.back() != 'f' || text.find("0x") > 1) return false;
    char* end = nullptr;
    const float back = std::strtof(text.c_str(), &end);
    return end == text.c_str() + text.size() - 1 && std::memcmp(&back, &v, sizeof v) == 0;
  };
  const float special[] = {1.0f, -1.0f, 0.1f, std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                           FLT_MIN, -FLT_MIN, std::nextafter(FLT_MIN, 0.0f), FLT_MAX, -FLT_MAX, 3.0e38f, 1e-40f, 16777217.0f};
  for (const float v : special) {
    INFO(v << " -> " << float_literal(v));
    CHECK(round_trips(v));
  }
  CHECK(float_literal(1.5f) == "0x1.8p+0f");
  CHECK(float_literal(-2.0f) == "-0x1p+1f");
  std::mt19937 rng(12345);
  int failures = 0, checked = 0;
  for (int i = 0; i < 300000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    if (i % 4 == 0) bits &= 0x807fffffu;  // subnormals (and zeros)
    float v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    ++checked;
    if (!round_trips(v)) {
      if (++failures <= 5) UNSCOPED_INFO("bits " << bits << " -> " << float_literal(v));
    }
  }
  CHECK(checked > 250000);
  CHECK(failures == 0);
  CHECK_THROWS_AS(float_literal(std::numeric_limits<float>::infinity()), InternalError);
  CHECK_THROWS_AS(float_literal(std::numeric_limits<float>::quiet_NaN()), InternalError);
}

TEST_CASE("emitter: is_c_identifier", "[codegen][emit]") {
  for (const char* ok : {"a", "k", "layer_1", "_x", "_", "x__y", "L", "conv1x1_0", "A9", "int8", "for_"}) {
    INFO(ok);
    CHECK(is_c_identifier(ok));
  }
  for (const char* bad : {"", "3abc", "a-b", "a b", "__x", "_X", "a.b", "a$", "\xc3\xa9t\xc3\xa9", "x\n", "int", "for",
                          "return", "struct", "class", "namespace", "template", "new", "delete", "bool", "true", "auto"}) {
    INFO(bad);
    CHECK_FALSE(is_c_identifier(bad));
  }
}

TEST_CASE("emitter: fill_template replaces spans and refuses missing or unknown keys", "[codegen][emit]") {
  CHECK(fill_template("a /*@X*/old/*@*/ b /*@X*/again/*@*/ /*@Y*//*@*/.", {{"X", "1"}, {"Y", "2"}}, "t") == "a 1 b 1 2.");
  CHECK(fill_template("plain", {}, "t") == "plain");
  CHECK_THROWS_AS(fill_template("a /*@X*/old/*@*/", {}, "t"), InternalError);                       // missing value
  CHECK_THROWS_AS(fill_template("a /*@X*/old/*@*/", {{"X", "1"}, {"Z", "2"}}, "t"), InternalError);  // unknown key
  CHECK_THROWS_AS(fill_template("a /*@X*/old", {{"X", "1"}}, "t"), InternalError);                   // no end
  CHECK_THROWS_AS(fill_template("a /*@X", {{"X", "1"}}, "t"), InternalError);                         // unterminated
  try {
    fill_template("a /*@X*/old/*@*/", {{"X", "1"}, {"UNUSED_KEY", "2"}}, "tmpl.cu");
    FAIL("no InternalError");
  } catch (const InternalError& e) {
    CHECK_THAT(e.what(), Catch::Contains("tmpl.cu") && Catch::Contains("UNUSED_KEY"));
  }
  try {
    fill_template("a /*@MISSING_KEY*/old/*@*/", {}, "tmpl.h");
    FAIL("no InternalError");
  } catch (const InternalError& e) {
    CHECK_THAT(e.what(), Catch::Contains("tmpl.h") && Catch::Contains("MISSING_KEY"));
  }
}

TEST_CASE("emitter: refuses bad inputs with InternalError", "[codegen][emit]") {
  const Csr a = tiny();
  const RowTiling tiling = tile_rows(a, 2, ReorderMethod::kNone);
  TileCandidate tile;
  tile.m1 = 2;
  EmitOptions options;
  options.name = "3bad";
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, tile, options), InternalError);
  options.name = "ok";
  tile.m1 = 4;  // the tiling was made for M1 = 2
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, tile, options), InternalError);
  tile.m1 = 2;
  tile.cols_per_thread = 2;
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, tile, options), InternalError);
}

}  // namespace
}  // namespace spmmc
