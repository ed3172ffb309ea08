// analyze_emitted_kernel (verify/): what it reconstructs from emitted kernels of awkward shapes
// with 1, 2 and 4 columns per thread, in one kernel or split into several (compared with what the
// emitter says it wrote: kernels, launches, cases, tiles), hand-computed kernels in full, the
// prelude standing in for a missing header, and its refusals: unrecognised C++ (kernels and the
// launch loop) and PTX, truncated files, missing files.
#include "verify/analyze_emitted_kernel.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>
#include <regex>

#include <fmt/format.h>

#include "compiler/formats/read_matrix.h"
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

// Checks the unrolled kernels and the launch loop the analysis read against what the emitter
// wrote: kernel j launched j-th with grid.x its tiles, its case x running tile first_j + x.
void check_kernels(const test::EmittedFiles& files, const EmittedKernelAnalysis& code, int32_t v) {
  const std::vector<std::string>& symbols = files.kernel.kernel_symbols;
  REQUIRE(code.kernels.size() == symbols.size());
  CHECK(code.kernel == symbols[0]);
  CHECK(code.launch.found);
  CHECK(code.launch.count == static_cast<int64_t>(symbols.size()));
  CHECK(code.launch.count_name == "spmmc_kernel_count");
  CHECK(code.launch.kernels_name == "spmmc_kernels");
  CHECK(code.launch.tiles_name == "spmmc_kernel_tiles");
  CHECK(code.launch.a_tiles.value == std::optional<int64_t>(files.kernel.tiles));
  REQUIRE(code.launch.launches.size() == symbols.size());
  int64_t first = 0;
  for (size_t j = 0; j < symbols.size(); ++j) {
    INFO("kernel " << j);
    const KernelLaunch& launch = code.launch.launches[j];
    const AnalyzedKernel& kernel = code.kernels[j];
    CHECK(launch.function == symbols[j]);
    CHECK(launch.kernel == static_cast<int32_t>(j));
    CHECK(launch.grid_x == files.kernel.kernel_tiles[j]);
    CHECK(launch.where.line > 0);
    CHECK(launch.tiles_where.line > 0);
    CHECK(kernel.function == symbols[j]);
    CHECK(kernel.waits_for_previous);
    CHECK(kernel.columns.found);
    CHECK(kernel.columns.guarded);
    CHECK(kernel.columns.cols_per_thread == v);
    REQUIRE(kernel.cases.size() == static_cast<size_t>(files.kernel.kernel_tiles[j]));
    for (size_t x = 0; x < kernel.cases.size(); ++x) {
      CHECK(kernel.cases[x].label == static_cast<int64_t>(x));
      CHECK(kernel.cases[x].tiles == std::vector<int32_t>{static_cast<int32_t>(first + static_cast<int64_t>(x))});
    }
    first += files.kernel.kernel_tiles[j];
  }
  CHECK(first == files.kernel.tiles);
  REQUIRE(code.blocks.size() == static_cast<size_t>(files.kernel.tiles));
  for (size_t b = 0; b < code.blocks.size(); ++b) CHECK(code.blocks[b].global == static_cast<int64_t>(b));
}

