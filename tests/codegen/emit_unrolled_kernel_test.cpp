// The unrolled emitter (codegen/emit_unrolled_kernel.h, kernel_program.h, print_tile_ptx.h) on
// hand-computed tiny cases and on properties of larger ones, for V = 1, 2 and 4 columns per
// thread: the kernel program (one FMA per non-zero with its exact weight, one load per non-empty
// column of a tile, every row stored once at its original index, zero tiles for empty rows); the
// inline PTX printed from it, read back by the tests' PTX interpreter
// (tests/cuda_emulation/ptx_subset.h): V FMAs per non-zero, one .vV load per tile column and one
// .vV store per row; what that PTX computes for one thread, run by the interpreter and compared
// bit for bit with the fmaf chain; the launch constants; determinism.
#include "codegen/emit_unrolled_kernel.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "codegen/fill_template.h"
#include "codegen/generic_launch.h"
#include "codegen/kernel_program.h"
#include "codegen/print_tile_ptx.h"
#include "codegen/tensor_core_launch.h"
#include "compiler/common/diagnostics.h"
#include "runtime/nvrtc_compile.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/cuda_emulation/ptx_subset.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace emu = spmmc_emulation;

// A 3 x 4 matrix: row 0 = (1.5 at 0, -2 at 3), row 1 empty, row 2 = (0.25 at 0, 3 at 2).
Csr tiny() { return test::csr_from_dense(3, 4, {1.5f, 0, 0, -2, 0, 0, 0, 0, 0.25f, 0, 3, 0}); }

TileCandidate make_tile(int32_t m1, int32_t n1, int32_t v) {
  TileCandidate tile;
  tile.m1 = m1;
  tile.n1 = n1;
  tile.cols_per_thread = v;
  return tile;
}

EmittedKernel emit(const Csr& a, int32_t m1, ReorderMethod method, int32_t n1 = 32, int32_t v = 1,
                   RowTiling* out = nullptr) {
  const RowTiling tiling = tile_rows(a, m1, method);
  if (out) *out = tiling;
  EmitOptions options;
  options.name = "k";
  options.provenance = "test";
  options.weights_sha256 = "abc";
  return emit_unrolled_kernel(a, tiling, make_tile(m1, n1, v), options);
}

// A seeded random matrix: where keep(r, c), an entry is present with probability `density`, its
// value uniform in [-3, 3).
Csr random_matrix(int32_t rows, int32_t cols, double density, uint32_t seed, const std::function<bool(int32_t, int32_t)>& keep) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::bernoulli_distribution present(density);
  std::vector<float> dense(static_cast<size_t>(rows * cols));
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c)
      if (keep(r, c) && present(rng)) dense[static_cast<size_t>(r * cols + c)] = value(rng);
  return test::csr_from_dense(rows, cols, dense);
}

KernelProgram program_of(const Csr& a, int32_t m1, ReorderMethod method, int32_t n1 = 32, int32_t v = 1) {
  return build_kernel_program(a, tile_rows(a, m1, method), make_tile(m1, n1, v));
}

