// spmmc verify of the tensor-core family (spmmc compile --family tensor-core, --dtype fp16|bf16|tf32):
// files written by the spmmc binary match their weights rounded to the dtype, A rebuilt from
// spmmc_tc_window_block, spmmc_tc_window_rows, spmmc_tc_cols and spmmc_tc_a; edited copies are
// refused at the array element concerned: a flipped bit of a value, a row twice (in one window or
// two), a row in no window, a row with non-zeros in a window without blocks, a column outside K
// (padding included), a column repeated with non-zero values, a value for a row slot of -1, the
// arrays' sizes, the launch constants, the info object, the MMA of the other dtype, another
// __global__ function, the generic path's arrays; in tf32 (blocks of 4 vectors, one value per
// word, m16n8k4) a value off by one bit or not rounded to tf32, the MMA, B's rounding (a missing
// cvt.rna.tf32.f32 or another rounding), the array sizes and the dtype. Windows of 16 rows
// (--window-rows 16: spmmc_tc_rows = 16, two words of spmmc_tc_a per lane and block), with the
// direct kernel and the staged one (chunks of 56 rows), match; spmmc_tc_rows changed (16 to 8, 8 to
// 16, 16 in tf32) or missing, spmmc_tc_halves not its eighth, a value of either half's word, and
// spmmc_tc_chunk_blocks below a window's blocks in a chunk (or out of range, or missing) are
// refused. The tests find their way around the arrays by reading the initialisers' text themselves
// (not through the verifier's reading of them).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/dtype.h"
#include "compiler/formats/write_matrix.h"
#include "tests/test_util.h"
#include "tests/verify/verify_test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

// A(4, 0) = 0.1: neither a float16 nor a bfloat16. A(3, 5) = 1e-9: dropped in fp16, kept in bf16.
constexpr float kTenth = 0.1f;
constexpr float kTiny = 1e-9f;
constexpr int32_t kRows = 48, kCols = 40, kEmptyRow = 10;

// 48 x 40, about a quarter dense, row 10 empty (a window without blocks where the rows are
// reordered), values of many magnitudes.
Csr tc_weights() {
  return test::make_matrix(kRows, kCols, [](int32_t r, int32_t c) -> float {
    if (r == 4 && c == 0) return kTenth;
    if (r == 3 && c == 5) return kTiny;
    if (r == kEmptyRow || (r * 131 + c * 71 + r * c * 7) % 11 >= 3) return 0.0f;
    return static_cast<float>((r * 31 + c * 17) % 97 - 48) / 7.3f;
  });
}

// The integer literals of an initialiser `declaration = { ... }` in order (nested braces
// flattened: an int2 array gives x, y, x, y, ...), as (offset, length) in the text.
std::vector<std::pair<size_t, size_t>> initializer_numbers(const std::string& text, const std::string& declaration) {
  const size_t start = text.find(declaration);
  INFO("looking for '" << declaration << "'");
  REQUIRE(start != std::string::npos);
  size_t i = text.find('{', start + declaration.size() - 1);
  REQUIRE(i != std::string::npos);
  std::vector<std::pair<size_t, size_t>> numbers;
  const std::string number_chars = "-0123456789abcdefABCDEFxXuU";
  for (int depth = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{') ++depth;
    else if (c == '}' && --depth == 0) break;
    else if (number_chars.find(c) != std::string::npos) {
      const size_t end = text.find_first_not_of(number_chars, i);
      numbers.emplace_back(i, end - i);
      i = end - 1;
    }
  }
  return numbers;
}

// `text` without the last element of the initialiser `declaration = { ... }` (nor its comma).
std::string without_last_element(const std::string& text, const std::string& declaration) {
  const auto numbers = initializer_numbers(text, declaration);
  const size_t comma = text.rfind(',', numbers.back().first);
  return text.substr(0, comma) + text.substr(numbers.back().first + numbers.back().second);
}

int64_t literal_value(const std::string& literal) {
  std::string digits = literal;
  while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U')) digits.pop_back();
  return std::stoll(digits, nullptr, 0);
}

std::vector<int64_t> initializer_values(const std::string& text, const std::string& declaration) {
  std::vector<int64_t> values;
  for (const auto& [at, length] : initializer_numbers(text, declaration)) values.push_back(literal_value(text.substr(at, length)));
  return values;
}

constexpr const char* kWindowBlock = "spmmc_tc_window_block[] = {";
constexpr const char* kWindowRows = "spmmc_tc_window_rows[] = {";
constexpr const char* kCols_ = "spmmc_tc_cols[] = {";
constexpr const char* kA = "spmmc_tc_a[] = {";

// spmmc_tc_rows, the rows per window (8 or 16), read from the text of a tensor-core file.
int64_t window_height(const std::string& text) {
  std::smatch m;
  INFO("looking for spmmc_tc_rows");
  REQUIRE(std::regex_search(text, m, std::regex(R"(constexpr int spmmc_tc_rows = (\d+);)")));
  return std::stoll(m[1].str());
}

// The arrays of a tensor-core file, read from its text.
struct TcArrays {
  int64_t rows = 8;  // spmmc_tc_rows: rows per window
  std::vector<int64_t> window_block, window_rows, cols, a;

  explicit TcArrays(const std::string& text)
      : rows(window_height(text)),
        window_block(initializer_values(text, kWindowBlock)),
        window_rows(initializer_values(text, kWindowRows)),
        cols(initializer_values(text, kCols_)),
        a(initializer_values(text, kA)) {}

  int64_t windows() const { return static_cast<int64_t>(window_block.size()) - 1; }
  // Words of spmmc_tc_a per lane and block (H = rows / 8), and per block.
  int64_t halves() const { return rows / 8; }
  int64_t words_per_block() const { return 32 * halves(); }
  // The word of spmmc_tc_a of block b that holds row slot g of its window for vector j (8 per block):
  // lane 4 (g % 8) + j / 2's word g / 8.
  size_t word_of(int64_t b, int64_t g, int64_t j) const {
    return static_cast<size_t>(words_per_block() * b + halves() * (4 * (g % 8) + j / 2) + g / 8);
  }
  // The element of spmmc_tc_window_rows holding row r (-1: none).
  int64_t slot_of(int64_t r) const {
    for (size_t i = 0; i < window_rows.size(); ++i)
      if (window_rows[i] == r) return static_cast<int64_t>(i);
    return -1;
  }
  uint32_t half_bits(size_t word, int half) const {
    return static_cast<uint32_t>(static_cast<uint64_t>(a[word]) >> (16 * half)) & 0xffffu;
  }
};

// Where A(r, c)'s value is in spmmc_tc_a: the word and its half, and the vector (8 per block).
struct ValuePlace {
  size_t word = 0;
  int half = 0;
  size_t vector = 0;
};

ValuePlace find_value(const TcArrays& t, int64_t r, int64_t c) {
  const int64_t slot = t.slot_of(r);
  REQUIRE(slot >= 0);
  const int64_t w = slot / t.rows, g = slot % t.rows;
  for (int64_t b = t.window_block[static_cast<size_t>(w)]; b < t.window_block[static_cast<size_t>(w) + 1]; ++b)
    for (int64_t j = 0; j < 8; ++j) {
      const size_t v = static_cast<size_t>(8 * b + j);
      const size_t word = t.word_of(b, g, j);
      if (t.cols[v] == c && t.half_bits(word, static_cast<int>(j % 2)) != 0) return {word, static_cast<int>(j % 2), v};
    }
  FAIL("A(" << r << ", " << c << ") is in no vector");
  return {};
}

// `text` with the `index`-th literal of the initialiser `declaration` replaced by `literal`; `at`
// gets that literal's offset.
std::string set_element(const std::string& text, const std::string& declaration, size_t index, const std::string& literal,
                        size_t* at = nullptr) {
  const auto numbers = initializer_numbers(text, declaration);
  REQUIRE(index < numbers.size());
  const auto [offset, length] = numbers[index];
  if (at) *at = offset;
  return text.substr(0, offset) + literal + text.substr(offset + length);
}

std::string word_literal(uint32_t word) { return fmt::format("0x{:08x}u", word); }

// The most blocks any window has in one chunk (spmmc_tc_chunk_block, `chunks` entries per window).
int64_t most_chunk_blocks(const std::vector<int64_t>& chunk_block) {
  int64_t most = 0;
  for (size_t j = 0; j + 1 < chunk_block.size(); ++j) most = std::max(most, chunk_block[j + 1] - chunk_block[j]);
  return most;
}

constexpr const char* kChunkBlock = "spmmc_tc_chunk_block[] = {";

struct TcFile {
  test::TempDir dir;
  fs::path weights, cu, h;
  Csr a;
  DType dtype = DType::kFp16;
  nlohmann::json report;

  std::string text() const { return test::read_file(cu); }
  fs::path edited() const { return cu.parent_path() / "layer0_edited.cu"; }
  // `text` written beside NAME.cu (NAME.h stays the header it includes), verified in-process.
  test::Verified verify(const std::string& text) const {
    test::write_file(edited(), text);
    return test::verify_file(edited(), a);
  }
  // "weights.mtx rounded to fp16", as messages name the reference.
  std::string weights_name() const { return fmt::format("weights.mtx rounded to {}", dtype_name(dtype)); }
  // Row r's non-zeros in A rounded to the dtype (the reference).
  int32_t rounded_row_length(int64_t r) const {
    Csr rounded = a;
    round_values_to_dtype(rounded, dtype, "a.mtx");
    return rounded.row_length(static_cast<int32_t>(r));
  }
};

void compile_tc(TcFile& f, DType dtype, const std::vector<std::string>& extra = {}, const Csr& weights = tc_weights(),
                const std::string& n = "64") {
  f.dtype = dtype;
  f.a = weights;
  f.weights = f.dir.path / "a.mtx";
  write_matrix(f.a, f.weights.string(), MatrixFormat::kMatrixMarket, "tests/verify/tensor_core_test.cpp");
  std::vector<std::string> args = {"compile", f.weights.string(), "--n", n, "--name", "layer0", "--dtype",
                                   dtype_name(dtype), "--family", "tensor-core", "-o", (f.dir.path / "out").string(),
                                   "--quiet", "--reproducible"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_spmmc(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  f.cu = f.dir.path / "out" / "layer0.cu";
  f.h = f.dir.path / "out" / "layer0.h";
  f.report = nlohmann::json::parse(test::read_file(f.dir.path / "out" / "layer0.json"));
  REQUIRE(f.report["choice"]["family"] == "tensor-core");
}

// The one difference of `v` (which must be the only one), at `offset` of `text`.
void check_one_difference(const test::Verified& v, const std::string& text, size_t offset, const std::string& message) {
  INFO(v.messages);
  REQUIRE(v.code.analyzed);
  CHECK_FALSE(v.result.match);
  REQUIRE(v.result.differences.size() == 1);
  const CodeDiagnostic& d = v.result.differences[0];
  CHECK(d.message == message);
  CHECK(d.where.line == test::line_of(text, offset));
  CHECK(d.where.column == test::column_of(text, offset));
}

const CodeDiagnostic* find_message(const test::Verified& v, const std::string& part) {
  for (const CodeDiagnostic& d : v.result.differences)
    if (d.message.find(part) != std::string::npos) return &d;
  for (const CodeDiagnostic& d : v.code.errors)
    if (d.message.find(part) != std::string::npos) return &d;
  return nullptr;
}

TEST_CASE("verify tensor-core: fp16 and bf16 files match their weights rounded to the dtype", "[verify][tensor-core]") {
  for (const DType dtype : {DType::kFp16, DType::kBf16})
    for (const std::string reorder : {"grow", "none"}) {
      INFO(dtype_name(dtype) << " --reorder " << reorder);
      TcFile f;
      compile_tc(f, dtype, {"--reorder", reorder});
      const test::Verified v = test::verify_file(f.cu, f.a);
      for (const auto& e : v.code.errors) INFO(e.where.str() << ": " << e.message);
      INFO(v.messages);
      REQUIRE(v.code.analyzed);
      CHECK(v.result.match);
      CHECK(v.code.tensor_core);
      CHECK_FALSE(v.code.generic_only);
      CHECK(v.code.dtype == dtype);
      REQUIRE(v.code.tc.mmas.size() == 1);
      CHECK(v.code.tc.mmas[0].function == "spmmc_tc_mma4");
      // The reference is A rounded to the dtype: float16 drops the 1e-9, bfloat16 keeps it.
      const int64_t kept = f.a.nnz() - (dtype == DType::kFp16 ? 1 : 0);
      CHECK(v.result.weights_nnz == kept);
      CHECK(v.result.code_nnz == kept);
      CHECK(v.result.rows_written == kRows);
      // The counts of A rebuilt agree with what the emitter reported.
      const nlohmann::json& tc = f.report["kernel"]["tensor_core"];
      CHECK(v.result.tc_windows == tc["windows"].get<int64_t>());
      CHECK(v.result.tc_blocks == tc["blocks"].get<int64_t>());
      CHECK(v.result.tc_vectors == tc["vectors"].get<int64_t>());
      CHECK(v.result.tc_padding == tc["padding_vectors"].get<int64_t>());
      CHECK(v.result.tc_padding > 0);  // padding vectors repeat a column of their window, with zeros
      // Windows of 8 rows (spmmc_tc_rows), one word per lane and block.
      CHECK(tc["window_rows"] == 8);
      CHECK(v.result.tc_rows == 8);
      // Reordered, the empty row has a window without blocks.
      const TcArrays t(f.text());
      const int64_t w = t.slot_of(kEmptyRow) / 8;
      if (reorder == "grow") CHECK(t.window_block[static_cast<size_t>(w)] == t.window_block[static_cast<size_t>(w) + 1]);
      // The CLI agrees: exit 0, the family in the summary and the JSON report.
      const auto r = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string()});
      INFO(r.err);
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::StartsWith("spmmc verify: " + f.cu.string() + " matches a.mtx: 48 x 40, "));
      CHECK_THAT(r.out, Catch::Contains(fmt::format("the tensor-core family ({} windows of 8 rows",
                                                    tc["windows"].get<int64_t>())));
      const auto j = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string(), "--json"});
      CHECK(j.exit_code == 0);
      const auto report = nlohmann::json::parse(j.out);
      CHECK(report["family"] == "tensor-core");
      CHECK(report["dtype"] == dtype_name(dtype));
      CHECK(report["tensor_core"]["vectors"] == tc["vectors"]);
      CHECK(report["tensor_core"]["padding_vectors"] == tc["padding_vectors"]);
      CHECK(report["tensor_core"]["window_rows"] == 8);
      // 40 columns, one chunk of B's rows: the direct kernel only (the staged form needs two chunks,
      // codegen/print_tensor_core.cpp), as spmmc compile reported it; the staged files are below.
      REQUIRE(tc["kernel"] == "direct");
      CHECK(report["tensor_core"]["chunks"].is_null());
      CHECK(report["tensor_core"]["chunk_rows"].is_null());
      CHECK_FALSE(v.code.tc.chunk_block.found);
      CHECK_THAT(r.out, !Catch::Contains("chunk"));
    }
}