// Checks that the analysis of `files` (V = v columns per thread, N1 = n1) matches `a` and agrees
// with the emitter's own counts.
void check_matches(const test::EmittedFiles& files, const Csr& a, const std::string& label, int32_t v = 1,
                   int32_t n1 = 32) {
  INFO(label << ", V = " << v);
  const test::Verified result = test::verify_file(files.cu, a);
  INFO(result.messages);
  for (const auto& e : result.code.errors) INFO(e.where.str() << ": " << e.message);
  REQUIRE(result.code.parsed);
  REQUIRE(result.code.analyzed);
  CHECK(result.result.match);
  CHECK(result.result.total_differences == 0);
  CHECK(result.result.code_nnz == a.nnz());
  CHECK(result.result.rows_written == a.rows);
  CHECK(result.code.grid_x == files.kernel.tiles);
  CHECK(result.code.columns.found);
  CHECK(result.code.columns.cols_per_thread == v);
  CHECK(result.code.columns.n1 == n1);
  CHECK(result.code.columns.b_tile_columns == n1);
  CHECK(result.code.columns.threads == n1 / v);
  CHECK(result.code.columns.max_threads == n1 / v);
  CHECK(result.code.columns.guarded);
  REQUIRE(result.code.tiles.size() == static_cast<size_t>(files.kernel.tiles));
  CHECK(result.code.uncalled_tiles.empty());
  int64_t loads = 0, fmas = 0, stores = 0;
  for (size_t i = 0; i < result.code.tiles.size(); ++i) {
    const AnalyzedTile& t = result.code.tiles[i];
    CHECK(t.function == "spmmc_tile_" + std::to_string(i));
    CHECK(t.blocks == std::vector<int64_t>{static_cast<int64_t>(i)});
    CHECK(t.dead_loads == 0);
    CHECK(t.unstored.empty());
    // Per column a row address, a load and its FMAs; per row of C an address, a store.
    CHECK(t.statements >= 2 * t.loads + t.fmas + 2 * static_cast<int64_t>(t.stores.size()) / v);
    for (const AnalyzedStore& store : t.stores) {
      CHECK(store.lane >= 0);
      CHECK(store.lane < v);
      for (const AnalyzedProduct& p : store.products) CHECK(p.lane == store.lane);
    }
    loads += t.loads;
    fmas += t.fmas;
    stores += static_cast<int64_t>(t.stores.size());
  }
  CHECK(loads == files.kernel.loads);
  CHECK(fmas == files.kernel.fmas * v);  // one FMA instruction per non-zero and lane
  CHECK(stores == files.kernel.stores * v);
  CHECK(result.code.info.found);
  CHECK(result.code.info.m.value == std::optional<int64_t>(a.rows));
  CHECK(result.code.info.k.value == std::optional<int64_t>(a.cols));
  CHECK(result.code.info.nnz.value == std::optional<int64_t>(a.nnz()));
  CHECK(result.code.info.a_tiles.value == std::optional<int64_t>(files.kernel.tiles));
  CHECK(result.code.info.cols_per_thread.value == std::optional<int64_t>(v));
  CHECK(result.code.info.n1.value == std::optional<int64_t>(n1));
  CHECK(result.code.generic.row_ptr.values.size() == static_cast<size_t>(a.rows) + 1);
  CHECK(result.code.generic.col_idx.values.size() == std::max<size_t>(1, static_cast<size_t>(a.nnz())));
  CHECK(result.code.generic.weight_bits.values.size() == std::max<size_t>(1, static_cast<size_t>(a.nnz())));
  CHECK(result.code.entry_point == result.code.info.name.value.value_or("?"));
  check_kernels(files, result.code, v);
}

// Matrices of awkward shapes: ragged, with empty rows and columns, a single non-zero, 1 x 1, all
// zero, one-column tiles, M1 above M, shared columns, extreme values.
std::vector<ShapeCase> shape_cases() {
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
  cases.push_back({"all_zero", test::make_matrix(6, 3, [](int32_t, int32_t) { return 0.0f; }), 4, ReorderMethod::kNone});
  // Every row uses column 3 only: one-column tiles.
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
  return cases;
}

TEST_CASE("verify: emitted kernels of awkward shapes match their weights, V = 1, 2, 4", "[verify]") {
  test::TempDir dir;
  const std::vector<ShapeCase> cases = shape_cases();
  for (const int32_t v : {1, 2, 4}) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const ShapeCase& c = cases[i];
      const fs::path folder = dir.path / fmt::format("{}_v{}", c.name, v);
      fs::create_directories(folder);
      check_matches(test::emit_kernel_files(folder, "k" + std::to_string(i), c.a, c.m1, c.method, c.n1 * v, v), c.a,
                    c.name, v, c.n1 * v);
    }
  }
}

