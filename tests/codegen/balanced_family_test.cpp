// The balanced family (codegen/families/balanced, docs/design/balanced.md): its schedule, its rule,
// and its emitted file run on the CPU through tests/cuda_emulation at every vector width, against a
// reference that sums in the schedule's piece order (bit for bit) and against float64.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/families/balanced/balanced_launch.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/common/csr.h"
#include "compiler/common/diagnostics.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/formats/write_matrix.h"
#include "compiler/planning/small_n_dispatch.h"
#include "runtime/nvrtc_compile.h"
#include "runtime/reference_spmm.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using namespace spmmc;

namespace {

// Rows of the given lengths over `cols` columns (distinct seeded columns, sorted; values in [-2, 2],
// never zero).
Csr rows_of_lengths(const std::vector<int32_t>& lengths, int32_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  Csr a;
  a.rows = static_cast<int32_t>(lengths.size());
  a.cols = cols;
  a.row_ptr.push_back(0);
  std::vector<int32_t> all(static_cast<size_t>(cols));
  for (int32_t c = 0; c < cols; ++c) all[static_cast<size_t>(c)] = c;
  std::uniform_real_distribution<float> value(0.25f, 2.0f);
  for (const int32_t len : lengths) {
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int32_t> picked(all.begin(), all.begin() + len);
    std::sort(picked.begin(), picked.end());
    for (const int32_t c : picked) {
      a.col_idx.push_back(c);
      a.values.push_back(rng() % 2 ? value(rng) : -value(rng));
    }
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  return a;
}

// The small-n tests' matrix: rows around the piece lengths (empty, short, 31-33, 64, 65, 129, 200, 1100)
// and 24 short rows, over 1200 columns, written to DIR/skewed.mtx.
Csr skewed_rows(const fs::path& dir, uint32_t seed) {
  std::vector<int32_t> lengths = {0, 3, 64, 65, 200, 1100, 1, 0, 129, 17, 33, 32, 31};
  for (int i = 0; i < 24; ++i) lengths.push_back(i % 5);
  const Csr a = rows_of_lengths(lengths, 1200, seed);
  write_matrix(a, (dir / "skewed.mtx").string(), MatrixFormat::kMatrixMarket, "balanced_family_test");
  REQUIRE(read_matrix_file((dir / "skewed.mtx").string(), ReadOptions{}).csr == a);
  return a;
}

// One call of the kernel's entry point at n with B and C `offset` floats past 16-byte boundaries, C guarded by
// NaN on both sides (checked here): C, and the launch's grid and block size.
struct GuardedCall {
  std::vector<float> c;
  unsigned grid[3] = {}, block[3] = {};
};
GuardedCall call_guarded(const test::EmulatedKernel& kernel, const std::vector<float>& b, int32_t rows, int64_t n,
                         size_t offset) {
  const size_t c_size = static_cast<size_t>(rows) * static_cast<size_t>(n);
  // at least one float before C and three after it inside the buffer
  std::vector<float> b_buffer(b.size() + 8), c_buffer(c_size + 16, std::nanf(""));
  float* const b_at = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(b_buffer.data()) + 15) / 16 * 16) + offset;
  float* const c_at = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(c_buffer.data() + 4) + 15) / 16 * 16) + offset;
  std::copy(b.begin(), b.end(), b_at);
  REQUIRE(kernel.entry(b_at, c_at, n, nullptr) == 0);
  GuardedCall call;
  unsigned long long launches = 0, chain[4] = {}, runs = 0;
  kernel.last_launch(call.grid, call.block, &launches, chain, &runs);
  CHECK(std::isnan(c_at[-1]));
  CHECK(std::isnan(c_at[c_size]));
  call.c.assign(c_at, c_at + c_size);
  return call;
}

// A file of the small-n tests: its name, spmmc compile's options, the schedule of its pieces, and whether it
// takes n = 1 with a lane per product as emitted.
struct SkewedFile {
  std::string name;
  std::vector<std::string> args;
  BalancedSchedule schedule;
  bool spmv = true;
};

// spmmc compile of DIR/skewed.mtx into DIR/NAME (--n 64, --tune none, reproducible) with `args`: the folder.
fs::path compile_skewed(const fs::path& dir, const std::string& name, const std::vector<std::string>& args) {
  const fs::path out = dir / name;
  std::vector<std::string> all = {"compile", (dir / "skewed.mtx").string(), "--n", "64", "--name", name, "-o", out.string(),
                                  "--quiet", "--reproducible", "--tune", "none"};
  all.insert(all.end(), args.begin(), args.end());
  const auto r = test::run_spmmc(all);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return out;
}

