// analyze_emitted_kernel (verify/): what it reconstructs from emitted kernels of awkward shapes
// (compared with what the emitter says it wrote), a hand-computed kernel in full, the prelude
// standing in for a missing header, and its refusals: unrecognised code, truncated files,
// missing files.
#include "verify/analyze_emitted_kernel.h"

#include <cfloat>
#include <cmath>
#include <random>
#include <regex>

#include "compiler/read_matrix.h"
#include "tests/test_util.h"
#include "tests/verify/verify_test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

struct ShapeCase {
  std::string name;
  Csr a;
  int32_t m1;
  ReorderMethod method;
  int32_t n1 = 32;
};

std::function<float(int32_t, int32_t)> random_entries(double density, uint32_t seed,
                                                      std::function<bool(int32_t, int32_t)> keep = nullptr) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [=](int32_t r, int32_t c) {
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    std::bernoulli_distribution present(density);
    const bool on = present(*rng);
    const float v = value(*rng);
    return on && (!keep || keep(r, c)) ? v : 0.0f;
  };
}

// Checks that the analysis of `files` matches `a` and agrees with the emitter's own counts.
void check_matches(const test::EmittedFiles& files, const Csr& a, const std::string& label) {
  INFO(label);
  const test::Verified v = test::verify_file(files.cu, a);
  INFO(v.messages);
  for (const auto& e : v.code.errors) INFO(e.where.str() << ": " << e.message);
  REQUIRE(v.code.parsed);
  REQUIRE(v.code.analyzed);
  CHECK(v.result.match);
  CHECK(v.result.total_differences == 0);
  CHECK(v.result.code_nnz == a.nnz());
  CHECK(v.result.rows_written == a.rows);
  CHECK(v.code.grid_x == files.kernel.tiles);
  REQUIRE(v.code.tiles.size() == static_cast<size_t>(files.kernel.tiles));
  CHECK(v.code.uncalled_tiles.empty());
  int64_t loads = 0, fmas = 0, stores = 0;
  for (size_t i = 0; i < v.code.tiles.size(); ++i) {
    const AnalyzedTile& t = v.code.tiles[i];
    CHECK(t.function == "tile_" + std::to_string(i));
    CHECK(t.blocks == std::vector<int64_t>{static_cast<int64_t>(i)});
    CHECK(t.dead_loads == 0);
    CHECK(t.unstored.empty());
    CHECK(t.statements >= static_cast<int64_t>(t.stores.size()) + t.loads - 1 + t.fmas);
    loads += t.loads;
    fmas += t.fmas;
    stores += static_cast<int64_t>(t.stores.size());
  }
  CHECK(loads == files.kernel.loads);
  CHECK(fmas == files.kernel.fmas);
  CHECK(stores == files.kernel.stores);
  CHECK(v.code.info.found);
  CHECK(v.code.info.m.value == std::optional<int64_t>(a.rows));
  CHECK(v.code.info.k.value == std::optional<int64_t>(a.cols));
  CHECK(v.code.info.nnz.value == std::optional<int64_t>(a.nnz()));
  CHECK(v.code.info.a_tiles.value == std::optional<int64_t>(files.kernel.tiles));
}