// The text of spmmc_tile_<id>'s function, from its signature to its closing brace.
std::string tile_function(const std::string& cu, int id) {
  const std::string head = "__device__ __forceinline__ void spmmc_tile_" + std::to_string(id) + "(";
  const size_t start = cu.find(head);
  if (start == std::string::npos) return {};
  return cu.substr(start, cu.find("\n}\n", start) + 3 - start);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

emu::Program parse(const std::string& ptx) { return emu::parse_ptx(ptx, {64, 64, 32}); }

// A tile's PTX as the interpreter decoded it: the rows of B loaded (COL of `mad.wide.u32
// pJ,%2,COL,%0` feeding each load) and the rows of C stored (ROW of `...,ROW,%1`), in order.
struct TileSummary {
  std::vector<int64_t> loaded_cols, stored_rows;
  int64_t fmas = 0;
  std::multiset<uint32_t> fma_weights;  // the immediate of each fma, as bits
  int64_t wrong_width = 0;              // loads or stores that are not .vV (V floats)
  int64_t cached_loads = 0;             // loads without .nc
  int64_t other_addresses = 0;          // accesses whose address is not b + COL x ld or c + ROW x ld
};

TileSummary summarize(const emu::Program& p, int32_t v) {
  TileSummary s;
  std::map<int32_t, std::pair<int32_t, int64_t>> address;  // register -> (operand %0 or %1, row)
  for (const emu::Instr& in : p.code) {
    if (in.op == emu::Op::kMadWide && !in.is_signed && in.src[0].what == emu::Src::kParam && in.src[0].index == 2 &&
        in.src[1].what == emu::Src::kImm && in.src[2].what == emu::Src::kParam && in.src[2].index <= 1) {
      address[in.dst] = {in.src[2].index, static_cast<int64_t>(in.src[1].imm)};
      continue;
    }
    if (in.dst >= 0) address.erase(in.dst);
    if (in.op == emu::Op::kFma) {
      ++s.fmas;
      s.fma_weights.insert(static_cast<uint32_t>(in.src[1].imm));
      if (in.src[1].what != emu::Src::kImm || in.src[0].what != emu::Src::kReg || in.src[2].what != emu::Src::kReg ||
          in.src[2].index != in.dst)
        ++s.other_addresses;  // not acc = x * weight + acc: counted as a wrong shape
    }
    if (in.op != emu::Op::kLd && in.op != emu::Op::kSt) continue;
    if (in.vec != v) ++s.wrong_width;
    const auto it = in.src[0].what == emu::Src::kReg ? address.find(in.src[0].index) : address.end();
    const int32_t want = in.op == emu::Op::kLd ? 0 : 1;
    if (it == address.end() || it->second.first != want || in.offset != 0) {
      ++s.other_addresses;
      continue;
    }
    if (in.op == emu::Op::kLd) {
      s.loaded_cols.push_back(it->second.second);
      if (!in.non_coherent) ++s.cached_loads;
    } else {
      s.stored_rows.push_back(it->second.second);
    }
  }
  return s;
}

// Runs a tile's PTX for the thread whose first column is col0 (B is K x n, C is M x n, both
// row-major), inside the interpreter's memory bounds.
void run_tile(const std::string& ptx, const std::vector<float>& b, std::vector<float>& c, int64_t n, int64_t col0) {
  const emu::Program p = parse(ptx);
  const uint64_t params[3] = {reinterpret_cast<uintptr_t>(b.data() + col0), reinterpret_cast<uintptr_t>(c.data() + col0),
                              static_cast<uint64_t>(n) * 4u};
  emu::set_memory_bounds(b.data(), b.size() * sizeof(float), c.data(), c.size() * sizeof(float));
  emu::execute(p, params);
  emu::set_memory_bounds(nullptr, 0, nullptr, 0);
}

std::vector<float> nans(size_t count) { return std::vector<float>(count, std::numeric_limits<float>::quiet_NaN()); }

// B of 4 x 3 for the hand-computed cases: B[k][j] = 3k + j + 1.
std::vector<float> b_4x3() { return {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; }

TEST_CASE("emitter: the tiles of a hand-computed matrix in natural order", "[codegen][emit]") {
  const KernelProgram p = program_of(tiny(), 2, ReorderMethod::kNone);
  CHECK(p.m == 3);
  CHECK(p.k == 4);
  CHECK(p.launch.m1 == 2);
  CHECK(p.launch.threads == 32);
  CHECK(p.launch.cols_per_thread == 1);
  CHECK(p.launch.min_blocks_per_sm == 1);
  CHECK(p.launch.n1() == 32);
  REQUIRE(p.tiles.size() == 2);
  CHECK(p.tiles[0].rows == std::vector<int32_t>{0, 1});
  REQUIRE(p.tiles[0].columns.size() == 2);
  CHECK(p.tiles[0].columns[0].col == 0);
  CHECK(p.tiles[0].columns[1].col == 3);
  REQUIRE(p.tiles[0].columns[0].fmas.size() == 1);
  REQUIRE(p.tiles[0].columns[1].fmas.size() == 1);
  CHECK(p.tiles[0].columns[0].fmas[0].slot == 0);
  CHECK(p.tiles[0].columns[0].fmas[0].weight == 1.5f);
  CHECK(p.tiles[0].columns[1].fmas[0].slot == 0);
  CHECK(p.tiles[0].columns[1].fmas[0].weight == -2.0f);
  CHECK(p.tiles[1].rows == std::vector<int32_t>{2});
  REQUIRE(p.tiles[1].columns.size() == 2);
  CHECK(p.tiles[1].columns[0].col == 0);
  CHECK(p.tiles[1].columns[1].col == 2);
  CHECK(p.tiles[1].columns[0].fmas[0].weight == 0.25f);
  CHECK(p.tiles[1].columns[1].fmas[0].weight == 3.0f);
  CHECK(p.fmas() == 4);
  CHECK(p.loads() == 4);

  const EmittedKernel k = emit(tiny(), 2, ReorderMethod::kNone);
  // The printed form of the program: one inline-PTX statement per tile (the format the PTX
  // interpreter and `spmmc verify` read), the loads printed kDefaultLoadsAhead = 4 columns ahead
  // of their FMAs: both loads of this two-column tile come first.
  CHECK(tile_function(k.cu, 0) ==
        "__device__ __forceinline__ void spmmc_tile_0(const float* __restrict__ b, float* __restrict__ c, unsigned ld) {\n"
        "  SPMMC_TILE_ASM(\n"
        "    \"{.reg .f32 a<2>;.reg .f32 x<2>;.reg .b64 p<4>;\\n\"\n"
        "    \"mov.b32 a0,0f00000000;mov.b32 a1,0f00000000;\\n\"\n"
        "    \"mad.wide.u32 p0,%2,0,%0;ld.global.nc.f32 x0,[p0];mad.wide.u32 p1,%2,3,%0;ld.global.nc.f32 x1,[p1];\\n\"\n"
        "    \"fma.rn.f32 a0,x0,0f3FC00000,a0;\\n\"\n"
        "    \"fma.rn.f32 a0,x1,0fC0000000,a0;\\n\"\n"
        "    \"mad.wide.u32 p2,%2,0,%1;st.global.f32 [p2],a0;\\n\"\n"
        "    \"mad.wide.u32 p3,%2,1,%1;st.global.f32 [p3],a1;\\n\"\n"
        "    \"}\");\n"
        "}\n");
  CHECK(tile_function(k.cu, 2).empty());
  CHECK(k.tiles == 2);
  CHECK(k.fmas == 4);
  CHECK(k.loads == 4);
  CHECK(k.stores == 3);
  CHECK(count(k.cu, "constexpr int spmmc_a_tiles = 2;") == 1);
  CHECK(count(k.cu, "constexpr int spmmc_m1 = 2;") == 1);
  CHECK(count(k.cu, "constexpr int spmmc_threads = 32;") == 1);
  CHECK(count(k.cu, "constexpr int spmmc_v = 1;") == 1);
  CHECK(count(k.cu, "constexpr int spmmc_min_blocks = 1;") == 1);
  CHECK(count(k.cu, "      case 0: spmmc_tile_0(b, c, ld); break;\n") == 1);
  CHECK(count(k.cu, "      case 1: spmmc_tile_1(b, c, ld); break;\n") == 1);
  CHECK(count(k.cu, "case ") == 2);
  // The generic path's copy of A (CSR, weights as bits).
  CHECK(count(k.cu, "constexpr int spmmc_rows = 3;") == 1);
  CHECK(count(k.cu, "spmmc_row_ptr[] = {0, 2, 2, 4};") == 1);
  CHECK(count(k.cu, "spmmc_generic_span[] = {") == 1);  // each slot's row's (begin, end): the emulation runs it
  CHECK(count(k.cu, "spmmc_col_idx[] = {0, 3, 0, 2};") == 1);
  CHECK(count(k.cu, "spmmc_weight_bits[] = {0x3fc00000u, 0xc0000000u, 0x3e800000u, 0x40400000u};") == 1);
  CHECK(count(k.cu, "\"none\"") == 1);  // the reorder field of k_info()
  CHECK(count(k.cu, "extern \"C\" cudaError_t k(const spmmc_elem* B, spmmc_elem* C, int64_t n, cudaStream_t stream)") == 1);
  CHECK(count(k.cu, "typedef float spmmc_elem;") == 1);  // --dtype fp32 (templates/dtype_fp32.cuh)
  CHECK(count(k.cu, "extern \"C\" const spmmc_kernel_info* k_info(void)") == 1);
  // One kernel (EmitOptions' default), launched from the table the entry point walks.
  CHECK(count(k.cu, "__global__ void __launch_bounds__(spmmc_threads, spmmc_min_blocks)\n    k_kernel_0(const spmmc_elem* __restrict__ B") == 1);
  // and the generic path's six, its wide warp kernel and the two warp kernels of four columns 32 apart a lane
  CHECK(count(k.cu, "__global__ void __launch_bounds__") == 10);
  CHECK(count(k.cu, "#define SPMMC_GENERIC_WARP_WIDE 0") == 1);  // (compiled out: A has 3 columns)
  CHECK(count(k.cu, "constexpr int spmmc_kernel_count = 1;") == 1);
  CHECK(count(k.cu, "reinterpret_cast<const void*>(&k_kernel_0)};") == 1);
  CHECK(count(k.cu, "constexpr unsigned spmmc_kernel_tiles[spmmc_kernel_count] = {2};") == 1);
  CHECK(k.kernel_symbols == std::vector<std::string>{"k_kernel_0"});
  CHECK(k.kernel_tiles == std::vector<int32_t>{2});
  CHECK(count(k.cu, "/*@") == 0);  // every marker filled
  CHECK(count(k.h, "/*@") == 0);
  CHECK(count(k.h, "#ifndef SPMMC_k_H\n#define SPMMC_k_H\n") == 1);
  CHECK(count(k.h, "cudaError_t k(const float* B, float* C, int64_t n, cudaStream_t stream);") == 1);
  CHECK(count(k.h, "const spmmc_kernel_info* k_info(void);") == 1);
  CHECK(count(k.h, "#define SPMMC_KERNEL_ABI_VERSION 2") == 1);
  CHECK(count(k.h, "cuda_fp16.h") == 0);  // float32: no half-precision header

  // What the PTX computes for the thread of column 1 of a 3-column B, by hand:
  // row 0 = 1.5 x 2 - 2 x 11 = -19, row 1 = 0, row 2 = 0.25 x 2 + 3 x 8 = 24.5.
  const std::vector<std::string> ptx = test::tile_ptx_texts(k.cu);
  REQUIRE(ptx.size() == 2);
  const std::vector<float> b = b_4x3();
  std::vector<float> c = nans(9);
  run_tile(ptx[0], b, c, 3, 1);
  CHECK(c[0 * 3 + 1] == -19.0f);
  CHECK(bits_of(c[1 * 3 + 1]) == 0u);  // +0.0f: an empty row stores the accumulator's start
  CHECK(std::isnan(c[2 * 3 + 1]));     // tile 1's row
  run_tile(ptx[1], b, c, 3, 1);
  CHECK(c[2 * 3 + 1] == 24.5f);
  for (int32_t r = 0; r < 3; ++r) {
    CHECK(std::isnan(c[static_cast<size_t>(r) * 3 + 0]));  // other threads' columns untouched
    CHECK(std::isnan(c[static_cast<size_t>(r) * 3 + 2]));
  }
}

TEST_CASE("emitter: kernels of consecutive tiles, at most F FMAs each", "[codegen][emit]") {
  const Csr a = random_matrix(61, 50, 0.2, 9, [](int32_t r, int32_t) { return r % 9 != 4; });
  const RowTiling tiling = tile_rows(a, 4, ReorderMethod::kColumnOverlap);
  for (const int64_t f : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{30}, int64_t{64}, a.nnz() - 1, a.nnz(), int64_t{1} << 40}) {
    INFO("F = " << f);
    const KernelProgram p = build_kernel_program(a, tiling, make_tile(4, 32, 1), f);
    REQUIRE(p.kernels() >= 1);
    CHECK(p.first_tile(0) == 0);
    int32_t tiles = 0;
    for (int32_t j = 0; j < p.kernels(); ++j) {
      CHECK(p.first_tile(j) == tiles);  // consecutive, in order, none skipped
      REQUIRE(p.tiles_of(j) >= 1);
      int64_t fmas = 0;
      for (int32_t t = p.first_tile(j); t < p.first_tile(j) + p.tiles_of(j); ++t) fmas += p.tiles[static_cast<size_t>(t)].fmas();
      // At most F, unless one tile alone has more; and each kernel is as full as F allows:
      // the next kernel's first tile would not have fitted.
      if (f > 0 && p.tiles_of(j) > 1) CHECK(fmas <= f);
      if (f > 0 && j + 1 < p.kernels() && fmas > 0)
        CHECK(fmas + p.tiles[static_cast<size_t>(p.first_tile(j + 1))].fmas() > f);
      tiles += p.tiles_of(j);
    }
    CHECK(tiles == static_cast<int32_t>(p.tiles.size()));
    if (f == 0 || f >= a.nnz()) CHECK(p.kernels() == 1);
    if (f == 1) CHECK(p.kernels() >= tiling.num_tiles());  // every tile with a non-zero its own kernel

    // The emitted file: one __global__ function per kernel, each dispatching its own tiles from
    // case 0, and the host table listing them in order.
    EmitOptions options;
    options.name = "g";
    options.fmas_per_kernel = f;
    options.nvrtc_form = true;
    const EmittedKernel k = emit_unrolled_kernel(a, tiling, make_tile(4, 32, 1), options);
    REQUIRE(k.kernel_symbols.size() == static_cast<size_t>(p.kernels()));
    CHECK(count(k.cu, "__global__ void __launch_bounds__(spmmc_threads, spmmc_min_blocks)\n") == static_cast<size_t>(p.kernels()));
    CHECK(count(k.cu, fmt::format("constexpr int spmmc_kernel_count = {};", p.kernels())) == 1);
    CHECK(count(k.cu, "      case 0: spmmc_tile_") == static_cast<size_t>(p.kernels()));
    for (int32_t j = 0; j < p.kernels(); ++j) {
      CHECK(k.kernel_symbols[static_cast<size_t>(j)] == fmt::format("g_kernel_{}", j));
      CHECK(k.kernel_tiles[static_cast<size_t>(j)] == p.tiles_of(j));
      CHECK(count(k.cu, fmt::format("reinterpret_cast<const void*>(&g_kernel_{})", j)) == 1);
      CHECK(count(k.nvrtc_cu, fmt::format("extern \"C\" __global__ void g_kernel_{}(", j)) == 1);
      const int32_t last = p.first_tile(j) + p.tiles_of(j) - 1;
      CHECK(count(k.cu, fmt::format("      case {}: spmmc_tile_{}(b, c, ld); break;\n", p.tiles_of(j) - 1, last)) == 1);
    }
    for (size_t t = 0; t < p.tiles.size(); ++t) CHECK(count(k.cu, fmt::format(": spmmc_tile_{}(b, c, ld);", t)) == 1);
  }
}

TEST_CASE("emitter: the split along K: ranges of about equal non-zeros, accumulating kernels after", "[codegen][emit]") {
  const Csr a = random_matrix(61, 50, 0.2, 9, [](int32_t r, int32_t) { return r % 9 != 4; });
  const RowTiling tiling = tile_rows(a, 4, ReorderMethod::kColumnOverlap);
  // The ranges rise from 0 to K, none empty of columns, and hold about nnz / S non-zeros each.
  for (const int32_t parts : {1, 2, 3, 7, 50}) {
    INFO(parts << " ranges");
    const std::vector<int32_t> b = split_k(a, parts);
    REQUIRE(static_cast<int32_t>(b.size()) == parts + 1);
    CHECK(b.front() == 0);
    CHECK(b.back() == a.cols);
    for (size_t i = 1; i < b.size(); ++i) CHECK(b[i] > b[i - 1]);
    if (parts <= 3) {
      for (size_t i = 0; i + 1 < b.size(); ++i) {
        int64_t in_range = 0;
        for (int32_t c : a.col_idx) in_range += c >= b[i] && c < b[i + 1];
        CHECK(std::abs(static_cast<double>(in_range) - static_cast<double>(a.nnz()) / parts) <= 0.1 * static_cast<double>(a.nnz()));
      }
    }
  }
  CHECK_THROWS_AS(split_k(a, 51), InternalError);
  CHECK_THROWS_AS(split_k(a, 0), InternalError);
  for (const int64_t f : {int64_t{0}, int64_t{30}}) {
    INFO("F = " << f);
    const KernelProgram p = build_kernel_program(a, tiling, make_tile(4, 32, 1), f, 3);
    REQUIRE(p.k_part_begin.size() == 4);
    CHECK(p.fmas() == a.nnz());
    // Range 0 stores every row once; later ranges only add, only in tiles with products there,
    // each product in its tile's range.
    std::vector<int32_t> stored(static_cast<size_t>(a.rows), 0);
    for (const TileProgram& t : p.tiles) {
      if (!t.accumulates())
        for (int32_t r : t.rows) ++stored[static_cast<size_t>(r)];
      else
        CHECK(!t.columns.empty());
      for (const TileColumn& c : t.columns) {
        CHECK(c.col >= p.k_part_begin[static_cast<size_t>(t.k_part)]);
        CHECK(c.col < p.k_part_begin[static_cast<size_t>(t.k_part) + 1]);
      }
    }
    CHECK(std::all_of(stored.begin(), stored.end(), [](int32_t n) { return n == 1; }));
    // A kernel holds tiles of one range, and the ranges come in order.
    int32_t last_part = 0;
    for (int32_t j = 0; j < p.kernels(); ++j) {
      const int32_t part = p.tiles[static_cast<size_t>(p.first_tile(j))].k_part;
      for (int32_t t = p.first_tile(j); t < p.first_tile(j) + p.tiles_of(j); ++t) CHECK(p.tiles[static_cast<size_t>(t)].k_part == part);
      CHECK(part >= last_part);
      last_part = part;
    }
    CHECK(last_part == 2);
    CHECK(p.kernels() >= 3);
  }
  // An accumulating tile waits, then adds its sums to C (a load, an add per lane, a store).
  const KernelProgram p = build_kernel_program(a, tiling, make_tile(4, 64, 2), 0, 2);
  const auto later = std::find_if(p.tiles.begin(), p.tiles.end(), [](const TileProgram& t) { return t.accumulates(); });
  REQUIRE(later != p.tiles.end());
  std::string text;
  print_tile_ptx(text, 9, *later, 2);
  CHECK(count(text, "griddepcontrol.wait;") == 1);
  CHECK(text.find("griddepcontrol.wait;") > text.rfind("fma.rn.f32"));
  CHECK(count(text, "ld.global.v2.f32 {y0,y1}") == count(text, "st.global.v2.f32"));
  CHECK(count(text, "add.f32 ") == 2 * count(text, "st.global.v2.f32"));
  CHECK(text.find(".reg .f32 y<2>;") != std::string::npos);
}

TEST_CASE("emitter: the default split keeps the kernels' cost within a tenth of the run time", "[codegen][emit]") {
  // Short layers: one kernel (F = nnz, or the minimum for tiny ones): 13k non-zeros at n = 4096
  // run about 11 us at 10 TFLOP/s, and a second kernel would cost 0.85 us.
  CHECK(default_fmas_per_kernel(13107, 4096) == 13107);
  CHECK(default_fmas_per_kernel(100, 1) == kMinFmasPerKernel);
  // 26k non-zeros at n = 4096 (21 us): two kernels.
  CHECK(default_fmas_per_kernel(26214, 4096) == 13107);
  // Long ones: K = floor(0.1 x (2 nnz n / 10 TFLOP/s) / 0.85 us) kernels of equal parts.
  const int64_t nnz = 314572, n = 4096;
  const double run = 2.0 * nnz * n / kAssumedFlopsPerSecond;
  const auto kernels = static_cast<int64_t>(kKernelShareOfRunTime * run / kSecondsPerKernel);
  REQUIRE(kernels == 30);
  CHECK(default_fmas_per_kernel(nnz, n) == (nnz + kernels - 1) / kernels);
  // Wider B: more kernels, never below the minimum.
  CHECK(default_fmas_per_kernel(nnz, 100352) < default_fmas_per_kernel(nnz, n));
  CHECK(default_fmas_per_kernel(nnz, int64_t{1} << 30) == kMinFmasPerKernel);
  // Before sm_90 (no programmatic dependent launch): one kernel.
  CHECK(default_fmas_per_kernel(nnz, int64_t{1} << 30, "sm_80") == nnz);
  CHECK(default_fmas_per_kernel(nnz, int64_t{1} << 30, "sm_100") == kMinFmasPerKernel);
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
  const EmittedKernel k = emit(tiny(), 2, ReorderMethod::kColumnOverlap, 64, 1, &tiling);
  REQUIRE(tiling.rows == std::vector<int32_t>{0, 2});
  REQUIRE(tiling.empty_rows == std::vector<int32_t>{1});
  const KernelProgram p = program_of(tiny(), 2, ReorderMethod::kColumnOverlap, 64);
  REQUIRE(p.tiles.size() == 2);
  CHECK(p.tiles[0].rows == std::vector<int32_t>{0, 2});
  REQUIRE(p.tiles[0].columns.size() == 3);  // columns 0 (both rows), 2 and 3: column 0 loaded once
  CHECK(p.tiles[0].columns[0].col == 0);
  REQUIRE(p.tiles[0].columns[0].fmas.size() == 2);
  CHECK(p.tiles[0].columns[0].fmas[0].slot == 0);
  CHECK(p.tiles[0].columns[0].fmas[0].weight == 1.5f);
  CHECK(p.tiles[0].columns[0].fmas[1].slot == 1);
  CHECK(p.tiles[0].columns[0].fmas[1].weight == 0.25f);
  CHECK(p.tiles[0].columns[1].col == 2);
  CHECK(p.tiles[0].columns[2].col == 3);
  CHECK(p.tiles[1].rows == std::vector<int32_t>{1});
  CHECK(p.tiles[1].columns.empty());
  CHECK(k.tiles == 2);
  CHECK(k.loads == 3);
  CHECK(k.fmas == 4);
  CHECK(k.stores == 3);
  CHECK(count(k.cu, "constexpr int spmmc_threads = 64;") == 1);
  CHECK(count(k.cu, "\"overlap\"") == 1);

  const std::vector<std::string> ptx = test::tile_ptx_texts(k.cu);
  REQUIRE(ptx.size() == 2);
  const TileSummary shared = summarize(parse(ptx[0]), 1);
  CHECK(shared.loaded_cols == std::vector<int64_t>{0, 2, 3});
  CHECK(shared.stored_rows == std::vector<int64_t>{0, 2});
  CHECK(shared.fmas == 4);
  const TileSummary zero = summarize(parse(ptx[1]), 1);
  CHECK(zero.loaded_cols.empty());
  CHECK(zero.fmas == 0);
  CHECK(zero.stored_rows == std::vector<int64_t>{1});
  CHECK(zero.other_addresses == 0);

  const std::vector<float> b = b_4x3();
  std::vector<float> c = nans(9);
  run_tile(ptx[1], b, c, 3, 2);
  CHECK(bits_of(c[1 * 3 + 2]) == 0u);  // +0.0f
  CHECK(std::isnan(c[0 * 3 + 2]));
  CHECK(std::isnan(c[2 * 3 + 2]));
  run_tile(ptx[0], b, c, 3, 2);
  CHECK(c[0 * 3 + 2] == 1.5f * 3 - 2.0f * 12);  // -19.5
  CHECK(c[2 * 3 + 2] == 0.25f * 3 + 3.0f * 9);  // 27.75
}

TEST_CASE("emitter: V columns per thread load and store .vV, with V FMAs per non-zero", "[codegen][emit]") {
  // Column 1 only: rows 0 and 1 weigh it 0.5 and -4.
  const Csr a = test::csr_from_dense(2, 3, {0, 0.5f, 0, 0, -4, 0});
  const EmittedKernel k2 = emit(a, 2, ReorderMethod::kNone, 64, 2);
  CHECK(tile_function(k2.cu, 0) ==
        "__device__ __forceinline__ void spmmc_tile_0(const float* __restrict__ b, float* __restrict__ c, unsigned ld) {\n"
        "  SPMMC_TILE_ASM(\n"
        "    \"{.reg .f32 a<4>;.reg .f32 x<2>;.reg .b64 p<3>;\\n\"\n"
        "    \"mov.b32 a0,0f00000000;mov.b32 a1,0f00000000;mov.b32 a2,0f00000000;mov.b32 a3,0f00000000;\\n\"\n"
        "    \"mad.wide.u32 p0,%2,1,%0;ld.global.nc.v2.f32 {x0,x1},[p0];\\n\"\n"
        "    \"fma.rn.f32 a0,x0,0f3F000000,a0;fma.rn.f32 a1,x1,0f3F000000,a1;fma.rn.f32 a2,x0,0fC0800000,a2;fma.rn.f32 a3,x1,0fC0800000,a3;\\n\"\n"
        "    \"mad.wide.u32 p1,%2,0,%1;st.global.v2.f32 [p1],{a0,a1};\\n\"\n"
        "    \"mad.wide.u32 p2,%2,1,%1;st.global.v2.f32 [p2],{a2,a3};\\n\"\n"
        "    \"}\");\n"
        "}\n");
  CHECK(count(k2.cu, "constexpr int spmmc_threads = 32;") == 1);
  CHECK(count(k2.cu, "constexpr int spmmc_v = 2;") == 1);
  CHECK(k2.loads == 1);  // per thread: one float2
  CHECK(k2.fmas == 2);   // per non-zero

  const EmittedKernel k4 = emit(a, 2, ReorderMethod::kNone, 128, 4);
  CHECK(count(k4.cu, "constexpr int spmmc_threads = 32;") == 1);
  CHECK(count(k4.cu, "constexpr int spmmc_v = 4;") == 1);
  const std::vector<std::string> ptx = test::tile_ptx_texts(k4.cu);
  REQUIRE(ptx.size() == 1);
  const TileSummary s = summarize(parse(ptx[0]), 4);
  CHECK(s.loaded_cols == std::vector<int64_t>{1});
  CHECK(s.stored_rows == std::vector<int64_t>{0, 1});
  CHECK(s.fmas == 8);
  CHECK(s.wrong_width == 0);
  CHECK(s.other_addresses == 0);
  CHECK(s.cached_loads == 0);
  // The thread of columns 4..7 of a 12-column B.
  std::vector<float> b(3 * 12);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f - 3.0f;
  std::vector<float> c = nans(2 * 12);
  run_tile(ptx[0], b, c, 12, 4);
  for (int j = 0; j < 12; ++j) {
    INFO("column " << j);
    if (j >= 4 && j < 8) {
      CHECK(c[static_cast<size_t>(j)] == 0.5f * b[12 + static_cast<size_t>(j)]);
      CHECK(c[12 + static_cast<size_t>(j)] == -4.0f * b[12 + static_cast<size_t>(j)]);
    } else {
      CHECK(std::isnan(c[static_cast<size_t>(j)]));
      CHECK(std::isnan(c[12 + static_cast<size_t>(j)]));
    }
  }
}

// Properties on a seeded random matrix with empty rows and columns, for every method, M1 and V.
TEST_CASE("emitter: one FMA per non-zero, one load per non-empty tile column, every row stored once", "[codegen][emit]") {
  const int32_t rows = 45;
  const Csr a = random_matrix(rows, 37, 0.15, 5, [](int32_t r, int32_t c) { return r % 7 != 3 && c % 5 != 2; });
  int32_t empty_rows = 0;
  for (int32_t r = 0; r < rows; ++r) empty_rows += a.row_length(r) == 0;
  REQUIRE(empty_rows >= 6);

  for (const ReorderMethod method : {ReorderMethod::kColumnOverlap, ReorderMethod::kNone, ReorderMethod::kRowLength})
    for (const int32_t m1 : {1, 3, 8, 64})
      for (const auto& [n1, v] : {std::pair<int32_t, int32_t>{32, 1}, {64, 2}, {128, 4}}) {
        INFO(std::string(reorder_method_name(method)) << ", M1 = " << m1 << ", N1 = " << n1 << ", V = " << v);
        const KernelProgram p = program_of(a, m1, method, n1, v);
        RowTiling tiling;
        const EmittedKernel k = emit(a, m1, method, n1, v, &tiling);
        CHECK(p.launch.threads == n1 / v);
        CHECK(p.launch.cols_per_thread == v);
        CHECK(k.fmas == a.nnz());
        CHECK(p.fmas() == a.nnz());
        CHECK(k.stores == rows);
        CHECK(k.loads == p.loads());
        REQUIRE(k.tiles == static_cast<int32_t>(p.tiles.size()));
        CHECK(count(k.cu, "constexpr int spmmc_v = " + std::to_string(v) + ";") == 1);
        CHECK(count(k.cu, "constexpr int spmmc_threads = " + std::to_string(n1 / v) + ";") == 1);
        const std::vector<std::string> ptx = test::tile_ptx_texts(k.cu);
        REQUIRE(ptx.size() == p.tiles.size());
        CHECK(tile_function(k.cu, k.tiles).empty());

        // B for the numbers: n = 4V columns; threads of the first and the last V columns.
        const int64_t n = 4 * v;
        const std::vector<float> b = test::seeded_b(a.cols, n, 99);
        const std::vector<float> want = test::fmaf_spmm(a, b, n);

        std::multiset<int32_t> stored;
        int32_t zero_tiles = 0;
        int64_t loads = 0;
        for (size_t t = 0; t < p.tiles.size(); ++t) {
          INFO("tile " << t);
          const TileProgram& tile = p.tiles[t];
          REQUIRE(!tile.rows.empty());
          CHECK(static_cast<int32_t>(tile.rows.size()) <= m1);
          stored.insert(tile.rows.begin(), tile.rows.end());
          // The program: the tile's non-zeros, each once, by ascending column then slot.
          std::multiset<std::tuple<int32_t, int32_t, uint32_t>> want_entries, got_entries;  // (row, col, weight bits)
          std::multiset<uint32_t> want_weights;
          for (const int32_t r : tile.rows)
            for (int32_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q) {
              want_entries.insert({r, a.col_idx[q], bits_of(a.values[q])});
              for (int32_t lane = 0; lane < v; ++lane) want_weights.insert(bits_of(a.values[q]));
            }
          std::vector<int64_t> want_cols;
          for (size_t j = 0; j < tile.columns.size(); ++j) {
            const TileColumn& col = tile.columns[j];
            if (j > 0) CHECK(col.col > tile.columns[j - 1].col);
            CHECK(!col.fmas.empty());
            want_cols.push_back(col.col);
            for (size_t f = 0; f < col.fmas.size(); ++f) {
              if (f > 0) CHECK(col.fmas[f].slot > col.fmas[f - 1].slot);
              REQUIRE(col.fmas[f].slot >= 0);
              REQUIRE(col.fmas[f].slot < static_cast<int32_t>(tile.rows.size()));
              got_entries.insert({tile.rows[static_cast<size_t>(col.fmas[f].slot)], col.col, bits_of(col.fmas[f].weight)});
            }
          }
          CHECK(got_entries == want_entries);
          loads += static_cast<int64_t>(tile.columns.size());
          if (tile.columns.empty()) ++zero_tiles;

          // The PTX: V FMAs per non-zero with its weight, one .vV load per column, one .vV store per row.
          const TileSummary s = summarize(parse(ptx[t]), v);
          CHECK(s.loaded_cols == want_cols);
          CHECK(s.stored_rows == std::vector<int64_t>(tile.rows.begin(), tile.rows.end()));
          CHECK(s.fmas == v * tile.fmas());
          CHECK(s.fma_weights == want_weights);
          CHECK(s.wrong_width == 0);
          CHECK(s.cached_loads == 0);
          CHECK(s.other_addresses == 0);

          // The numbers: the tile's rows of this thread's V columns, bit for bit; nothing else written.
          for (const int64_t col0 : {int64_t{0}, n - v}) {
            INFO("thread of columns " << col0 << ".." << col0 + v - 1);
            std::vector<float> c = nans(static_cast<size_t>(rows * n));
            run_tile(ptx[t], b, c, n, col0);
            const std::set<int32_t> mine(tile.rows.begin(), tile.rows.end());
            size_t wrong = 0, written_elsewhere = 0;
            for (int32_t r = 0; r < rows; ++r)
              for (int64_t j = 0; j < n; ++j) {
                const size_t i = static_cast<size_t>(r * n + j);
                if (mine.count(r) && j >= col0 && j < col0 + v) wrong += bits_of(c[i]) != bits_of(want[i]);
                else written_elsewhere += !std::isnan(c[i]);
              }
            CHECK(wrong == 0);
            CHECK(written_elsewhere == 0);
          }
        }
        CHECK(loads == k.loads);
        std::multiset<int32_t> all_rows;
        for (int32_t r = 0; r < rows; ++r) all_rows.insert(r);
        CHECK(stored == all_rows);  // every row exactly once, at its original index
        if (method != ReorderMethod::kNone) CHECK(zero_tiles == (empty_rows + m1 - 1) / m1);
        if (method == ReorderMethod::kNone) CHECK(k.tiles == (rows + m1 - 1) / m1);
        // Deterministic: the same inputs give the same bytes.
        const EmittedKernel again = emit(a, m1, method, n1, v);
        CHECK(again.cu == k.cu);
        CHECK(again.h == k.h);
      }
}

TEST_CASE("emitter: loads printed D columns ahead of their FMAs compute the same bits", "[codegen][emit]") {
  // One tile of 6 rows and 9 columns of B; every load must come before its FMAs, and no earlier
  // than D columns ahead (the register budget of the prefetch), whatever D.
  const Csr a = random_matrix(6, 23, 0.3, 17, [](int32_t, int32_t) { return true; });
  const KernelProgram p = program_of(a, 8, ReorderMethod::kNone, 32, 2);
  REQUIRE(p.tiles.size() == 1);
  const TileProgram& tile = p.tiles[0];
  const auto columns = static_cast<int64_t>(tile.columns.size());
  REQUIRE(columns >= 9);
  const int64_t n = 4;
  const std::vector<float> b = test::seeded_b(a.cols, n, 3);
  const std::vector<float> want = test::fmaf_spmm(a, b, n);
  for (const int32_t d : {0, 1, 2, 5, 100}) {
    INFO("loads_ahead = " << d);
    std::string text;
    print_tile_ptx(text, 0, tile, 2, d);
    const std::vector<std::string> ptx = test::tile_ptx_texts(text);
    REQUIRE(ptx.size() == 1);
    const TileSummary s = summarize(parse(ptx[0]), 2);
    CHECK(s.loaded_cols.size() == static_cast<size_t>(columns));
    CHECK(s.fmas == 2 * tile.fmas());
    // Positions in the text: the load of column j (into x(2j)), its first and its last FMA.
    std::vector<size_t> load(static_cast<size_t>(columns)), first(load.size()), last(load.size());
    for (int64_t j = 0; j < columns; ++j) {
      load[static_cast<size_t>(j)] = ptx[0].find(fmt::format("f32 {{x{},x{}}},", 2 * j, 2 * j + 1));
      first[static_cast<size_t>(j)] = ptx[0].find(fmt::format(",x{},", 2 * j));
      last[static_cast<size_t>(j)] = ptx[0].rfind(fmt::format(",x{},", 2 * j + 1));
      REQUIRE(load[static_cast<size_t>(j)] != std::string::npos);
      REQUIRE(first[static_cast<size_t>(j)] != std::string::npos);
    }
    for (int64_t j = 0; j < columns; ++j) {
      INFO("column " << j);
      CHECK(load[static_cast<size_t>(j)] < first[static_cast<size_t>(j)]);
      if (j - d >= 0) CHECK(load[static_cast<size_t>(j)] < first[static_cast<size_t>(j - d)]);      // D ahead
      if (j - d - 1 >= 0) CHECK(load[static_cast<size_t>(j)] > last[static_cast<size_t>(j - d - 1)]);  // not more
    }
    for (const int64_t col0 : {int64_t{0}, int64_t{2}}) {
      std::vector<float> c = nans(static_cast<size_t>(a.rows * n));
      run_tile(ptx[0], b, c, n, col0);
      size_t wrong = 0;
      for (int32_t r = 0; r < a.rows; ++r)
        for (int64_t j = col0; j < col0 + 2; ++j) wrong += bits_of(c[static_cast<size_t>(r * n + j)]) != bits_of(want[static_cast<size_t>(r * n + j)]);
      CHECK(wrong == 0);
    }
  }
  std::string text;
  CHECK_THROWS_AS(print_tile_ptx(text, 0, tile, 2, -1), InternalError);
}

TEST_CASE("emitter: ptx_float_literal spells the float's exact bits", "[codegen][emit]") {
  CHECK(ptx_float_literal(1.5f) == "0f3FC00000");
  CHECK(ptx_float_literal(-2.0f) == "0fC0000000");
  CHECK(ptx_float_literal(0.0f) == "0f00000000");
  CHECK(ptx_float_literal(-0.0f) == "0f80000000");
  CHECK(ptx_float_literal(std::numeric_limits<float>::denorm_min()) == "0f00000001");
  CHECK(ptx_float_literal(FLT_MAX) == "0f7F7FFFFF");
  CHECK(ptx_float_literal(-FLT_MIN) == "0f80800000");
  std::mt19937 rng(777);
  int failures = 0, checked = 0;
  for (int i = 0; i < 100000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    if (i % 4 == 0) bits &= 0x807fffffu;  // subnormals (and zeros)
    float v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    ++checked;
    const std::string text = ptx_float_literal(v);
    const bool ok = text.size() == 10 && text.compare(0, 2, "0f") == 0 &&
                    std::strtoul(text.c_str() + 2, nullptr, 16) == bits;
    if (!ok && ++failures <= 5) UNSCOPED_INFO("bits " << bits << " -> " << text);
  }
  CHECK(checked > 80000);
  CHECK(failures == 0);
  CHECK_THROWS_AS(ptx_float_literal(std::numeric_limits<float>::infinity()), InternalError);
  CHECK_THROWS_AS(ptx_float_literal(std::numeric_limits<float>::quiet_NaN()), InternalError);
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

TEST_CASE("emitter: the generic kernel takes the A-tiles' rows, heaviest tiles first, then the empty rows",
          "[codegen][emit]") {
  // Rows with 3, 1, 0, 5, 2, 4 and 6 non-zeros. By length (ascending, empty rows dropped), M1 = 2:
  // tiles {1, 4} (3 non-zeros), {0, 5} (7), {3, 6} (11); row 2 is empty.
  const std::vector<int32_t> lengths = {3, 1, 0, 5, 2, 4, 6};
  std::vector<float> dense(7 * 6, 0.0f);
  for (int32_t r = 0; r < 7; ++r)
    for (int32_t c = 0; c < lengths[static_cast<size_t>(r)]; ++c) dense[static_cast<size_t>(r * 6 + c)] = static_cast<float>(1 + r + c);
  const Csr a = test::csr_from_dense(7, 6, dense);
  const auto order_of = [](const std::string& cu) {
    const std::string head = "spmmc_generic_order[] = {";
    const size_t at = cu.find(head);
    REQUIRE(at != std::string::npos);
    std::vector<int32_t> order;
    std::string number;
    for (size_t i = at + head.size(); i < cu.size() && cu[i] != '}'; ++i) {
      if (std::isdigit(static_cast<unsigned char>(cu[i]))) {
        number += cu[i];
      } else if (!number.empty()) {
        order.push_back(std::stoi(number));
        number.clear();
      }
    }
    if (!number.empty()) order.push_back(std::stoi(number));
    return order;
  };
  for (const bool generic_only : {false, true}) {
    INFO("generic family: " << generic_only);
    EmitOptions options;
    options.name = "k";
    options.generic_only = generic_only;
    options.nvrtc_form = true;
    const EmittedKernel k = emit_unrolled_kernel(a, tile_rows(a, 2, ReorderMethod::kRowLength), make_tile(2, 32, 1), options);
    CHECK(order_of(k.cu) == std::vector<int32_t>{3, 6, 0, 5, 1, 4, 2});
    // One column per thread loads a batch's weights a batch ahead in the generic family (built at
    // nvcc's default level), with the batch's loads of B in the unrolled files' generic path (-O1);
    // the NVRTC form the tuner times says the same as NAME.cu.
    const std::string ahead = std::string("#define SPMMC_GENERIC_WEIGHTS_AHEAD ") + (generic_only ? "1" : "0") + "\n";
    CHECK(count(k.cu, ahead) == 1);
    if (generic_only) CHECK(count(k.nvrtc_cu, ahead) == 1);
  }
  // In natural order the tiles are consecutive rows, empty ones included: {0, 1} (4), {2, 3} (5),
  // {4, 5} (6), {6} (6); equal tiles keep their order.
  EmitOptions options;
  options.name = "k";
  const EmittedKernel k = emit_unrolled_kernel(a, tile_rows(a, 2, ReorderMethod::kNone), make_tile(2, 32, 1), options);
  CHECK(order_of(k.cu) == std::vector<int32_t>{4, 5, 6, 2, 3, 0, 1});
}

TEST_CASE("emitter: the NVRTC form of the generic family holds its kernels with C linkage, and NVRTC builds it",
          "[codegen][emit][nvrtc]") {
  // The tuner times the generic family from this form (tuner/time_generic_kernel.h); NVRTC needs no GPU.
  const Csr a = tiny();
  EmitOptions options;
  options.name = "k";
  options.nvrtc_form = true;
  options.generic_only = true;
  const EmittedKernel g = emit_unrolled_kernel(a, tile_rows(a, 2, ReorderMethod::kNone), make_tile(2, 32, 1), options);
  for (const char* symbol : kGenericKernels) {
    CHECK(count(g.nvrtc_cu, fmt::format("extern \"C\" __global__ void {}(", symbol)) == 1);
    CHECK(count(g.nvrtc_cu, fmt::format("    {}(const spmmc_elem* __restrict__ B", symbol)) == 1);  // the definition
  }
  // A's arrays are declared without values (NVRTC's time then does not grow with A); the values travel
  // beside the source, for the tuner to copy into the module (Module::set_global), as NAME.cu has them.
  CHECK(count(g.nvrtc_cu, "__device__ unsigned spmmc_weight_bits[4];") == 1);
  CHECK(count(g.nvrtc_cu, "0x3fc00000u") == 0);
  CHECK(count(g.cu, "spmmc_weight_bits[] = {0x3fc00000u, 0xc0000000u, 0x3e800000u, 0x40400000u};") == 1);
  REQUIRE(g.nvrtc_arrays != nullptr);
  std::vector<std::string> names;
  for (const ArrayValues& v : *g.nvrtc_arrays) {
    names.push_back(v.name);
    if (v.name == "spmmc_weight_bits")  // 1.5, -2, 0.25, 3 as little-endian float bits
      CHECK(v.bytes == std::vector<unsigned char>{0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0x80, 0x3e, 0, 0, 0x40, 0x40});
    if (v.name == "spmmc_col_idx") CHECK(v.bytes.size() == a.col_idx.size() * 4);
  }
  for (const char* name : {"spmmc_row_ptr", "spmmc_col_idx", "spmmc_weight_bits", "spmmc_generic_order", "spmmc_generic_span"})
    CHECK(std::count(names.begin(), names.end(), name) == 1);
  // The form alone (the tuner's: nvrtc_only) has its arrays' bytes set aside by the printer, not printed
  // and parsed back: the same form, the same bytes.
  EmitOptions only = options;
  only.nvrtc_only = true;
  const EmittedKernel o = emit_unrolled_kernel(a, tile_rows(a, 2, ReorderMethod::kNone), make_tile(2, 32, 1), only);
  CHECK(o.nvrtc_cu == g.nvrtc_cu);
  REQUIRE(o.nvrtc_arrays != nullptr);
  REQUIRE(o.nvrtc_arrays->size() == g.nvrtc_arrays->size());
  for (size_t i = 0; i < g.nvrtc_arrays->size(); ++i) {
    CHECK((*o.nvrtc_arrays)[i].name == (*g.nvrtc_arrays)[i].name);
    CHECK((*o.nvrtc_arrays)[i].bytes == (*g.nvrtc_arrays)[i].bytes);
  }
  CHECK(count(g.nvrtc_cu, "spmmc_tile_") == 0);
  CHECK(g.kernel_symbols.empty());
  NvrtcOptions nvrtc;
  nvrtc.arch = "sm_90";
  const Cubin cubin = compile_to_cubin({"k.cu", g.nvrtc_cu}, nvrtc);
  for (const char* symbol : kGenericKernels) CHECK(cubin.image.find(symbol) != std::string::npos);
  // The arrays the kernels read keep their plain names in the cubin's symbols (what cuModuleGetGlobal finds).
  for (const char* name : {"spmmc_col_idx", "spmmc_weight_bits", "spmmc_generic_order", "spmmc_generic_span"})
    CHECK(cubin.image.find(std::string(1, '\0') + name + std::string(1, '\0')) != std::string::npos);
  // An unrolled candidate's form carries no generic code (its arrays would only cost compile time).
  options.generic_only = false;
  const EmittedKernel u = emit_unrolled_kernel(a, tile_rows(a, 2, ReorderMethod::kNone), make_tile(2, 32, 1), options);
  CHECK(count(u.nvrtc_cu, "spmmc_col_idx") == 0);
  CHECK(count(u.nvrtc_cu, "spmmc_generic_kernel") == 0);
  CHECK(count(u.cu, "spmmc_col_idx[] = {") == 1);  // NAME.cu has both paths
}

TEST_CASE("emitter: the NVRTC form of fp16, bf16 and tf32 files (tensor-core and generic) builds with the toolkit's headers",
          "[codegen][emit][nvrtc][dtype]") {
  // The timed choice of fp16, bf16 and tf32 files compiles these forms (tuner/time_reduced_precision.h):
  // both tensor-core kernels (the staged one where the file has its tables: 128 x 128 at density
  // 0.5 for a target of one SM; the direct one where the file is tuned for an n below the staged
  // kernel's) and the generic family, with C linkage and no runtime API (the launch is the tuner's).
  const Csr a = random_matrix(128, 128, 0.5, 7, [](int32_t, int32_t) { return true; });
  const std::vector<std::string> includes = nvrtc_cuda_include_options();
  REQUIRE(includes.size() == 1);  // the toolkit spmmc is built with has cuda_fp16.h
  for (const DType dtype : {DType::kFp16, DType::kBf16, DType::kTf32})
    for (const int64_t tuned_n : {int64_t{0}, int64_t{8}}) {
      INFO(dtype_name(dtype) << ", tuned for n = " << tuned_n);
      const bool tf32 = dtype == DType::kTf32;  // float B and C, no header; no staged form
      Csr rounded = a;  // A's values of the dtype, as spmmc compile rounds them
      for (float& v : rounded.values) v = round_to_dtype(v, dtype);
      EmitOptions options;
      options.name = "k";
      options.nvrtc_form = true;
      options.dtype = dtype;
      options.tensor_core = true;
      options.sm_count = 1;
      options.tuned_n = tuned_n;
      const EmittedKernel k = emit_unrolled_kernel(rounded, tile_rows(rounded, 8, ReorderMethod::kGrow), TileCandidate{}, options);
      const bool staged = tuned_n == 0 && !tf32;
      CHECK((k.tensor_core.chunk_rows > 0) == staged);
      CHECK(k.tensor_core.code.empty());  // in k.cu
      CHECK(count(k.nvrtc_cu, fmt::format("extern \"C\" __global__ void {}(", kTensorCoreKernel)) == 1);
      CHECK(count(k.nvrtc_cu, fmt::format("extern \"C\" __global__ void {}(", kTensorCoreStagedKernel)) == (staged ? 1 : 0));
      CHECK(count(k.nvrtc_cu, "#include <") == (tf32 ? 0 : 1));
      if (!tf32) CHECK(count(k.nvrtc_cu, std::string("#include <") + dtype_header(dtype) + ">") == 1);
      CHECK(count(k.cu, "spmmc_launch_tc(void** args") == 1);  // NAME.cu launches, the NVRTC form leaves it out
      NvrtcOptions nvrtc;
      nvrtc.arch = "sm_90";
      nvrtc.flags = includes;
      const Cubin cubin = compile_to_cubin({"k.cu", k.nvrtc_cu}, nvrtc);
      CHECK(cubin.image.find(kTensorCoreKernel) != std::string::npos);
      CHECK((cubin.image.find(kTensorCoreStagedKernel) != std::string::npos) == staged);
      // Without the toolkit's headers NVRTC names the one it misses (tf32 needs none).
      nvrtc.flags.clear();
      if (tf32) {
        CHECK(compile_to_cubin({"k.cu", k.nvrtc_cu}, nvrtc).image.find(kTensorCoreKernel) != std::string::npos);
        continue;
      }
      try {
        compile_to_cubin({"k.cu", k.nvrtc_cu}, nvrtc);
        FAIL("compiled without cuda_fp16.h");
      } catch (const CompileError& e) {
        CHECK(e.log().find(dtype_header(dtype)) != std::string::npos);
      }
    }
  EmitOptions options;
  options.name = "k";
  options.nvrtc_form = true;
  options.dtype = DType::kFp16;
  options.generic_only = true;
  const EmittedKernel g = emit_unrolled_kernel(a, tile_rows(a, 16, ReorderMethod::kNone), TileCandidate{}, options);
  NvrtcOptions nvrtc;
  nvrtc.arch = "sm_90";
  nvrtc.flags = includes;
  const Cubin cubin = compile_to_cubin({"g.cu", g.nvrtc_cu}, nvrtc);
  for (const char* symbol : kGenericKernels) CHECK(cubin.image.find(symbol) != std::string::npos);
}

TEST_CASE("emitter: generic_launch follows the emitted generic launch rule", "[codegen][emit]") {
  // From n = 512 (a multiple of 4, aligned): a warp per row, 8 rows x 128 columns a block.
  GenericLaunch l = generic_launch({100, 0, 132}, 4096, true);
  CHECK(std::string(l.symbol) == kGenericKernelWarp);
  CHECK(l.cols_per_thread == 4);
  CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y) == std::make_tuple(13u, 32u, 256u, 1u));
  CHECK(generic_launch({100, 0, 132}, 65535 * 128 + 4, true).grid_y == 65535u);  // the warps loop over the rest
  CHECK(std::string(generic_launch({100, 0, 132}, 536870908, true).symbol) == kGenericKernelWarp);  // up to 2^31 bytes / 4
  CHECK(std::string(generic_launch({100, 0, 132}, 536870912, true).symbol) == kGenericKernelV4);    // wider rows of B
  // Where the file has the wide warp kernel (A of at least 2048 columns): blocks of 32 warps where ceil(rows / 32) x
  // the blocks of 128 columns are at least 31/32 of the SMs (1000 rows: 32 x 4 = 128 >= 127.875 at n = 512).
  const GenericShape wide = {1000, 0, 132, true, kGenericSplitBelow, true};
  l = generic_launch(wide, 512, true);
  CHECK(std::string(l.symbol) == kGenericKernelWarpWide);
  CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y, l.rows_per_block) ==
        std::make_tuple(32u, 4u, 1024u, 1u, int64_t{32}));
  CHECK(std::string(generic_launch({960, 0, 132, true, kGenericSplitBelow, true}, 512, true).symbol) ==
        kGenericKernelWarp);  // 30 x 4 = 120 blocks
  CHECK(std::string(generic_launch({960, 0, 132, true, kGenericSplitBelow, true}, 640, true).symbol) ==
        kGenericKernelWarpWide);  // 30 x 5
  CHECK(std::string(generic_launch({1000, 0, 132, true, kGenericSplitBelow, false}, 4096, true).symbol) ==
        kGenericKernelWarp);  // the file has no wide kernel
  CHECK(std::string(generic_launch(wide, 508, true).symbol) == kGenericKernelV4);  // below the warp per row
  CHECK(std::string(generic_launch(wide, 516, false).symbol) == kGenericKernelWarpWideStrided);  // unaligned
  // The other n from 512 (not a multiple of 4, or B or C unaligned): the same launches with four columns 32 apart a
  // lane, one element a load (cols_per_thread 1); below 512 one column per thread.
  for (const auto& [n, aligned] : {std::pair<int64_t, bool>{4096, false}, {513, true}, {1026, true}, {4095, true}}) {
    INFO(n << " " << aligned);
    l = generic_launch({100, 0, 132}, n, aligned);
    CHECK(std::string(l.symbol) == kGenericKernelWarpStrided);
    CHECK(l.cols_per_thread == 1);
    CHECK(l.batch == 0);
    const GenericLaunch adjacent = generic_launch({100, 0, 132}, (n + 3) / 4 * 4, true);
    CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y, l.rows_per_block, l.columns_per_block, l.loops_over_columns) ==
          std::make_tuple(adjacent.grid_x, adjacent.grid_y, adjacent.block_x, adjacent.block_y, adjacent.rows_per_block,
                          adjacent.columns_per_block, adjacent.loops_over_columns));
    CHECK(std::string(generic_launch(wide, n, aligned).symbol) == kGenericKernelWarpWideStrided);
  }
  CHECK(std::string(generic_launch({100, 0, 132}, 511, true).symbol) != kGenericKernelWarpStrided);
  CHECK(std::string(generic_launch({100, 0, 132}, 536870911, true).symbol) == kGenericKernelWarpStrided);
  CHECK(generic_launch({100, 0, 132}, 536870913, true).batch > 0);  // wider rows of B: one column per thread
  // A file whose strided warp kernel starts at 1024 (A of more than 1024 columns): one column per thread below,
  // the adjacent warp kernel unchanged; a start of 0: never.
  const GenericShape long_k_shape = {1000, 0, 132, true, kGenericSplitBelow, true, kGenericWarpStridedLongKFrom};
  for (const int64_t n : {513, 1022, 1023}) {
    INFO(n);
    l = generic_launch(long_k_shape, n, true);
    CHECK(l.batch > 0);
    CHECK(l.cols_per_thread == 1);
  }
  CHECK(generic_launch(long_k_shape, 1020, false).batch > 0);
  CHECK(std::string(generic_launch(long_k_shape, 1024, true).symbol) == kGenericKernelWarpWide);
  CHECK(std::string(generic_launch(long_k_shape, 1024, false).symbol) == kGenericKernelWarpWideStrided);
  CHECK(std::string(generic_launch(long_k_shape, 1026, true).symbol) == kGenericKernelWarpWideStrided);
  CHECK(std::string(generic_launch(long_k_shape, 2047, true).symbol) == kGenericKernelWarpWideStrided);
  CHECK(std::string(generic_launch({100, 0, 132, true, kGenericSplitBelow, false, 2048}, 2049, true).symbol) ==
        kGenericKernelWarpStrided);
  CHECK(generic_launch({100, 0, 132, true, kGenericSplitBelow, false, 0}, 4095, true).batch > 0);
  // generic_warp_wide: at least 2048 columns, float elements (fp32, tf32).
  Csr longk;
  longk.rows = 2, longk.cols = 2048, longk.row_ptr = {0, 1, 2}, longk.col_idx = {0, 2047}, longk.values = {1.0f, 2.0f};
  CHECK(generic_warp_wide(longk, DType::kFp32));
  CHECK(generic_warp_wide(longk, DType::kTf32));
  // generic_warp_strided_from: 1024 where A has more than 1024 columns, else 512; in generic_shape.
  CHECK(generic_warp_strided_from(longk) == kGenericWarpStridedLongKFrom);
  CHECK(generic_shape(longk, 132, true, DType::kFp32).warp_strided_from == kGenericWarpStridedLongKFrom);
  for (const auto& [cols, from] : {std::pair<int32_t, int64_t>{1025, 1024}, {1024, 512}, {3, 512}}) {
    Csr k = longk;
    k.cols = cols, k.col_idx = {0, cols - 1};
    CHECK(generic_warp_strided_from(k) == from);
    CHECK(generic_shape(k, 132, true, DType::kFp16).warp_strided_from == from);
  }
  CHECK_FALSE(generic_warp_wide(longk, DType::kFp16));
  CHECK_FALSE(generic_warp_wide(longk, DType::kBf16));
  // generic_warp_wide_from_n: the least n (from 512) where generic_launch takes the wide kernel.
  for (const int32_t rows : {2, 256, 512, 960, 1000, 5000}) {
    Csr tall = longk;
    tall.rows = rows;
    tall.row_ptr.assign(static_cast<size_t>(rows) + 1, 2);
    tall.row_ptr[0] = 0, tall.row_ptr[1] = 1;
    const int64_t from = generic_warp_wide_from_n(tall, DType::kFp32, 132);
    INFO(rows << " rows: from n = " << from);
    CHECK(from >= kGenericWarpFrom);
    const GenericShape shape = generic_shape(tall, 132, true, DType::kFp32);
    for (int64_t n = kGenericWarpFrom; n <= 8192; n += 4)
      CHECK((std::string(generic_launch(shape, n, true).symbol) == kGenericKernelWarpWide) == (n >= from));
    CHECK(generic_warp_wide_from_n(tall, DType::kFp16, 132) == 0);
  }
  Csr no_rows;
  no_rows.cols = 2048;
  CHECK(generic_warp_wide_from_n(no_rows, DType::kFp32, 132) == 0);
  longk.cols = 2047;
  CHECK_FALSE(generic_warp_wide(longk, DType::kFp32));
  CHECK(generic_warp_wide_from_n(longk, DType::kFp32, 132) == 0);
  CHECK(generic_shape(longk, 132, true, DType::kFp32).warp_wide == false);
  // V = 4 below 512 where its launch fills the SMs: 16 rows x 16 threads of 4 columns.
  l = generic_launch({2048, 0, 132}, 256, true);
  CHECK(std::string(l.symbol) == kGenericKernelV4);
  CHECK(l.cols_per_thread == 4);
  CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y) == std::make_tuple(4u, 128u, 16u, 16u));
  // Unaligned, not a multiple of 4, or narrow: one column per thread, 128 threads per block.
  for (const auto& [n, aligned] : {std::pair<int64_t, bool>{508, false}, {130, true}, {124, true}}) {
    INFO(n << " " << aligned);
    l = generic_launch({100, 0, 132}, n, aligned);
    CHECK(l.batch > 0);  // one column per thread (its batch: the next test)
    CHECK(l.block_x * l.block_y <= 128);
    CHECK(int64_t{l.grid_x} * l.block_x >= n);
    CHECK(int64_t{l.grid_x - 1} * l.block_x < n);
  }
  l = generic_launch({100, 0, 132}, 124, true);  // a row's 124 threads rounded up to 128: one row per block
  CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y) == std::make_tuple(1u, 100u, 128u, 1u));
  // Up to n = 16: the split kernel, a warp per row, 4 rows per block of 128 threads.
  for (const int64_t n : {1, 5, 7, 8, 16}) {
    INFO(n);
    l = generic_launch({100, 0, 132}, n, true);
    CHECK(std::string(l.symbol) == kGenericKernelSplit);
    CHECK(l.cols_per_thread == 1);
    CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y) == std::make_tuple(25u, 1u, 128u, 1u));
  }
  CHECK(generic_launch({101, 0, 132}, 1, false).grid_x == 26u);
  CHECK(generic_launch({1000000, 0, 132}, 4, true).grid_x == 65535u);  // the warps loop over the rest
  l = generic_launch({100, 0, 132}, 32, true);  // from n = 17: one column per thread, here a warp per row's 32 columns
  CHECK(l.cols_per_thread == 1);
  CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y) == std::make_tuple(1u, 25u, 32u, 4u));
  l = generic_launch({100, 0, 132}, 17, true);  // 17 threads rounded up to 32, 4 rows per block
  CHECK(l.cols_per_thread == 1);
  CHECK(std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y) == std::make_tuple(1u, 25u, 32u, 4u));
  // Four columns per thread from n = 512 (a multiple of 4, aligned); below it one...
  CHECK(generic_launch({100, 0, 132}, 508, true).cols_per_thread == 1);
  CHECK(generic_launch({100, 0, 132}, 512, true).cols_per_thread == 4);
  // ... unless, from n = 128, four columns' launch has at least 14 warps per SM: 8 x ceil(n / 64) x
  // ceil(rows / 16) >= 1848 on 132 SMs.
  CHECK(generic_launch({2048, 0, 132}, 128, true).cols_per_thread == 4);   // 2 x 128 x 8 = 2048 warps
  CHECK(generic_launch({2048, 0, 132}, 124, true).cols_per_thread == 1);   // below 128
  CHECK(generic_launch({2048, 0, 132}, 128, false).cols_per_thread == 1);  // unaligned
  CHECK(generic_launch({2048, 0, 132}, 130, true).cols_per_thread == 1);   // not a multiple of 4
  CHECK(generic_launch({1000, 0, 132}, 128, true).cols_per_thread == 1);   // 2 x 63 x 8 = 1008
  CHECK(generic_launch({1000, 0, 132}, 256, true).cols_per_thread == 4);   // 4 x 63 x 8 = 2016
  CHECK(generic_launch({1000, 0, 132}, 192, true).cols_per_thread == 1);   // 3 x 63 x 8 = 1512
  CHECK(generic_launch({512, 0, 132}, 256, true).cols_per_thread == 1);    // 4 x 32 x 8 = 1024
  CHECK(generic_launch({512, 0, 16}, 128, true).cols_per_thread == 4);     // 512 warps on 16 SMs: 224 needed
  CHECK(generic_launch({2048, 0, 132}, 128, true).batch == 0);
  l = generic_launch({100, 0, 132}, 40, true);  // above the warp size: a multiple of it
  CHECK(std::make_tuple(l.block_x, l.block_y) == std::make_tuple(64u, 2u));
  CHECK(generic_launch({2000000, 0, 132}, 256, true).grid_y == 65535);  // the blocks loop over the rest
  CHECK_THROWS_AS(generic_launch({0, 0, 132}, 4096, true), InternalError);
  CHECK_THROWS_AS(generic_launch({10, 0, 132}, 0, true), InternalError);
  CHECK_THROWS_AS(generic_launch({10, 0, 0}, 32, true), InternalError);
}