// OUT/NAME.cu built for the emulation with `define` (a macro and its value) set before it, or as emitted where
// `define` is empty; TAG names the library.
std::unique_ptr<test::EmulatedKernel> build_skewed(const fs::path& out, const std::string& name, const std::string& define,
                                                   const std::string& tag) {
  fs::path source = out / (name + ".cu");
  if (!define.empty()) {
    source = out / (tag + ".cu");
    test::write_file(source, "#define " + define + "\n#include \"" + name + ".cu\"\n");
  }
  std::string log, error;
  const int built = test::build_emulated({source}, out / ("lib" + name + "_" + tag + ".so"), log, {out});
  INFO(log);
  REQUIRE(built == 0);
  auto kernel = test::EmulatedKernel::load(out / ("lib" + name + "_" + tag + ".so"), name, error);
  INFO(error);
  REQUIRE(kernel);
  return kernel;
}

// ||c - exact|| / ||exact||.
double relative_error(const std::vector<float>& c, const std::vector<double>& exact) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < c.size(); ++i) err += (c[i] - exact[i]) * (c[i] - exact[i]), norm += exact[i] * exact[i];
  return std::sqrt(err) / std::sqrt(norm);
}

}  // namespace

TEST_CASE("balanced schedule: every product once, a row's pieces in one block, longest first", "[codegen][balanced]") {
  // Lengths around the piece length and the block: empty, short, 64, 65 (two pieces), 200 (four),
  // 1100 (more than 16 x 64: sixteen pieces of 69), and enough short rows to fill several blocks.
  std::vector<int32_t> lengths = {0, 3, 64, 65, 200, 1100, 1, 0, 129, 17};
  for (int i = 0; i < 30; ++i) lengths.push_back(i % 7);
  const Csr a = rows_of_lengths(lengths, 1200, 7);
  const BalancedSchedule s = schedule_balanced(a, 64, 16);
  REQUIRE(s.slots.size() % 16 == 0);
  CHECK(s.blocks() == static_cast<int32_t>(s.slots.size()) / 16);
  std::vector<int32_t> covered(static_cast<size_t>(a.nnz()), 0);
  std::map<int32_t, int32_t> pieces_seen;
  int32_t previous_length = std::numeric_limits<int32_t>::max();
  for (size_t w = 0; w < s.slots.size(); ++w) {
    const BalancedPiece& p = s.slots[w];
    if (p.row < 0) continue;
    const int32_t len = a.row_ptr[static_cast<size_t>(p.row) + 1] - a.row_ptr[static_cast<size_t>(p.row)];
    for (int32_t q = p.begin; q < p.end; ++q) ++covered[static_cast<size_t>(q)];
    CHECK(p.begin >= a.row_ptr[static_cast<size_t>(p.row)]);
    CHECK(p.end <= a.row_ptr[static_cast<size_t>(p.row) + 1]);
    // the row's pieces: consecutive warps of one block, from `first`, in product order
    const int32_t index = static_cast<int32_t>(w % 16) - p.first;
    CHECK(index >= 0);
    CHECK(index < p.pieces);
    CHECK(p.first + p.pieces <= 16);
    if (index == 0) {
      CHECK(p.begin == a.row_ptr[static_cast<size_t>(p.row)]);
      CHECK(len <= previous_length);  // longest rows first
      previous_length = len;
    } else {
      CHECK(s.slots[w - 1].row == p.row);
      CHECK(s.slots[w - 1].end == p.begin);
    }
    ++pieces_seen[p.row];
    CHECK(p.pieces == (len > 64 ? std::min(16, (len + 63) / 64) : 1));
  }
  CHECK(std::all_of(covered.begin(), covered.end(), [](int32_t x) { return x == 1; }));
  CHECK(pieces_seen.size() == lengths.size());  // empty rows too: their warps store zeros
  CHECK(pieces_seen[5] == 16);                  // 1100 products: sixteen pieces of 69
  CHECK(s.longest_piece == 69);
  CHECK(s.rows_cut == 4);  // 65, 129, 200, 1100
  // An empty matrix still launches one (idle) block.
  const BalancedSchedule none = schedule_balanced(rows_of_lengths({}, 4, 1), 64, 16);
  CHECK(none.blocks() == 1);
  CHECK(none.slots[0].row == -1);
  // 2 or 4 pieces per warp: the same pieces (so the same sums), blocks of 32 or 64 slots, a row's
  // pieces still in one block and at most 16 of them.
  const auto pieces_of = [](const BalancedSchedule& x) {
    std::set<std::tuple<int32_t, int32_t, int32_t, int32_t>> out;
    for (const BalancedPiece& p : x.slots)
      if (p.row >= 0) out.emplace(p.row, p.begin, p.end, p.pieces);
    return out;
  };
  for (const int32_t groups : {2, 4}) {
    INFO(groups << " pieces per warp");
    const BalancedSchedule g = schedule_balanced(a, 64, 16, groups);
    CHECK(g.groups == groups);
    CHECK(g.slots_per_block() == 16 * groups);
    REQUIRE(g.slots.size() % static_cast<size_t>(16 * groups) == 0);
    CHECK(pieces_of(g) == pieces_of(s));
    CHECK(g.blocks() < s.blocks());
    for (size_t w = 0; w < g.slots.size(); ++w)
      if (g.slots[w].row >= 0) {
        CHECK(g.slots[w].first <= static_cast<int32_t>(w % static_cast<size_t>(16 * groups)));
        CHECK(g.slots[w].first + g.slots[w].pieces <= 16 * groups);
      }
  }
}