TEST_CASE("verify: emitted kernels of awkward shapes match their weights", "[verify]") {
  test::TempDir dir;
  std::vector<ShapeCase> cases;
  const Csr ragged = test::make_matrix(37, 20, random_entries(0.3, 1));
  cases.push_back({"ragged_m1_8", ragged, 8, ReorderMethod::kColumnOverlap});
  cases.push_back({"ragged_m1_4_none", ragged, 4, ReorderMethod::kNone, 64});
  // Rows 0, 5, 6, 19 and columns 0, 10-14, 29 empty.
  const auto holes = [](int32_t r, int32_t c) {
    return r != 0 && r != 5 && r != 6 && r != 19 && c != 0 && c != 29 && (c < 10 || c > 14);
  };
  const Csr holey = test::make_matrix(20, 30, random_entries(0.4, 2, holes));
  cases.push_back({"holey_overlap", holey, 4, ReorderMethod::kColumnOverlap});
  cases.push_back({"holey_none", holey, 4, ReorderMethod::kNone});
  cases.push_back({"holey_length", holey, 2, ReorderMethod::kRowLength});
  cases.push_back({"single_nonzero", test::make_matrix(5, 7, [](int32_t r, int32_t c) { return r == 3 && c == 4 ? -1.25f : 0.0f; }),
                   2, ReorderMethod::kColumnOverlap});
  cases.push_back({"one_by_one", test::make_matrix(1, 1, [](int32_t, int32_t) { return 3.0f; }), 1, ReorderMethod::kNone});
  // Every row uses column 3 only: one-column tiles (no prefetch register).
  cases.push_back({"one_column_tiles", test::make_matrix(9, 5, [](int32_t r, int32_t c) { return c == 3 ? 0.5f + static_cast<float>(r) : 0.0f; }),
                   4, ReorderMethod::kNone});
  cases.push_back({"m1_above_m", test::make_matrix(5, 6, random_entries(0.5, 3)), 64, ReorderMethod::kColumnOverlap});
  // Many rows sharing the same two columns.
  cases.push_back({"shared_columns", test::make_matrix(32, 8, [](int32_t r, int32_t c) { return c == 1 || c == 5 ? static_cast<float>(r + 1) * (c == 1 ? 1.0f : -0.125f) : 0.0f; }),
                   16, ReorderMethod::kColumnOverlap});
  // Extreme values: largest, denormal, negative, one ulp above 1.
  const std::vector<float> extremes = {FLT_MAX, -FLT_MAX, std::nextafter(0.0f, 1.0f), -0x1p-140f, 1e-38f,
                                       -0x1.fffffep+127f, std::nextafter(1.0f, 2.0f), -3.0f, 0x1p-126f};
  cases.push_back({"extreme_values", test::make_matrix(3, 4, [&](int32_t r, int32_t c) {
                     const size_t i = static_cast<size_t>(r * 4 + c);
                     return i < extremes.size() ? extremes[i] : 0.0f;
                   }),
                   2, ReorderMethod::kNone});
  cases.push_back({"random_64x48_n1_128", test::make_matrix(64, 48, random_entries(0.2, 4)), 16, ReorderMethod::kColumnOverlap, 128});
  for (size_t i = 0; i < cases.size(); ++i) {
    const ShapeCase& c = cases[i];
    const fs::path folder = dir.path / c.name;
    fs::create_directories(folder);
    check_matches(test::emit_kernel_files(folder, "k" + std::to_string(i), c.a, c.m1, c.method, c.n1), c.a, c.name);
  }
}

TEST_CASE("verify: duplicates and explicit zeros of the file are checked as the canonical CSR", "[verify]") {
  // (1,1) twice sums to 0.75; (2,2) is a stored zero; (4,1) twice cancels: two non-zeros remain.
  const Csr a = test::read_text(MatrixFormat::kMatrixMarket,
                                "%%MatrixMarket matrix coordinate real general\n4 4 6\n1 1 0.5\n1 1 0.25\n2 2 0\n"
                                "3 3 1e-3\n4 1 -2\n4 1 2\n");
  REQUIRE(a.nnz() == 2);
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "dups", a, 2, ReorderMethod::kNone);
  check_matches(files, a, "dups");
  const test::Verified v = test::verify_file(files.cu, a);
  REQUIRE(v.code.tiles.size() == 2);
  REQUIRE(v.code.tiles[0].stores.size() == 2);
  REQUIRE(v.code.tiles[0].stores[0].products.size() == 1);
  CHECK(v.code.tiles[0].stores[0].products[0].value == 0.75f);
}

