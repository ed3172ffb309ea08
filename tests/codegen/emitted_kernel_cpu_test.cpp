// Kernels emitted by `spmmc compile`, built as host C++ through tests/cuda_emulation (the tile
// bodies' inline PTX run by its interpreter) and run on the CPU: every element of C against the
// float64 reference (relative Frobenius error < 1e-5) and bit for bit against the fmaf chain the
// kernel must perform, C pre-filled with NaN and guarded on both sides so that an unwritten or
// stray element fails; for V = 1, 2 and 4 columns per thread and several block sizes, with B and
// C aligned and offset by one float, so that both the unrolled kernel (and its loop over
// B-tiles beyond grid.y) and the generic CSR path run; and NAME_info() against the matrix.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/dtype.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/formats/write_matrix.h"
#include "compiler/planning/small_n_dispatch.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

struct KernelCase {
  std::string name;               // the kernel's C name (and its folder)
  fs::path matrix;                // input file
  std::vector<std::string> args;  // extra `spmmc compile` options
  std::vector<int64_t> ns;        // widths to run
  int64_t tune_n = 64;
  std::string reorder = "overlap";
};

struct Built {
  int compile_exit = -1;
  std::string compile_err;
  int build_exit = -1;
  std::string build_log;
  fs::path dir, so;
};

// Runs `spmmc compile` and builds the emulated shared object for every case, two at a time per
// core (each step is a separate process), in order of the cases.
std::vector<Built> build_all(const std::vector<KernelCase>& cases, const fs::path& root) {
  std::vector<Built> built(cases.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      const KernelCase& c = cases[i];
      Built& b = built[i];
      b.dir = root / c.name;
      b.so = b.dir / ("lib" + c.name + ".so");
      std::vector<std::string> args = {"compile", c.matrix.string(), "--n", std::to_string(c.tune_n), "--name", c.name,
                                       "-o", b.dir.string(), "--quiet", "--reproducible"};
      args.insert(args.end(), c.args.begin(), c.args.end());
      const auto r = run_spmmc(args);
      b.compile_exit = r.exit_code;
      b.compile_err = r.err;
      if (r.exit_code == 0) b.build_exit = test::build_emulated({b.dir / (c.name + ".cu")}, b.so, b.build_log);
    }
  };
  std::vector<std::thread> threads;
  const unsigned workers = std::max(2u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < workers; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  return built;
}

// The case compiled, the independent oracle (spmmc verify, from the Clang AST) agrees with the
// emitter, and the host build succeeded.
void check_built(const KernelCase& c, const Built& b) {
  INFO("spmmc compile: " << b.compile_err);
  REQUIRE(b.compile_exit == 0);
  const auto verified = run_spmmc({"verify", (b.dir / (c.name + ".cu")).string(), "--against", c.matrix.string()});
  INFO("spmmc verify: " << verified.err);
  CHECK(verified.exit_code == 0);
  INFO("host build: " << b.build_log);
  REQUIRE(b.build_exit == 0);
}

// Builds and checks every case: the compile and the host build succeed, NAME_info() describes
// the matrix and the tile NAME.json reports, and C is right for every n and placement of B and
// C (test::check_emulated_kernel). Returns which paths ran.
test::PathCounts run_cases(const std::vector<KernelCase>& cases, const fs::path& root, bool misaligned = true) {
  const std::vector<Built> built = build_all(cases, root);
  test::PathCounts paths;
  for (size_t i = 0; i < cases.size(); ++i) {
    const KernelCase& c = cases[i];
    const Built& b = built[i];
    INFO("case " << c.name << " (" << c.matrix.filename().string() << ")");
    check_built(c, b);
    const auto report = nlohmann::json::parse(test::read_file(b.dir / (c.name + ".json")));
    const Csr a = read_matrix_file(c.matrix.string(), ReadOptions{}).csr;
    std::string error;
    const auto kernel = test::EmulatedKernel::load(b.so, c.name, error);
    INFO(error);
    REQUIRE(kernel);
    const bool generic = report["choice"]["family"] == "generic";
    test::check_kernel_info(*kernel->info(), c.name, a, report["choice"]["m1"].get<int32_t>(),
                            report["choice"]["n1"].get<int32_t>(), report["choice"]["cols_per_thread"].get<int32_t>(),
                            c.reorder, report["kernel"]["k_parts"].get<int32_t>(), generic);
    CHECK(kernel->info()->a_tiles == report["kernel"]["tiles"].get<int32_t>());
    // The small-n dispatch: the report's; without a measurement, where the unrolled launch's A-tiles
    // fill 0.7 of the H100's 132 SMs, at most --n (NAME_info(), NAME.json).
    CHECK(kernel->info()->generic_below_n == report["kernel"]["generic_below_n"].get<int64_t>());
    const bool below_given = std::find(c.args.begin(), c.args.end(), "--generic-below") != c.args.end();
    if (!generic && !below_given)  // unrolled
      CHECK(kernel->info()->generic_below_n ==
            choose_generic_below_n(c.tune_n, std::nullopt, std::nullopt, {kernel->info()->a_tiles, kernel->info()->n1, 132})
                .generic_below_n);
    // The variants: NAME_info()'s table is NAME.json's (the emitter's mirror of the template's).
    const nlohmann::json& variants = report["kernel"]["variants"];
    REQUIRE(kernel->info()->variant_count == static_cast<int32_t>(variants.size()));
    for (size_t v = 0; v < variants.size(); ++v) {
      const spmmc_kernel_variant& x = kernel->info()->variants[v];
      CHECK(x.kernel == variants[v]["kernel"].get<std::string>());
      CHECK(x.n_min == variants[v]["n_min"].get<int64_t>());
      CHECK(x.n_max == variants[v]["n_max"].get<int64_t>());
      CHECK(x.needs == variants[v]["needs"].get<std::string>());
    }
    // The balanced small-n path first where the file has it (NAME.json's balanced_path), then the family:
    // n = 1 by lanes over products first of all (where spmv), then below its pairs_below_n (where not 0)
    // the pairs kernel.
    const nlohmann::json& path = report["kernel"]["balanced_path"];
    const bool balanced_path = !path.is_null();
    // (the family's variants: generic-split, [generic-warp-wide,] generic-warp, [generic-warp-wide-strided,]
    // generic-warp-strided, -v4, -v1, and unrolled before them)
    const bool warp_wide = std::any_of(variants.begin(), variants.end(),
                                       [](const nlohmann::json& v) { return v["kernel"] == "generic-warp-wide"; });
    const int32_t family = (generic ? 5 : 6) + (warp_wide ? 2 : 0);
    const int32_t first = balanced_path ? static_cast<int32_t>(variants.size()) - family : 0;
    if (balanced_path) {
      const int64_t from_n = path["from_n"].get<int64_t>(), below_n = path["below_n"].get<int64_t>();
      const int64_t pairs_below_n = path["pairs_below_n"].get<int64_t>();
      const bool spmv = path["spmv"].get<bool>();
      CHECK(spmv);  // the rule's, in every file with the path
      if (spmv) {
        CHECK(std::string(kernel->info()->variants[0].kernel) == "balanced-spmv");
        CHECK((kernel->info()->variants[0].n_min == 1 && kernel->info()->variants[0].n_max == 1));
      }
      if (pairs_below_n > 0) {
        const spmmc_kernel_variant& pairs = kernel->info()->variants[spmv ? 1 : 0];
        CHECK(std::string(pairs.kernel) == "balanced-pairs-v1");
        CHECK(pairs.n_min == from_n);
        CHECK(pairs.n_max + 1 == std::min(pairs_below_n, below_n));
      }
      // its second table's kernel last (NAME.json's balanced_mid; four columns per lane only), the path's before it
      const nlohmann::json& mid = report["kernel"]["balanced_mid"];
      const int32_t mids = static_cast<int32_t>(std::count_if(variants.begin(), variants.end(), [](const nlohmann::json& v) {
        return v["kernel"].get<std::string>().rfind("balanced-mid-", 0) == 0;
      }));
      CHECK(mid.is_null() == (mids == 0));
      if (!mid.is_null()) {
        CHECK(mids == 1);
        CHECK(std::string(kernel->info()->variants[first - 1].kernel) == "balanced-mid-v4");
        CHECK(std::string(kernel->info()->variants[first - 1].needs) == "n % 4 == 0; B and C aligned to 16 bytes");
        CHECK(kernel->info()->variants[first - 1].n_min == std::max<int64_t>(mid["from_n"].get<int64_t>(), 128));
        CHECK(kernel->info()->variants[first - 1].n_max + 1 == mid["below_n"].get<int64_t>());
        CHECK(mid["from_n"].get<int64_t>() == below_n);  // from the path's end
      }
      if (pairs_below_n < below_n) {
        CHECK(std::string(kernel->info()->variants[first - 1 - mids].kernel) == "balanced-v1");
        CHECK(kernel->info()->variants[first - 1 - mids].n_min == std::max(from_n, pairs_below_n));
        // (to the path's end, or to where the rule hands odd n to the generic path)
        const int64_t v1_below_n = path["v1_below_n"].get<int64_t>();
        CHECK(v1_below_n <= below_n);
        CHECK(kernel->info()->variants[first - 1 - mids].n_max + 1 == v1_below_n);
      }
    }
    CHECK(std::string(kernel->info()->variants[first].kernel) == (generic ? "generic-split" : "unrolled"));
    // A forced tile is the one built: M1 x N1, with x V when V > 1.
    const spmmc_kernel_info& info = *kernel->info();
    const std::string label = fmt::format("{}x{}", info.m1, info.n1) +
                              (info.cols_per_thread > 1 ? fmt::format("x{}", info.cols_per_thread) : "");
    for (size_t arg = 0; arg + 1 < c.args.size(); ++arg)
      if (c.args[arg] == "--tile") CHECK(c.args[arg + 1] == label);
      else if (c.args[arg] == "--family") CHECK(c.args[arg + 1] == (generic ? "generic" : "unrolled"));
    const std::vector<int32_t> k_part_begin = report["kernel"]["k_part_begin"].get<std::vector<int32_t>>();
    paths += test::check_emulated_kernel(*kernel, a, c.ns, c.name, misaligned, k_part_begin);
  }
  return paths;
}

// A matrix from a predicate on (row, col): the value is `value(r, c)` where nonzero.
Csr make_matrix(int32_t rows, int32_t cols, const std::function<float(int32_t, int32_t)>& value) {
  std::vector<float> dense(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c) dense[static_cast<size_t>(r) * cols + c] = value(r, c);
  return test::csr_from_dense(rows, cols, dense);
}