TEST_CASE("verify tensor-core: without NAME.h beside it the prelude stands in", "[verify][tensor-core]") {
  TcFile f;
  compile_tc(f, DType::kBf16);
  fs::remove(f.h);
  const test::Verified v = test::verify_file(f.cu, f.a);
  INFO(v.messages);
  CHECK(v.result.match);
  REQUIRE(v.code.notes.size() == 1);
  CHECK_THAT(v.code.notes[0], Catch::Contains("layer0.h is not beside"));
}

TEST_CASE("verify tensor-core rejects: a flipped bit of a value in spmmc_tc_a", "[verify][tensor-core][corrupt]") {
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    INFO(dtype_name(dtype));
    TcFile f;
    compile_tc(f, dtype);
    const std::string cu = f.text();
    const TcArrays t(cu);
    const ValuePlace p = find_value(t, 4, 0);
    const uint32_t bits = t.half_bits(p.word, p.half);
    CHECK(from_half_bits(static_cast<uint16_t>(bits), dtype) == round_to_dtype(kTenth, dtype));
    // The lowest bit (one ulp of the dtype) and the sign bit.
    for (const uint32_t flip : {1u, 0x8000u}) {
      INFO("flip " << flip);
      const uint32_t wrong = bits ^ flip;
      const uint32_t word = static_cast<uint32_t>(t.a[p.word]) ^ (flip << (16 * p.half));
      size_t at = 0;
      const std::string text = set_element(cu, kA, p.word, word_literal(word), &at);
      const test::Verified v = f.verify(text);
      check_one_difference(
          v, text, at,
          fmt::format("A(4, 0) is {} in the code (spmmc_tc_a[{}], {} half (block {}, lane {}) is 0x{:04x}) but {} in {}",
                      hex_float(from_half_bits(static_cast<uint16_t>(wrong), dtype)), p.word, p.half ? "high" : "low",
                      p.word / 32, p.word % 32, wrong, hex_float(round_to_dtype(kTenth, dtype)), f.weights_name()));
      CHECK(v.result.rows_differing == 1);
      // The CLI exits 65 naming the file, the array and the element.
      const auto r = run_spmmc({"verify", f.edited().string(), "--against", f.weights.string()});
      CHECK(r.exit_code == 65);
      CHECK_THAT(r.err, Catch::Contains(fmt::format("{}:{}:{}: error: A(4, 0) is ", f.edited().string(),
                                                    test::line_of(text, at), test::column_of(text, at))));
      CHECK_THAT(r.err, Catch::Contains(fmt::format("spmmc_tc_a[{}]", p.word)));
    }
  }
}

TEST_CASE("verify tensor-core rejects: a value where A has none, and one for a row slot of -1",
          "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kFp16);
  const std::string cu = f.text();
  const TcArrays t(cu);
  // 1.0 (0x3c00) for a row of A at a column of its window where A has no value (not a padding
  // vector: those repeat a column of their window, and their zeros stay zeros).
  size_t word = 0;
  int half = 0;
  int64_t row = -1, col = -1;
  for (int64_t w = 0; w < t.windows() && row < 0; ++w) {
    std::set<int64_t> seen;
    for (int64_t b = t.window_block[static_cast<size_t>(w)]; b < t.window_block[static_cast<size_t>(w) + 1] && row < 0; ++b)
      for (int64_t j = 0; j < 8 && row < 0; ++j) {
        const int64_t c = t.cols[static_cast<size_t>(8 * b + j)];
        if (!seen.insert(c).second) continue;
        for (int64_t g = 0; g < 8 && row < 0; ++g) {
          const size_t candidate = static_cast<size_t>(32 * b + 4 * g + j / 2);
          const int64_t r = t.window_rows[static_cast<size_t>(8 * w + g)];
          if (r >= 0 && t.half_bits(candidate, static_cast<int>(j % 2)) == 0)
            word = candidate, half = static_cast<int>(j % 2), row = r, col = c;
        }
      }
  }
  REQUIRE(row >= 0);
  size_t at = 0;
  std::string text = set_element(cu, kA, word, word_literal(static_cast<uint32_t>(t.a[word]) | (0x3c00u << (16 * half))), &at);
  check_one_difference(f.verify(text), text, at,
                       fmt::format("A({}, {}) = 0x1p+0 is in the code (spmmc_tc_a[{}], {} half (block {}, lane {}) is "
                                   "0x3c00) but not in {}",
                                   row, col, word, half ? "high" : "low", word / 32, word % 32, f.weights_name()));
  // A row slot of -1 in a window with blocks (47 rows have non-zeros: the last window of them has
  // one): a value there belongs to no row of A.
  int64_t empty_slot = -1;
  for (int64_t ww = 0; ww < t.windows() && empty_slot < 0; ++ww) {
    if (t.window_block[static_cast<size_t>(ww)] == t.window_block[static_cast<size_t>(ww) + 1]) continue;
    for (int64_t g = 0; g < 8; ++g)
      if (t.window_rows[static_cast<size_t>(8 * ww + g)] == -1) {
        empty_slot = 8 * ww + g;
        break;
      }
  }
  REQUIRE(empty_slot >= 0);
  const int64_t ew = empty_slot / 8, eg = empty_slot % 8;
  const int64_t eb = t.window_block[static_cast<size_t>(ew)];
  const size_t eword = static_cast<size_t>(32 * eb + 4 * eg);  // vector 0 (low half)
  REQUIRE(t.a[eword] == 0);
  text = set_element(cu, kA, eword, word_literal(0x3c00u), &at);
  check_one_difference(f.verify(text), text, at,
                       fmt::format("spmmc_tc_a[{}], low half (block {}, lane {}) is 0x3c00 (0x1p+0), a value of column {} "
                                   "for row {} of window {}, which has no row (spmmc_tc_window_rows[{}] is -1): a weight "
                                   "of no row of A",
                                   eword, eb, eword % 32, t.cols[static_cast<size_t>(8 * eb)], eg, ew, empty_slot));
  // -0 is no value (a product that adds nothing): accepted where A has none.
  text = set_element(cu, kA, eword, word_literal(0x8000u));
  const test::Verified v = f.verify(text);
  INFO(v.messages);
  CHECK(v.result.match);
}