TEST_CASE("verify: the hand-computed 3 x 4 kernel, product by product", "[verify]") {
  // Row 0 = (1.5 at 0, -2 at 3), row 1 empty, row 2 = (0.25 at 0, 3 at 2); tiles of 2 rows in order.
  const Csr a = test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0});
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "tiny", a, 2, ReorderMethod::kNone);
  const EmittedKernelAnalysis code = analyze_emitted_kernel(files.cu.string());
  REQUIRE(code.analyzed);
  CHECK(code.kernel == "tiny_kernel");
  CHECK(code.grid_x == 2);
  REQUIRE(code.blocks.size() == 2);
  CHECK(code.blocks[0].tiles == std::vector<int32_t>{0});
  CHECK(code.blocks[1].tiles == std::vector<int32_t>{1});
  REQUIRE(code.tiles.size() == 2);
  const AnalyzedTile& t0 = code.tiles[0];
  // float acc0.., float x.., y = .., fmaf, x = y, fmaf, two stores
  CHECK(t0.statements == 8);
  CHECK(t0.loads == 2);
  CHECK(t0.fmas == 2);
  REQUIRE(t0.stores.size() == 2);
  CHECK(t0.stores[0].row == 0);
  REQUIRE(t0.stores[0].products.size() == 2);
  CHECK(t0.stores[0].products[0].column == 0);
  CHECK(t0.stores[0].products[0].value == 1.5f);
  CHECK(t0.stores[0].products[1].column == 3);
  CHECK(t0.stores[0].products[1].value == -2.0f);
  CHECK(t0.stores[1].row == 1);
  CHECK(t0.stores[1].products.empty());
  // Locations: the first FMA's statement, on its line of the file.
  const size_t at = files.kernel.cu.find("acc0 = fmaf(0x1.8p+0f");
  REQUIRE(at != std::string::npos);
  CHECK(t0.stores[0].products[0].where.line == test::line_of(files.kernel.cu, at));
  CHECK(t0.stores[0].products[0].where.column == 3);
  CHECK(t0.stores[0].products[0].where.file == files.cu.string());
  const AnalyzedTile& t1 = code.tiles[1];
  REQUIRE(t1.stores.size() == 1);
  CHECK(t1.stores[0].row == 2);
  REQUIRE(t1.stores[0].products.size() == 2);
  CHECK(t1.stores[0].products[1].column == 2);
  CHECK(t1.stores[0].products[1].value == 3.0f);
  CHECK(code.info.name.value == std::optional<std::string>("tiny"));
  CHECK(code.info.m1.value == std::optional<int64_t>(2));
  CHECK(code.info.n1.value == std::optional<int64_t>(32));
  CHECK(code.notes.empty());
}

TEST_CASE("verify: without NAME.h beside it the prelude stands in, and says so", "[verify]") {
  const Csr a = test::make_matrix(12, 10, random_entries(0.4, 5));
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "alone", a, 4, ReorderMethod::kColumnOverlap);
  fs::remove(files.h);
  check_matches(files, a, "alone");
  const EmittedKernelAnalysis code = analyze_emitted_kernel(files.cu.string());
  REQUIRE(code.notes.size() == 1);
  CHECK_THAT(code.notes[0], Catch::Contains("alone.h is not beside"));
}

// The declarations "type name;" of a struct definition, comments and spacing removed.
std::vector<std::string> struct_fields(const std::string& text) {
  const std::string no_comments = std::regex_replace(text, std::regex(R"(/\*[\s\S]*?\*/)"), "");
  const size_t open = no_comments.find("typedef struct spmmc_kernel_info {");
  REQUIRE(open != std::string::npos);
  const std::string body = no_comments.substr(open, no_comments.find('}', open) - open);
  std::vector<std::string> fields;
  const std::regex field(R"(([A-Za-z_][\w ]*\*?)\s+(\w+);)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), field); it != std::sregex_iterator(); ++it)
    fields.push_back(std::regex_replace((*it)[1].str(), std::regex(R"(\s+)"), " ") + " " + (*it)[2].str());
  return fields;
}

TEST_CASE("verify: the prelude's spmmc_kernel_info is the emitter's, field by field", "[verify]") {
  const std::string source = SPMMC_SOURCE_DIR;
  const auto emitted = struct_fields(test::read_file(source + "/codegen/templates/spmmc_kernel_info.h"));
  const auto prelude = struct_fields(test::read_file(source + "/verify/prelude/spmmc_kernel_info.h"));
  CHECK(emitted.size() == 17);
  CHECK(prelude == emitted);
}

TEST_CASE("verify: code it does not recognise is an error at its line and column, not a guess", "[verify]") {
  const Csr a = test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0});
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "odd", a, 2, ReorderMethod::kNone);
  struct Case {
    std::string name, from, to, message;
  };
  const std::vector<Case> cases = {
      {"compound assignment", "  x = y;\n", "  x = y;\n  acc0 += 1.0f;\n", "unrecognised statement 'acc0 += 1.0f' in tile_0"},
      {"a loop", "  x = y;\n", "  x = y;\n  for (int i = 0; i < 2; ++i) acc0 = fmaf(1.0f, x, acc0);\n", "unrecognised statement 'for"},
      {"two registers", "acc0 = fmaf(0x1.8p+0f, x, acc0)", "acc0 = fmaf(y, x, acc0)", "neither factor of 'fmaf(y, x, acc0)' is a constant in tile_0"},
      {"a constant stored", "c[1 * n] = acc1;", "c[1 * n] = 1.0f;", "unrecognised constant '1.0f' (only 0.0f starts a sum) in tile_0"},
      {"a load of C", "y = __ldg(b + 3 * n);", "y = __ldg(c + 3 * n);", "unrecognised load"},
      {"another call", "case 1: tile_1(B + col, C + col, n); break;", "case 1: tile_1(B + col, C + col, n + 1); break;",
       "unrecognised arguments of tile_1"},
      {"a read before a write", "  float x = __ldg(b + 0 * n), y;\n", "  float x = __ldg(b + 0 * n), y;\n  x = y;\n",
       "'y' is read before it is assigned in tile_0"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string text = test::replace_first(files.kernel.cu, c.from, c.to);
    const fs::path path = dir.path / "odd.cu";
    test::write_file(path, text);
    const test::Verified v = test::verify_file(path, a);
    INFO(v.messages);
    CHECK(v.code.parsed);
    CHECK_FALSE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    REQUIRE_FALSE(v.code.errors.empty());
    CHECK_THAT(v.code.errors[0].message, Catch::Contains(c.message));
    const size_t at = text.find(c.to);
    CHECK(v.code.errors[0].where.line >= test::line_of(text, at));
    CHECK(v.code.errors[0].where.line <= test::line_of(text, at + c.to.size()));
    CHECK(v.code.errors[0].where.column > 0);
  }
}