TEST_CASE("verify: kernels split into groups of tiles match their weights, V = 1, 2", "[verify]") {
  test::TempDir dir;
  const std::vector<ShapeCase> cases = shape_cases();
  size_t split = 0;  // files of several kernels, some of several tiles
  for (const int32_t v : {1, 2}) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const ShapeCase& c = cases[i];
      // One tile per kernel (a tile of more FMAs gets its own), and about three kernels.
      for (const int64_t fmas : {int64_t{1}, c.a.nnz() / 3 + 1}) {
        const fs::path folder = dir.path / fmt::format("{}_v{}_f{}", c.name, v, fmas);
        fs::create_directories(folder);
        const auto files = test::emit_kernel_files(folder, "g" + std::to_string(i), c.a, c.m1, c.method, c.n1 * v, v, fmas);
        const auto& tiles = files.kernel.kernel_tiles;
        split += tiles.size() > 1 && std::any_of(tiles.begin(), tiles.end(), [](int32_t t) { return t > 1; });
        check_matches(files, c.a, fmt::format("{}, {} FMAs per kernel, {} kernels", c.name, fmas, tiles.size()), v, c.n1 * v);
      }
    }
  }
  CHECK(split >= 4);
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
  CHECK(v.code.generic.weight_bits.values == std::vector<int64_t>{0x3f400000, 0x3a83126f});
}

TEST_CASE("verify: the hand-computed 3 x 4 kernel, product by product", "[verify]") {
  // Row 0 = (1.5 at 0, -2 at 3), row 1 empty, row 2 = (0.25 at 0, 3 at 2); tiles of 2 rows in order.
  const Csr a = test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0});
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "tiny", a, 2, ReorderMethod::kNone);
  const EmittedKernelAnalysis code = analyze_emitted_kernel(files.cu.string());
  for (const auto& e : code.errors) INFO(e.where.str() << ": " << e.message);
  REQUIRE(code.analyzed);
  CHECK(code.kernel == "tiny_kernel_0");
  REQUIRE(code.kernels.size() == 1);
  CHECK(code.kernels[0].where.line == test::line_of(files.kernel.cu, test::kernel_start(files.kernel.cu, "tiny_kernel_0")));
  REQUIRE(code.launch.launches.size() == 1);
  CHECK(code.launch.launches[0].grid_x == 2);
  CHECK(code.entry_point == "tiny");
  CHECK(code.dtype == DType::kFp32);  // float32 B and C, as the info object says
  CHECK(code.dtype_from_info);
  CHECK(code.grid_x == 2);
  CHECK(code.columns.cols_per_thread == 1);
  CHECK(code.columns.threads == 32);
  REQUIRE(code.blocks.size() == 2);
  CHECK(code.blocks[0].tiles == std::vector<int32_t>{0});
  CHECK(code.blocks[1].tiles == std::vector<int32_t>{1});
  REQUIRE(code.tiles.size() == 2);
  const AnalyzedTile& t0 = code.tiles[0];
  // 2 x mov; per column: mad, ld, fma; per row: mad, st (and whatever else the emitter adds).
  const size_t asm_start = files.kernel.cu.find("SPMMC_TILE_ASM(\n", files.kernel.cu.find("void spmmc_tile_0("));
  const size_t asm_end = files.kernel.cu.find("}\");", asm_start);
  const std::string ptx = files.kernel.cu.substr(asm_start, asm_end - asm_start);
  int64_t directives = 0;
  for (size_t at = ptx.find(".reg"); at != std::string::npos; at = ptx.find(".reg", at + 1)) ++directives;
  CHECK(t0.statements == static_cast<int64_t>(std::count(ptx.begin(), ptx.end(), ';')) - directives);
  CHECK(t0.statements >= 12);
  CHECK(t0.loads == 2);
  CHECK(t0.fmas == 2);
  REQUIRE(t0.load_sites.size() == 2);
  CHECK(t0.load_sites[1].row == 3);
  CHECK(t0.load_sites[1].lanes == 1);
  REQUIRE(t0.stores.size() == 2);
  CHECK(t0.stores[0].row == 0);
  REQUIRE(t0.stores[0].products.size() == 2);
  CHECK(t0.stores[0].products[0].column == 0);
  CHECK(t0.stores[0].products[0].value == 1.5f);
  CHECK(t0.stores[0].products[1].column == 3);
  CHECK(t0.stores[0].products[1].value == -2.0f);
  CHECK(t0.stores[1].row == 1);
  CHECK(t0.stores[1].products.empty());
  // Locations: the first FMA instruction, inside the PTX string literal, on its line and column.
  const size_t at = files.kernel.cu.find("fma.rn.f32 a0,x0,0f3FC00000,a0;");
  REQUIRE(at != std::string::npos);
  CHECK(t0.stores[0].products[0].where.line == test::line_of(files.kernel.cu, at));
  CHECK(t0.stores[0].products[0].where.column == test::column_of(files.kernel.cu, at));
  CHECK(t0.stores[0].products[0].where.file == files.cu.string());
  const size_t store = files.kernel.cu.find("st.global.f32 [p3],a1;");
  REQUIRE(store != std::string::npos);
  CHECK(t0.stores[1].where.line == test::line_of(files.kernel.cu, store));
  CHECK(t0.stores[1].where.column == test::column_of(files.kernel.cu, store));
  const AnalyzedTile& t1 = code.tiles[1];
  REQUIRE(t1.stores.size() == 1);
  CHECK(t1.stores[0].row == 2);
  REQUIRE(t1.stores[0].products.size() == 2);
  CHECK(t1.stores[0].products[1].column == 2);
  CHECK(t1.stores[0].products[1].value == 3.0f);
  CHECK(code.info.name.value == std::optional<std::string>("tiny"));
  CHECK(code.info.m1.value == std::optional<int64_t>(2));
  CHECK(code.info.n1.value == std::optional<int64_t>(32));
  CHECK(code.info.cols_per_thread.value == std::optional<int64_t>(1));
  CHECK(code.generic.row_ptr.values == std::vector<int64_t>{0, 2, 2, 4});
  CHECK(code.generic.col_idx.values == std::vector<int64_t>{0, 3, 0, 2});
  CHECK(code.notes.empty());
}