TEST_CASE("balanced schedule: the small-n dispatch counts the pieces the path's schedule cuts", "[codegen][balanced][small-n]") {
  // small_n_pieces (compiler/planning) decides the pairs kernel from the pieces the small-n path's
  // schedule (pieces of 32, 16 warps) places: both apply balanced_row_pieces.
  std::mt19937 rng(29);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int32_t> lengths(static_cast<size_t>(1 + rng() % 300));
    for (int32_t& len : lengths) len = static_cast<int32_t>(rng() % 4 == 0 ? rng() % 1200 : rng() % 40);
    const Csr a = rows_of_lengths(lengths, 1200, static_cast<uint32_t>(trial));
    const BalancedSchedule s = schedule_balanced(a, kSmallNPieceLength, kBalancedWarps, 1);
    const auto placed = std::count_if(s.slots.begin(), s.slots.end(), [](const BalancedPiece& p) { return p.row >= 0; });
    CHECK(small_n_pieces(a) == placed);
  }
}

TEST_CASE("balanced groups: 4 pieces per warp for short even rows, 2 for many rows, below n = 128", "[codegen][balanced]") {
  const Csr mesh = rows_of_lengths(std::vector<int32_t>(9000, 4), 100, 1);
  CHECK(default_balanced_groups(mesh, 32) == 4);
  CHECK(default_balanced_groups(mesh, 64) == 4);
  CHECK(default_balanced_groups(mesh, 128) == 1);
  CHECK(default_balanced_groups(rows_of_lengths(std::vector<int32_t>(5000, 4), 100, 1), 32) == 1);  // too few rows
  std::vector<int32_t> skewed(61000, 2);
  for (size_t r = 0; r < skewed.size(); r += 100) skewed[r] = 300;
  CHECK(default_balanced_groups(rows_of_lengths(skewed, 400, 2), 32) == 2);
  skewed.resize(20000);
  CHECK(default_balanced_groups(rows_of_lengths(skewed, 400, 2), 32) == 1);
}

TEST_CASE("balanced launch: the pairs kernel's grid over blocks of 16 columns, half the warps per block", "[codegen][balanced]") {
  // (grid.z where the blocks of columns are more than 65535, as balanced_launch's)
  for (const auto& [n, y, z] : {std::tuple<int64_t, unsigned, unsigned>{1, 1, 1}, {4, 1, 1}, {16, 1, 1}, {17, 2, 1},
                                {32, 2, 1}, {33, 3, 1}, {16 * int64_t{65535}, 65535, 1}, {16 * int64_t{65535} + 1, 65535, 2}}) {
    INFO("n = " << n);
    const BalancedLaunch l = balanced_pairs_launch(n, 7, kBalancedWarps);
    CHECK(std::string(l.symbol) == kBalancedPairsKernel);
    CHECK(l.cols_per_lane == 1);
    CHECK(std::make_tuple(l.grid_x, l.grid_y, l.grid_z, l.block_x) == std::make_tuple(7u, y, z, 16u * kBalancedWarps));
  }
  CHECK_THROWS_AS(balanced_pairs_launch(0, 7, kBalancedWarps), InternalError);
  CHECK_THROWS_AS(balanced_pairs_launch(16 * int64_t{65535} * 65535 + 1, 7, kBalancedWarps), InternalError);
  CHECK_THROWS_AS(balanced_pairs_launch(16, 7, 3), InternalError);  // an odd number of warps has no pairs
}

