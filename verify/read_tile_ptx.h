// The semantic half of `spmmc verify`'s PTX reading (internal to verify/; Clang-free): one tile
// function's inline PTX run symbolically, statement by statement through a table of opcodes.
// Registers hold symbols, not numbers: "lane l of row r of B", "a sum of products (r, w, l)",
// "the address of row r of B (or C) plus k bytes", "the row stride", "a known predicate".
//
// The operands %N are what the asm statement passes (walk_kernel_ast.h checks the C++ side):
// the thread's first column of B (%0 in emitted code), of C (%1), and the row stride in bytes
// (%2, n x the element's bytes: 4 for float32, 2 for float16 and bfloat16). What is understood
// (docs/verify.md has the table):
//   { }  .reg .TYPE name<N>;  .reg .TYPE a, b;   TYPE: f32 b32 u32 s32 b64 u64 s64 pred, b16 u16 s16 f16 bf16
//   LABEL:   [@[!]q] bra[.uni] LABEL;             forward only, q known
//   mov.{b32,f32} a, 0f00000000                   an empty sum (+0); mov of a register copies it;
//   mov.{b64,u64} p, %N                           mov.b64 p, %0 is the address of row 0
//   mad.wide.u32 p, %2, ROW, BASE   (or ROW, %2)  BASE + ROW rows; BASE = %0, %1 or an address
//   mul.wide.u32 r, %2, ROW;  add.{s64,u64} p, x, y   row offsets and byte offsets added
//   ld[.global][.nc][.ca|.cg|.cs|.lu|.cv][.v2|.v4].{f32,b32} {x..}, [p(+OFF)]   lanes of a row of B
//   st[.global][.wb|.cg|.cs|.wt][.v2|.v4].{f32,b32} [p(+OFF)], {a..}           lanes of a row of C
//   fma.rn.f32 d, x, 0fHHHHHHHH, a   (or the weight first)   d = a + weight x (element of B)
//   setp.{eq,ne}.{u32,s32,b32} q, %2, 0   (or 0, %2)         the stride is never 0: q is known
//   griddepcontrol.wait                                       the tile waits for the kernels before
//   ld[.global][.v2|.v4].f32 {y..}, [p] of C;  add.f32 d, y, a (either order)
//                                             an element of C as stored before, plus a sum: a store of d adds
// Half precision (TilePtx::dtype fp16 or bf16; no loads of C, no add.f32): elements move through
// 16-bit registers and the FMAs stay in float32:
//   ld[.global][.nc][...][.v2|.v4].{b16,u16,s16} {h..}, [p(+OFF)]   lanes of a row of B, as loaded
//   cvt.f32.f16 x, h                (fp16 only)  x = the element as a float
//   mov.b16 z, 0;  mov.b32 x, {z, h}   (bf16 only)  x = the element (its bits the float's upper
//   half, the lower half the constant 0); cvt.f32.bf16 x, h the same
//   cvt.rn.f16.f32 o, a / cvt.rn.bf16.f32 o, a   o = the sum a rounded to nearest even to the dtype
//   st[.global][...][.v2|.v4].{b16,u16,s16} [p(+OFF)], {o..}        lanes of a row of C: rounded sums only
// An FMA of an element not converted, the other dtype's conversion, a lower half that is not 0,
// the element in the lower half, another rounding (cvt.rz...), a sum stored unconverted, or an
// access of the other element size is an error naming the expected form.
// A byte offset OFF (or BASE's) of E x l selects lane l (E: the element's bytes); vector
// accesses must be aligned.
// Anything else (another opcode, modifier or directive, a register read before it is written
// or of the wrong kind, an undeclared register, a backward branch, a predicate it cannot
// decide, an ld.nc of C, a store to B) stops the reading with an error naming the statement.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "verify/analyze_emitted_kernel.h"

namespace spmmc::verify_detail {

// What an asm operand %N is, from the C++ expression the asm statement passes.
enum class PtxOperandRole { kUnknown, kB, kC, kRowStride };

struct TilePtx {
  std::string_view text;                  // the asm string's value
  std::vector<PtxOperandRole> operands;   // %0, %1, ...
  std::function<CodeLocation(size_t)> locate;  // byte of `text` -> its place in NAME.cu
  std::string function;                   // for messages: "spmmc_tile_3"
  DType dtype = DType::kFp32;             // B's and C's elements: what the loads, conversions and stores must be
};

// Reads `ptx` into `tile` (statements, loads, FMAs, dead loads, load sites, stores lane by lane,
// sums never stored). On the first statement it does not recognise it appends one error to
// `errors` ("WHAT in 'STATEMENT' (PTX statement N of FUNCTION)", at the statement's place) and
// returns false.
bool read_tile_ptx(const TilePtx& ptx, AnalyzedTile& tile, std::vector<CodeDiagnostic>& errors);

}  // namespace spmmc::verify_detail