TEST_CASE("verify: V = 4 lanes, product by product", "[verify]") {
  const Csr a = test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0});
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "wide", a, 2, ReorderMethod::kNone, 128, 4);
  const EmittedKernelAnalysis code = analyze_emitted_kernel(files.cu.string());
  REQUIRE(code.analyzed);
  CHECK(code.columns.cols_per_thread == 4);
  CHECK(code.columns.n1 == 128);
  CHECK(code.columns.threads == 32);
  const AnalyzedTile& t0 = code.tiles[0];
  CHECK(t0.loads == 2);
  CHECK(t0.fmas == 8);
  REQUIRE(t0.load_sites.size() == 2);
  CHECK(t0.load_sites[0].lanes == 4);
  CHECK(t0.load_sites[0].first_lane == 0);
  REQUIRE(t0.stores.size() == 8);  // 2 rows x 4 lanes
  for (int32_t lane = 0; lane < 4; ++lane) {
    const AnalyzedStore& s = t0.stores[static_cast<size_t>(lane)];
    CHECK(s.row == 0);
    CHECK(s.lane == lane);
    REQUIRE(s.products.size() == 2);
    CHECK(s.products[0].lane == lane);
    CHECK(s.products[1].column == 3);
    CHECK(s.products[1].value == -2.0f);
    CHECK(t0.stores[static_cast<size_t>(4 + lane)].row == 1);
    CHECK(t0.stores[static_cast<size_t>(4 + lane)].products.empty());
  }
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
std::vector<std::string> struct_fields(const std::string& text, const std::string& name = "spmmc_kernel_info") {
  const std::string no_comments = std::regex_replace(text, std::regex(R"(/\*[\s\S]*?\*/)"), "");
  const size_t open = no_comments.find("typedef struct " + name + " {");
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
  const std::string emitted_text = test::read_file(source + "/codegen/templates/spmmc_kernel_info.h");
  const std::string prelude_text = test::read_file(source + "/verify/prelude/spmmc_kernel_info.h");
  const auto emitted = struct_fields(emitted_text);
  const auto prelude = struct_fields(prelude_text);
  CHECK(emitted.size() == 20);
  CHECK(prelude == emitted);
  CHECK(struct_fields(emitted_text, "spmmc_kernel_variant").size() == 4);  // kernel, n_min, n_max, needs
  CHECK(struct_fields(prelude_text, "spmmc_kernel_variant") == struct_fields(emitted_text, "spmmc_kernel_variant"));
  // And the ABI version.
  const std::regex version(R"(#define SPMMC_KERNEL_ABI_VERSION (\d+))");
  std::smatch e, p;
  REQUIRE(std::regex_search(emitted_text, e, version));
  REQUIRE(std::regex_search(prelude_text, p, version));
  CHECK(p[1].str() == e[1].str());
}