TEST_CASE("verify tensor-core rejects: a row twice, in one window or two, and a row in no window",
          "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kFp16);
  const std::string cu = f.text();
  const TcArrays t(cu);
  const int64_t r0 = t.window_rows[0], r1 = t.window_rows[1], r8 = t.window_rows[8];
  REQUIRE(r0 >= 0);
  REQUIRE(r1 >= 0);
  REQUIRE(r8 >= 0);
  SECTION("element 1 repeats element 0's row: row r1 of A is then in no window") {
    size_t at = 0;
    const std::string text = set_element(cu, kWindowRows, 1, std::to_string(r0), &at);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    REQUIRE(v.result.differences.size() == 2);
    CHECK(v.result.differences[0].message ==
          fmt::format("spmmc_tc_window_rows[1] is row {} again in window 0 (also element 0): the tensor-core kernel would "
                      "store two rows of its output to row {} of C",
                      r0, r0));
    CHECK(v.result.differences[0].where.line == test::line_of(text, at));
    CHECK(v.result.differences[0].where.column == test::column_of(text, at));
    CHECK(v.result.differences[1].message ==
          fmt::format("row {} of A is in no window (spmmc_tc_window_rows): the tensor-core kernel never writes row {} of C "
                      "(row {} of A has {} non-zeros in {})",
                      r1, r1, r1, f.rounded_row_length(r1), f.weights_name()));
    const size_t declaration = text.find("spmmc_tc_window_rows[]");
    CHECK(v.result.differences[1].where.line == test::line_of(text, declaration));
    // The CLI exits 65 with both.
    const auto r = run_spmmc({"verify", f.edited().string(), "--against", f.weights.string()});
    CHECK(r.exit_code == 65);
    CHECK_THAT(r.err, Catch::Contains(fmt::format("{}:{}:{}: error: spmmc_tc_window_rows[1] is row {} again",
                                                  f.edited().string(), test::line_of(text, at), test::column_of(text, at),
                                                  r0)));
  }
  SECTION("window 1's first row repeats window 0's first") {
    size_t at = 0;
    const std::string text = set_element(cu, kWindowRows, 8, std::to_string(r0), &at);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    const CodeDiagnostic* d = find_message(v, "spmmc_tc_window_rows[8]");
    REQUIRE(d != nullptr);
    CHECK(d->message == fmt::format("spmmc_tc_window_rows[8] (window 1) is row {} again (also element 0, window 0): the "
                                    "tensor-core kernel would write row {} of C twice",
                                    r0, r0));
    CHECK(d->where.line == test::line_of(text, at));
    CHECK(d->where.column == test::column_of(text, at));
    CHECK(find_message(v, fmt::format("row {} of A is in no window", r8)) != nullptr);
  }
  SECTION("a row out of range") {
    size_t at = 0;
    const std::string text = set_element(cu, kWindowRows, 1, "48", &at);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    const CodeDiagnostic* d = find_message(v, "spmmc_tc_window_rows[1]");
    REQUIRE(d != nullptr);
    CHECK(d->message == fmt::format("spmmc_tc_window_rows[1] (row 1 of window 0) is 48, but {} has rows 0 to 47 (-1: "
                                    "none)",
                                    f.weights_name()));
    CHECK(d->where.column == test::column_of(text, at));
  }
}

TEST_CASE("verify tensor-core rejects: a row with non-zeros in the window without blocks", "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kBf16);
  const std::string cu = f.text();
  const TcArrays t(cu);
  // Swap the empty row with row r0 (window 0's first row): r0's non-zeros are then in a window
  // without blocks, and row 10 of A, empty, gets r0's values.
  const int64_t empty_slot = t.slot_of(kEmptyRow), r0 = t.window_rows[0];
  std::string text = set_element(cu, kWindowRows, static_cast<size_t>(empty_slot), std::to_string(r0));
  size_t at = 0;
  text = set_element(text, kWindowRows, 0, std::to_string(kEmptyRow), &at);
  const test::Verified v = f.verify(text);
  INFO(v.messages);
  REQUIRE(v.code.analyzed);
  CHECK_FALSE(v.result.match);
  const int64_t w = empty_slot / 8;
  const CodeDiagnostic* d = find_message(v, fmt::format("row {} of A has", r0));
  REQUIRE(d != nullptr);
  CHECK(d->message == fmt::format("row {} of A has {} non-zeros in {}, but its window {} (spmmc_tc_window_rows[{}]) has "
                                  "no blocks (spmmc_tc_window_block[{}] = spmmc_tc_window_block[{}] = {}): the tensor-core "
                                  "kernel stores row {} of C as zeros",
                                  r0, f.rounded_row_length(r0), f.weights_name(), w, empty_slot, w, w + 1,
                                  t.window_block[static_cast<size_t>(w)], r0));
  CHECK(find_message(v, fmt::format("A({}, ", kEmptyRow)) != nullptr);  // r0's values, now row 10's, are not A's
  CHECK(v.result.rows_differing == 2);
}

TEST_CASE("verify tensor-core rejects: a column outside K, padding included, and a column repeated with values",
          "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kFp16);
  const std::string cu = f.text();
  const TcArrays t(cu);
  SECTION("spmmc_tc_cols[0].y is K") {
    size_t at = 0;
    const std::string text = set_element(cu, kCols_, 1, "40", &at);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    REQUIRE_FALSE(v.result.differences.empty());
    const CodeDiagnostic& d = v.result.differences[0];
    CHECK(d.message == fmt::format("spmmc_tc_cols[0].y (vector 1 of block 0, window 0) is 40, but B has 40 rows (A has "
                                   "40 columns in {}): the tensor-core kernel would load outside B",
                                   f.weights_name()));
    CHECK(d.where.line == test::line_of(text, at));
    CHECK(d.where.column == test::column_of(text, at));
    // That vector's values are A's column t.cols[1], now in no vector.
    CHECK(find_message(v, fmt::format("missing: A(")) != nullptr);
    const auto r = run_spmmc({"verify", f.edited().string(), "--against", f.weights.string()});
    CHECK(r.exit_code == 65);
    CHECK_THAT(r.err, Catch::Contains(fmt::format("{}:{}:{}: error: spmmc_tc_cols[0].y", f.edited().string(),
                                                  test::line_of(text, at), test::column_of(text, at))));
  }
  SECTION("a padding vector's column of -1: the kernel loads B's row for every vector") {
    // The first padding vector: all eight values zero.
    size_t padding = t.cols.size();
    for (size_t v = 0; v < t.cols.size() && padding == t.cols.size(); ++v) {
      bool zero = true;
      for (int64_t g = 0; g < 8; ++g) zero &= t.half_bits(32 * (v / 8) + 4 * static_cast<size_t>(g) + (v % 8) / 2, static_cast<int>(v % 2)) == 0;
      if (zero) padding = v;
    }
    REQUIRE(padding < t.cols.size());
    size_t at = 0;
    const std::string text = set_element(cu, kCols_, padding, "-1", &at);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.result.differences.size() == 1);
    CHECK_THAT(v.result.differences[0].message,
               Catch::StartsWith(fmt::format("spmmc_tc_cols[{}].{} (vector {} of block {}, window ", padding / 2,
                                             padding % 2 ? "y" : "x", padding % 8, padding / 8)));
    CHECK_THAT(v.result.differences[0].message, Catch::Contains(") is -1, but B has 40 rows"));
    CHECK(v.result.differences[0].where.column == test::column_of(text, at));
  }
  SECTION("spmmc_tc_cols[0].y repeats spmmc_tc_cols[0].x with non-zero values") {
    size_t at = 0;
    const std::string text = set_element(cu, kCols_, 1, std::to_string(t.cols[0]), &at);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    const CodeDiagnostic* d = find_message(v, "spmmc_tc_cols[0].y");
    REQUIRE(d != nullptr);
    CHECK_THAT(d->message, Catch::StartsWith(fmt::format("spmmc_tc_cols[0].y (vector 1 of block 0) is column {} again in "
                                                         "window 0 (also spmmc_tc_cols[0].x): a repeated column must be a "
                                                         "padding vector of zeros, but spmmc_tc_a[",
                                                         t.cols[0])));
    CHECK(d->where.line == test::line_of(text, at));
    CHECK(d->where.column == test::column_of(text, at));
  }
}

