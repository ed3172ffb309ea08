// The host side of the unrolled kernels for `spmmc verify` (internal to verify/): the entry
// point's launch loop
//   for (int j = 0; j < spmmc_kernel_count; ++j) {
//     cudaLaunchConfig_t config = {};
//     config.gridDim = dim3(spmmc_kernel_tiles[j], grid_y);
//     config.blockDim = dim3(spmmc_threads);
//     ...
//     cudaLaunchKernelExC(&config, spmmc_kernels[j], args);
//   }
// and the const tables it indexes: which function iteration j launches (spmmc_kernels[j]) and
// with how many blocks along x (spmmc_kernel_tiles[j]), each element with its place; the block
// size; the entry point; and the constant spmmc_a_tiles. Whether the tables agree with the
// kernels is compare_with_weights's to say; code it does not recognise is an error at its place.
#pragma once

#include <vector>

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>

#include "verify/analyze_emitted_kernel.h"
#include "verify/code_locations.h"

namespace spmmc::verify_detail {

// Reads the launch loop from the host functions among `functions` and the tables from the
// file-scope `variables` into out.launch and out.entry_point; `kernels` are the definitions of
// out.kernels (the same order), whose columns get the launch's block size and place. False (with
// out.errors) when the launch is not recognised.
bool read_launch(clang::ASTContext& ctx, const Locator& locator, const std::vector<clang::FunctionDecl*>& functions,
                 const std::vector<clang::VarDecl*>& variables, const std::vector<const clang::FunctionDecl*>& kernels,
                 EmittedKernelAnalysis& out);

}  // namespace spmmc::verify_detail
