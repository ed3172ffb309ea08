#include "codegen/print_tile_ptx.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// "{x4,x5,x6,x7}" for V = 4, "x4" for V = 1: the V registers named prefix(first + v).
std::string vector_operand(char prefix, int64_t first, int32_t v) {
  if (v == 1) return fmt::format("{}{}", prefix, first);
  std::string s = "{";
  for (int32_t i = 0; i < v; ++i) s += fmt::format("{}{}{}", i ? "," : "", prefix, first + i);
  return s + "}";
}

const char* vector_suffix(int32_t v) { return v == 4 ? ".v4" : v == 2 ? ".v2" : ""; }

}  // namespace

std::string ptx_float_literal(float v) {
  SPMMC_CHECK(std::isfinite(v), "weights must be finite");
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return fmt::format("0f{:08X}", bits);
}

void print_tile_ptx(std::string& out, int32_t id, const TileProgram& tile, int32_t v, int32_t loads_ahead, DType dtype) {
  SPMMC_CHECK(v == 1 || v == 2 || v == 4, "columns per thread must be 1, 2 or 4");
  SPMMC_CHECK(loads_ahead >= 0, "loads_ahead must not be negative");
  SPMMC_CHECK(dtype != DType::kTf32, "tf32's unrolled code is float32's: print it with DType::kFp32");
  const bool half = dtype_is_half(dtype);
  SPMMC_CHECK(!half || !tile.accumulates(), "the split along K needs float32 B and C");
  auto emit = [&out](auto&&... args) { fmt::format_to(std::back_inserter(out), std::forward<decltype(args)>(args)...); };
  const auto slots = static_cast<int64_t>(tile.rows.size());
  const auto columns = static_cast<int64_t>(tile.columns.size());
  const char* const elem = dtype_c_type(dtype);
  emit("__device__ __forceinline__ void spmmc_tile_{}(const {}* __restrict__ b, {}* __restrict__ c, unsigned ld) {{\n",
       id, elem, elem);
  emit("  SPMMC_TILE_ASM(\n");
  // One address register per load and per store: ptxas renames and allocates them itself.
  emit("    \"{{.reg .f32 a<{}>;.reg .f32 x<{}>;.reg .b64 p<{}>;{}{}\\n\"\n", slots * v,
       std::max<int64_t>(columns * v, 1), columns + slots, tile.accumulates() ? fmt::format(".reg .f32 y<{}>;", v) : "",
       half ? fmt::format(".reg .b16 h<{}>;.reg .b16 o<{}>;{}", std::max<int64_t>(columns * v, 1), v,
                          dtype == DType::kBf16 ? ".reg .b16 z;" : "")
            : "");
  emit("    \"");
  for (int64_t i = 0; i < slots * v; ++i) emit("mov.b32 a{},0f00000000;", i);
  if (dtype == DType::kBf16) emit("mov.b16 z,0;");
  emit("\\n\"\n");
  auto load = [&](int64_t j) {
    if (half)
      emit("mad.wide.u32 p{0},%2,{1},%0;ld.global.nc{2}.b16 {3},[p{0}];", j, tile.columns[static_cast<size_t>(j)].col,
           vector_suffix(v), vector_operand('h', j * v, v));
    else
      emit("mad.wide.u32 p{0},%2,{1},%0;ld.global.nc{2}.f32 {3},[p{0}];", j, tile.columns[static_cast<size_t>(j)].col,
           vector_suffix(v), vector_operand('x', j * v, v));
  };
  if (loads_ahead > 0 && columns > 0) {
    emit("    \"");
    for (int64_t j = 0; j < std::min<int64_t>(loads_ahead, columns); ++j) load(j);
    emit("\\n\"\n");
  }
  for (int64_t j = 0; j < columns; ++j) {
    const TileColumn& col = tile.columns[static_cast<size_t>(j)];
    emit("    \"");
    if (loads_ahead == 0) load(j);
    else if (j + loads_ahead < columns) load(j + loads_ahead);
    for (int32_t lane = 0; half && lane < v; ++lane) {  // column j's elements as floats, just before its FMAs
      if (dtype == DType::kFp16) emit("cvt.f32.f16 x{0},h{0};", j * v + lane);
      else emit("mov.b32 x{0},{{z,h{0}}};", j * v + lane);
    }
    for (const TileFma& f : col.fmas) {
      const std::string w = ptx_float_literal(f.weight);
      for (int32_t lane = 0; lane < v; ++lane) {
        const int64_t acc = int64_t{f.slot} * v + lane;
        emit("fma.rn.f32 a{0},x{1},{2},a{0};", acc, j * v + lane, w);
      }
    }
    emit("\\n\"\n");
  }
  if (half) {
    for (int64_t s = 0; s < slots; ++s) {
      emit("    \"");
      for (int32_t lane = 0; lane < v; ++lane)
        emit("cvt.rn.{}.f32 o{},a{};", dtype == DType::kFp16 ? "f16" : "bf16", lane, s * v + lane);
      emit("mad.wide.u32 p{0},%2,{1},%1;st.global{2}.b16 [p{0}],{3};\\n\"\n", columns + s,
           tile.rows[static_cast<size_t>(s)], vector_suffix(v), vector_operand('o', 0, v));
    }
    emit("    \"}}\");\n}}\n");
    return;
  }
  if (!tile.accumulates()) {
    for (int64_t s = 0; s < slots; ++s)
      emit("    \"mad.wide.u32 p{0},%2,{1},%1;st.global{2}.f32 [p{0}],{3};\\n\"\n", columns + s,
           tile.rows[static_cast<size_t>(s)], vector_suffix(v), vector_operand('a', s * v, v));
    emit("    \"}}\");\n}}\n");
    return;
  }
  // A later range of K: the kernels before this one stored (and added to) C; wait until they have
  // completed, then add each partial sum to its row of C: C = C + sum, for the rows with products.
  std::vector<bool> has_products(static_cast<size_t>(slots), false);
  for (const TileColumn& col : tile.columns)
    for (const TileFma& f : col.fmas) has_products[static_cast<size_t>(f.slot)] = true;
  emit("    \"griddepcontrol.wait;\\n\"\n");
  for (int64_t s = 0; s < slots; ++s) {
    if (!has_products[static_cast<size_t>(s)]) continue;
    emit("    \"mad.wide.u32 p{0},%2,{1},%1;ld.global{2}.f32 {3},[p{0}];", columns + s, tile.rows[static_cast<size_t>(s)],
         vector_suffix(v), vector_operand('y', 0, v));
    for (int32_t lane = 0; lane < v; ++lane) emit("add.f32 a{0},y{1},a{0};", s * v + lane, lane);
    emit("st.global{}.f32 [p{}],{};\\n\"\n", vector_suffix(v), columns + s, vector_operand('a', s * v, v));
  }
  emit("    \"}}\");\n}}\n");
}

}  // namespace spmmc