TEST_CASE("verify tensor-core rejects: arrays of the wrong size, the launch constants, the info object",
          "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kFp16);
  const std::string cu = f.text();
  const TcArrays t(cu);
  const int64_t windows = t.windows();
  // `from` replaced by `to`; the difference is at `point` bytes into `to`.
  struct Case {
    std::string name, from, to, message;
    size_t point = 0;
  };
  const std::vector<Case> cases = {
      {"spmmc_tc_windows one less", fmt::format("spmmc_tc_windows = {};", windows),
       fmt::format("spmmc_tc_windows = {};", windows - 1),
       fmt::format("spmmc_tc_windows is {}, but spmmc_tc_window_block has {} elements ({} windows): the tensor-core kernel "
                   "would never compute the last windows",
                   windows - 1, windows + 1, windows),
       19},
      {"spmmc_tc_threads of 3 warps for 4", "spmmc_tc_threads = 32 * spmmc_tc_warps;", "spmmc_tc_threads = 96;",
       "spmmc_tc_threads is 96, but a block of spmmc_tc_warps = 4 warps has 128 threads: the tensor-core kernel takes "
       "window blockIdx.y * 4 + threadIdx.x / 32, so windows would be skipped",
       19},
      {"64 columns per warp", "spmmc_tc_cols_per_warp = 64;", "spmmc_tc_cols_per_warp = 128;",
       "spmmc_tc_cols_per_warp is 128, but a warp of the tensor-core kernel computes 64 columns of C (8 lanes of 8 "
       "columns per row of the m16n8k8 MMAs): columns of C would be never computed",
       25},
      {"the info object's m1", "    spmmc_m1,\n", "    16,\n",
       "the info object says m1 = 16, but a window of the tensor-core family has 8 rows (spmmc_tc_rows)", 4},
      {"the info object's cols_per_thread", "    spmmc_v,\n", "    4,\n",
       "the info object says cols_per_thread = 4, but each lane of the tensor-core kernel stores 8 adjacent columns of "
       "its rows",
       4},
      {"the info object's a_tiles", "    spmmc_a_tiles,\n", "    1,\n",
       fmt::format("the info object says a_tiles = 1, but the tensor-core kernel has {} windows (spmmc_tc_windows)",
                   windows),
       4},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const size_t at = cu.find(c.from);
    REQUIRE(at != std::string::npos);
    const std::string text = cu.substr(0, at) + c.to + cu.substr(at + c.from.size());
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    const CodeDiagnostic* d = find_message(v, c.message);
    REQUIRE(d != nullptr);
    CHECK(d->message == c.message);
    CHECK(d->where.line == test::line_of(text, at + c.point));
    CHECK(d->where.column == test::column_of(text, at + c.point));
  }
  SECTION("spmmc_tc_window_block not ending at the blocks") {
    const size_t last = t.window_block.size() - 1;
    size_t at = 0;
    const std::string text = set_element(cu, kWindowBlock, last, std::to_string(t.window_block[last] + 1), &at);
    check_one_difference(f.verify(text), text, at,
                         fmt::format("spmmc_tc_window_block[{}] is {}, but spmmc_tc_cols and spmmc_tc_a hold {} blocks (the "
                                     "last element ends the last window's blocks)",
                                     last, t.window_block[last] + 1, t.window_block[last]));
  }
  SECTION("spmmc_tc_a one word short") {
    const std::string text = without_last_element(cu, kA);
    const test::Verified v = f.verify(text);
    check_one_difference(v, text, text.find("spmmc_tc_a[] = {"),
                         fmt::format("spmmc_tc_a has {} elements, but the {} blocks of spmmc_tc_cols need {} (32 words per "
                                     "block, one per lane)",
                                     t.a.size() - 1, t.a.size() / 32, t.a.size()));
  }
  SECTION("the info object's a_format says csr-constants: the tensor-core kernel is an unchecked __global__ function") {
    const std::string text = test::replace_first(cu, "\"vector-blocks-constants\",", "\"csr-constants\",");
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK_FALSE(v.code.analyzed);
    CHECK(find_message(v, "the __global__ function spmmc_tc_kernel besides the generic kernels") != nullptr);
  }
  SECTION("the info object's a_format says unrolled-constants") {
    const std::string text = test::replace_first(cu, "\"vector-blocks-constants\",", "\"unrolled-constants\",");
    const test::Verified v = f.verify(text);
    CHECK_FALSE(v.result.match);
  }
}

TEST_CASE("verify tensor-core rejects: the MMA of the other dtype, another __global__ function, the generic path's arrays",
          "[verify][tensor-core][corrupt]") {
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    INFO(dtype_name(dtype));
    TcFile f;
    compile_tc(f, dtype);
    const std::string cu = f.text();
    const bool fp16 = dtype == DType::kFp16;
    {
      const std::string text = test::replace_first(cu, fp16 ? "#define SPMMC_TC_MMA SPMMC_MMA_M16N8K8_F16"
                                                            : "#define SPMMC_TC_MMA SPMMC_MMA_M16N8K8_BF16",
                                                   fp16 ? "#define SPMMC_TC_MMA SPMMC_MMA_M16N8K8_BF16"
                                                        : "#define SPMMC_TC_MMA SPMMC_MMA_M16N8K8_F16");
      const test::Verified v = f.verify(text);
      INFO(v.messages);
      CHECK(v.code.parsed);
      CHECK_FALSE(v.code.analyzed);
      REQUIRE(v.code.errors.size() == 1);
      const std::string got = fp16 ? "bf16.bf16" : "f16.f16", want = fp16 ? "f16.f16" : "bf16.bf16";
      CHECK_THAT(v.code.errors[0].message,
                 Catch::StartsWith(fmt::format("the MMA in spmmc_tc_mma4 is 'mma.sync.aligned.m16n8k8.row.col.f32.{}.f32', "
                                               "but the info object says dtype = '{}'",
                                               got, dtype_info_name(dtype))));
      CHECK_THAT(v.code.errors[0].message,
                 Catch::Contains(fmt::format("expected 'mma.sync.aligned.m16n8k8.row.col.f32.{}.f32'", want)));
      const size_t use = text.find("SPMMC_TC_MMA(acc[h][s]");
      REQUIRE(use != std::string::npos);
      CHECK(v.code.errors[0].where.line == test::line_of(text, use));
    }
    {
      const std::string elem = fp16 ? "__half" : "__nv_bfloat16";
      const std::string extra = fmt::format("__global__ void layer0_extra(const {}* B, {}* C, int64_t n) {{ C[0] = B[0]; }}\n",
                                            elem, elem);
      const std::string text =
          test::replace_first(cu, "extern \"C\" cudaError_t layer0(", extra + "extern \"C\" cudaError_t layer0(");
      const test::Verified v = f.verify(text);
      INFO(v.messages);
      CHECK_FALSE(v.code.analyzed);
      REQUIRE(v.code.errors.size() == 1);
      CHECK(v.code.errors[0].message == "the info object says a_format = 'vector-blocks-constants' (the tensor-core family), "
                                        "but the file has the __global__ function layer0_extra besides the tensor-core and "
                                        "generic kernels");
    }
    {
      // The generic path takes the calls the tensor-core kernel does not (n % 8 != 0, unaligned B or C).
      size_t at = 0;
      const auto bits = initializer_numbers(cu, "spmmc_weight_bits[] = {");
      const uint32_t first = static_cast<uint32_t>(literal_value(cu.substr(bits[0].first, bits[0].second)));
      const std::string text = set_element(cu, "spmmc_weight_bits[] = {", 0, word_literal(first ^ 1u), &at);
      const test::Verified v = f.verify(text);
      INFO(v.messages);
      REQUIRE(v.result.differences.size() == 1);
      CHECK_THAT(v.result.differences[0].message, Catch::StartsWith(fmt::format("spmmc_weight_bits[0] is 0x{:08x}", first ^ 1u)));
      CHECK(v.result.differences[0].where.column == test::column_of(text, at));
    }
  }
}

TEST_CASE("verify tensor-core: the info object's dtype float32 is refused", "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kFp16);
  const std::string cu = f.text();
  // B's and C's __half no longer agree with the info object: refused at the kernels' parameters.
  const test::Verified v = f.verify(test::replace_first(cu, "\"float16\",", "\"float32\","));
  INFO(v.messages);
  CHECK_FALSE(v.code.analyzed);
  CHECK(find_message(v, "the parameter B of spmmc_tc_kernel points to __half (float16) elements") != nullptr);
}

// Every function the tensor-core templates (kernel_tensor_core.cuh, kernel_tensor_core_tf32.cuh and
// tf32's element type, dtype_tf32.cuh) call is declared by the prelude, so that the templates cannot
// make verify fail to parse tensor-core files.
TEST_CASE("verify tensor-core: the prelude declares what the tensor-core templates call", "[verify][tensor-core]") {
  const std::string source = SPMMC_SOURCE_DIR;
  const std::string prelude = test::read_file(source + "/verify/prelude/cuda_runtime.h");
  const std::regex call(R"(\b((?:__|make_)\w+)\s*\()");
  for (const char* name : {"kernel_tensor_core.cuh", "kernel_tensor_core_tf32.cuh", "dtype_tf32.cuh"}) {
    INFO(name);
    const std::string text = test::read_file(source + "/codegen/templates/" + name);
    std::set<std::string> called;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it)
      if ((*it)[1] != "__launch_bounds__" && (*it)[1] != "__attribute__") called.insert((*it)[1]);
    CHECK(called.count(std::string(name) == "kernel_tensor_core.cuh" ? "__byte_perm" : "__ldg"));
    for (const std::string& function : called) {
      INFO(function);
      CHECK(std::regex_search(prelude, std::regex("\\b" + function + "\\(")));
    }
  }
  // The vector types they load and store.
  for (const char* type : {"struct __attribute__((aligned(8))) int2", "struct __attribute__((aligned(16))) uint4",
                           "struct __attribute__((aligned(16))) float4"})
    CHECK_THAT(prelude, Catch::Contains(type));
}

// ---- tf32 -----------------------------------------------------------------------------------------

// Where A(r, c)'s value is in a tf32 file's spmmc_tc_a: lane 4g + t's word of block b holds vector t
// (4 per block) of the window's row g, a whole float.
ValuePlace find_tf32_value(const TcArrays& t, int64_t r, int64_t c) {
  const int64_t slot = t.slot_of(r);
  REQUIRE(slot >= 0);
  const int64_t w = slot / 8, g = slot % 8;
  for (int64_t b = t.window_block[static_cast<size_t>(w)]; b < t.window_block[static_cast<size_t>(w) + 1]; ++b)
    for (int64_t j = 0; j < 4; ++j) {
      const size_t v = static_cast<size_t>(4 * b + j), word = static_cast<size_t>(32 * b + 4 * g + j);
      if (t.cols[v] == c && t.a[word] != 0) return {word, 0, v};
    }
  FAIL("A(" << r << ", " << c << ") is in no vector");
  return {};
}