TEST_CASE("emitter: generic_split_below keeps the split kernel unless A's rows are all short and many",
          "[codegen][emit][small-n]") {
  const auto rows = [](int32_t count, int32_t longest) {
    Csr a;
    a.rows = count;
    a.cols = 64;
    a.row_ptr.push_back(0);
    for (int32_t r = 0; r < count; ++r) {
      const int32_t len = r == count / 2 ? longest : r % 5;
      for (int32_t j = 0; j < len; ++j) a.col_idx.push_back(j), a.values.push_back(1.0f);
      a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
    }
    return a;
  };
  CHECK(generic_split_below(rows(3432, 32), 132) == 1);                   // 26 x 132 rows, none over 32
  CHECK(generic_split_below(rows(3431, 32), 132) == kGenericSplitBelow);  // one row too few
  CHECK(generic_split_below(rows(3432, 33), 132) == kGenericSplitBelow);  // a row of 33
  CHECK(generic_split_below(rows(416, 4), 16) == 1);                      // 16 SMs: 416 rows
  CHECK(generic_split_below(rows(415, 4), 16) == kGenericSplitBelow);
  const GenericShape shape = generic_shape(rows(5000, 8), 132, true, DType::kFp32);
  CHECK(shape.split_below == 1);
  CHECK(std::string(generic_launch(shape, 1, true).symbol) != kGenericKernelSplit);
  CHECK(generic_launch(shape, 1, true).block_y == 128);  // a thread per row, 128 rows per block
  CHECK(std::string(generic_launch(generic_shape(rows(5000, 40), 132, true, DType::kFp32), 1, true).symbol) == kGenericKernelSplit);
  CHECK_THROWS_AS(generic_launch({10, 0, 132, false, 0}, 4, true), InternalError);
}

