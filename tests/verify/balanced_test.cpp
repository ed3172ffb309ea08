// spmmc verify of the balanced family's files (spmmc compile --family balanced, a_format
// "csr-pieces-constants", issue 28): files of 1, 2 and 4 pieces per warp match their weights, with
// rows cut into several pieces and empty rows; a piece table that leaves products out, sums them
// twice, puts a row's pieces out of order or in two blocks, forgets a row, miscounts a row's pieces or
// does not fit the launch, an edited constant and a __global__ function besides the three kernels are
// each refused at their file:line:column. The files are written by the spmmc binary; the
// verification runs in-process (and through the CLI for the exit codes and the report).
#include <array>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/formats/write_matrix.h"
#include "tests/test_util.h"
#include "tests/verify/verify_test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

// 96 x 80: rows 0-3 of 40-70 non-zeros (cut at 8 products into several pieces), rows 10 and 50-52
// empty, the others 1-9 non-zeros; column 79 empty.
Csr uneven_weights() {
  return test::make_matrix(96, 80, [](int32_t r, int32_t c) -> float {
    if (r == 10 || (r >= 50 && r <= 52) || c == 79) return 0.0f;
    const bool keep = r < 4 ? (r * 7 + c * 3) % 8 < 5 + r : (r * 13 + c * 29) % 23 < 1 + r % 9 / 3;
    return keep ? static_cast<float>((r * 31 + c * 17) % 97 - 48) / 7.3f : 0.0f;
  });
}

struct BalancedFile {
  test::TempDir dir;
  fs::path weights, cu;
  Csr a;

  std::string text() const { return test::read_file(cu); }
  // `text` written as a copy beside NAME.cu (NAME.h stays the header it includes), verified in-process.
  test::Verified verify(const std::string& text) const {
    const fs::path copy = cu.parent_path() / "layer0_edited.cu";
    test::write_file(copy, text);
    return test::verify_file(copy, a);
  }
};

void compile_balanced(BalancedFile& f, int groups) {
  f.a = uneven_weights();
  f.weights = f.dir.path / "a.mtx";
  write_matrix(f.a, f.weights.string(), MatrixFormat::kMatrixMarket, "tests/verify/balanced_test.cpp");
  const auto r = run_spmmc({"compile", f.weights.string(), "--n", "32", "--name", "layer0", "--family", "balanced",
                            "--piece-length", "8", "--balanced-groups", std::to_string(groups), "-o",
                            (f.dir.path / "out").string(), "--quiet", "--reproducible"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  f.cu = f.dir.path / "out" / "layer0.cu";
}

// The piece table of a file: its elements {row, begin, end, w} in order, and where its initialiser
// list's text begins and ends.
struct PieceTable {
  std::vector<std::array<int64_t, 4>> pieces;
  size_t begin = 0, end = 0;
};

PieceTable read_pieces(const std::string& cu, const std::string& table = "spmmc_piece") {
  PieceTable t;
  const std::string head = table + "[] = {";
  const size_t at = cu.find(head);
  REQUIRE(at != std::string::npos);
  t.begin = at + head.size();
  t.end = cu.find("};", t.begin);
  REQUIRE(t.end != std::string::npos);
  const std::string list = cu.substr(t.begin, t.end - t.begin);
  const std::regex element(R"(\{(-?\d+), (-?\d+), (-?\d+), (-?\d+)\})");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), element); it != std::sregex_iterator(); ++it)
    t.pieces.push_back({std::stoll((*it)[1]), std::stoll((*it)[2]), std::stoll((*it)[3]), std::stoll((*it)[4])});
  return t;
}

// `cu` with its piece table replaced by `pieces` (16 to a line, as the printer writes them).
std::string with_pieces(const std::string& cu, const PieceTable& t, const std::vector<std::array<int64_t, 4>>& pieces) {
  std::string list;
  for (size_t i = 0; i < pieces.size(); ++i)
    list += fmt::format("{}{{{}, {}, {}, {}}}", i == 0 ? "" : i % 16 == 0 ? ",\n" : ", ", pieces[i][0], pieces[i][1],
                        pieces[i][2], pieces[i][3]);
  return cu.substr(0, t.begin) + list + cu.substr(t.end);
}