float word_float(int64_t word) {
  const auto bits = static_cast<uint32_t>(word);
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

TEST_CASE("verify tensor-core: tf32 files match their weights rounded to tf32", "[verify][tensor-core][tf32]") {
  for (const std::string reorder : {"grow", "none"}) {
    INFO("--reorder " << reorder);
    TcFile f;
    compile_tc(f, DType::kTf32, {"--reorder", reorder});
    const test::Verified v = test::verify_file(f.cu, f.a);
    for (const auto& e : v.code.errors) INFO(e.where.str() << ": " << e.message);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(v.result.match);
    CHECK(v.code.tensor_core);
    CHECK(v.code.dtype == DType::kTf32);
    CHECK(v.code.dtype_from_info);
    REQUIRE(v.code.tc.mmas.size() == 1);
    CHECK(v.code.tc.mmas[0].opcode == "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32");
    REQUIRE(v.code.tc.tf32_conversions.size() == 1);  // B's rounding, in dtype_tf32.cuh's spmmc_tf32_bits
    CHECK(v.code.tc.tf32_conversions[0].opcode == "cvt.rna.tf32.f32");
    CHECK(v.code.tc.tf32_conversions[0].function == "spmmc_tf32_bits");
    CHECK_FALSE(v.code.tc.cols_are_pairs);
    // tf32 has float's exponent range: the 1e-9 stays (it rounds to a tf32 value near it).
    CHECK(v.result.weights_nnz == f.a.nnz());
    CHECK(v.result.code_nnz == f.a.nnz());
    CHECK(v.result.rows_written == kRows);
    const nlohmann::json& tc = f.report["kernel"]["tensor_core"];
    CHECK(tc["k"] == 4);
    CHECK(v.result.tc_windows == tc["windows"].get<int64_t>());
    CHECK(v.result.tc_blocks == tc["blocks"].get<int64_t>());
    CHECK(v.result.tc_vectors == tc["vectors"].get<int64_t>());
    CHECK(v.result.tc_padding == tc["padding_vectors"].get<int64_t>());
    CHECK(v.result.tc_rows == 8);  // spmmc_tc_rows, always 8 in tf32
    // A's values as the file holds them: floats rounded to tf32 (13 low bits zero), 0.1 among them.
    const TcArrays t(f.text());
    CHECK(t.cols.size() == static_cast<size_t>(4 * v.result.tc_blocks));
    for (const int64_t word : t.a) CHECK((static_cast<uint32_t>(word) & 0x1fffu) == 0u);
    CHECK(word_float(t.a[find_tf32_value(t, 4, 0).word]) == round_to_dtype(kTenth, DType::kTf32));
    const auto r = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string()});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("(rounded to tf32)"));
    CHECK_THAT(r.out, Catch::Contains("windows of 8 rows"));
    CHECK_THAT(r.out, Catch::Contains("blocks of 4 8 x 1 vectors"));
    const auto j = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string(), "--json"});
    CHECK(j.exit_code == 0);
    const auto report = nlohmann::json::parse(j.out);
    CHECK(report["family"] == "tensor-core");
    CHECK(report["dtype"] == "tf32");
    CHECK(report["tensor_core"]["k"] == 4);
    CHECK(report["tensor_core"]["vectors"] == tc["vectors"]);
    CHECK(report["tensor_core"]["chunks"].is_null());  // tf32 has no staged form
  }
}

TEST_CASE("verify tensor-core rejects tf32: a value off by a bit or not rounded to tf32", "[verify][tensor-core][tf32][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kTf32);
  const std::string cu = f.text();
  const TcArrays t(cu);
  const ValuePlace p = find_tf32_value(t, 4, 0);
  const auto bits = static_cast<uint32_t>(t.a[p.word]);
  const float want = round_to_dtype(kTenth, DType::kTf32);
  CHECK(word_float(t.a[p.word]) == want);
  // Bit 13 (one ulp of tf32), bit 0 (below tf32's mantissa: the MMA would ignore it, but A is no
  // longer the weights rounded to tf32), the sign; and the float32 0.1 itself, not rounded.
  uint32_t unrounded = 0;
  std::memcpy(&unrounded, &kTenth, sizeof unrounded);
  REQUIRE(unrounded != bits);
  for (const uint32_t wrong : {bits ^ 0x2000u, bits ^ 1u, bits ^ 0x80000000u, unrounded}) {
    INFO(fmt::format("0x{:08x}", wrong));
    size_t at = 0;
    const std::string text = set_element(cu, kA, p.word, word_literal(wrong), &at);
    const test::Verified v = f.verify(text);
    check_one_difference(v, text, at,
                         fmt::format("A(4, 0) is {} in the code (spmmc_tc_a[{}] (block {}, lane {}) is 0x{:08x}) but {} in {}",
                                     hex_float(word_float(wrong)), p.word, p.word / 32, p.word % 32, wrong, hex_float(want),
                                     f.weights_name()));
    CHECK(v.result.rows_differing == 1);
    const auto r = run_spmmc({"verify", f.edited().string(), "--against", f.weights.string()});
    CHECK(r.exit_code == 65);
    CHECK_THAT(r.err, Catch::Contains(fmt::format("{}:{}:{}: error: A(4, 0) is ", f.edited().string(), test::line_of(text, at),
                                                  test::column_of(text, at))));
  }
}