TEST_CASE("verify: code it does not recognise is an error at its line and column, not a guess", "[verify]") {
  const Csr a = test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0});
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "odd", a, 2, ReorderMethod::kNone);
  struct Case {
    std::string name, from, to, message;
    bool at_edit = true;  // the error is reported on the edited line, at the start of `to`
    bool located = true;  // at a line and column (else: the whole file)
  };
  const std::string fma = "fma.rn.f32 a0,x0,0f3FC00000,a0;";
  const std::vector<Case> cases = {
      {"an add", fma, "add.f32 a0,a0,x0;", "only an element of C loaded before plus a sum of products is understood for "
                                           "add.f32 in 'add.f32 a0,a0,x0;' (PTX statement "},
      {"a loop", "mov.b32 a0,0f00000000;", "$Lback:mov.b32 a0,0f00000000;bra.uni $Lback;",
       "a backward branch to $Lback (a loop) in 'bra.uni $Lback;'"},
      {"two registers", fma, "fma.rn.f32 a0,x0,x0,a0;", "neither factor is an immediate weight (0fHHHHHHHH)"},
      {"a decimal weight", fma, "fma.rn.f32 a0,x0,1.5,a0;", "unrecognised immediate '1.5'"},
      {"another rounding", fma, "fma.rz.f32 a0,x0,0f3FC00000,a0;", "unrecognised instruction 'fma.rz.f32'"},
      {"a constant stored", "mov.b32 a1,0f00000000;", "mov.b32 a1,0f3F800000;",
       "unrecognised constant '0f3F800000' (only +0, 0f00000000, starts a sum) in 'mov.b32 a1,0f3F800000;'"},
      {"a load of C", "mad.wide.u32 p1,%2,3,%0;", "mad.wide.u32 p1,%2,3,%1;",
       "ld.global.nc of C, which the kernels write (the non-coherent cache may be stale)", false},
      {"a store to B", "mad.wide.u32 p3,%2,1,%1;", "mad.wide.u32 p3,%2,1,%0;", "a store to B (only C is written)", false},
      {"a read before a write", fma, "ld.global.nc.f32 x0,[p3];", "'p3' is read before it is written"},
      {"an undeclared register", fma, "fma.rn.f32 a0,x7,0f3FC00000,a0;", "'x7' is not a declared register"},
      {"an element stored", "st.global.f32 [p3],a1;", "st.global.f32 [p3],x1;",
       "the value stored to row 1 of C ('x1') is not a sum of products"},
      {"a predicate it cannot decide", "mov.b32 a0,0f00000000;",
       ".reg .pred r;setp.eq.u32 r,%2,4;@r bra.uni $Lout;mov.b32 a0,0f00000000;$Lout:", "cannot decide this comparison"},
      {"a guard it cannot decide", "mov.b32 a0,0f00000000;", ".reg .pred r;@r bra.uni $Lout;mov.b32 a0,0f00000000;$Lout:",
       "cannot decide the guard @r"},
      {"a branch to nowhere", "mov.b32 a0,0f00000000;", "bra.uni $Lnowhere;mov.b32 a0,0f00000000;",
       "a branch to $Lnowhere, a label not defined in a scope it can reach"},
      {"a branch never taken, to nowhere", "mov.b32 a0,0f00000000;",
       ".reg .pred r;setp.eq.u32 r,%2,0;@r bra.uni $Lnowhere;mov.b32 a0,0f00000000;",
       "a branch to $Lnowhere, a label not defined in a scope it can reach"},
      {"a branch into a scope", "mov.b32 a0,0f00000000;", "bra.uni $Linside;{$Linside:}mov.b32 a0,0f00000000;",
       "a branch to $Linside, a label not defined in a scope it can reach"},
      {"a misaligned access", "ld.global.nc.f32 x0,[p0];", "ld.global.nc.f32 x0,[p0+2];",
       "a misaligned access: byte offset 2 of a 4-byte access"},
      {"an unsupported modifier", "ld.global.nc.f32 x0,[p0];", "ld.global.nc.L1.f32 x0,[p0];",
       "unsupported modifier .L1 of ld"},
      {"a brace never closed", "}\");\n}\n__device__", "\");\n}\n__device__", "1 '{' never closed"},
      {"a statement beside the asm", "unsigned ld) {\n", "unsigned ld) {\n  (void)b;\n",
       "unrecognised statement '(void)b' (a tile's body is one inline-PTX asm statement) in spmmc_tile_0"},
      {"the asm's pointers swapped", "\"l\"(b), \"l\"(c)", "\"l\"(c), \"l\"(b)", "ld.global.nc of C", false},
      {"no memory clobber", "\"r\"(ld) : \"memory\")", "\"r\"(ld))", "does not clobber \"memory\"", false},
      {"another stride", "case 1: spmmc_tile_1(b, c, ld); break;", "case 1: spmmc_tile_1(b, c, ld + 1); break;",
       "unrecognised arguments of spmmc_tile_1"},
      {"a loop not over gridDim.y", "bt += gridDim.y", "bt += 1", "the loop does not step by gridDim.y"},
      {"a store in the kernel", "    switch (blockIdx.x) {", "    C[col] = 0.0f;\n    switch (blockIdx.x) {",
       "unrecognised statement 'C[col] = 0.0f' in the loop of odd_kernel_0"},
      {"a statement beside the loop", "  SPMMC_LAUNCH_DEPENDENTS();\n", "  SPMMC_LAUNCH_DEPENDENTS();\n  C[0] = 0.0f;\n",
       "unrecognised statement 'C[0] = 0.0f' in odd_kernel_0 (expected const locals, one loop over the B-tiles, "
       "SPMMC_LAUNCH_DEPENDENTS() and SPMMC_WAIT_FOR_PREVIOUS_KERNEL())"},
      {"a dependent-launch macro twice", "  SPMMC_WAIT_FOR_PREVIOUS_KERNEL();\n",
       "  SPMMC_WAIT_FOR_PREVIOUS_KERNEL();\n  SPMMC_WAIT_FOR_PREVIOUS_KERNEL();\n", "unrecognised statement", false},
      {"no kernel with a dispatch", "switch (blockIdx.x)", "switch (blockIdx.y)",
       "expected __global__ functions with a switch (blockIdx.x) dispatch (the unrolled kernels), found none (of 8 "
       "__global__ functions)", false, false},
      {"a launch loop stepping by 2", "j < spmmc_kernel_count; ++j)", "j < spmmc_kernel_count; j += 2)",
       "the loop does not step by 1"},
      {"a launch loop from 1", "for (int j = 0; j < spmmc_kernel_count", "for (int j = 1; j < spmmc_kernel_count",
       "the loop does not start at 0"},
      {"a grid not from the table", "config.gridDim = dim3(spmmc_kernel_tiles[j], grid_y);",
       "config.gridDim = dim3(2, grid_y);", "cannot tell the blocks along x of each launch"},
      {"a kernel pointer it cannot read", "reinterpret_cast<const void*>(&odd_kernel_0)",
       "static_cast<const void*>(spmmc_weight_bits)", "unrecognised element 'static_cast<const void*>(spmmc_weight_bits)' "
       "of spmmc_kernels"},
      {"a second launch", "    if (status != cudaSuccess) return status;\n",
       "    if (status != cudaSuccess) return status;\n    cudaLaunchKernelExC(&config, spmmc_kernels[j], args);\n",
       "expected one cudaLaunchKernelExC in the host code (the launch loop of the unrolled kernels), found 2", false,
       false},
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
    CHECK((v.code.errors[0].where.column > 0 || !c.located));
    if (!c.at_edit) continue;
    const size_t at = text.find(c.to);
    CHECK(v.code.errors[0].where.line >= test::line_of(text, at));
    CHECK(v.code.errors[0].where.line <= test::line_of(text, at + c.to.size()));
  }
  // A PTX error points at the very instruction, inside the string literal, and counts statements.
  const std::string text = test::replace_first(files.kernel.cu, fma, "add.f32 a0,a0,x0;");
  test::write_file(dir.path / "odd.cu", text);
  const test::Verified v = test::verify_file(dir.path / "odd.cu", a);
  REQUIRE_FALSE(v.code.errors.empty());
  const size_t at = text.find("add.f32 a0,a0,x0;");
  CHECK(v.code.errors[0].where.line == test::line_of(text, at));
  CHECK(v.code.errors[0].where.column == test::column_of(text, at));
  const size_t asm_start = text.find("SPMMC_TILE_ASM(\n", text.find("void spmmc_tile_0("));
  const auto index = std::count(text.begin() + static_cast<std::ptrdiff_t>(asm_start),
                                text.begin() + static_cast<std::ptrdiff_t>(at), ';') + 1;
  CHECK_THAT(v.code.errors[0].message, Catch::EndsWith(fmt::format("(PTX statement {} of spmmc_tile_0)", index)));
}

