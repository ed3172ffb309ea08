// Prints one A-tile of a KernelProgram as a CUDA device function whose body is a single
// inline-PTX statement (docs/design/kernel.md, "Compile time"): nvcc's front end (cicc) passes
// the text through untouched, so its time no longer grows with the tile, and ptxas schedules
// and allocates registers for the straight-line code as it would for cicc's own output.
//
// The statement is written as SPMMC_TILE_ASM("...") so that the tests' host emulation can run
// the same text through an interpreter; codegen/templates/kernel_device.cuh defines the macro as
// `asm volatile(text : : "l"(b), "l"(c), "r"(ld) : "memory")` where b and c point at this thread's
// first column of B and C and ld is the row stride in bytes (n x the element's bytes).
//
// The PTX subset, one column of B per C line (what the host interpreter and `spmmc verify` read):
//   {  .reg .f32 a<A>;  .reg .f32 x<X>;  .reg .b64 p<P>;          declarations, braces scope them
//   mov.b32 aI, 0f00000000;                                        each accumulator starts at +0
//   mad.wide.u32 pJ, %2, COL, %0;                                  pJ = b + COL x ld
//   ld.global.nc[.v2|.v4].f32 {xI, ...}, [pJ];                     V floats of row COL of B
//   fma.rn.f32 aI, xJ, 0fHHHHHHHH, aI;                             aI += weight x xJ (weight as bits)
//   mad.wide.u32 pJ, %2, ROW, %1;  st.global[.v2|.v4].f32 [pJ], {aI, ...};   row ROW of C
//   }
// A tile of a later range of K (TileProgram::accumulates) declares .reg .f32 y<V> too and, after
// its FMAs, waits for the kernels before it and adds its sums to C, for the rows with products:
//   griddepcontrol.wait;
//   mad.wide.u32 pJ, %2, ROW, %1;  ld.global[.v2|.v4].f32 {yL, ...}, [pJ];
//   add.f32 aI, yL, aI;  ...  st.global[.v2|.v4].f32 [pJ], {aI, ...};
// Accumulator of slot s, lane v is a(s*V + v); x(j*V + v) holds lane v of the j-th column.
//
// Half-precision B and C (DType fp16 or bf16; docs/design/precision.md): the loads and stores move
// 16-bit elements into .b16 registers, the FMAs stay in float32 (weights are A's values rounded to
// the dtype, as float immediates). Declared besides: .reg .b16 h<X>; .reg .b16 o<V>; and for bf16
// .reg .b16 z; (mov.b16 z, 0;). A column's elements are converted just before its FMAs (not at the
// load, which would wait for the load there):
//   ld.global.nc[.v2|.v4].b16 {hI, ...}, [pJ];                    V elements of row COL of B
//   cvt.f32.f16 xI, hI;   (bf16: mov.b32 xI, {z, hI};  the bf16 bits are the float's top half)
//   cvt.rn.f16.f32 oL, aI; (bf16: cvt.rn.bf16.f32 oL, aI;)  ...  st.global[.v2|.v4].b16 [pJ], {oL, ...};
// No accumulating tiles: the split along K would round partial sums to the dtype.
// With `loads_ahead` D > 0 the load of column j + D is printed before the FMAs of column j (the
// first D loads before any FMA): a software prefetch that does not depend on ptxas's scheduling
// (ptxas -O1 keeps the printed order; -O3 hoists loads itself). Every column keeps its own x and p
// registers, so the order changes no value.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/kernel_program.h"
#include "compiler/common/dtype.h"

namespace spmmc {

// Appends `__device__ __forceinline__ void spmmc_tile_<id>(b, c, ld) { SPMMC_TILE_ASM(...); }`.
// An accumulating tile's griddepcontrol.wait needs sm_90 or later (the split along K is only
// emitted for such targets). `dtype`: B's and C's elements (fp32 or a half precision; then no
// accumulating tile).
void print_tile_ptx(std::string& out, int32_t id, const TileProgram& tile, int32_t cols_per_thread,
                    int32_t loads_ahead = 0, DType dtype = DType::kFp32);

// The PTX spelling of a float immediate: "0f3DCCCCCD" (its exact bits).
std::string ptx_float_literal(float v);

}  // namespace spmmc