TEST_CASE("verify tensor-core rejects tf32: the MMA, B's rounding, the arrays' sizes and the dtype",
          "[verify][tensor-core][tf32][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kTf32);
  const std::string cu = f.text();
  const TcArrays t(cu);
  SECTION("an m16n8k8 MMA") {
    const std::string text = test::replace_first(cu, "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
                                                 "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK(v.code.parsed);
    CHECK_FALSE(v.code.analyzed);
    REQUIRE(v.code.errors.size() == 1);
    CHECK_THAT(v.code.errors[0].message,
               Catch::StartsWith("the MMA in spmmc_tc_mma4 is 'mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32', but the "
                                 "info object says dtype = 'tfloat32'"));
    CHECK_THAT(v.code.errors[0].message, Catch::Contains("expected 'mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32'"));
    CHECK(v.code.errors[0].where.line == test::line_of(text, text.find("SPMMC_MMA_M16N8K4_TF32(acc[s]")));
  }
  SECTION("B rounded toward zero") {
    const std::string text = test::replace_first(cu, "asm(\"cvt.rna.tf32.f32 %0, %1;\"", "asm(\"cvt.rz.tf32.f32 %0, %1;\"");
    REQUIRE(text != cu);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK_FALSE(v.code.analyzed);
    const CodeDiagnostic* d = find_message(v, "the conversion in spmmc_tf32_bits is 'cvt.rz.tf32.f32'");
    REQUIRE(d != nullptr);
    CHECK_THAT(d->message, Catch::Contains("expected 'cvt.rna.tf32.f32'"));
  }
  SECTION("B not rounded at all") {
    const std::string text = test::replace_first(cu, "asm(\"cvt.rna.tf32.f32 %0, %1;\"", "asm(\"mov.b32 %0, %1;\"");
    REQUIRE(text != cu);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK_FALSE(v.code.analyzed);
    CHECK(find_message(v, "but no asm statement of the file is cvt.rna.tf32.f32: the tensor-core kernel would hand B's floats "
                          "to the MMA unrounded") != nullptr);
  }
  SECTION("spmmc_tc_cols one element short") {
    const std::string text = without_last_element(cu, kCols_);
    const test::Verified v = f.verify(text);
    check_one_difference(v, text, text.find(kCols_),
                         fmt::format("spmmc_tc_cols has {} elements, not 4 per block (one per 8 x 1 vector of the m16n8k4 "
                                     "MMA)",
                                     t.cols.size() - 1));
  }
  SECTION("the info object's dtype float32: a float32 file has no tensor-core family") {
    const test::Verified v = f.verify(test::replace_first(cu, "\"tfloat32\",", "\"float32\","));
    INFO(v.messages);
    CHECK_FALSE(v.code.analyzed);
    CHECK(find_message(v, "its MMAs take float16, bfloat16 or tfloat32 elements, not float32") != nullptr);
  }
  SECTION("the info object's dtype float16: B's and C's floats disagree") {
    const test::Verified v = f.verify(test::replace_first(cu, "\"tfloat32\",", "\"float16\","));
    INFO(v.messages);
    CHECK_FALSE(v.code.analyzed);
    CHECK(find_message(v, "the parameter B of spmmc_tc_kernel points to float (float32) elements") != nullptr);
  }
}

// The staged form (B's slab in shared memory, chunks of 64 rows of B) in windows of 8 rows
// (--window-rows 8; those of 16 are below): a 48 x 300 matrix, about a quarter dense, whose windows
// reuse B's rows (five chunks of 64 rows), tuned for an n where the staged kernel runs on the
// default target (6 windows, one block of 8 per 64 columns: from n = 64 x ceil(0.9 x 4 x 132) =
// 30464). Tuned for n = 30400, the same matrix gets the direct kernel only.
TEST_CASE("verify tensor-core: the staged form's chunks, and what breaks them", "[verify][tensor-core][corrupt]") {
  TcFile f;
  const Csr wide = test::make_matrix(kRows, 300, [](int32_t r, int32_t c) -> float {
    return (r * 131 + c * 71 + r * c * 7) % 11 >= 3 ? 0.0f : static_cast<float>((r * 31 + c * 17) % 97 - 48) / 7.3f;
  });
  {
    TcFile small;
    compile_tc(small, DType::kFp16, {"--window-rows", "8"}, wide, "30400");
    CHECK(small.report["kernel"]["tensor_core"]["kernel"] == "direct");
    CHECK(small.text().find("#define SPMMC_TC_STAGED 1") == std::string::npos);
  }
  compile_tc(f, DType::kFp16, {"--window-rows", "8"}, wide, "30464");
  REQUIRE(f.report["kernel"]["tensor_core"]["kernel"] == "staged");
  REQUIRE(f.report["kernel"]["tensor_core"]["window_rows"] == 8);
  CHECK(f.report["kernel"]["tensor_core"]["staged_from_n"] == 30464);
  const std::string cu = f.text();
  REQUIRE(cu.find("constexpr int spmmc_tc_chunks = 5;") != std::string::npos);
  {
    const test::Verified v = test::verify_file(f.cu, f.a);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(v.result.match);
    CHECK(v.code.tc.chunk_block.found);
  }
  const std::string chunk_block = "spmmc_tc_chunk_block[] = {";
  const std::vector<int64_t> at = initializer_values(cu, chunk_block);
  const TcArrays t(cu);
  REQUIRE(at.size() == static_cast<size_t>(5 * t.windows() + 1));
  SECTION("a block counted in the chunk before its own") {
    // Window 0's first block of chunk 1 moved into chunk 0: its vectors lie in rows 64..127.
    REQUIRE(at[1] < at[2]);
    size_t where = 0;
    const std::string text = set_element(cu, chunk_block, 1, std::to_string(at[1] + 1), &where);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    const CodeDiagnostic* d = find_message(v, "but spmmc_tc_chunk_block puts the block in chunk 0 (rows 0 to 63 of B): the staged "
                                              "kernel would read another row of B");
    REQUIRE(d != nullptr);
    CHECK_THAT(d->message, Catch::Contains(fmt::format("of block {}, window 0) is column", at[1])));
  }
  SECTION("a block's offset in the chunk's copy pointing at the next row") {
    const std::string offsets = "spmmc_tc_offsets[] = {";
    const std::vector<int64_t> o = initializer_values(cu, offsets);
    REQUIRE(o.size() == t.cols.size());
    size_t where = 0;
    const std::string text = set_element(cu, offsets, 0, std::to_string(o[0] + 128), &where);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    const std::vector<int64_t> keys = initializer_values(cu, "spmmc_tc_keys[] = {");
    const int64_t row = t.cols[0] % 64;
    REQUIRE(t.cols[0] < 64);  // window 0's first block: chunk 0, group 0
    const CodeDiagnostic* d = find_message(v, fmt::format("spmmc_tc_offsets[0] (vector 0 of block 0, window 0) is {}, but its column {} "
                                                          "is row {} of chunk 0, of key {} (spmmc_tc_keys[{}]), at byte {} of the "
                                                          "chunk's copy",
                                                          o[0] + 128, t.cols[0], row, keys[static_cast<size_t>(row)], row, o[0]));
    REQUIRE(d != nullptr);
    CHECK(d->where.line == test::line_of(text, where));
  }
  SECTION("a row's key changed: the offsets of its vectors no longer find it") {
    const std::string table = "spmmc_tc_keys[] = {";
    const std::vector<int64_t> keys = initializer_values(cu, table);
    // 8 windows a group, 5 chunks of 64 rows.
    REQUIRE(keys.size() == static_cast<size_t>((t.windows() + 7) / 8 * 5 * 64));
    CHECK(std::all_of(keys.begin(), keys.end(), [](int64_t k) { return k >= 0 && k < 8; }));
    const int64_t row = t.cols[0];
    REQUIRE(row < 64);
    const std::string text = set_element(cu, table, static_cast<size_t>(row), std::to_string((keys[static_cast<size_t>(row)] + 1) % 8));
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    CHECK(find_message(v, fmt::format("spmmc_tc_offsets[0] (vector 0 of block 0, window 0) is {}, but its column {} is row {} of "
                                      "chunk 0, of key {} (spmmc_tc_keys[{}])",
                                      initializer_values(cu, "spmmc_tc_offsets[] = {")[0], row, row,
                                      (keys[static_cast<size_t>(row)] + 1) % 8, row)) != nullptr);
  }
  SECTION("keys that the kernel does not read") {
    // spmmc_tc_keyed = 0: the copy places each row by its residue mod 8, but the offsets follow the keys.
    REQUIRE(cu.find("constexpr int spmmc_tc_keyed = 1;") != std::string::npos);
    const std::vector<int64_t> keys = initializer_values(cu, "spmmc_tc_keys[] = {");
    size_t i = 0;
    while (i < keys.size() && keys[i] == static_cast<int64_t>(i % 64 % 8)) ++i;
    REQUIRE(i < keys.size());
    const test::Verified v = f.verify(test::replace_first(cu, "constexpr int spmmc_tc_keyed = 1;", "constexpr int spmmc_tc_keyed = 0;"));
    INFO(v.messages);
    CHECK_FALSE(v.result.match);
    CHECK(find_message(v, fmt::format("spmmc_tc_keys[{}] (row {} of chunk {}, group {}) is {}, but spmmc_tc_keyed is 0", i,
                                      i % 64, i / 64 % 5, i / 64 / 5, keys[i])) != nullptr);
  }
  SECTION("a key out of range") {
    size_t where = 0;
    const std::string text = set_element(cu, "spmmc_tc_keys[] = {", 3, "9", &where);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    const CodeDiagnostic* d = find_message(v, "spmmc_tc_keys[3] is 9, but a key is 0 to 7");
    REQUIRE(d != nullptr);
    CHECK(d->where.line == test::line_of(text, where));
  }
  SECTION("the chunk table without the keys") {
    const test::Verified v = f.verify(test::replace_all(cu, "spmmc_tc_keys", "spmmc_tc_other_keys"));
    INFO(v.messages);
    CHECK(find_message(v, "spmmc_tc_chunk_block without spmmc_tc_keys") != nullptr);
  }
  SECTION("the chunk table without the offsets") {
    // Every mention renamed (the kernel's too): the file compiles, without the table verify reads.
    const test::Verified v = f.verify(test::replace_all(cu, "spmmc_tc_offsets", "spmmc_tc_other_offsets"));
    INFO(v.messages);
    CHECK(find_message(v, "spmmc_tc_chunk_block without spmmc_tc_offsets") != nullptr);
  }
  SECTION("the chunks miscounted") {
    const std::string text = test::replace_first(cu, "constexpr int spmmc_tc_chunks = 5;", "constexpr int spmmc_tc_chunks = 4;");
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK(find_message(v, "spmmc_tc_chunks is 4, but 300 columns in chunks of spmmc_tc_chunk_rows = 64 rows make 5") != nullptr);
  }
  SECTION("K that is not A's") {
    const std::string text = test::replace_first(cu, "constexpr int spmmc_tc_k = 300;", "constexpr int spmmc_tc_k = 256;");
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK(find_message(v, "spmmc_tc_k is 256, but weights.mtx rounded to fp16 has 300 columns: the staged kernel would copy too few "
                          "rows of B") != nullptr);
  }
  SECTION("spmmc_tc_chunk_blocks below the most blocks a window has in a chunk") {
    const int64_t most = most_chunk_blocks(at);
    REQUIRE(most >= 2);
    const std::string constant = fmt::format("constexpr int spmmc_tc_chunk_blocks = {};", most);
    REQUIRE_THAT(cu, Catch::Contains(constant));
    const std::string text =
        test::replace_first(cu, constant, fmt::format("constexpr int spmmc_tc_chunk_blocks = {};", most - 1));
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    REQUIRE(v.result.differences.size() == 1);
    CHECK_THAT(v.result.differences[0].message,
               Catch::StartsWith(fmt::format("spmmc_tc_chunk_blocks is {}, but window ", most - 1)) &&
                   Catch::Contains(fmt::format("has {} blocks in chunk ", most)) &&
                   Catch::EndsWith("and this copy would overflow them"));
  }
  SECTION("the chunk table without its kernel") {
    // Every mention renamed (the launch's too): the staged kernel is now a __global__ of another name.
    const test::Verified v = f.verify(test::replace_all(cu, "spmmc_tc_staged_kernel", "spmmc_tc_other_kernel"));
    INFO(v.messages);
    CHECK(find_message(v, "the file has spmmc_tc_chunk_block (the staged tensor-core kernel's table) and 0 __global__ "
                          "spmmc_tc_staged_kernel") != nullptr);
  }
}

// ---- windows of 16 rows -----------------------------------------------------------------------

// 64 x 300, four fifths dense, row 10 empty. In windows of 16 rows (--window-rows 16) a window has
// a vector in nearly every column, so that its blocks in a chunk of 64 rows of B would be 8, more
// than the staged kernel's shared memory holds with two words of A per lane: spmmc takes chunks of
// 56 rows instead (7 blocks, the last chunk 20 rows). 63 rows with non-zeros make 4 windows, and the
// empty row a fifth without blocks (16 slots, 15 of them -1). The staged form is printed for n from
// 22848 on the default target (tuned for 30464 here), the direct kernel only for n = 64.
Csr dense_weights() {
  return test::make_matrix(64, 300, [](int32_t r, int32_t c) -> float {
    if (r == kEmptyRow || (r * 7 + c * 3) % 5 == 0) return 0.0f;
    return static_cast<float>((r * 31 + c * 17) % 97 - 48) / 7.3f;
  });
}

TEST_CASE("verify tensor-core: windows of 16 rows match, with the direct kernel and the staged one (chunks of 56 rows)",
          "[verify][tensor-core]") {
  struct Case {
    DType dtype;
    std::string n, kernel;
  };
  for (const Case& c : {Case{DType::kFp16, "64", "direct"}, Case{DType::kBf16, "64", "direct"},
                        Case{DType::kFp16, "30464", "staged"}, Case{DType::kBf16, "30464", "staged"}}) {
    INFO(dtype_name(c.dtype) << " --n " << c.n);
    TcFile f;
    compile_tc(f, c.dtype, {"--window-rows", "16"}, dense_weights(), c.n);
    const nlohmann::json& tc = f.report["kernel"]["tensor_core"];
    REQUIRE(tc["kernel"] == c.kernel);
    CHECK(tc["window_rows"] == 16);
    const std::string cu = f.text();
    const TcArrays t(cu);
    REQUIRE(t.rows == 16);
    const test::Verified v = test::verify_file(f.cu, f.a);
    for (const auto& e : v.code.errors) INFO(e.where.str() << ": " << e.message);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(v.result.match);
    REQUIRE(v.code.tc.rows.field.value);
    CHECK(*v.code.tc.rows.field.value == 16);
    CHECK(v.result.tc_rows == 16);
    CHECK(v.result.code_nnz == v.result.weights_nnz);
    CHECK(v.result.rows_written == 64);
    CHECK(v.result.tc_windows == tc["windows"].get<int64_t>());
    CHECK(v.result.tc_blocks == tc["blocks"].get<int64_t>());
    CHECK(v.result.tc_vectors == tc["vectors"].get<int64_t>());
    CHECK(v.result.tc_padding == tc["padding_vectors"].get<int64_t>());
    // 16 row slots per window, two words per lane and block; rows 8..15 of the windows in the
    // words of half 1.
    CHECK(t.windows() == 5);
    CHECK(t.window_rows.size() == static_cast<size_t>(16 * t.windows()));
    CHECK(t.a.size() == static_cast<size_t>(64 * v.result.tc_blocks));
    bool second_half = false;
    for (size_t i = 1; i < t.a.size(); i += 2) second_half = second_half || t.a[i] != 0;
    CHECK(second_half);
    // The empty row's window: no blocks, its 15 other slots -1.
    const int64_t w = t.slot_of(kEmptyRow) / 16;
    CHECK(t.window_block[static_cast<size_t>(w)] == t.window_block[static_cast<size_t>(w) + 1]);
    CHECK(std::count(t.window_rows.begin() + 16 * w, t.window_rows.begin() + 16 * (w + 1), -1) == 15);
    const bool staged = c.kernel == "staged";
    CHECK(v.code.tc.chunk_block.found == staged);
    if (staged) {
      CHECK(tc["chunk_rows"] == 56);
      CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_tc_chunk_rows = 56;"));
      CHECK(most_chunk_blocks(initializer_values(cu, kChunkBlock)) == 7);
      CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_tc_chunk_blocks = 7;"));
    }
    // The CLI names the windows' height and the vectors' in its summary, and the JSON report.
    const auto r = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string()});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains(fmt::format("the tensor-core family (5 windows of 16 rows, {} blocks of 8 16 x 1 vectors",
                                                  v.result.tc_blocks)));
    if (staged) CHECK_THAT(r.out, Catch::Contains("the staged kernel's 6 chunks of B's rows"));
    const auto j = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string(), "--json"});
    CHECK(j.exit_code == 0);
    const auto report = nlohmann::json::parse(j.out);
    CHECK(report["tensor_core"]["window_rows"] == 16);
    if (staged) CHECK(report["tensor_core"]["chunk_rows"] == 56);
    else CHECK(report["tensor_core"]["chunk_rows"].is_null());
  }
}