TEST_CASE("balanced rule: uneven rows with a long one, not even or short ones", "[codegen][balanced]") {
  std::string why;
  std::vector<int32_t> skewed(200, 2);
  skewed[3] = 400;
  CHECK(balanced_by_rule(rows_of_lengths(skewed, 500, 1), why));
  CHECK(why.find(">= 1.3") != std::string::npos);
  CHECK_FALSE(balanced_by_rule(rows_of_lengths(std::vector<int32_t>(200, 40), 500, 2), why));  // even rows
  std::vector<int32_t> short_skewed(200, 1);
  short_skewed[0] = 100;  // uneven, but the longest row holds fewer than two pieces of 64
  CHECK_FALSE(balanced_by_rule(rows_of_lengths(short_skewed, 500, 3), why));
  CHECK(default_piece_length(rows_of_lengths({3000, 1}, 3100, 4)) == 256);
  CHECK(default_piece_length(rows_of_lengths({2000, 1}, 3100, 4)) == 64);
  // What a timed search tries after the rule's length, longest first.
  CHECK(shorter_piece_lengths_to_try(64) == std::vector<int32_t>{32, 16});
  CHECK(shorter_piece_lengths_to_try(256) == std::vector<int32_t>{128, 64});
  CHECK(shorter_piece_lengths_to_try(100).empty());
}

