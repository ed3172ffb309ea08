// The AST walk of `spmmc verify` (internal to verify/): from the translation unit Clang parsed
// without errors to EmittedKernelAnalysis. It finds
//   - every __global__ function with a switch (blockIdx.x) dispatch (the unrolled kernels), and in
//     each its loop over the B-tiles (bt = blockIdx.y; bt < (n + N1 - 1) / N1; bt += gridDim.y),
//     the thread's column col = bt * N1 + threadIdx.x * V, the guard `if (col >= n) continue;`,
//     its cases with the tiles each runs, and the arguments of every tile call (B + col, C + col,
//     the row stride n x 4);
//   - their launch loop in the host code (read_launch.h), and from it the blocks of every launch;
//   - each called tile function's one inline-PTX asm statement, its operands' roles (b, c, ld)
//     and constraints, then read_tile_ptx.h reads the PTX;
//   - the spmmc_kernel_info initialiser field by field, and the generic path's CSR arrays;
//   - in a file of the tensor-core family, its constants and arrays (spmmc_tc_*), its __global__
//     functions and the opcode of every inline-PTX mma.
// Unrecognised constructs become errors at their place; nothing throws out of it.
#pragma once

#include <clang/AST/ASTContext.h>

#include "verify/analyze_emitted_kernel.h"
#include "verify/code_locations.h"

namespace spmmc::verify_detail {

void walk_kernel_ast(clang::ASTContext& ctx, const Locator& locator, EmittedKernelAnalysis& out);

}  // namespace spmmc::verify_detail