TEST_CASE("verify tensor-core rejects: spmmc_tc_rows changed or missing, spmmc_tc_halves not its eighth",
          "[verify][tensor-core][corrupt]") {
  const std::string rows16 = "constexpr int spmmc_tc_rows = 16;", rows8 = "constexpr int spmmc_tc_rows = 8;";
  SECTION("16 rows said to be 8: the info object's m1 and spmmc_tc_window_rows's 16 per window disagree") {
    TcFile f;
    compile_tc(f, DType::kFp16, {"--window-rows", "16"}, dense_weights());
    const std::string cu = f.text();
    const TcArrays t(cu);
    const std::string text = test::replace_first(cu, rows16, rows8);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    REQUIRE(v.result.differences.size() == 2);
    CHECK(v.result.differences[0].message ==
          "the info object says m1 = 16, but a window of the tensor-core family has 8 rows (spmmc_tc_rows)");
    const size_t m1 = text.find("    spmmc_m1,\n") + 4;
    CHECK(v.result.differences[0].where.line == test::line_of(text, m1));
    CHECK(v.result.differences[0].where.column == test::column_of(text, m1));
    CHECK(v.result.differences[1].message ==
          fmt::format("spmmc_tc_window_rows has {} elements, but 5 windows of spmmc_tc_rows = 8 rows need 40",
                      t.window_rows.size()));
    CHECK(v.result.differences[1].where.line == test::line_of(text, text.find(kWindowRows)));
    // The CLI exits 65 with both.
    const auto r = run_spmmc({"verify", f.edited().string(), "--against", f.weights.string()});
    CHECK(r.exit_code == 65);
    CHECK_THAT(r.err, Catch::Contains("error: spmmc_tc_window_rows has 80 elements, but 5 windows of spmmc_tc_rows = 8 rows"));
  }
  SECTION("8 rows said to be 16") {
    TcFile f;
    compile_tc(f, DType::kFp16);
    const std::string cu = f.text();
    const TcArrays t(cu);
    REQUIRE(t.rows == 8);
    const std::string text = test::replace_first(cu, rows8, rows16);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    REQUIRE(v.result.differences.size() == 2);
    CHECK(v.result.differences[0].message ==
          "the info object says m1 = 8, but a window of the tensor-core family has 16 rows (spmmc_tc_rows)");
    CHECK(v.result.differences[1].message ==
          fmt::format("spmmc_tc_window_rows has {} elements, but {} windows of spmmc_tc_rows = 16 rows need {}",
                      t.window_rows.size(), t.windows(), 16 * t.windows()));
  }
  SECTION("16 rows in tf32") {
    TcFile f;
    compile_tc(f, DType::kTf32);
    const std::string cu = f.text();
    const size_t at = cu.find(rows8);
    REQUIRE(at != std::string::npos);
    // The template's static_assert refuses it first; without it, verify does.
    const std::string asserted = test::replace_first(cu, rows8, rows16);
    CHECK_FALSE(f.verify(asserted).code.analyzed);
    const std::string text = test::replace_first(asserted, "static_assert(spmmc_tc_rows == 8,", "static_assert(true,");
    REQUIRE(text != asserted);
    check_one_difference(f.verify(text), text, at + rows8.size() - 2,
                         "spmmc_tc_rows is 16, but the tf32 kernel's windows have 8 rows (one m16n8k4 MMA per block: its "
                         "N, a word of spmmc_tc_a per lane)");
  }
  SECTION("12 rows: the template's static_assert refuses it") {
    TcFile f;
    compile_tc(f, DType::kBf16, {"--window-rows", "16"}, dense_weights());
    const test::Verified v = f.verify(test::replace_first(f.text(), rows16, "constexpr int spmmc_tc_rows = 12;"));
    INFO(v.messages);
    CHECK_FALSE(v.code.analyzed);
    CHECK(find_message(v, "windows of 8 or 16 rows") != nullptr);
  }
  SECTION("no spmmc_tc_rows") {
    TcFile f;
    compile_tc(f, DType::kFp16, {"--window-rows", "16"}, dense_weights());
    // Every mention renamed (the kernel's too): the file compiles, without the constant verify reads.
    const test::Verified v = f.verify(test::replace_all(f.text(), "spmmc_tc_rows", "spmmc_tc_height"));
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    REQUIRE(v.result.differences.size() == 1);
    CHECK(v.result.differences[0].message ==
          "no spmmc_tc_rows (the rows of A per window of the tensor-core family, 8 or 16) in the code");
    CHECK(v.result.differences[0].where.line == 0);
  }
  SECTION("spmmc_tc_halves 1 in windows of 16 rows: the kernel would index spmmc_tc_a by it") {
    TcFile f;
    compile_tc(f, DType::kFp16, {"--window-rows", "16"}, dense_weights());
    const std::string cu = f.text();
    const std::string halves = "constexpr int spmmc_tc_halves = ";
    const size_t at = cu.find(halves + "spmmc_tc_rows / 8;");
    REQUIRE(at != std::string::npos);
    const std::string text = test::replace_first(cu, halves + "spmmc_tc_rows / 8;", halves + "1;");
    check_one_difference(f.verify(text), text, at + halves.size(),
                         "spmmc_tc_halves is 1, but windows of spmmc_tc_rows = 16 rows have 2 halves of 8 rows (an MMA "
                         "and a word of spmmc_tc_a per lane each): the tensor-core kernel would read spmmc_tc_a as 32 words "
                         "per block, not 64");
  }
}

TEST_CASE("verify tensor-core rejects windows of 16 rows: a value changed in a word of either half, found in its row",
          "[verify][tensor-core][corrupt]") {
  for (const std::string n : {"64", "30464"}) {
    INFO("--n " << n);
    TcFile f;
    compile_tc(f, DType::kFp16, {"--window-rows", "16"}, dense_weights(), n);
    const std::string cu = f.text();
    const TcArrays t(cu);
    REQUIRE(t.rows == 16);
    for (const int64_t h : {0, 1}) {
      INFO("half " << h);
      // Window 0's row in slot 8h + 3 (row 3 of half h), at its first non-zero.
      const int64_t r = t.window_rows[static_cast<size_t>(8 * h + 3)];
      REQUIRE(r >= 0);
      const int32_t first = f.a.row_ptr[static_cast<size_t>(r)];
      const int64_t c = f.a.col_idx[static_cast<size_t>(first)];
      const ValuePlace p = find_value(t, r, c);
      CHECK(static_cast<int64_t>(p.word % 2) == h);  // the lane's word h
      const uint32_t bits = t.half_bits(p.word, p.half), wrong = bits ^ 1u;
      const float want = round_to_dtype(f.a.values[static_cast<size_t>(first)], DType::kFp16);
      CHECK(from_half_bits(static_cast<uint16_t>(bits), DType::kFp16) == want);
      size_t at = 0;
      const std::string text =
          set_element(cu, kA, p.word, word_literal(static_cast<uint32_t>(t.a[p.word]) ^ (1u << (16 * p.half))), &at);
      const test::Verified v = f.verify(text);
      check_one_difference(
          v, text, at,
          fmt::format("A({}, {}) is {} in the code (spmmc_tc_a[{}], {} half (block {}, lane {}, word {}) is 0x{:04x}) but {} "
                      "in {}",
                      r, c, hex_float(from_half_bits(static_cast<uint16_t>(wrong), DType::kFp16)), p.word,
                      p.half ? "high" : "low", p.word / 64, p.word % 64 / 2, h, wrong, hex_float(want), f.weights_name()));
      CHECK(v.result.rows_differing == 1);
    }
  }
}