// The first element of a row cut into at least `count` pieces.
size_t first_cut_piece(const PieceTable& t, int64_t slots, int64_t count = 2) {
  for (size_t i = 0; i < t.pieces.size(); ++i)
    if (t.pieces[i][0] >= 0 && t.pieces[i][3] / slots >= count && static_cast<int64_t>(i) % slots == t.pieces[i][3] % slots)
      return i;
  FAIL("no row of " << count << " pieces");
  return 0;
}

// `v` refused, one of its messages containing `text`.
void only(const test::Verified& v, const std::string& text) {
  INFO(v.messages);
  CHECK_FALSE(v.result.match);
  CHECK_THAT(v.messages, Catch::Contains(text));
}

int64_t slots_of(const test::Verified& v) { return v.code.balanced_path.slots.field.value.value_or(0); }

TEST_CASE("verify balanced: files of 1, 2 and 4 pieces per warp match, cut rows and empty rows included",
          "[verify][balanced]") {
  for (const int groups : {1, 2, 4}) {
    INFO("--balanced-groups " << groups);
    BalancedFile f;
    compile_balanced(f, groups);
    const test::Verified v = test::verify_file(f.cu, f.a);
    for (const auto& e : v.code.errors) INFO(e.where.str() << ": " << e.message);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(v.result.match);
    CHECK(v.code.balanced);
    CHECK_FALSE(v.code.generic_only);
    CHECK(v.code.balanced_path.groups.field.value == groups);
    CHECK(v.result.code_nnz == f.a.nnz());
    CHECK(v.result.balanced_rows == 96);  // the empty ones too: they store +0
    CHECK(v.result.balanced_cut_rows >= 4);
    CHECK(v.result.balanced_pieces > 96);
  }
}