// Seeded random values in [-2, 2] with density `density`, zero where `keep` says so.
std::function<float(int32_t, int32_t)> random_entries(double density, uint32_t seed,
                                                      std::function<bool(int32_t, int32_t)> keep = nullptr) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [=](int32_t r, int32_t c) {
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    std::bernoulli_distribution present(density);
    const bool on = present(*rng);
    const float v = value(*rng);
    if (!on || (keep && !keep(r, c)) || v == 0.0f) return 0.0f;
    return v;
  };
}

fs::path write_mtx(const fs::path& dir, const std::string& name, const Csr& a) {
  const fs::path path = dir / (name + ".mtx");
  write_matrix(a, path.string(), MatrixFormat::kMatrixMarket, "emitted_kernel_cpu_test " + name);
  const Csr back = read_matrix_file(path.string(), ReadOptions{}).csr;
  REQUIRE(back == a);  // the values the kernel bakes in are the ones the test checks with
  return path;
}

TEST_CASE("emitted kernel on the CPU: edge shapes", "[codegen][emulation]") {
  test::TempDir dir;
  const std::vector<int64_t> ns = {1, 5, 31, 32, 33, 64, 100};
  std::vector<KernelCase> cases;
  auto add = [&](const std::string& name, const Csr& a, std::vector<std::string> args,
                 std::vector<int64_t> widths = {}) {
    cases.push_back({name, write_mtx(dir.path, name, a), std::move(args), widths.empty() ? ns : widths, 64, "overlap"});
    for (size_t i = 0; i + 1 < cases.back().args.size(); ++i)
      if (cases.back().args[i] == "--reorder") cases.back().reorder = cases.back().args[i + 1];
  };
  // 37 rows: not a multiple of M1 = 8 (or 4); widths around N1 = 32 and 64.
  const Csr ragged = make_matrix(37, 20, random_entries(0.3, 1));
  add("ragged_m1_8", ragged, {"--tile", "8x32"});
  add("ragged_m1_4_none", ragged, {"--tile", "4x64", "--reorder", "none"}, {1, 63, 64, 65, 70, 200});
  // Rows 0, 5, 6, 19 and columns 0, 10-14, 29 empty.
  const auto holes = [](int32_t r, int32_t c) {
    return r != 0 && r != 5 && r != 6 && r != 19 && c != 0 && c != 29 && (c < 10 || c > 14);
  };
  const Csr holey = make_matrix(20, 30, random_entries(0.4, 2, holes));
  add("empty_rows_cols", holey, {"--tile", "4x32"});
  add("empty_rows_cols_none", holey, {"--tile", "4x32", "--reorder", "none"});
  add("empty_rows_cols_length", holey, {"--tile", "2x32", "--reorder", "length"});
  add("single_nonzero", make_matrix(5, 7, [](int32_t r, int32_t c) { return r == 3 && c == 4 ? -1.25f : 0.0f; }),
      {"--tile", "2x32"});
  add("one_by_one", make_matrix(1, 1, [](int32_t, int32_t) { return 3.0f; }), {"--tile", "1x32"});
  // Row 2 dense across 64 columns; the others sparse.
  const auto sparse = random_entries(0.1, 3);
  add("dense_row", make_matrix(10, 64, [&](int32_t r, int32_t c) { return r == 2 ? 0.5f + 0.01f * static_cast<float>(c) : sparse(r, c); }),
      {"--tile", "4x32"});
  add("k_is_one", make_matrix(16, 1, [](int32_t r, int32_t) { return r % 3 == 0 ? 0.0f : static_cast<float>(r) - 7.5f; }),
      {"--tile", "4x32"});
  // Only row 27 has entries: one tile of work and ceil(49 / 8) = 7 tiles of zeros.
  add("one_row_only", make_matrix(50, 40, [](int32_t r, int32_t c) { return r == 27 && c % 3 == 1 ? 0.25f * static_cast<float>(c) : 0.0f; }),
      {"--tile", "8x32"});
  add("one_row_only_none", make_matrix(50, 40, [](int32_t r, int32_t c) { return r == 27 && c % 3 == 1 ? 0.25f * static_cast<float>(c) : 0.0f; }),
      {"--tile", "8x32", "--reorder", "none"});
  // The same shapes with 2 and 4 columns per thread: n = 1, 5, 31, 33 (and misplaced B or C)
  // take the generic path.
  add("ragged_m1_8_v2", ragged, {"--tile", "8x64x2"});
  add("ragged_m1_4_none_v4", ragged, {"--tile", "4x128x4", "--reorder", "none"}, {1, 4, 63, 64, 65, 68, 200});
  add("empty_rows_cols_v4", holey, {"--tile", "4x128x4"});
  add("empty_rows_cols_none_v2", holey, {"--tile", "2x64x2", "--reorder", "none"});
  add("one_by_one_v4", make_matrix(1, 1, [](int32_t, int32_t) { return 3.0f; }), {"--tile", "1x128x4"}, {1, 4, 8, 12, 1000});
  add("k_is_one_v2", make_matrix(16, 1, [](int32_t r, int32_t) { return r % 3 == 0 ? 0.0f : static_cast<float>(r) - 7.5f; }),
      {"--tile", "4x64x2"});
  add("one_row_only_v4", make_matrix(50, 40, [](int32_t r, int32_t c) { return r == 27 && c % 3 == 1 ? 0.25f * static_cast<float>(c) : 0.0f; }),
      {"--tile", "8x128x4"}, {1, 4, 32, 64, 100, 516});
  const test::PathCounts paths = run_cases(cases, dir.path);
  CHECK(paths.unrolled > 0);
  CHECK(paths.generic > 0);
  CHECK(paths.looped > 0);
}