TEST_CASE("verify: PTX it reads beyond what the emitter writes today", "[verify]") {
  // Equivalent spellings of the same tile must verify: the reading is by meaning, not by text.
  const Csr a = test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0});
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "same", a, 2, ReorderMethod::kNone);
  struct Case {
    std::string name, from, to;
  };
  const std::vector<Case> cases = {
      {"an early exit on ld == 0, never taken", "mov.b32 a0,0f00000000;",
       ".reg .pred r;setp.eq.u32 r,%2,0;@r bra.uni $Lskip;mov.b32 a0,0f00000000;$Lskip:"},
      {"a branch on ld != 0 over nothing", "mov.b32 a0,0f00000000;",
       ".reg .pred r;setp.ne.u32 r,0,%2;@!r bra $Lskip;@r bra.uni $Lskip;$Lskip:mov.b32 a0,0f00000000;"},
      {"the weight first", "fma.rn.f32 a0,x0,0f3FC00000,a0;", "fma.rn.f32 a0,0f3FC00000,x0,a0;"},
      {"a register copy", "fma.rn.f32 a0,x0,0f3FC00000,a0;", ".reg .f32 t;mov.f32 t,x0;fma.rn.f32 a0,t,0f3FC00000,a0;"},
      {"an address by mul and add", "mad.wide.u32 p1,%2,3,%0;", ".reg .b64 r;mul.wide.u32 r,3,%2;add.s64 p1,%0,r;"},
      {"an address from another", "mad.wide.u32 p1,%2,3,%0;", "mad.wide.u32 p1,%2,1,p0;mad.wide.u32 p1,%2,2,p1;"},
      {"comments and blanks", "mov.b32 a0,0f00000000;", "/* zero */ mov.b32   a0 , 0f00000000 ; // first\\n"},
      {"a nested scope", "mad.wide.u32 p1,%2,3,%0;", "{.reg .b64 p0;mov.b64 p0,%0;}mad.wide.u32 p1,%2,3,%0;"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string text = test::replace_first(files.kernel.cu, c.from, c.to);
    test::write_file(files.cu, text);
    const test::Verified v = test::verify_file(files.cu, a);
    INFO(v.messages);
    CHECK(v.code.analyzed);
    CHECK(v.result.match);
  }
}

TEST_CASE("verify: a truncated file gives Clang's errors with their places", "[verify]") {
  const Csr a = test::make_matrix(20, 16, random_entries(0.3, 6));
  test::TempDir dir;
  const auto files = test::emit_kernel_files(dir.path, "cut", a, 4, ReorderMethod::kNone);
  // Cuts in the code (not in the header comment, which alone is a valid translation unit).
  const size_t code = files.kernel.cu.find("namespace {");
  REQUIRE(code != std::string::npos);
  for (const size_t keep : {files.kernel.cu.size() / 2, files.kernel.cu.size() - 40, code + 13}) {
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