TEST_CASE("emitted kernel on the CPU: the balanced family", "[codegen][emulation][balanced]") {
  test::TempDir dir;
  std::vector<int32_t> lengths = {0, 3, 64, 65, 200, 1100, 1, 0, 129, 17, 33};
  for (int i = 0; i < 24; ++i) lengths.push_back(i % 5);
  const Csr a = rows_of_lengths(lengths, 1200, 11);
  const fs::path matrix = dir.path / "skewed.mtx";
  write_matrix(a, matrix.string(), MatrixFormat::kMatrixMarket, "balanced_family_test");
  REQUIRE(read_matrix_file(matrix.string(), ReadOptions{}).csr == a);
  const fs::path out = dir.path / "out";
  std::unique_ptr<test::EmulatedKernel> kernel;
  // 1, 2 and 4 pieces per warp: the same sums (the cuts do not depend on it), lanes of 32, 16 and 8.
  for (const int32_t groups : {1, 2, 4}) {
    INFO(groups << " pieces per warp");
    const std::string name = "skewed" + std::to_string(groups);
    const auto r = test::run_spmmc({"compile", matrix.string(), "--n", "64", "--name", name, "-o", out.string(), "--quiet",
                                    "--reproducible", "--tune", "none", "--family", "balanced", "--piece-length", "64",
                                    "--balanced-groups", std::to_string(groups)});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(test::read_file(out / (name + ".json")));
    CHECK(report["choice"]["family"] == "balanced");
    CHECK(report["kernel"]["balanced"]["rows_cut"] == 4);
    CHECK(report["kernel"]["balanced"]["pieces_per_warp"] == groups);
    // n = 1 by lanes over products first, then the columns' kernels (V = 1 from n = 2)
    CHECK(report["kernel"]["balanced"]["spmv"] == true);
    CHECK(report["kernel"]["variants"][0]["kernel"] == "balanced-spmv");
    CHECK(report["kernel"]["variants"][1]["kernel"] == "balanced-v4");
    CHECK(report["kernel"]["variants"][1]["n_min"] == 4 * 32 / groups);
    CHECK(report["kernel"]["variants"][3]["n_min"] == 2);
    kernel = test::emulate_emitted(out / (name + ".cu"), name);
    const spmmc_kernel_info& info = *kernel->info();
    CHECK(std::string(info.a_format) == "csr-pieces-constants");
    CHECK(info.m == a.rows);
    CHECK(info.nnz == a.nnz());
    CHECK(info.variant_count == 4);
    CHECK(std::string(info.variants[0].kernel) == "balanced-spmv");
    CHECK((info.variants[0].n_min == 1 && info.variants[0].n_max == 1));
    CHECK(std::string(info.variants[1].kernel) == "balanced-v4");
    CHECK(info.variants[1].n_min == 4 * 32 / groups);
    CHECK(info.variants[3].n_min == 2);
    const BalancedSchedule schedule = schedule_balanced(a, 64, kBalancedWarps, groups);
    // n: one column, a few (lanes idle), two blocks of columns and a ragged third; B and C aligned to
    // 16 bytes (V = 4 where n allows), offset by two floats (V = 2 for even n) and by one (V = 1).
    const std::vector<int64_t> sizes = groups == 1 ? std::vector<int64_t>{1, 2, 3, 4, 6, 33, 63, 64, 66, 127, 128, 130, 260}
                                                   : std::vector<int64_t>{1, 7, 8, 17, 32, 40, 64, 100, 130};
    for (const int64_t n : sizes) {
      for (const size_t offset : {size_t{0}, size_t{2}, size_t{1}}) {
        INFO("n = " << n << ", B and C offset by " << offset << " floats");
        const std::vector<float> b = test::seeded_b(a.cols, n, static_cast<uint64_t>(n));
        std::vector<float> b_buffer(b.size() + 8), c_buffer(static_cast<size_t>(a.rows) * n + 8, std::nanf(""));
        float* const b_at = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(b_buffer.data()) + 15) / 16 * 16) + offset;
        float* const c_at = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(c_buffer.data()) + 15) / 16 * 16) + offset;
        std::copy(b.begin(), b.end(), b_at);
        REQUIRE(kernel->entry(b_at, c_at, n, nullptr) == 0);
        // The launch the tuner makes (codegen/families/balanced/balanced_launch.h) is the entry point's:
        // the same grid and block, the same kernel for the same symbol.
        unsigned grid[3], block[3];
        unsigned long long launches = 0, chain[4] = {}, runs = 0;
        kernel->last_launch(grid, block, &launches, chain, &runs);
        const BalancedLaunch l =
            balanced_launch(n, offset == 0 ? 16 : offset == 2 ? 8 : 4, schedule.blocks(), kBalancedWarps, groups);
        CHECK(std::make_tuple(grid[0], grid[1], grid[2], block[0], block[1], block[2]) ==
              std::make_tuple(l.grid_x, l.grid_y, l.grid_z, l.block_x, 1u, 1u));
        CHECK(int64_t{l.grid_y} * l.grid_z * (32 / groups) * l.cols_per_lane >= n);
        // (n = 1: spmmc_balanced_spmv, the same grid and block, another kernel)
        const std::string symbol_ran = n == 1 ? std::string("spmmc_balanced_spmv") : std::string(l.symbol);
        const void* const func = kernel->last_kernel();
        for (const auto& [symbol, seen] : kernel->generic_kernels) {
          INFO(symbol << " ran before; now " << symbol_ran);
          CHECK((symbol == symbol_ran) == (seen == func));
        }
        kernel->generic_kernels.emplace(symbol_ran, func);
        const std::vector<float> c(c_at, c_at + static_cast<size_t>(a.rows) * n);
        const std::vector<float> expected = test::balanced_family_spmm(a, schedule, b, n, true);
        CHECK(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)) == 0);
        const std::vector<double> exact = reference_spmm(a, b, n);
        double err = 0, norm = 0;
        for (size_t i = 0; i < c.size(); ++i) err += (c[i] - exact[i]) * (c[i] - exact[i]), norm += exact[i] * exact[i];
        CHECK(std::sqrt(err) <= 1e-5 * std::sqrt(norm));
        // rows without a cut sum in column order: the same bits as every other family's kernels (at n > 1)
        if (n == 1) continue;
        const std::vector<float> ordered = test::fmaf_spmm(a, b, n);
        for (int32_t row = 0; row < a.rows; ++row) {
          const int32_t len = a.row_ptr[static_cast<size_t>(row) + 1] - a.row_ptr[static_cast<size_t>(row)];
          if (len <= 64)
            CHECK(std::memcmp(&c[static_cast<size_t>(row) * n], &ordered[static_cast<size_t>(row) * n], n * sizeof(float)) == 0);
        }
      }
    }
  }
  // Refused without touching C: null B, null C, n < 1.
  std::vector<float> b(static_cast<size_t>(a.cols)), c(static_cast<size_t>(a.rows), 7.0f);
  CHECK(kernel->entry(nullptr, c.data(), 1, nullptr) != 0);
  CHECK(kernel->entry(b.data(), nullptr, 1, nullptr) != 0);
  CHECK(kernel->entry(b.data(), c.data(), 0, nullptr) != 0);
  CHECK(std::all_of(c.begin(), c.end(), [](float x) { return x == 7.0f; }));
  // fp16 has no balanced kernel: a usage error.
  const auto half = test::run_spmmc({"compile", matrix.string(), "--n", "64", "--name", "h", "-o", out.string(), "--quiet",
                                     "--family", "balanced", "--dtype", "fp16"});
  CHECK(half.exit_code == 64);
  CHECK(half.err.find("--family balanced takes float32 or tf32") != std::string::npos);
}