TEST_CASE("verify tensor-core rejects the staged form of 16 rows: spmmc_tc_chunk_blocks below a window's blocks in a "
          "chunk, out of range or missing, and spmmc_tc_a's words",
          "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kFp16, {"--window-rows", "16"}, dense_weights(), "30464");
  REQUIRE(f.report["kernel"]["tensor_core"]["kernel"] == "staged");
  const std::string cu = f.text();
  const TcArrays t(cu);
  const std::string constant = "constexpr int spmmc_tc_chunk_blocks = ";
  const size_t value_at = cu.find(constant + "7;") + constant.size();
  REQUIRE(value_at != std::string::npos + constant.size());
  REQUIRE_THAT(cu, Catch::Contains("constexpr int spmmc_tc_chunks = 6;"));
  const std::vector<int64_t> at = initializer_values(cu, kChunkBlock);
  REQUIRE(at.size() == static_cast<size_t>(6 * t.windows() + 1));
  SECTION("one below the most blocks a window has in a chunk: the copy of its words of A would overflow") {
    size_t j = 0;
    while (j + 1 < at.size() && at[j + 1] - at[j] < 7) ++j;
    REQUIRE(j + 1 < at.size());
    const std::string text = test::replace_first(cu, constant + "7;", constant + "6;");
    const test::Verified v = f.verify(text);
    check_one_difference(v, text, value_at,
                         fmt::format("spmmc_tc_chunk_blocks is 6, but window {} has 7 blocks in chunk {} (blocks {} to {}: "
                                     "spmmc_tc_chunk_block[{}] .. [{}]): the staged kernel copies a window's words of A "
                                     "and offsets for a chunk into shared-memory buffers of spmmc_tc_chunk_blocks blocks, "
                                     "and this copy would overflow them",
                                     j / 6, j % 6, at[j], at[j] + 6, j, j + 1));
    const auto r = run_spmmc({"verify", f.edited().string(), "--against", f.weights.string()});
    CHECK(r.exit_code == 65);
    CHECK_THAT(r.err, Catch::Contains(fmt::format("{}:{}:{}: error: spmmc_tc_chunk_blocks is 6, but window ",
                                                  f.edited().string(), test::line_of(text, value_at),
                                                  test::column_of(text, value_at))));
  }
  SECTION("more than a chunk of 56 rows can give a window (the template's static_assert, or verify without it)") {
    const std::string text = test::replace_first(cu, constant + "7;", constant + "8;");
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK_FALSE(v.code.analyzed);
    CHECK(find_message(v, "a window's vectors in a chunk are distinct rows of it") != nullptr);
    const std::string unasserted =
        test::replace_first(text, "static_assert(spmmc_tc_chunk_blocks <= (spmmc_tc_chunk_rows + 7) / 8,", "static_assert(true,");
    check_one_difference(f.verify(unasserted), unasserted, value_at,
                         "spmmc_tc_chunk_blocks is 8, but a window has at most 7 blocks in a chunk of spmmc_tc_chunk_rows "
                         "= 56 rows (its vectors there are distinct rows of the chunk, 8 to a block)");
  }
  SECTION("no spmmc_tc_chunk_blocks") {
    // Every mention renamed (the kernel's too): the file compiles, without the constant verify reads.
    const test::Verified v = f.verify(test::replace_all(cu, "spmmc_tc_chunk_blocks", "spmmc_tc_most_blocks"));
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(find_message(v, "spmmc_tc_chunk_block without spmmc_tc_chunk_blocks (a constant of the staged tensor-core "
                          "kernel)") != nullptr);
  }
  SECTION("spmmc_tc_a one word short: two words per lane and block") {
    const std::string text = without_last_element(cu, kA);
    check_one_difference(f.verify(text), text, text.find("spmmc_tc_a[] = {"),
                         fmt::format("spmmc_tc_a has {} elements, but the {} blocks of spmmc_tc_cols need {} (64 words per "
                                     "block, 2 per lane: one per 8 rows of the windows of spmmc_tc_rows = 16)",
                                     t.a.size() - 1, t.a.size() / 64, t.a.size()));
  }
}

TEST_CASE("verify tensor-core rejects spmmc_tc_chunk_blocks without the chunk table", "[verify][tensor-core][corrupt]") {
  TcFile f;
  compile_tc(f, DType::kFp16, {"--window-rows", "16"}, dense_weights());
  const std::string cu = f.text();
  REQUIRE(cu.find("constexpr int spmmc_tc_chunk_blocks") == std::string::npos);
  const std::string text = test::replace_first(cu, "constexpr int spmmc_tc_warps = ",
                                               "constexpr int spmmc_tc_chunk_blocks = 7;\nconstexpr int spmmc_tc_warps = ");
  const test::Verified v = f.verify(text);
  INFO(v.messages);
  REQUIRE(v.result.differences.size() == 1);
  CHECK(v.result.differences[0].message ==
        "spmmc_tc_chunk_blocks (a constant of the staged tensor-core kernel) without spmmc_tc_chunk_block, its chunk table");
  CHECK(v.result.differences[0].where.line == test::line_of(text, text.find("constexpr int spmmc_tc_chunk_blocks")));
}

// Real layers (read in place from ../shared/data; skipped where absent): a transformer FFN layer at
// n = 4096 and an attention layer, in windows of 16 rows (the staged kernel's chunks of 56 rows
// where a window's blocks in a chunk of 64 would not fit) and of whatever height spmmc picks.
TEST_CASE("verify tensor-core: real layers in windows of 16 rows and of 8", "[verify][tensor-core][shared-data]") {
  const fs::path data = test::shared_data_dir();
  if (data.empty()) return;
  struct Real {
    std::string file;
    std::vector<std::string> extra;
  };
  const std::string dir = "dlmc/transformer/magnitude_pruning/";
  const std::vector<Real> files = {
      {dir + "0.7/body_encoder_layer_0_ffn_conv1_fully_connected.smtx", {"--window-rows", "16"}},
      {dir + "0.5/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx", {}},
      {dir + "0.5/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx", {"--window-rows", "16"}},
      {dir + "0.5/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx", {"--window-rows", "8"}}};
  test::TempDir out;
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path path = data / files[i].file;
    INFO(files[i].file << (files[i].extra.empty() ? "" : " " + files[i].extra[0] + " " + files[i].extra[1]));
    if (!fs::exists(path)) {
      WARN("skipped: " << path << " is absent");
      continue;
    }
    const fs::path folder = out.path / std::to_string(i);
    std::vector<std::string> args = {"compile", path.string(), "--n", "4096", "--dtype", "fp16", "--family", "tensor-core",
                                     "--name", "real", "-o", folder.string(), "--quiet", "--reproducible"};
    args.insert(args.end(), files[i].extra.begin(), files[i].extra.end());
    const auto c = run_spmmc(args);
    INFO(c.err);
    REQUIRE(c.exit_code == 0);
    const nlohmann::json tc = nlohmann::json::parse(test::read_file(folder / "real.json"))["kernel"]["tensor_core"];
    if (!files[i].extra.empty()) CHECK(tc["window_rows"] == std::stoi(files[i].extra[1]));
    const auto r = run_spmmc({"verify", (folder / "real.cu").string(), "--against", path.string(), "--json"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    const auto report = nlohmann::json::parse(r.out);
    CHECK(report["match"] == true);
    CHECK(report["tensor_core"]["window_rows"] == tc["window_rows"]);
    CHECK(report["tensor_core"]["windows"] == tc["windows"]);
    CHECK(report["tensor_core"]["vectors"] == tc["vectors"]);
    if (tc["kernel"] == "staged") CHECK(report["tensor_core"]["chunk_rows"] == tc["chunk_rows"]);
    else CHECK(report["tensor_core"]["chunk_rows"].is_null());
  }
}

TEST_CASE("verify: a tfloat32 file of the unrolled family is float32's code with A rounded to tf32",
          "[verify][tensor-core][tf32]") {
  test::TempDir dir;
  const Csr a = tc_weights();
  Csr rounded = a;
  int changed = 0;
  for (float& v : rounded.values) changed += round_to_dtype(v, DType::kTf32) != v ? 1 : 0;
  REQUIRE(changed > 0);  // else the float32 file below could not differ from the tf32 one
  const fs::path weights = dir.path / "a.mtx";
  write_matrix(a, weights.string(), MatrixFormat::kMatrixMarket, "tests/verify/tensor_core_test.cpp");
  // --dtype tf32 with a tile: the unrolled family, verified bit for bit against A rounded to tf32.
  auto r = run_spmmc({"compile", weights.string(), "--n", "64", "--name", "layer0", "--tile", "8x64", "--dtype", "tf32", "-o",
                      (dir.path / "tf32").string(), "--quiet"});
  REQUIRE(r.exit_code == 0);
  const test::Verified good = test::verify_file(dir.path / "tf32" / "layer0.cu", a);
  INFO(good.messages);
  CHECK(good.code.analyzed);
  CHECK(good.code.dtype == DType::kTf32);
  CHECK(good.result.match);
  // The float32 file of the same tile relabelled tfloat32: its immediates are A's unrounded values.
  r = run_spmmc({"compile", weights.string(), "--n", "64", "--name", "layer0", "--tile", "8x64", "-o",
                 (dir.path / "fp32").string(), "--quiet"});
  REQUIRE(r.exit_code == 0);
  const fs::path cu = dir.path / "fp32" / "layer0.cu";
  test::write_file(cu, test::replace_first(test::read_file(cu), "\"float32\",", "\"tfloat32\","));
  const test::Verified v = test::verify_file(cu, a);
  INFO(v.messages);
  CHECK(v.code.analyzed);
  CHECK_FALSE(v.result.match);
  CHECK_FALSE(v.messages.empty());
}

}  // namespace
}  // namespace spmmc