TEST_CASE("verify: a truncated file gives Clang's errors with their places", "[verify]") {
  const Csr a = test::make_matrix(20, 16, random_entries(0.3, 6));
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "cut", a, 4, ReorderMethod::kNone);
  for (const size_t keep : {files.kernel.cu.size() / 2, files.kernel.cu.size() - 40, size_t{100}}) {
    INFO("kept " << keep << " bytes");
    test::write_file(files.cu, files.kernel.cu.substr(0, keep));
    const test::Verified v = test::verify_file(files.cu, a);
    CHECK_FALSE(v.code.parsed);
    CHECK_FALSE(v.result.match);
    REQUIRE_FALSE(v.result.differences.empty());
    CHECK(v.result.differences[0].where.file == files.cu.string());
    CHECK(v.result.differences[0].where.line > 0);
    CHECK(v.result.differences[0].where.column > 0);
  }
}

TEST_CASE("verify: a missing file is a no-input error", "[verify]") {
  test::TempDir dir;
  const UserError e = test::expect_user_error([&] { analyze_emitted_kernel((dir.path / "absent.cu").string()); });
  CHECK(e.code() == ExitCode::kNoInput);
  CHECK(e.where().file == (dir.path / "absent.cu").string());
  CHECK(test::expect_user_error([&] { analyze_emitted_kernel(dir.path.string()); }).code() == ExitCode::kNoInput);
}

TEST_CASE("verify: the Clang arguments parse device code without CUDA headers", "[verify]") {
  const auto args = emitted_kernel_clang_args();
  for (const char* expected : {"-xcuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--no-cuda-version-check", "-nostdinc"})
    CHECK(std::find(args.begin(), args.end(), expected) != args.end());
}

TEST_CASE("verify: real weights from the shared data set match", "[verify][shared-data]") {
  const fs::path data = test::shared_data_dir();
  if (data.empty()) return;
  struct Real {
    std::string file;
    ReadOptions options;
    int32_t m1;
  };
  ReadOptions seeded;
  seeded.seed = 7;
  const std::vector<Real> files = {{"weights/mobilenet/contraction_1x1_1.npy", {}, 16},
                                   {"dlmc/rn50/magnitude_pruning/0.98/bottleneck_2_block_group1_1_1.smtx", seeded, 8}};
  test::TempDir dir;
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path path = data / files[i].file;
    if (!fs::exists(path)) {
      WARN("skipped: " << path << " is absent");
      continue;
    }
    const Csr a = read_matrix_file(path.string(), files[i].options).csr;
    check_matches(test::emit_kernel_files(dir.path, "real" + std::to_string(i), a, files[i].m1, ReorderMethod::kColumnOverlap),
                  a, files[i].file);
  }
}

}  // namespace
}  // namespace spmmc