TEST_CASE("emitted kernel on the CPU: the balanced kernels take n = 1 with a lane per product",
          "[codegen][emulation][balanced]") {
  // n = 1 takes spmmc_balanced_spmv (kernel_balanced.cuh), over the family's slots or the small-n path's, its
  // sums piece_tree_spmv's; other n as before. nvcc -DSPMMC_BALANCED_SPMV=0 (built here from a file that
  // defines it and includes NAME.cu) leaves it out, and so does --batch-invariant in the balanced family.
  test::TempDir dir;
  const Csr a = skewed_rows(dir.path, 13);
  const std::vector<SkewedFile> files = {
      {"fam1", {"--family", "balanced", "--piece-length", "64", "--balanced-groups", "1"}, schedule_balanced(a, 64, kBalancedWarps, 1), true},
      {"fam2", {"--family", "balanced", "--piece-length", "64", "--balanced-groups", "2"}, schedule_balanced(a, 64, kBalancedWarps, 2), true},
      {"fam4", {"--family", "balanced", "--piece-length", "64", "--balanced-groups", "4"}, schedule_balanced(a, 64, kBalancedWarps, 4), true},
      // the small-n path of a generic-family file: pieces of 32, one per warp
      {"path", {"--family", "generic"}, schedule_balanced(a, kSmallNPieceLength, kBalancedWarps, 1), true},
      {"invariant", {"--family", "balanced", "--piece-length", "64", "--balanced-groups", "1", "--batch-invariant"},
       schedule_balanced(a, 64, kBalancedWarps, 1), false},
  };
  for (const SkewedFile& f : files) {
    INFO(f.name);
    const fs::path out = compile_skewed(dir.path, f.name, f.args);
    const auto report = nlohmann::json::parse(test::read_file(out / (f.name + ".json")));
    CHECK(report["kernel"][f.name == "path" ? "balanced_path" : "balanced"]["spmv"] == f.spmv);
    CHECK((report["kernel"]["variants"][0]["kernel"] == "balanced-spmv") == f.spmv);
    for (const bool spmv : {f.spmv, false}) {
      INFO((spmv ? "with" : "without") << " the n = 1 kernel");
      const auto kernel = build_skewed(out, f.name, spmv ? "" : "SPMMC_BALANCED_SPMV 0", spmv ? "as_emitted" : "spmv_off");
      CHECK((std::string(kernel->info()->variants[0].kernel) == "balanced-spmv") == spmv);
      const std::vector<float> b = test::seeded_b(a.cols, 1, 5);
      for (const size_t offset : {size_t{0}, size_t{1}}) {
        INFO("B and C offset by " << offset << " floats");
        const GuardedCall call = call_guarded(*kernel, b, a.rows, 1, offset);
        if (spmv)
          CHECK(std::make_tuple(call.grid[0], call.grid[1], call.grid[2], call.block[0]) ==
                std::make_tuple(static_cast<unsigned>(f.schedule.blocks()), 1u, 1u, static_cast<unsigned>(32 * kBalancedWarps)));
        // without it: the family's kernels, or the path's file's split kernel (column order)
        const std::vector<float> expected = f.name == "path" && !spmv ? test::fmaf_spmm(a, b, 1)
                                                                       : test::balanced_family_spmm(a, f.schedule, b, 1, spmv);
        CHECK(std::memcmp(call.c.data(), expected.data(), call.c.size() * sizeof(float)) == 0);
        CHECK(relative_error(call.c, reference_spmm(a, b, 1)) <= 1e-5);
      }
      // n = 2 runs the same either way: the family's kernel, or the path's file's split kernel.
      const std::vector<float> b2 = test::seeded_b(a.cols, 2, 6);
      std::vector<float> c2(static_cast<size_t>(a.rows) * 2);
      REQUIRE(kernel->entry(b2.data(), c2.data(), 2, nullptr) == 0);
      const std::vector<float> expected2 =
          f.name == "path" ? test::fmaf_spmm(a, b2, 2) : test::piece_order_spmm(a, f.schedule, b2, 2);
      CHECK(std::memcmp(c2.data(), expected2.data(), c2.size() * sizeof(float)) == 0);
      if (!f.spmv) break;  // (nothing to leave out)
    }
  }
}