TEST_CASE("emitter: generic_launch takes one column per thread's batch from A's rows and the launch's warps",
          "[codegen][emit]") {
  // 512 rows at n = 128: a row's 128 columns are one block of 4 warps, 2048 warps; R = 16 x 132 =
  // 2112 on 132 SMs.
  const auto batch = [](int32_t rows, int64_t products, int64_t n, int sms, bool weights_ahead) {
    // B and C unaligned: one column per thread at every n (aligned, four columns may take it).
    const GenericLaunch l = generic_launch({rows, products, sms, weights_ahead}, n, false);
    CHECK(std::string(l.symbol) == (l.batch == 32 ? kGenericKernelV1 : l.batch == 16 ? kGenericKernelV1B16 : kGenericKernelV1B8));
    return l.batch;
  };
  // The unrolled files' generic path. Rows of 64 products or more on average: 32 up to 2 R, else 16.
  CHECK(batch(512, 64 * 512, 128, 132, false) == 32);     // 2048 warps
  CHECK(batch(1056, 64 * 1056, 128, 132, false) == 32);   // 4224 = 2 R
  CHECK(batch(1057, 64 * 1057, 128, 132, false) == 16);
  CHECK(batch(512, 64 * 512, 508, 132, false) == 16);     // 508 columns: 4 blocks a row, 8192 warps
  CHECK(batch(512, 64 * 512, 128, 16, false) == 16);      // on 16 SMs 2048 warps are above 2 R = 512
  // Shorter rows: 16 up to 2.5 R, else 8.
  CHECK(batch(512, 64 * 512 - 1, 128, 132, false) == 16);
  CHECK(batch(1320, 25 * 1320, 128, 132, false) == 16);   // 5280 = 2.5 R
  CHECK(batch(1321, 25 * 1321, 128, 132, false) == 8);
  CHECK(batch(64, 1638, 17, 132, false) == 16);           // 16 blocks of 4 rows: 64 warps
  // The generic family's files (weights ahead). Long rows: 32 up to R, else 8.
  CHECK(batch(528, 64 * 528, 128, 132, true) == 32);      // 2112 = R
  CHECK(batch(529, 64 * 529, 128, 132, true) == 8);
  // Shorter rows: 32 up to R / 2, 16 up to 1.5 R, else 8.
  CHECK(batch(264, 25 * 264, 128, 132, true) == 32);      // 1056 = R / 2
  CHECK(batch(265, 25 * 265, 128, 132, true) == 16);
  CHECK(batch(792, 25 * 792, 128, 132, true) == 16);      // 3168 = 1.5 R
  CHECK(batch(793, 25 * 793, 128, 132, true) == 8);
  // Four columns per thread and the split kernel have no batch of their own here.
  CHECK(generic_launch({512, 1 << 20, 132}, 4096, true).batch == 0);
  CHECK(generic_launch({512, 1 << 20, 132}, 8, true).batch == 0);
}

TEST_CASE("emitter: refuses bad inputs with InternalError", "[codegen][emit]") {
  const Csr a = tiny();
  const RowTiling tiling = tile_rows(a, 2, ReorderMethod::kNone);
  EmitOptions options;
  options.name = "3bad";
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, make_tile(2, 32, 1), options), InternalError);
  options.name = "ok";
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, make_tile(4, 32, 1), options), InternalError);   // tiling made for M1 = 2
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, make_tile(2, 96, 3), options), InternalError);   // V must be 1, 2 or 4
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, make_tile(2, 256, 8), options), InternalError);
  CHECK_THROWS_AS(emit_unrolled_kernel(a, tiling, make_tile(2, 66, 4), options), InternalError);   // V must divide N1
  CHECK_THROWS_AS(build_kernel_program(a, tiling, make_tile(2, 96, 3)), InternalError);
  CHECK_NOTHROW(emit_unrolled_kernel(a, tiling, make_tile(2, 64, 2), options));
  CHECK_NOTHROW(emit_unrolled_kernel(a, tiling, make_tile(2, 128, 4), options));
}

}  // namespace
}  // namespace spmmc