TEST_CASE("emitted kernel on the CPU: many short rows take one column per thread at small n, not the split kernel",
          "[codegen][emulation][small-n]") {
  // generic_split_below (codegen/generic_launch.h): no row over 32 products and at least 26 x 132 rows (the
  // default target's SMs) print SPMMC_GENERIC_SPLIT_BELOW 1; fewer rows or one long row keep 17. The sums
  // are in column order either way (check_emulated_kernel: bit for bit, and the launch the file lists).
  test::TempDir dir;
  const auto short_rows = [](int32_t r, int32_t c) {
    return (r * 7 + c * 13) % 97 < 4 ? 0.5f + static_cast<float>((r + c) % 7) : 0.0f;  // 12-13 per row
  };
  struct Shape {
    std::string name;
    int32_t rows;
    bool long_row;
    bool split;
  };
  for (const Shape& shape : {Shape{"many", 3500, false, false}, Shape{"few", 3400, false, true}, Shape{"one_long", 3500, true, true}}) {
    INFO(shape.name);
    const Csr a = make_matrix(shape.rows, 300, [&](int32_t r, int32_t c) {
      return shape.long_row && r == 5 && c < 40 ? 1.0f + static_cast<float>(c) : short_rows(r, c);
    });
    const fs::path matrix = write_mtx(dir.path, shape.name, a);
    const fs::path out = dir.path / shape.name;
    const auto r = run_spmmc({"compile", matrix.string(), "--n", "64", "--name", shape.name, "-o", out.string(), "--quiet",
                              "--reproducible", "--tune", "none", "--family", "generic"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string cu = test::read_file(out / (shape.name + ".cu"));
    CHECK_THAT(cu, Catch::Contains(shape.split ? "#define SPMMC_GENERIC_SPLIT_BELOW 17" : "#define SPMMC_GENERIC_SPLIT_BELOW 1\n"));
    const auto report = nlohmann::json::parse(test::read_file(out / (shape.name + ".json")));
    bool listed = false;
    for (const auto& v : report["kernel"]["variants"]) {
      if (v["kernel"] == "generic-split") listed = true;
      if (v["kernel"] == "generic-v1") CHECK(v["n_min"] == (shape.split ? 17 : 1));
    }
    CHECK(listed == shape.split);
    const auto kernel = test::emulate_emitted(out / (shape.name + ".cu"), shape.name);
    REQUIRE(kernel);
    const test::PathCounts paths = test::check_emulated_kernel(*kernel, a, {1, 2, 3, 8, 16, 17}, shape.name, false);
    CHECK(paths.generic + paths.balanced == 6);
  }
}

TEST_CASE("emitted kernel on the CPU: the generic family", "[codegen][emulation]") {
  // --family generic: A's CSR arrays and the generic kernel only, for every n and placement of B
  // and C (bit-exact against fmaf_spmm: row sums in column order, batches of 8 loads included; the
  // rows in the A-tiles' order or, with --reorder none, in order; every row of C written once),
  // and --family auto choosing it where the unrolled launch would leave the GPU short of warps:
  // 512 x 4608 at 0.98 (47k non-zeros, like the ResNet-50 3x3 layers of group 4) at n = 1568.
  test::TempDir dir;
  const fs::path path = dir.path / "uniform.mtx";
  auto g = run_spmmc({"gen", "uniform", "--rows", "70", "--cols", "60", "--sparsity", "0.7", "--seed", "5", "-q", "-o",
                      path.string()});
  REQUIRE(g.exit_code == 0);
  const fs::path wide = dir.path / "wide.mtx";
  g = run_spmmc({"gen", "uniform", "--rows", "512", "--cols", "4608", "--sparsity", "0.98", "--seed", "3", "-q", "-o",
                 wide.string()});
  REQUIRE(g.exit_code == 0);
  const Csr empty_rows = make_matrix(40, 20, [](int32_t r, int32_t c) { return r % 3 == 0 ? 0.0f : static_cast<float>(r - c) / 8.0f; });
  const fs::path holey = write_mtx(dir.path, "holey", empty_rows);
  const std::vector<int64_t> ns = {1, 2, 31, 32, 33, 64, 96, 128, 130, 256, 300, 1028};
  const std::vector<KernelCase> cases = {
      {"generic_uniform", path, {"--family", "generic"}, ns, 1024, "overlap"},
      {"generic_holey", holey, {"--family", "generic"}, ns, 32, "overlap"},
      {"generic_holey_none", holey, {"--family", "generic", "--reorder", "none"}, ns, 32, "none"},
      {"generic_auto", wide, {}, {1, 33}, 1568, "overlap"},
  };
  const test::PathCounts paths = run_cases(cases, dir.path);
  CHECK(paths.unrolled == 0);
  CHECK(paths.generic > 0);
  CHECK(nlohmann::json::parse(test::read_file(dir.path / "generic_auto" / "generic_auto.json"))["choice"]["family"] ==
        "generic");
}

TEST_CASE("emitted kernel on the CPU: fp16 and bf16 B and C, products summed in float32", "[codegen][emulation][dtype]") {
  // --dtype fp16 and bf16: 16-bit loads and stores in the tiles' PTX and in the generic path, A's
  // values rounded to the dtype (a value below fp16's smallest subnormal dropped, subnormal ones
  // kept), every element of C bit for bit the float32 sum rounded to the dtype, within the bound of
  // docs/design/precision.md, for V = 1, 2, 4, split kernels and the generic family, at widths that
  // are and are not multiples of V and with B and C one element off alignment.
  test::TempDir dir;
  const Csr base = make_matrix(70, 60, random_entries(0.15, 11));
  Csr special = base;  // values in fp16's subnormal range and one below it
  for (size_t i = 0; i < special.values.size(); i += 17) special.values[i] = i % 2 ? 3.0e-5f : -1.0e-9f;
  const fs::path path = write_mtx(dir.path, "mixed", special);
  const auto below_fp16 = std::count(special.values.begin(), special.values.end(), -1.0e-9f);
  REQUIRE(below_fp16 > 0);
  const std::vector<int64_t> ns = {1, 2, 3, 4, 8, 100, 128, 130, 256, 1028};
  std::vector<KernelCase> cases;
  for (const char* dtype : {"fp16", "bf16"}) {
    for (const char* tile : {"32x64", "8x128x2", "16x256x4"}) {
      std::string name = std::string(dtype) + "_" + tile;
      for (char& ch : name) ch = ch == 'x' ? '_' : ch;
      cases.push_back({name, path, {"--tile", tile, "--dtype", dtype}, ns, 1024, "overlap"});
    }
    cases.push_back({std::string(dtype) + "_kernels", path, {"--tile", "8x128x2", "--fmas-per-kernel", "40", "--dtype", dtype}, ns,
                     1024, "overlap"});
    cases.push_back({std::string(dtype) + "_generic", path, {"--family", "generic", "--dtype", dtype}, ns, 1024, "overlap"});
  }
  const std::vector<Built> built = build_all(cases, dir.path);
  test::PathCounts paths;
  for (size_t i = 0; i < cases.size(); ++i) {
    const KernelCase& c = cases[i];
    const Built& b = built[i];
    INFO("case " << c.name);
    check_built(c, b);
    const DType dtype = c.name.rfind("fp16", 0) == 0 ? DType::kFp16 : DType::kBf16;
    Csr a = read_matrix_file(c.matrix.string(), ReadOptions{}).csr;
    const DTypeRounding rounding = round_values_to_dtype(a, dtype, c.matrix.string());
    CHECK(rounding.to_zero == (dtype == DType::kFp16 ? below_fp16 : 0));  // the -1e-9 values
    const auto report = nlohmann::json::parse(test::read_file(b.dir / (c.name + ".json")));
    CHECK(report["input"]["rounded_to_dtype"]["values_to_zero"] == rounding.to_zero);
    CHECK(report["input"]["nnz"] == a.nnz());
    std::string error;
    const auto kernel = test::EmulatedKernel::load(b.so, c.name, error);
    INFO(error);
    REQUIRE(kernel);
    CHECK(kernel->info()->nnz == a.nnz());
    paths += test::check_emulated_half_kernel(*kernel, a, dtype, c.ns, c.name);
  }
  CHECK(paths.unrolled > 0);
  CHECK(paths.generic > 0);
}

// The integers of the initialiser of `declaration` ("spmmc_tc_cols[] = {") in an emitted file,
// int2 pairs flattened.
std::vector<int64_t> initializer_of(const std::string& text, const std::string& declaration) {
  const size_t start = text.find(declaration);
  REQUIRE(start != std::string::npos);
  std::vector<int64_t> out;
  int depth = 0;
  for (size_t i = start + declaration.size() - 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{') ++depth;
    else if (c == '}' && --depth == 0) break;
    else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t used = 0;
      out.push_back(std::stoll(text.substr(i, 24), &used));
      i += used - 1;
    }
  }
  return out;
}

// The constant `name` of `cu` ("constexpr int[64_t] name = V;"), or `otherwise` where the file has none.
int64_t constant_of(const std::string& cu, const std::string& name, int64_t otherwise) {
  for (const char* type : {"constexpr int ", "constexpr int64_t "}) {
    const std::string declaration = type + name + " = ";
    const size_t at = cu.find(declaration);
    if (at != std::string::npos) return std::stoll(cu.substr(at + declaration.size()));
  }
  return otherwise;
}

// The words of an array of unsigned hex literals ("0x3c000000u, ..."), from `declaration` to its '}'.
std::vector<uint32_t> words_of(const std::string& text, const std::string& declaration) {
  const size_t start = text.find(declaration);
  REQUIRE(start != std::string::npos);
  std::vector<uint32_t> out;
  for (size_t i = start + declaration.size(); i < text.size() && text[i] != '}'; ++i)
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t used = 0;
      out.push_back(static_cast<uint32_t>(std::stoull(text.substr(i, 24), &used, 0)));
      i += used;  // past the 'u'
    }
  return out;
}

// The tensor-core kernels of `cu` as the emulation runs them (A's values in `a`): each row's products
// summed with fmaf in the order of its window's vectors in block order (the staged kernel's blocks take
// a chunk's vectors out of column order; a row's entry where its half of spmmc_tc_a is not zero, so a
// padding vector, of zeros, adds nothing, wherever it lies), and where the direct kernel splits K at n (below spmmc_tc_split{2,4}_below_n) in P shares
// of the window's blocks, summed apart and added in order. `order` receives A with each row's entries
// in block order.
test::TcModel tc_model(const Csr& a, const std::string& cu, Csr& order) {
  const size_t height = static_cast<size_t>(constant_of(cu, "spmmc_tc_rows", 0));  // rows per window
  REQUIRE((height == 8 || height == 16));
  const std::vector<int64_t> rows = initializer_of(cu, "spmmc_tc_window_rows[] = {");
  const std::vector<int64_t> first = initializer_of(cu, "spmmc_tc_window_block[] = {");
  const std::vector<int64_t> cols = initializer_of(cu, "spmmc_tc_cols[] = {");
  const std::vector<uint32_t> words = words_of(cu, "spmmc_tc_a[] = {");
  const size_t halves = height / 8;
  struct Entry {
    int32_t col;
    float value;
    int64_t block, blocks;  // its block within the window's, of that many
  };
  auto entries = std::make_shared<std::vector<std::vector<Entry>>>(static_cast<size_t>(a.rows));
  for (size_t w = 0; w + 1 < first.size(); ++w) {
    for (int64_t b = first[w]; b < first[w + 1]; ++b)
      for (int64_t j = 0; j < 8; ++j) {
        const auto col = static_cast<int32_t>(cols[static_cast<size_t>(8 * b + j)]);
        for (size_t g = 0; g < height; ++g) {
          const int64_t r = rows[height * w + g];
          // Lane 4 (g % 8) + j / 2's word g / 8, its half j % 2 (kernel_tensor_core.cuh).
          const size_t word = 32 * halves * static_cast<size_t>(b) + halves * (4 * (g % 8) + static_cast<size_t>(j / 2)) + g / 8;
          REQUIRE(word < words.size());
          if (r < 0 || ((words[word] >> (16 * (j % 2))) & 0x7fffu) == 0) continue;
          const auto begin = a.col_idx.begin() + a.row_ptr[static_cast<size_t>(r)], end = a.col_idx.begin() + a.row_ptr[static_cast<size_t>(r) + 1];
          const auto it = std::lower_bound(begin, end, col);
          if (it != end && *it == col)
            (*entries)[static_cast<size_t>(r)].push_back({col, a.values[static_cast<size_t>(it - a.col_idx.begin())], b - first[w],
                                                          first[w + 1] - first[w]});
        }
      }
  }
  order = Csr();
  order.rows = a.rows, order.cols = a.cols;
  order.row_ptr.push_back(0);
  for (const auto& row : *entries) {
    for (const Entry& e : row) order.col_idx.push_back(e.col), order.values.push_back(e.value);
    order.row_ptr.push_back(static_cast<int32_t>(order.col_idx.size()));
  }
  REQUIRE(order.nnz() == a.nnz());
  const int64_t split2 = constant_of(cu, "spmmc_tc_split2_below_n", 0), split4 = constant_of(cu, "spmmc_tc_split4_below_n", 0);
  const int64_t staged_from = constant_of(cu, "spmmc_tc_staged_from_n", -1), staged_max = constant_of(cu, "spmmc_tc_staged_max_n", -1);
  test::TcModel model;
  model.parts = [=](int64_t n) { return n < split4 ? 4 : n < split2 ? 2 : 1; };
  TensorCoreCode launch;  // the file's launch constants, for tensor_core_launch
  launch.windows = static_cast<int32_t>(constant_of(cu, "spmmc_tc_windows", 0));
  launch.chunk_rows = static_cast<int32_t>(staged_from >= 0 ? constant_of(cu, "spmmc_tc_chunk_rows", 0) : 0);
  launch.staged_from_n = std::max<int64_t>(staged_from, 0), launch.staged_max_n = std::max<int64_t>(staged_max, 0);
  launch.split2_below_n = split2, launch.split4_below_n = split4;
  model.launch = launch;
  model.sums = [=, parts = model.parts](const std::vector<float>& b, int64_t n) {
    const int p = staged_from >= 0 && n >= staged_from && n <= staged_max ? 1 : parts(n);  // the staged kernel does not split
    std::vector<float> c(static_cast<size_t>(a.rows) * static_cast<size_t>(n), 0.0f);
    for (size_t r = 0; r < entries->size(); ++r)
      for (int64_t x = 0; x < n; ++x) {
        float total = 0.0f;
        for (int q = 0; q < p; ++q) {
          float share = 0.0f;
          for (const Entry& e : (*entries)[r])
            if (e.block >= e.blocks * q / p && e.block < e.blocks * (q + 1) / p)
              share = std::fmaf(e.value, b[static_cast<size_t>(e.col) * static_cast<size_t>(n) + static_cast<size_t>(x)], share);
          total = q == 0 ? share : total + share;
        }
        c[r * static_cast<size_t>(n) + static_cast<size_t>(x)] = total;
      }
    return c;
  };
  return model;
}

TEST_CASE("emitted kernel on the CPU: the tensor-core family in fp16 and bf16", "[codegen][emulation][dtype][warp]") {
  // --family tensor-core: A's 8 x 1 vectors and the swap-and-transpose MMA, run by the emulation's
  // warp-synchronous scheduler (its m16n8k8 sums each element's products in k order with fmaf, one
  // valid order of the tensor cores'), so every element of C is bit for bit the float32 sum of the
  // row's products in column order rounded to the dtype, within the bound; for windows grown and in
  // LO-SpMM's order, empty rows (windows without blocks), widths of whole and partial 64-column
  // blocks, and the generic path where n is not a multiple of 8 or B or C is not 16-byte aligned.
  // Both kernels of the family: the staged one (B's slab in shared memory, in two chunks of rows for
  // 90 columns and in five for 300; for a target of one SM, so that it runs from n = 128 on these
  // few windows, the n the files are tuned for: spmmc prints the staged form only where it runs at
  // that n) and the direct one (below that n, and for a wide matrix whose windows read few of its
  // rows, which the rule leaves to it).
  test::TempDir dir;
  const fs::path one_sm = dir.path / "one_sm.json";
  {
    std::string target = test::read_file(fs::path(SPMMC_SOURCE_DIR) / "models" / "targets" / "h100.json");
    const size_t at = target.find("\"sm_count\": 132");
    REQUIRE(at != std::string::npos);
    target.replace(at, std::strlen("\"sm_count\": 132"), "\"sm_count\": 1");
    test::write_file(one_sm, target);
  }
  // 75 rows (not a multiple of 8), every 11th from row 3 empty.
  const auto holes_at = [](int32_t r, int32_t) { return r % 11 != 3; };
  const Csr holes = make_matrix(75, 90, random_entries(0.12, 5, holes_at));
  const fs::path path = write_mtx(dir.path, "holes", holes);
  const fs::path wide = write_mtx(dir.path, "wide", make_matrix(75, 300, random_entries(0.1, 6, holes_at)));
  const fs::path sparse_wide = write_mtx(dir.path, "sparse_wide", make_matrix(70, 1500, random_entries(0.003, 7, holes_at)));
  const std::vector<int64_t> ns = {1, 8, 12, 64, 72, 100, 128, 200};
  std::vector<KernelCase> cases;
  for (const char* dtype : {"fp16", "bf16"})
    for (const char* reorder : {"grow", "overlap"})
      cases.push_back({std::string("tc_") + dtype + "_" + reorder, path,
                       {"--family", "tensor-core", "--dtype", dtype, "--reorder", reorder, "--target", one_sm.string()}, ns, 128, reorder});
  cases.push_back({"tc_fp16_chunks", wide, {"--family", "tensor-core", "--dtype", "fp16", "--reorder", "grow", "--target", one_sm.string()},
                   {8, 64, 136}, 128, "grow"});
  // Dense enough that each window's vectors of a chunk spread over the residues: no keys.
  const fs::path dense_wide = write_mtx(dir.path, "dense_wide", make_matrix(75, 300, random_entries(0.6, 8, holes_at)));
  cases.push_back({"tc_fp16_residues", dense_wide, {"--family", "tensor-core", "--dtype", "fp16", "--reorder", "grow", "--target", one_sm.string()},
                   {8, 64, 136}, 128, "grow"});
  cases.push_back({"tc_bf16_direct", sparse_wide, {"--family", "tensor-core", "--dtype", "bf16", "--reorder", "grow", "--target", one_sm.string()},
                   {8, 64, 136}, 64, "grow"});
  // Windows of 16 rows: the default where the staged kernel runs on them at the tuned n and they fill
  // its warps (256 rows: 16 windows, two blocks of the staged kernel; below n = 128 the direct kernel
  // takes two warps per window), forced to 8 there, and forced where the direct kernel runs.
  const fs::path tall = write_mtx(dir.path, "tall", make_matrix(256, 300, random_entries(0.1, 9, [](int32_t, int32_t) { return true; })));
  cases.push_back({"tc_fp16_tall", tall, {"--family", "tensor-core", "--dtype", "fp16", "--reorder", "grow", "--target", one_sm.string()},
                   {8, 64, 128, 136, 200}, 128, "grow"});
  const fs::path few = write_mtx(dir.path, "few", make_matrix(40, 600, random_entries(0.05, 10, holes_at)));
  cases.push_back({"tc_fp16_split", few, {"--family", "tensor-core", "--dtype", "fp16", "--reorder", "grow", "--target", one_sm.string()},
                   {8, 64, 72, 128, 136, 200}, 128, "grow"});
  cases.push_back({"tc_bf16_tall_w8", tall,
                   {"--family", "tensor-core", "--dtype", "bf16", "--reorder", "grow", "--target", one_sm.string(), "--window-rows", "8"},
                   {8, 64, 128, 136, 200}, 128, "grow"});
  cases.push_back({"tc_bf16_direct_w16", sparse_wide,
                   {"--family", "tensor-core", "--dtype", "bf16", "--reorder", "grow", "--target", one_sm.string(), "--window-rows", "16"},
                   {8, 64, 136}, 64, "grow"});
  const std::vector<Built> built = build_all(cases, dir.path);
  test::PathCounts paths;
  int keyed = 0, residues = 0;  // staged files whose copy reads the keys, or takes the residues
  std::map<int, int> split;     // runs of the direct kernel (by the model) per warps per window
  for (size_t i = 0; i < cases.size(); ++i) {
    const KernelCase& c = cases[i];
    const Built& b = built[i];
    INFO("case " << c.name);
    check_built(c, b);
    const DType dtype = c.name.rfind("tc_fp16", 0) == 0 ? DType::kFp16 : DType::kBf16;
    Csr a = read_matrix_file(c.matrix.string(), ReadOptions{}).csr;
    round_values_to_dtype(a, dtype, c.matrix.string());
    const auto report = nlohmann::json::parse(test::read_file(b.dir / (c.name + ".json")));
    CHECK(report["choice"]["family"] == "tensor-core");
    CHECK(report["kernel"]["tensor_core"]["reorder"] == c.reorder);
    const bool direct = c.name.rfind("tc_bf16_direct", 0) == 0 || c.name == "tc_fp16_split";
    CHECK(report["kernel"]["tensor_core"]["kernel"] == (direct ? "direct" : "staged"));
    // --window-rows auto: 16 rows where the staged kernel runs on them at the tuned n (on 75 rows, 5
    // windows of 16 rows would fill a third of the staged kernel's blocks at n = 128), else 8.
    const int window_rows = c.name == "tc_fp16_tall" || c.name == "tc_bf16_direct_w16" ? 16 : 8;
    CHECK(report["kernel"]["tensor_core"]["window_rows"] == window_rows);
    const std::string cu = test::read_file(b.dir / (c.name + ".cu"));
    CHECK(cu.find("constexpr int spmmc_tc_rows = " + std::to_string(window_rows) + ";") != std::string::npos);
    if (c.matrix == wide || c.matrix == dense_wide || c.matrix == tall) {  // 300 columns in chunks of 64 rows (56 where 64 would not fit)
      const int chunk_rows = report["kernel"]["tensor_core"]["chunk_rows"].get<int>();
      CHECK((chunk_rows == 64 || (chunk_rows == 56 && window_rows == 16)));
      CHECK(cu.find("constexpr int spmmc_tc_chunks = " + std::to_string((300 + chunk_rows - 1) / chunk_rows) + ";") != std::string::npos);
    }
    CHECK((cu.find("#define SPMMC_TC_STAGED 1") != std::string::npos) == !direct);
    keyed += cu.find("constexpr int spmmc_tc_keyed = 1;") != std::string::npos;
    residues += cu.find("constexpr int spmmc_tc_keyed = 0;") != std::string::npos;
    std::string error;
    const auto kernel = test::EmulatedKernel::load(b.so, c.name, error);
    INFO(error);
    REQUIRE(kernel);
    CHECK(std::string(kernel->info()->a_format) == "vector-blocks-constants");
    CHECK(kernel->info()->a_tiles == report["kernel"]["tensor_core"]["windows"].get<int32_t>());
    CHECK(kernel->info()->m1 == window_rows);
    CHECK(kernel->info()->generic_below_n == 0);  // the tensor-core family: no small-n dispatch by default
    // The staged blocks' order is not the columns': C bit for bit as the kernel's order sums it.
    Csr order;
    const test::TcModel model = tc_model(a, cu, order);
    CHECK((order == a) == direct);
    paths += test::check_emulated_half_kernel(*kernel, a, dtype, c.ns, c.name, &model);
    // Split K in the direct kernel: 5 windows with 25 blocks each on one SM take 4 warps per window up
    // to n = 64, 2 up to 192, one above (the launch checked against it, C against the shares' sums).
    if (c.name == "tc_fp16_split") {
      CHECK(model.parts(64) == 4);
      CHECK(model.parts(72) == 2);
      CHECK(model.parts(192) == 2);
      CHECK(model.parts(200) == 1);
    }
    for (const int64_t n : c.ns) ++split[model.parts(n)];
  }
  // Compiled with SPMMC_TC_SCATTER_STORE (as for a GPU before sm_90, which has no stmatrix; here
  // defined before the file is included), the staged kernel stores C element by element: the same C,
  // for windows of 8 and of 16 rows.
  for (const char* name : {"tc_fp16_grow", "tc_fp16_tall"}) {
    const auto it = std::find_if(cases.begin(), cases.end(), [&](const KernelCase& k) { return k.name == name; });
    REQUIRE(it != cases.end());
    const KernelCase& c = *it;
    const Built& b = built[static_cast<size_t>(it - cases.begin())];
    INFO("scatter " << name);
    const fs::path wrapper = dir.path / (c.name + "_scatter.cu");
    test::write_file(wrapper, "#define SPMMC_TC_SCATTER_STORE 1\n#include \"" + (b.dir / (c.name + ".cu")).string() + "\"\n");
    std::string log, error;
    const fs::path so = dir.path / ("lib" + c.name + "_scatter.so");
    REQUIRE(test::build_emulated({wrapper}, so, log, {b.dir}) == 0);
    const auto kernel = test::EmulatedKernel::load(so, c.name, error);
    INFO(error << log);
    REQUIRE(kernel);
    Csr a = read_matrix_file(c.matrix.string(), ReadOptions{}).csr;
    round_values_to_dtype(a, DType::kFp16, c.matrix.string());
    Csr order;
    const test::TcModel model = tc_model(a, test::read_file(b.dir / (c.name + ".cu")), order);
    const test::PathCounts scattered = test::check_emulated_half_kernel(*kernel, a, DType::kFp16, c.ns, "scatter", &model);
    CHECK(scattered.tensor_core_staged > 0);
  }
  CHECK(paths.tensor_core > 0);
  CHECK(paths.tensor_core_staged > 0);
  CHECK(paths.tensor_core_staged < paths.tensor_core);
  CHECK(paths.generic > 0);
  CHECK(paths.unrolled == 0);
  INFO(keyed << " staged files with keys, " << residues << " with the residues");
  CHECK(keyed > 0);
  CHECK(residues > 0);
  CHECK(split[2] > 0);
  CHECK(split[4] > 0);
}

// 75 rows (not a multiple of 8), every 11th from row 3 empty; a few weights exactly halfway between
// two tf32 values (1 + 2^-11: ties, away from zero), one in float's subnormal range.
Csr tf32_holes() {
  Csr holes = make_matrix(75, 90, random_entries(0.12, 5, [](int32_t r, int32_t) { return r % 11 != 3; }));
  for (size_t i = 0; i < holes.values.size(); i += 13) holes.values[i] = i % 2 ? 0x1.002p0f : -0x1.006p-3f;
  holes.values[1] = 0x1.8p-130f;
  return holes;
}

TEST_CASE("emitted kernel on the CPU: the tensor-core family in tf32", "[codegen][emulation][dtype][warp]") {
  // --dtype tf32: A's values rounded to tf32 at compile time, B's in the kernel (cvt.rna.tf32.f32, the
  // emulation's conversion), blocks of 4 vectors on the m16n8k4 MMA (the emulation's warp collective:
  // each element's products summed in k order with fmaf, one valid order of the tensor cores'), so
  // every element of C is bit for bit the float32 sum in column order of A and B rounded to tf32,
  // within the tf32 bound; for windows grown and in LO-SpMM's order, empty rows, values with ties of
  // the rounding (the kernel's ties go away from zero), whole and partial 64-column blocks, and the
  // generic path (which rounds B too) where n is not a multiple of 8 or B or C is not 16-byte aligned.
  test::TempDir dir;
  const fs::path path = write_mtx(dir.path, "holes", tf32_holes());
  const std::vector<int64_t> ns = {1, 8, 12, 64, 72, 100, 128, 200};
  std::vector<KernelCase> cases;
  for (const char* reorder : {"grow", "overlap"})
    cases.push_back({std::string("tc_tf32_") + reorder, path, {"--family", "tensor-core", "--dtype", "tf32", "--reorder", reorder},
                     ns, 64, reorder});
  const std::vector<Built> built = build_all(cases, dir.path);
  test::PathCounts paths;
  for (size_t i = 0; i < cases.size(); ++i) {
    const KernelCase& c = cases[i];
    const Built& b = built[i];
    INFO("case " << c.name);
    check_built(c, b);
    Csr a = read_matrix_file(c.matrix.string(), ReadOptions{}).csr;
    const DTypeRounding rounding = round_values_to_dtype(a, DType::kTf32, c.matrix.string());
    CHECK(rounding.to_zero == 0);
    CHECK(std::count(a.values.begin(), a.values.end(), 0x1.004p0f) > 0);  // the ties went away from zero
    const auto report = nlohmann::json::parse(test::read_file(b.dir / (c.name + ".json")));
    CHECK(report["choice"]["family"] == "tensor-core");
    CHECK(report["kernel"]["tensor_core"]["reorder"] == c.reorder);
    CHECK(report["kernel"]["tensor_core"]["k"] == 4);
    std::string error;
    const auto kernel = test::EmulatedKernel::load(b.so, c.name, error);
    INFO(error);
    REQUIRE(kernel);
    CHECK(std::string(kernel->info()->dtype) == "tfloat32");
    CHECK(kernel->info()->a_tiles == report["kernel"]["tensor_core"]["windows"].get<int32_t>());
    CHECK(kernel->info()->nnz == a.nnz());
    CHECK(kernel->info()->generic_below_n == 0);  // the tensor-core family: no small-n dispatch by default
    paths += test::check_emulated_tf32_kernel(*kernel, a, c.ns, c.name);
  }
  CHECK(paths.tensor_core > 0);
  CHECK(paths.generic > 0);
  CHECK(paths.unrolled == 0);
}

TEST_CASE("emitted kernel on the CPU: tf32 on CUDA cores is float32's code with A rounded to tf32", "[codegen][emulation][dtype]") {
  // --dtype tf32 with a CUDA-core family (the rule's default without a GPU, --tile, --k-parts, --family
  // generic): A's values rounded to tf32 at compile time, B multiplied as given: C is bit for bit the
  // float32 sum in column order of A rounded to tf32 and B unrounded, on the unrolled and generic paths.
  test::TempDir dir;
  const fs::path path = write_mtx(dir.path, "holes", tf32_holes());
  const std::vector<int64_t> ns = {1, 8, 12, 64, 100, 128};
  std::vector<KernelCase> cases;
  cases.push_back({"cc_tf32_auto", path, {"--dtype", "tf32", "--generic-below", "0"}, ns, 64, "overlap"});
  cases.push_back({"cc_tf32_tile", path, {"--dtype", "tf32", "--tile", "16x64x2", "--generic-below", "0"}, ns, 64, "overlap"});
  cases.push_back({"cc_tf32_kparts", path, {"--dtype", "tf32", "--tile", "8x64", "--k-parts", "2", "--generic-below", "0"}, ns, 64,
                   "overlap"});
  cases.push_back({"cc_tf32_generic", path, {"--dtype", "tf32", "--family", "generic"}, ns, 64, "overlap"});
  const std::vector<Built> built = build_all(cases, dir.path);
  test::PathCounts paths;
  for (size_t i = 0; i < cases.size(); ++i) {
    const KernelCase& c = cases[i];
    const Built& b = built[i];
    INFO("case " << c.name);
    check_built(c, b);
    Csr a = read_matrix_file(c.matrix.string(), ReadOptions{}).csr;
    round_values_to_dtype(a, DType::kTf32, c.matrix.string());
    CHECK(std::count(a.values.begin(), a.values.end(), 0x1.004p0f) > 0);  // A's ties went away from zero
    const auto report = nlohmann::json::parse(test::read_file(b.dir / (c.name + ".json")));
    CHECK(report["choice"]["family"] != "tensor-core");
    std::string error;
    const auto kernel = test::EmulatedKernel::load(b.so, c.name, error);
    INFO(error);
    REQUIRE(kernel);
    CHECK(std::string(kernel->info()->dtype) == "tfloat32");
    paths += test::check_emulated_kernel(*kernel, a, c.ns, c.name, /*misaligned=*/true,
                                         report["kernel"]["k_part_begin"].get<std::vector<int32_t>>());
  }
  CHECK(paths.unrolled > 0);
  CHECK(paths.generic > 0);
  CHECK(paths.tensor_core == 0);
}

TEST_CASE("emitted kernel on the CPU: 1, 2 and 4 columns per thread, several block sizes", "[codegen][emulation]") {
  // N1 = threads x V: 64 x 1, 64 x 2, 64 x 4, 128 x 4, 32 x 2 and 256 x 4; widths that are and are
  // not multiples of V, below one B-tile and many B-tiles past grid.y.
  test::TempDir dir;
  const fs::path path = dir.path / "uniform.mtx";
  const auto g = run_spmmc({"gen", "uniform", "--rows", "70", "--cols", "60", "--sparsity", "0.85", "--seed", "5", "-q", "-o",
                            path.string()});
  INFO(g.err);
  REQUIRE(g.exit_code == 0);
  const std::vector<int64_t> ns = {1, 2, 3, 4, 6, 8, 100, 128, 130, 256, 1028, 4100};
  // The unrolled kernels at every width (--generic-below 0; one file keeps the default dispatch,
  // the generic path below n = 512).
  std::vector<KernelCase> cases;
  for (const char* tile : {"32x64", "8x128x2", "16x256x4", "4x512x4", "2x64x2", "64x1024x4"}) {
    std::string name = std::string("threads_") + tile;
    for (char& ch : name) ch = ch == 'x' ? '_' : ch;
    cases.push_back({name, path, {"--tile", tile, "--generic-below", "0"}, ns, 1024, "overlap"});
  }
  cases.push_back({"threads_8x128x2_none", path, {"--tile", "8x128x2", "--reorder", "none"}, ns, 1024, "none"});
  // The same code split into several kernels (one chain of launches per call).
  cases.push_back({"kernels_8x128x2", path, {"--tile", "8x128x2", "--fmas-per-kernel", "40", "--generic-below", "0"}, ns, 1024,
                   "overlap"});
  cases.push_back({"kernels_4x512x4", path, {"--tile", "4x512x4", "--fmas-per-kernel", "1", "--generic-below", "0"}, ns, 1024,
                   "overlap"});
  // The split along K: ranges added in order by later kernels (and by the generic path).
  cases.push_back({"kparts_32x64", path, {"--tile", "32x64", "--k-parts", "3", "--generic-below", "0"}, ns, 1024, "overlap"});
  cases.push_back({"kparts_8x128x2", path, {"--tile", "8x128x2", "--k-parts", "2", "--fmas-per-kernel", "40", "--generic-below",
                   "0"}, ns, 1024, "overlap"});
  cases.push_back({"kparts_4x256x4", path, {"--tile", "4x256x4", "--k-parts", "7", "--generic-below", "0"}, ns, 1024, "overlap"});
  // Rows longer than the split kernel's rounds (512 products at n = 1, 64 at n = 7): one row of
  // 1500 products, one of 600, the rest short; several rounds, a partial last one, ranges of K
  // that end inside a round (the generic path below n = 64 of the --k-parts 3 file).
  const fs::path long_rows = write_mtx(dir.path, "long_rows", make_matrix(9, 1700, [](int32_t r, int32_t c) {
                                         const bool on = r == 2 ? c % 9 != 4 : r == 6 ? c % 3 == 1 : (c * 7 + r) % 97 == 0;
                                         return on ? 0.125f * static_cast<float>((c * 13 + r * 5) % 17) - 1.0f : 0.0f;
                                       }));
  const std::vector<int64_t> small = {1, 2, 3, 5, 7, 8, 33};
  cases.push_back({"long_rows_generic", long_rows, {"--family", "generic"}, small, 64, "overlap"});
  cases.push_back({"long_rows_kparts", long_rows, {"--tile", "2x64", "--k-parts", "3", "--generic-below", "64"}, small, 64,
                   "overlap"});
  // The same rows from n = 512, where the generic path takes a warp per row (rounds of 32 products
  // handed round by shuffles, the ranges of K ending inside rounds); --batch-invariant keeps the
  // balanced small-n path out of the way.
  const std::vector<int64_t> wide = {512, 516, 1028};
  cases.push_back({"long_rows_generic_warp", long_rows, {"--family", "generic", "--batch-invariant"}, wide, 1024, "overlap"});
  cases.push_back({"long_rows_kparts_warp", long_rows,
                   {"--tile", "2x64", "--k-parts", "3", "--generic-below", "2048", "--batch-invariant"}, wide, 1024, "overlap"});
  // A long along K (2100 columns: generic_warp_wide): from n = 512 the warp per row in blocks of 32 warps (40 rows:
  // 2 blocks of rows x 4-9 of columns on the emulation's 4 SMs), its last block's rows partly past A's; in the
  // generic family and in an unrolled file's generic path, the same bits as blocks of 8.
  const fs::path long_k = write_mtx(dir.path, "long_k", make_matrix(40, 2100, [](int32_t r, int32_t c) {
                                      const bool on = r % 7 == 3 ? (c * 5 + r) % 3 != 0 : (c * 11 + r * 3) % 53 == 0;
                                      return on ? 0.0625f * static_cast<float>((c * 7 + r * 13) % 19) - 0.5f : 0.0f;
                                    }));
  cases.push_back({"long_k_generic", long_k, {"--family", "generic", "--batch-invariant"}, wide, 1024, "overlap"});
  cases.push_back({"long_k_unrolled_path", long_k, {"--tile", "8x128", "--generic-below", "2048", "--batch-invariant"}, wide,
                   1024, "overlap"});
  // n that four adjacent columns a lane do not divide (odd, 2 mod 4) or not in whole blocks of 128 columns: the
  // warp per row with four columns 32 apart a lane (its last block of columns clamped), in blocks of 8 and 32:
  // from n = 512 where A has at most 1024 columns (the first 1000 of long_rows' columns), from 1024 where it has
  // more (long_rows, long_k: one column per thread at 1023).
  const fs::path long_rows_1000 = write_mtx(dir.path, "long_rows_1000", make_matrix(9, 1000, [](int32_t r, int32_t c) {
                                              const bool on = r == 2 ? c % 9 != 4 : r == 6 ? c % 3 == 1 : (c * 7 + r) % 97 == 0;
                                              return on ? 0.125f * static_cast<float>((c * 13 + r * 5) % 17) - 1.0f : 0.0f;
                                            }));
  cases.push_back({"long_rows_1000_generic_strided", long_rows_1000, {"--family", "generic", "--batch-invariant"},
                   {513, 642, 1027}, 1024, "overlap"});
  const std::vector<int64_t> strided_long_k = {1023, 1027, 2178};
  cases.push_back({"long_rows_generic_strided", long_rows, {"--family", "generic", "--batch-invariant"}, strided_long_k, 1024,
                   "overlap"});
  cases.push_back({"long_k_generic_strided", long_k, {"--family", "generic", "--batch-invariant"}, strided_long_k, 1024,
                   "overlap"});
  cases.push_back({"long_k_unrolled_path_strided", long_k,
                   {"--tile", "8x128", "--generic-below", "4096", "--batch-invariant"}, strided_long_k, 4096, "overlap"});
  const test::PathCounts paths = run_cases(cases, dir.path);
  CHECK(paths.unrolled > 0);
  CHECK(paths.generic > 0);
  CHECK(paths.generic_wide > 0);
  CHECK(paths.generic_strided > 0);
  CHECK(paths.looped > 0);
  CHECK(paths.kernels > 5);
}

// Row r's products in uneven_rows(): every 25th row 200, the others 20-50.
int32_t uneven_row_length(int32_t r) { return r % 25 == 0 ? 200 : 20 + (r * 7) % 31; }

// 300 x 300 with rows of uneven_row_length products (41.5 on average): the longest more than twice the mean.
Csr uneven_rows() {
  return make_matrix(300, 300, [](int32_t r, int32_t c) {
    return (c * 37 + r * 11) % 300 < uneven_row_length(r) ? 0.0625f * static_cast<float>((c * 3 + r) % 29) - 0.8f : 0.0f;
  });
}

TEST_CASE("emitted kernel on the CPU: the balanced path's second table for uneven rows", "[codegen][emulation][balanced]") {
  // 300 rows of 41.5 products on average, every 25th of 200 (compiler/planning/small_n_dispatch.h, *Uneven
  // rows from n = 512*): the path (pieces of 32) ends at 512 (300 rows: more than 8 warps per SM from there),
  // and from 512 up to below 1024 (or the unrolled file's generic path's end, or --balanced-mid-below) the
  // balanced kernel reads the second table, pieces of 42 (check_emulated_kernel compares its sums bit for bit
  // with piece_order_spmm of that schedule), four columns per lane only: n % 4 == 0 with B and C aligned to
  // 16 bytes (513, 1022, 1023, 799 and the misaligned calls go on to the generic path); rows no longer than
  // twice the mean have none.
  test::TempDir dir;
  const fs::path uneven = write_mtx(dir.path, "uneven", uneven_rows());
  const fs::path even = write_mtx(dir.path, "even", make_matrix(300, 300, [](int32_t r, int32_t c) {
                                    return (c * 37 + r * 11) % 300 < 40 + r % 20 ? 0.5f - 0.125f * static_cast<float>(c % 5) : 0.0f;
                                  }));
  const std::vector<KernelCase> cases = {
      {"mid_generic", uneven, {"--family", "generic"}, {4, 511, 512, 513, 516, 1022, 1023, 1024, 1028}, 128, "overlap"},
      {"mid_unrolled", uneven, {"--tile", "8x64", "--generic-below", "800"}, {511, 512, 516, 799, 800}, 1024, "overlap"},
      {"mid_600", uneven, {"--family", "generic", "--balanced-mid-below", "600"}, {512, 599, 600}, 128, "overlap"},
      {"mid_off", uneven, {"--family", "generic", "--balanced-mid-below", "0"}, {512, 516}, 128, "overlap"},
      {"mid_even", even, {"--family", "generic"}, {512, 516}, 128, "overlap"},
  };
  const test::PathCounts paths = run_cases(cases, dir.path);
  CHECK(paths.mid > 0);
  CHECK(paths.generic > 0);
  CHECK(paths.unrolled > 0);
  const auto kernel_of = [&](const std::string& name) {
    return nlohmann::json::parse(test::read_file(dir.path / name / (name + ".json")))["kernel"];
  };
  CHECK(kernel_of("mid_generic")["balanced_path"]["below_n"] == 512);
  CHECK(kernel_of("mid_generic")["balanced_mid"]["from_n"] == 512);
  CHECK(kernel_of("mid_generic")["balanced_mid"]["below_n"] == 1024);
  CHECK(kernel_of("mid_generic")["balanced_mid"]["piece_length"] == 42);  // ceil(12464 / 300)
  int32_t longer = 0;
  for (int32_t r = 0; r < 300; ++r) longer += uneven_row_length(r) > 42;
  CHECK(kernel_of("mid_generic")["balanced_mid"]["rows_cut"] == longer);
  CHECK(kernel_of("mid_unrolled")["balanced_mid"]["below_n"] == 800);     // its generic path's end
  CHECK(kernel_of("mid_600")["balanced_mid"]["below_n"] == 600);
  CHECK(kernel_of("mid_off")["balanced_mid"].is_null());
  CHECK(kernel_of("mid_even")["balanced_mid"].is_null());
  CHECK(kernel_of("mid_even")["balanced_mid_why"].get<std::string>().find("less than 2 x the mean") != std::string::npos);
  CHECK_THAT(test::read_file(dir.path / "mid_600" / "mid_600.cu"), Catch::Contains(" --balanced-mid-below 600\n"));
  const auto invariant = run_spmmc({"compile", uneven.string(), "--n", "64", "--name", "i", "-o", (dir.path / "i").string(),
                                    "--quiet", "--batch-invariant", "--balanced-mid-below", "1024"});
  CHECK(invariant.exit_code == 64);
  CHECK(invariant.err.find("--batch-invariant leaves out the balanced small-n path that --balanced-mid-below 1024") !=
        std::string::npos);
}

TEST_CASE("emitted kernel on the CPU: the balanced small-n path of unrolled and generic files", "[codegen][emulation][balanced]") {
  // Rows longer than 32 products (compiler/planning/small_n_dispatch.h): from n = 4 to below the rule's end
  // (for these few rows where the generic path's launch has at most 8 warps per SM: 3329 for 40 rows, 897
  // for 140; or the unrolled file's generic path) the balanced kernel runs, its cut rows summed in piece order
  // (check_emulated_kernel compares them bit for bit with piece_order_spmm), the other paths outside
  // that range in column order; --batch-invariant leaves it out, --balanced-below moves its end, and a
  // matrix without a row longer than 32 products has none.
  test::TempDir dir;
  const fs::path long_rows = write_mtx(dir.path, "long_rows", make_matrix(40, 300, [](int32_t r, int32_t c) {
                                         const int32_t len = r % 5 == 0 ? 0 : r % 7 == 0 ? 250 : 5 + 11 * (r % 9);
                                         return (c * 31 + r * 17) % 300 < len ? 0.0625f * static_cast<float>((c * 5 + r) % 23) - 0.7f
                                                                               : 0.0f;
                                       }));
  const fs::path short_rows = write_mtx(dir.path, "short_rows", make_matrix(40, 300, [](int32_t r, int32_t c) {
                                          return (c * 31 + r * 17) % 300 < 30 ? 0.5f + static_cast<float>(c % 3) : 0.0f;
                                        }));
  const fs::path long_mean = write_mtx(dir.path, "long_mean", make_matrix(140, 300, [](int32_t r, int32_t c) {
                                         return (c * 31 + r * 17) % 300 < 80 ? 0.25f * static_cast<float>((c + r) % 7) - 0.6f : 0.0f;
                                       }));
  const std::vector<int64_t> ns = {1, 3, 4, 5, 63, 64, 66, 127, 128, 132, 511, 512, 516, 1023, 1024, 1028, 1152};
  const std::vector<KernelCase> cases = {
      {"path_unrolled", long_rows, {"--tile", "8x64", "--generic-below", "1100"}, ns, 1152, "overlap"},
      {"path_unrolled_short", long_rows, {"--tile", "8x64", "--generic-below", "100"}, {3, 4, 99, 100, 128}, 640, "overlap"},
      {"path_generic", long_rows, {"--family", "generic"}, ns, 128, "overlap"},
      {"path_generic_long", long_mean, {"--family", "generic"}, {896, 897}, 128, "overlap"},
      // (140 rows of 80 products: from n = 192 odd n, and misaligned B or C, on the generic path)
      {"path_v1_end", long_mean, {"--family", "generic"}, {63, 64, 129, 191, 192, 193, 194, 195, 511, 512}, 128, "overlap"},
      {"path_below_100", long_rows, {"--family", "generic", "--balanced-below", "100"}, {3, 4, 99, 100, 128}, 128, "overlap"},
      {"path_invariant", long_rows, {"--family", "generic", "--batch-invariant"}, {4, 64, 128}, 128, "overlap"},
      {"path_none", short_rows, {"--family", "generic"}, {4, 64, 128}, 128, "overlap"},
      // two pieces per warp below 17 (the rule's, forced on this small matrix), and below 9 in an unrolled file
      {"path_pairs", long_rows, {"--family", "generic", "--balanced-pairs-below", "17"}, {3, 4, 5, 15, 16, 17, 18, 64}, 128, "overlap"},
      {"path_pairs_unrolled", long_rows, {"--tile", "8x64", "--generic-below", "1100", "--balanced-pairs-below", "9"}, {4, 8, 9, 128}, 1152, "overlap"},
  };
  const test::PathCounts paths = run_cases(cases, dir.path);
  CHECK(paths.balanced > 0);
  CHECK(paths.unrolled > 0);
  CHECK(paths.generic > 0);
  const auto path_of = [&](const std::string& name) {
    return nlohmann::json::parse(test::read_file(dir.path / name / (name + ".json")))["kernel"]["balanced_path"];
  };
  CHECK(path_of("path_unrolled")["from_n"] == 4);
  CHECK(path_of("path_unrolled")["below_n"] == 1100);  // its generic path's end, before the rule's 3329
  CHECK(path_of("path_unrolled")["piece_length"] == 32);
  CHECK(path_of("path_unrolled")["rows_cut"].get<int32_t>() > 0);
  CHECK(path_of("path_unrolled_short")["below_n"] == 100);  // the unrolled kernel from its generic path's end
  CHECK(path_of("path_generic")["below_n"] == 3329);  // 40 rows (of 56.6 products on average): 128 x 26 + 1
  CHECK(path_of("path_generic_long")["below_n"] == 897);  // 140 rows of 80: 128 x 7 + 1
  CHECK(path_of("path_generic_long")["v1_below_n"] == kBalancedV1BelowN);  // long rows, at least 128 of them
  CHECK(path_of("path_generic")["v1_below_n"] == 3329);  // 40 rows: to the path's end
  CHECK(path_of("path_below_100")["below_n"] == 100);
  CHECK(path_of("path_invariant").is_null());
  CHECK(path_of("path_generic")["pairs_below_n"] == 0);  // far fewer pieces than a wave of warps
  CHECK(path_of("path_pairs")["pairs_below_n"] == 17);
  CHECK(path_of("path_pairs_unrolled")["pairs_below_n"] == 9);
  CHECK_THAT(test::read_file(dir.path / "path_pairs" / "path_pairs.cu"), Catch::Contains(" --balanced-pairs-below 17\n"));
  // the regenerate line of the header comment keeps the options that set the dispatch
  CHECK_THAT(test::read_file(dir.path / "path_invariant" / "path_invariant.cu"), Catch::Contains(" --batch-invariant\n"));
  CHECK_THAT(test::read_file(dir.path / "path_below_100" / "path_below_100.cu"), Catch::Contains(" --balanced-below 100\n"));
  CHECK_THAT(test::read_file(dir.path / "path_unrolled" / "path_unrolled.cu"), Catch::Contains(" --generic-below 1100\n"));
  CHECK(path_of("path_none").is_null());
  const auto why = nlohmann::json::parse(test::read_file(dir.path / "path_none" / "path_none.json"))["kernel"]["balanced_path_why"];
  CHECK(why.get<std::string>().find("no row of A has more than 32 products") != std::string::npos);
  // Not for half precision, nor with the path turned off and asked for at once.
  const auto half = run_spmmc({"compile", long_rows.string(), "--n", "64", "--name", "h", "-o", (dir.path / "h").string(),
                               "--quiet", "--dtype", "fp16", "--balanced-below", "100"});
  CHECK(half.exit_code == 64);
  CHECK(half.err.find("--balanced-below is for float32 and tf32 files") != std::string::npos);
  const auto both = run_spmmc({"compile", long_rows.string(), "--n", "64", "--name", "b", "-o", (dir.path / "b").string(),
                               "--quiet", "--batch-invariant", "--balanced-below", "100"});
  CHECK(both.exit_code == 64);
  CHECK(both.err.find("--batch-invariant leaves out the balanced small-n path") != std::string::npos);
  const auto pairs = run_spmmc({"compile", long_rows.string(), "--n", "64", "--name", "p", "-o", (dir.path / "p").string(),
                                "--quiet", "--batch-invariant", "--balanced-pairs-below", "17"});
  CHECK(pairs.exit_code == 64);
  CHECK(pairs.err.find("--batch-invariant leaves out the balanced small-n path that --balanced-pairs-below 17") !=
        std::string::npos);
}

TEST_CASE("emitted kernel on the CPU: the balanced width of the default (800 threads)", "[codegen][emulation]") {
  // 16 A-tiles tuned for n = 6272: the heuristic takes 800 threads (balanced_threads), so the last
  // B-tile is partial (672 columns) and, at other widths, blocks of 800 threads loop over B-tiles
  // that do not divide n.
  test::TempDir dir;
  const auto entries = random_entries(0.1, 11);  // and one entry in every row: 16 tiles, no empty ones
  const fs::path path = write_mtx(dir.path, "sparse256x48", make_matrix(256, 48, [&](int32_t r, int32_t c) {
                                    const float v = entries(r, c);
                                    return v == 0.0f && c == r % 48 ? 1.0f : v;
                                  }));
  const auto r = run_spmmc(
      {"compile", path.string(), "--n", "6272", "--name", "k", "-o", (dir.path / "o").string(), "--quiet", "--tune", "none"});
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(test::read_file(dir.path / "o" / "k.json"));
  REQUIRE(report["choice"]["m1"] == 16);
  CHECK(report["choice"]["threads_per_block"] == 800);
  CHECK(report["choice"]["min_blocks_per_sm"] == 1);
  const test::PathCounts paths = run_cases({{"balanced_800", path, {"--generic-below", "0"}, {6272, 799, 801, 1600, 33}, 6272, "overlap"}}, dir.path);
  CHECK(paths.unrolled >= 5);  // every width, at each alignment run_cases tries
  CHECK(paths.looped > 0);
}

TEST_CASE("emitted kernel on the CPU: several kernels as one CUDA graph (cache and arguments, a capturing caller)",
          "[codegen][emulation]") {
  // The entry point keeps 4 instantiated graphs per device, one per (B, C, n) it was last called
  // with, and sets a graph's kernel arguments when it reuses it for other buffers: a wrong update
  // would leave C unwritten (NaN) or write the previous call's C.
  test::TempDir dir;
  const fs::path path = dir.path / "uniform.mtx";
  const auto g = run_spmmc({"gen", "uniform", "--rows", "40", "--cols", "30", "--sparsity", "0.8", "--seed", "3", "-q", "-o",
                            path.string()});
  REQUIRE(g.exit_code == 0);
  // --generic-below 32: n = 32 takes the chain too (the rule would send every n below 64 to the generic
  // path: 5 A-tiles of 32 columns fill 0.7 of the SMs only at n = 592).
  const std::vector<Built> built = build_all(
      {{"graphs", path, {"--tile", "8x32", "--fmas-per-kernel", "40", "--generic-below", "32"}, {32}, 64}}, dir.path);
  INFO(built[0].compile_err << built[0].build_log);
  REQUIRE(built[0].build_exit == 0);
  std::string error;
  const auto kernel = test::EmulatedKernel::load(built[0].so, "graphs", error);
  INFO(error);
  REQUIRE(kernel);
  const Csr a = read_matrix_file(path.string(), ReadOptions{}).csr;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto stats = [&] {
    std::vector<unsigned long long> counts(5);
    kernel->graph_stats(counts.data());
    return counts;  // streams created, captures, instantiated, launched, node updates
  };
  // Six (B, C) pairs, each B different; C filled with NaN before every call.
  struct Pair {
    std::vector<float> b, c;
  };
  std::vector<Pair> pairs(6);
  for (size_t i = 0; i < pairs.size(); ++i) pairs[i].b = test::seeded_b(a.cols, 64, 100 + i);
  const auto call = [&](Pair& p, int64_t n, void* stream) {
    p.c.assign(static_cast<size_t>(a.rows) * static_cast<size_t>(n), nan);
    return kernel->entry(p.b.data(), p.c.data(), n, stream);
  };
  const auto right = [&](const Pair& p, int64_t n) {
    std::vector<float> b(p.b.begin(), p.b.begin() + a.cols * n);  // the first n columns' worth of values
    const std::vector<float> want = test::fmaf_spmm(a, b, n);
    return p.c.size() == want.size() && std::memcmp(p.c.data(), want.data(), want.size() * sizeof(float)) == 0;
  };
  unsigned grid[3], block[3];
  unsigned long long launches = 0, chain[4] = {}, runs = 0;
  REQUIRE(call(pairs[0], 64, nullptr) == 0);
  kernel->last_launch(grid, block, &launches, chain, &runs);
  const unsigned long long kernels = chain[0];
  REQUIRE(kernels > 2);
  CHECK(right(pairs[0], 64));
  CHECK(stats() == std::vector<unsigned long long>{1, 1, 1, 1, 0});  // one capture, on a stream of its own

  // Two rounds over six pairs with four graphs: every call after the first four misses (least
  // recently used) and sets the arguments of every kernel of the graph it takes.
  for (int round = 0; round < 2; ++round)
    for (size_t i = round == 0 ? 1 : 0; i < pairs.size(); ++i) {
      INFO("round " << round << ", pair " << i);
      REQUIRE(call(pairs[i], 64, nullptr) == 0);
      CHECK(right(pairs[i], 64));
    }
  CHECK(stats() == std::vector<unsigned long long>{4, 4, 4, 12, 8 * kernels});
  // The same buffers again: no update.
  for (int again = 0; again < 2; ++again) {
    REQUIRE(call(pairs[5], 64, nullptr) == 0);
    CHECK(right(pairs[5], 64));
  }
  CHECK(stats() == std::vector<unsigned long long>{4, 4, 4, 14, 8 * kernels});
  // The same buffers at another n: a new key, the grid and n set again.
  REQUIRE(call(pairs[5], 32, nullptr) == 0);
  CHECK(right(pairs[5], 32));
  CHECK(stats() == std::vector<unsigned long long>{4, 4, 4, 15, 9 * kernels});

  // A caller capturing its stream gets the chain in its own graph (nothing runs until it
  // launches that graph), with the overlap of the plain chain.
  void* stream = kernel->capturing_stream();
  REQUIRE(stream != nullptr);
  const std::vector<unsigned long long> before = stats();
  REQUIRE(call(pairs[1], 64, stream) == 0);
  CHECK(std::isnan(pairs[1].c[0]));
  CHECK(stats()[3] == before[3]);  // no graph of the entry point's launched
  CHECK(kernel->replay_capture(stream) == static_cast<int>(kernels));
  CHECK(right(pairs[1], 64));
  kernel->last_launch(grid, block, &launches, chain, &runs);
  CHECK(chain[0] == kernels);
  CHECK(chain[1] + 1 == kernels);  // every kernel after the first overlaps the one before

  // Graphs are per device: another device builds its own (a graph holds the device's kernels); one
  // past the 16 devices with graphs launches the chain; device 0's graphs stay.
  const auto set_device = reinterpret_cast<int (*)(int)>(kernel->symbol("spmmc_emulation_set_device"));
  REQUIRE(set_device);
  REQUIRE(set_device(1) == 0);
  std::vector<unsigned long long> at = stats();
  for (int again = 0; again < 2; ++again) {
    REQUIRE(call(pairs[0], 64, nullptr) == 0);
    CHECK(right(pairs[0], 64));
  }
  CHECK(stats() == std::vector<unsigned long long>{at[0] + 1, at[1] + 1, at[2] + 1, at[3] + 2, at[4]});
  REQUIRE(set_device(16) == 0);
  at = stats();
  REQUIRE(call(pairs[3], 64, nullptr) == 0);
  CHECK(right(pairs[3], 64));
  CHECK(stats() == at);
  kernel->last_launch(grid, block, &launches, chain, &runs);
  CHECK(chain[0] == kernels);
  REQUIRE(set_device(0) == 0);
  REQUIRE(call(pairs[5], 32, nullptr) == 0);  // device 0's graph for these buffers at n = 32
  CHECK(right(pairs[5], 32));
  CHECK(stats() == std::vector<unsigned long long>{at[0], at[1], at[2], at[3] + 1, at[4]});

  // Compiled with -DSPMMC_NO_GRAPH (here: defined before the file is included), the entry point
  // launches the plain chain: no stream, capture or graph at all, the same C.
  const fs::path wrapper = dir.path / "no_graph.cu";
  test::write_file(wrapper, "#define SPMMC_NO_GRAPH\n#include \"" + (dir.path / "graphs" / "graphs.cu").string() + "\"\n");
  std::string log;
  REQUIRE(test::build_emulated({wrapper}, dir.path / "libno_graph.so", log, {dir.path / "graphs"}) == 0);
  const auto plain = test::EmulatedKernel::load(dir.path / "libno_graph.so", "graphs", error);
  INFO(error << log);
  REQUIRE(plain);
  // (The emulation's counters are shared by the two shared objects: compare before and after.)
  std::vector<unsigned long long> counts_before(5), counts_after(5);
  plain->graph_stats(counts_before.data());
  for (int round = 0; round < 2; ++round) {
    pairs[2].c.assign(static_cast<size_t>(a.rows) * 64, nan);
    REQUIRE(plain->entry(pairs[2].b.data(), pairs[2].c.data(), 64, nullptr) == 0);
    CHECK(right(pairs[2], 64));
    plain->last_launch(grid, block, &launches, chain, &runs);
    CHECK(chain[0] == kernels);
    CHECK(chain[1] + 1 == kernels);
  }
  plain->graph_stats(counts_after.data());
  CHECK(counts_after == counts_before);  // no stream created, no capture, no graph launched
}

TEST_CASE("emitted kernel on the CPU: zero tiles of the one-row matrix", "[codegen][emulation]") {
  // The count the case above relies on, checked through the report: 1 tile + ceil(49 / 8).
  test::TempDir dir;
  const fs::path m = write_mtx(dir.path, "m", make_matrix(50, 40, [](int32_t r, int32_t c) { return r == 27 && c < 3 ? 1.0f : 0.0f; }));
  const auto r = run_spmmc({"compile", m.string(), "--n", "32", "--name", "k", "-o", (dir.path / "o").string(), "--tile", "8x32", "--quiet"});
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(test::read_file(dir.path / "o" / "k.json"));
  CHECK(report["kernel"]["tiles"] == 8);
  CHECK(report["kernel"]["stores_per_thread"] == 50);
  CHECK(report["kernel"]["fmas"] == 3);
}

TEST_CASE("emitted kernel on the CPU: generated patterns, overlap, grown and natural order", "[codegen][emulation]") {
  test::TempDir dir;
  const fs::path path = dir.path / "patterns.mtx";
  const auto g = run_spmmc({"gen", "patterns", "--rows", "96", "--cols", "80", "--patterns", "5", "--sparsity", "0.8",
                            "--seed", "11", "-q", "-o", path.string()});
  INFO(g.err);
  REQUIRE(g.exit_code == 0);
  const std::vector<int64_t> ns = {1, 17, 128, 130};
  const test::PathCounts paths =
      run_cases({{"patterns_overlap", path, {"--reorder", "overlap"}, ns, 128, "overlap"},
                 {"patterns_none", path, {"--reorder", "none"}, ns, 128, "none"},
                 {"patterns_overlap_16x32", path, {"--reorder", "overlap", "--tile", "16x32"}, ns, 128, "overlap"},
                 {"patterns_grow_16x32", path, {"--reorder", "grow", "--tile", "16x32"}, ns, 128, "grow"},
                 {"patterns_kernels", path, {"--reorder", "overlap", "--fmas-per-kernel", "150"}, ns, 128, "overlap"}},
                dir.path);
  CHECK(paths.kernels > 1);
}

TEST_CASE("emitted kernel on the CPU: negative, subnormal and large weights round-trip", "[codegen][emulation]") {
  test::TempDir dir;
  const float denorm = std::numeric_limits<float>::denorm_min();
  // One row per kind of value; the large ones alone in their rows so that C stays finite.
  const std::vector<std::vector<float>> rows = {
      {-1.0f, 0.1f, -0.3333333f, 2.5e-3f},
      {denorm, -denorm, 1e-40f, -3.0e-39f},
      {FLT_MIN, -FLT_MIN, 1.17549421e-38f /* largest subnormal */, 0.0f},
      {FLT_MAX, 0.0f, 0.0f, 0.0f},
      {0.0f, -FLT_MAX, 0.0f, 0.0f},
      {0.0f, 0.0f, 3.0e38f, 0.0f},
      {1.0f + FLT_EPSILON, -(1.0f - FLT_EPSILON / 2), 16777215.0f, -1e-7f},
      {0.0f, 0.0f, 0.0f, -6.5e37f},
  };
  std::vector<float> dense;
  for (const auto& row : rows) dense.insert(dense.end(), row.begin(), row.end());
  const Csr a = test::csr_from_dense(static_cast<int32_t>(rows.size()), 4, dense);
  REQUIRE(a.nnz() == 19);
  const fs::path path = write_mtx(dir.path, "weights", a);
  run_cases({{"weights", path, {"--tile", "2x32"}, {1, 2, 33}, 32, "overlap"},
             {"weights_kernels", path, {"--tile", "2x32", "--fmas-per-kernel", "1"}, {1, 2, 33}, 32, "overlap"},
             {"weights_none", path, {"--tile", "1x32", "--reorder", "none"}, {3, 40}, 32, "none"},
             {"weights_v4", path, {"--tile", "2x128x4"}, {4, 36, 37}, 32, "overlap"}},
            dir.path);
}

TEST_CASE("emitted kernel on the CPU: widths past the grid's y limit", "[codegen][emulation]") {
  // n > 65535 * N1: more B-tiles than grid.y may ever hold (the emulation refuses a grid.y above
  // 65535, as a GPU does); the few blocks of the one-wave grid loop over all of them. Aligned B
  // and C only: with V = 1 the unrolled kernel runs either way, and this case is the costly one.
  test::TempDir dir;
  const fs::path path = write_mtx(dir.path, "tiny", make_matrix(3, 2, [](int32_t r, int32_t c) { return r == 1 ? 0.0f : static_cast<float>(r + 2 * c + 1); }));
  const test::PathCounts paths =
      run_cases({{"wide", path, {"--tile", "1x32"}, {int64_t{65535} * 32 + 33}, 32, "overlap"}}, dir.path, false);
  CHECK(paths.unrolled == 1);
  CHECK(paths.looped == 1);
}

TEST_CASE("emitted kernel on the CPU: shared DLMC and MobileNet matrices", "[codegen][emulation][shared]") {
  const fs::path data = test::shared_data_dir();
  if (data.empty()) return;
  test::TempDir dir;
  const std::vector<int64_t> ns = {1, 33, 96};
  std::vector<KernelCase> cases;
  // Tuned for their real widths (MANIFEST.md), where the heuristic finds tiles (up to M1 = 128).
  const fs::path rn50 = data / "dlmc" / "rn50" / "magnitude_pruning" / "0.98";
  const std::vector<std::pair<std::string, int64_t>> layers = {
      {"bottleneck_1_block_group1_1_1", 3136}, {"bottleneck_2_block_group1_1_1", 3136}, {"bottleneck_3_block_group2_1_1", 784}};
  for (const auto& [layer, width] : layers) {
    const fs::path p = rn50 / (layer + ".smtx");
    if (fs::exists(p)) cases.push_back({"rn50_" + layer, p, {}, ns, width, "overlap"});
    else WARN("skipped: " << p << " is absent");
  }
  // At batch 32 (n = 100352) the heuristic gives the 64-row layer one A-tile of M1 = 64 (64x384,
  // choose_tile.h's single-tile rule): its 64 accumulators per thread, unrolled at the small ns too.
  if (const fs::path p = rn50 / "bottleneck_1_block_group1_1_1.smtx"; fs::exists(p))
    cases.push_back({"rn50_single_tile", p, {"--generic-below", "0"}, ns, 100352, "overlap"});
  const int64_t widths[] = {12544, 3136, 3136, 784};
  for (int i = 0; i < 4; ++i) {
    const fs::path p = data / "weights" / "mobilenet" / fmt::format("contraction_1x1_{}.npy", i);
    if (fs::exists(p)) cases.push_back({fmt::format("mobilenet_{}", i), p, {}, ns, widths[i], "overlap"});
    else WARN("skipped: " << p << " is absent");
  }
  // And one with a forced small tile (many tiles, zero tiles for its empty rows), its unrolled
  // kernels at every n (--generic-below 0; the others take the generic path below half their width).
  const fs::path p = rn50 / "bottleneck_3_block_group2_1_1.smtx";
  if (fs::exists(p)) {
    cases.push_back({"rn50_forced_4x32", p, {"--tile", "4x32", "--generic-below", "0"}, ns, 784, "overlap"});
    cases.push_back({"rn50_forced_8x256x4", p, {"--tile", "8x256x4", "--generic-below", "0"}, ns, 784, "overlap"});
  }
  // Tuned for a very wide B, a 26k-non-zero layer gets the default split into several kernels.
  const fs::path wide = data / "weights" / "mobilenet" / "contraction_1x1_8.npy";
  if (fs::exists(wide)) cases.push_back({"mobilenet_8_split", wide, {"--generic-below", "0"}, ns, int64_t{1} << 22, "overlap"});
  const test::PathCounts paths = run_cases(cases, dir.path);
  if (!cases.empty()) CHECK(paths.unrolled > 0);
  if (fs::exists(wide)) CHECK(paths.kernels > 1);
}

}  // namespace
}  // namespace spmmc