TEST_CASE("emitter: the NVRTC form of the balanced family holds its kernels with C linkage, and NVRTC builds it",
          "[codegen][emit][nvrtc][balanced]") {
  // The tuner times the balanced family from this form (tuner/time_balanced_kernel.h); NVRTC needs no GPU.
  const Csr a = rows_of_lengths({0, 3, 200, 1, 70}, 300, 5);
  EmitOptions options;
  options.name = "k";
  options.nvrtc_form = true;
  options.generic_only = true;
  options.balanced = true;
  options.piece_length = 64;
  for (const int32_t groups : {1, 2, 4}) {
    INFO(groups << " pieces per warp");
    options.balanced_groups = groups;
    const EmittedKernel k = emit_unrolled_kernel(a, RowTiling{}, TileCandidate{}, options);
    CHECK(k.balanced_blocks == schedule_balanced(a, 64, kBalancedWarps, groups).blocks());
    CHECK(k.balanced_rows_cut == 2);
    for (const char* symbol : kBalancedKernels) {
      CHECK(test::occurrences(k.nvrtc_cu, fmt::format("extern \"C\" __global__ void {}(", symbol)) == 1);
      CHECK(test::occurrences(k.cu, fmt::format("extern \"C\" __global__ void {}(", symbol)) == 0);  // NAME.cu keeps them internal
    }
    // the launches, each defined once, only outside NVRTC (#ifndef __CUDACC_RTC__)
    CHECK(test::occurrences(k.nvrtc_cu, "cudaError_t spmmc_launch_balanced(") == 1);
    CHECK(test::occurrences(k.nvrtc_cu, "cudaError_t spmmc_launch_balanced_columns(") == 1);
    CHECK(test::occurrences(k.nvrtc_cu, "spmmc_generic_kernel") == 0);
    // A's arrays and the pieces without values (the tuner copies them into the module): the form's size
    // does not grow with A's non-zeros.
    for (const char* array : {"spmmc_row_ptr[] = {", "spmmc_col_idx[] = {", "spmmc_weight_bits[] = {", "spmmc_piece[] = {"})
      CHECK(test::occurrences(k.nvrtc_cu, array) == 0);
    // The tuner asks for the NVRTC form only: the same form, NAME.cu left out.
    EmitOptions only = options;
    only.nvrtc_only = true;
    const EmittedKernel o = emit_unrolled_kernel(a, RowTiling{}, TileCandidate{}, only);
    CHECK(o.cu.empty());
    CHECK(!k.cu.empty());
    CHECK(o.nvrtc_cu == k.nvrtc_cu);
    // ... its arrays' bytes set aside by the printer, the same as those printed and parsed back.
    REQUIRE(o.nvrtc_arrays != nullptr);
    REQUIRE(k.nvrtc_arrays != nullptr);
    REQUIRE(o.nvrtc_arrays->size() == k.nvrtc_arrays->size());
    for (size_t i = 0; i < k.nvrtc_arrays->size(); ++i) {
      CHECK((*o.nvrtc_arrays)[i].name == (*k.nvrtc_arrays)[i].name);
      CHECK((*o.nvrtc_arrays)[i].bytes == (*k.nvrtc_arrays)[i].bytes);
    }
    CHECK(test::occurrences(k.nvrtc_cu, fmt::format("__device__ int spmmc_col_idx[{}];", a.nnz())) == 1);
    REQUIRE(k.nvrtc_arrays != nullptr);
    std::map<std::string, size_t> bytes;
    for (const ArrayValues& v : *k.nvrtc_arrays) bytes[v.name] = v.bytes.size();
    CHECK(bytes.at("spmmc_col_idx") == static_cast<size_t>(a.nnz()) * 4);
    CHECK(bytes.at("spmmc_weight_bits") == static_cast<size_t>(a.nnz()) * 4);
    CHECK(bytes.at("spmmc_piece") == static_cast<size_t>(k.balanced_blocks) * kBalancedWarps * groups * 16);
    NvrtcOptions nvrtc;
    nvrtc.arch = "sm_90";
    nvrtc.flags = {"--ptxas-options=-v"};
    const Cubin cubin = compile_to_cubin({"k.cu", k.nvrtc_cu}, nvrtc);
    for (const char* symbol : kBalancedKernels) CHECK(cubin.image.find(symbol) != std::string::npos);
    // The arrays the kernels read keep their plain names in the cubin's symbols (what cuModuleGetGlobal finds).
    for (const char* name : {"spmmc_col_idx", "spmmc_weight_bits", "spmmc_piece"})
      CHECK(cubin.image.find(std::string(1, '\0') + name + std::string(1, '\0')) != std::string::npos);
    // Every kernel fits 64 registers, so that two blocks of 16 warps share an SM: at 82 (the piece read
    // with __ldg) one block fitted and the kernel ran 1.4x slower on an H200 (docs/design/balanced.md).
    // One piece per warp spills nothing; with several, ptxas spills a few bytes for the 64 the launch
    // bounds ask (unasked it took up to 91).
    INFO(cubin.log);
    int kernels = 0;
    for (size_t at = cubin.log.find("Compiling entry function '"); at != std::string::npos;
         at = cubin.log.find("Compiling entry function '", at + 1)) {
      const size_t used = cubin.log.find("Used ", at);
      REQUIRE(used != std::string::npos);
      const int registers = std::stoi(cubin.log.substr(used + 5));
      CHECK(registers <= 65536 / (2 * 32 * kBalancedWarps));
      const std::string entry = cubin.log.substr(at, cubin.log.find("Compiling entry function '", at + 1) - at);
      const size_t spill = entry.find(" bytes spill stores");
      if (spill != std::string::npos) {
        const size_t digits = entry.find_last_not_of("0123456789", spill - 1) + 1;
        CHECK(std::stoi(entry.substr(digits, spill - digits)) <= (groups == 1 ? 0 : 32));
      }
      ++kernels;
    }
    CHECK(kernels == 3);
  }
}