TEST_CASE("verify balanced path: the second table of a generic file matches, and an edited piece of it is refused",
          "[verify][balanced]") {
  // The small-n path up to 511, its second table (spmmc_piece_mid, pieces of 32: rows 0-3 cut) from 512 to
  // 1023 (docs/design/small-n.md, *Uneven rows from n = 512*), forced on this small matrix.
  test::TempDir dir;
  const Csr a = uneven_weights();
  const fs::path weights = dir.path / "a.mtx";
  write_matrix(a, weights.string(), MatrixFormat::kMatrixMarket, "tests/verify/balanced_test.cpp");
  const auto r = run_spmmc({"compile", weights.string(), "--n", "32", "--name", "layer0", "--family", "generic",
                            "--balanced-below", "512", "--balanced-mid-below", "1024", "-o", (dir.path / "out").string(),
                            "--quiet", "--reproducible"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const fs::path cu = dir.path / "out" / "layer0.cu";
  const std::string text = test::read_file(cu);
  const test::Verified v = test::verify_file(cu, a);
  INFO(v.messages);
  REQUIRE(v.code.analyzed);
  CHECK(v.result.match);
  CHECK(v.code.generic_only);
  REQUIRE(v.code.balanced_mid.pieces.found);
  const PieceTable t = read_pieces(text, "spmmc_piece_mid");
  size_t cut = t.pieces.size();
  for (size_t i = 0; i < t.pieces.size(); ++i)
    if (t.pieces[i][0] >= 0 && t.pieces[i][3] / 16 >= 2 && cut == t.pieces.size()) cut = i;
  REQUIRE(cut < t.pieces.size());
  auto p = t.pieces;
  p[cut][2] -= 1;  // its first piece one product short: the row's next piece no longer starts where it ends
  const fs::path edited = dir.path / "out" / "layer0_edited.cu";
  test::write_file(edited, with_pieces(text, t, p));
  const test::Verified bad = test::verify_file(edited, a);
  INFO(bad.messages);
  CHECK_FALSE(bad.result.match);
  CHECK_THAT(bad.messages, Catch::Contains(fmt::format("spmmc_piece_mid[{}]", cut + 1)));
}

TEST_CASE("verify rejects balanced: pieces that leave products out, sum them twice or run out of order",
          "[verify][balanced][corrupt]") {
  BalancedFile f;
  compile_balanced(f, 1);
  const std::string cu = f.text();
  const test::Verified clean = test::verify_file(f.cu, f.a);
  REQUIRE(clean.result.match);
  const int64_t S = slots_of(clean);
  const PieceTable t = read_pieces(cu);
  const size_t head = first_cut_piece(t, S);
  const int64_t row = t.pieces[head][0];
  SECTION("a piece that ends one product early") {
    auto p = t.pieces;
    p[head][2] -= 1;
    only(f.verify(with_pieces(cu, t, p)),
         fmt::format("spmmc_piece[{}], piece 1 of row {}, begins at product {}, but the row's piece before it ends at {}: "
                     "products [{}, {}) are never multiplied",
                     head + 1, row, p[head][2] + 1, p[head][2], p[head][2], p[head][2] + 1));
  }
  SECTION("two pieces that overlap") {
    auto p = t.pieces;
    p[head + 1][1] -= 1;
    only(f.verify(with_pieces(cu, t, p)), fmt::format("products [{}, {}) are multiplied twice", p[head + 1][1], p[head][2]));
  }
  SECTION("a row's pieces swapped: added out of order") {
    auto p = t.pieces;
    std::swap(p[head], p[head + 1]);
    only(f.verify(with_pieces(cu, t, p)),
         fmt::format("spmmc_piece[{}], piece 0 of row {}, begins at product {}, but the row's first product is at {}", head,
                     row, p[head][1], f.a.row_ptr[static_cast<size_t>(row)]));
  }
  SECTION("the last piece short of the row's end") {
    const int64_t pieces = t.pieces[head][3] / S;
    auto p = t.pieces;
    const size_t last = head + static_cast<size_t>(pieces) - 1;
    p[last][2] -= 2;
    only(f.verify(with_pieces(cu, t, p)),
         fmt::format("row {}'s last piece, spmmc_piece[{}], ends at product {}, but row {} of A ends at {}", row, last,
                     p[last][2], row, p[last][2] + 2));
  }
  SECTION("a range outside its row") {
    auto p = t.pieces;
    p[head][1] -= 1;
    only(f.verify(with_pieces(cu, t, p)), fmt::format("spmmc_piece[{}] sums products [{}, {}) into row {} of C, but row {} "
                                                      "of A is products",
                                                      head, p[head][1], p[head][2], row, row));
  }
  SECTION("a row out of range") {
    auto p = t.pieces;
    p[head][0] = 96;
    only(f.verify(with_pieces(cu, t, p)), fmt::format("spmmc_piece[{}] is a piece of row 96, but weights.mtx has rows 0 to 95",
                                                      head));
  }
}

TEST_CASE("verify rejects balanced: a row forgotten, its pieces miscounted, split over blocks or past the table",
          "[verify][balanced][corrupt]") {
  BalancedFile f;
  compile_balanced(f, 2);
  const std::string cu = f.text();
  const test::Verified clean = test::verify_file(f.cu, f.a);
  REQUIRE(clean.result.match);
  const int64_t S = slots_of(clean);
  const PieceTable t = read_pieces(cu);
  SECTION("an empty row's piece made idle: its row of C is never written") {
    auto p = t.pieces;
    size_t empty = 0;
    while (empty < p.size() && p[empty][0] != 10) ++empty;
    REQUIRE(empty < p.size());
    p[empty] = {-1, 0, 0, S};
    only(f.verify(with_pieces(cu, t, p)), "row 10 of A (0 products in weights.mtx) is in no piece of spmmc_piece: row 10 "
                                          "of C is never written");
  }
  SECTION("a row's pieces miscounted") {
    const size_t head = first_cut_piece(t, S);
    auto p = t.pieces;
    const int64_t pieces = p[head][3] / S;
    for (size_t q = 0; q < static_cast<size_t>(pieces); ++q) p[head + q][3] += S;  // one more than it has
    only(f.verify(with_pieces(cu, t, p)),
         fmt::format("row {} of A has {} pieces in spmmc_piece, but they say {}", p[head][0], pieces, pieces + 1));
  }
  SECTION("a piece that disagrees with its row's others") {
    const size_t head = first_cut_piece(t, S);
    auto p = t.pieces;
    p[head + 1][3] += S;
    only(f.verify(with_pieces(cu, t, p)), fmt::format("spmmc_piece[{}] says its row {} has", head + 1, p[head][0]));
  }
  SECTION("a row's pieces in two blocks") {
    // The last piece of a cut row moved to the same slot of the next block (an idle slot there, or
    // swapped with whatever that slot held).
    const size_t head = first_cut_piece(t, S);
    auto p = t.pieces;
    const size_t last = head + static_cast<size_t>(p[head][3] / S) - 1, moved = last + static_cast<size_t>(S);
    REQUIRE(moved < p.size());
    std::swap(p[last], p[moved]);
    only(f.verify(with_pieces(cu, t, p)), "a row's pieces are added in the shared memory of one block");
  }
  SECTION("a table one element short of the launch") {
    auto p = t.pieces;
    p.pop_back();
    only(f.verify(with_pieces(cu, t, p)),
         fmt::format("spmmc_piece has {} elements, but the kernels run", p.size()));
  }
  SECTION("spmmc_balanced_slots that is not warps x groups") {
    const test::Verified v = f.verify(test::replace_first(
        cu, "constexpr int spmmc_balanced_slots = spmmc_balanced_warps * spmmc_balanced_groups;",
        "constexpr int spmmc_balanced_slots = spmmc_balanced_warps;"));
    only(v, fmt::format("spmmc_balanced_slots is {}, but {} warps of 2 pieces each run {}", S / 2, S / 2, S));
    // where the constant's value is written
    CHECK_THAT(v.messages, Catch::Contains("layer0_edited.cu:"));
  }
}

TEST_CASE("verify cli: a balanced file matches and says so, but not once a kernel is added or a weight changed",
          "[verify][balanced][cli]") {
  BalancedFile f;
  compile_balanced(f, 4);
  const auto r = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string()});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("matches a.mtx: 96 x 80, "));
  CHECK_THAT(r.out, Catch::Contains("; the balanced family (A's CSR arrays and its "));
  const auto j = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string(), "--json"});
  REQUIRE(j.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(j.out);
  CHECK(report["family"] == "balanced");
  CHECK(report["match"] == true);
  CHECK(report["balanced"]["rows"] == 96);
  CHECK(report["balanced"]["cut_rows"].get<int64_t>() >= 4);
  CHECK(report["balanced"]["slots"].get<int64_t>() % 4 == 0);  // warps of 4 pieces
  const std::string cu = f.text();
  const fs::path bad = f.cu.parent_path() / "layer0_bad.cu";
  const std::string extra = "__global__ void layer0_extra(const float* B, float* C, int64_t n) { C[0] = B[0] + n; }\n";
  test::write_file(bad, test::replace_first(cu, "extern \"C\" cudaError_t layer0(", extra + "extern \"C\" cudaError_t layer0("));
  const auto k = run_spmmc({"verify", bad.string(), "--against", f.weights.string()});
  CHECK(k.exit_code == 65);
  CHECK_THAT(k.err, Catch::Contains("the __global__ function layer0_extra besides the balanced kernels"));
  const size_t bits = cu.find("0x", cu.find("spmmc_weight_bits[] = {"));
  REQUIRE(bits != std::string::npos);
  std::string changed = cu;
  changed[bits + 2] = changed[bits + 2] == '3' ? 'b' : '3';
  test::write_file(bad, changed);
  const auto w = run_spmmc({"verify", bad.string(), "--against", f.weights.string()});
  CHECK(w.exit_code == 65);
  CHECK_THAT(w.err, Catch::Contains("error: spmmc_weight_bits[0] is"));
}

}  // namespace
}  // namespace spmmc