TEST_CASE("compile: --family auto takes the balanced family for uneven rows, the generic one for even rows",
          "[codegen][balanced]") {
  test::TempDir dir;
  // 600 rows of 4 products with every 20th row of 1500 (47 280 non-zeros): the unrolled launch is
  // short of warps (the generic family's rule), and the rows vary (the balanced rule).
  std::vector<int32_t> lengths(600, 4);
  for (size_t r = 0; r < lengths.size(); r += 20) lengths[r] = 1500;
  const fs::path skewed = dir.path / "skewed.mtx", even = dir.path / "even.mtx";
  write_matrix(rows_of_lengths(lengths, 2000, 5), skewed.string(), MatrixFormat::kMatrixMarket, "balanced_family_test");
  write_matrix(rows_of_lengths(std::vector<int32_t>(600, 80), 2000, 6), even.string(), MatrixFormat::kMatrixMarket,
               "balanced_family_test");
  for (const auto& [matrix, family] : {std::pair{skewed, "balanced"}, std::pair{even, "generic"}}) {
    const fs::path out = dir.path / family;
    const auto r = test::run_spmmc({"compile", matrix.string(), "--n", "32", "--name", "k", "-o", out.string(), "--quiet",
                                    "--tune", "none"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(test::read_file(out / "k.json"));
    CHECK(report["choice"]["family"] == family);
    CHECK(report["kernel"].contains("balanced") == (std::string(family) == "balanced"));
    if (std::string(family) == "balanced") {
      CHECK(report["choice"]["family_why"].get<std::string>().find("coefficient of variation") != std::string::npos);
      CHECK(report["kernel"]["balanced"]["piece_length"] == 64);
      CHECK(report["kernel"]["balanced"]["rows_cut"] == 30);
      const std::string cu = test::read_file(out / "k.cu");
      CHECK(cu.find("#define SPMMC_BALANCED 1") != std::string::npos);
      // The provenance line names the family's shape (a search may have timed it; here the rules').
      const int groups = report["kernel"]["balanced"]["pieces_per_warp"].get<int>();
      CHECK(cu.find("--family balanced") != std::string::npos);
      CHECK(cu.find(" --piece-length 64 --balanced-groups " + std::to_string(groups)) != std::string::npos);
    }
  }
  // A length given: the schedule, the report and the provenance line follow it.
  const fs::path out = dir.path / "short";
  const auto r = test::run_spmmc({"compile", skewed.string(), "--n", "32", "--name", "k", "-o", out.string(), "--quiet",
                                  "--tune", "none", "--family", "balanced", "--piece-length", "32"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(test::read_file(out / "k.json"));
  CHECK(report["kernel"]["balanced"]["piece_length"] == 32);
  const std::string cu = test::read_file(out / "k.cu");
  CHECK(cu.find("constexpr int spmmc_balanced_piece_length = 32;") != std::string::npos);
  CHECK(cu.find(" --piece-length 32 --balanced-groups ") != std::string::npos);
}
