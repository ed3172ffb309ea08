// The tensor-core family's code (issue 26, docs/design/precision.md): A's vectors in windows of 8
// or 16 rows (compiler/planning/vector_blocks.h), printed as the constant arrays of
// codegen/templates/kernel_tensor_core.cuh with the MMA of the dtype (fp16, bf16: blocks of 8
// vectors, m16n8k8) or of kernel_tensor_core_tf32.cuh (tf32: blocks of 4 vectors, m16n8k4).
// emit_unrolled_kernel pastes the text into NAME.cu when EmitOptions::tensor_core is set.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"
#include "compiler/planning/reorder_rows.h"

namespace spmmc {

// The staged kernel's windows per block (the template's spmmc_tc_staged_warps): the group of windows
// that shares a chunk's copy and so its rows' keys.
inline constexpr int32_t kTensorCoreStagedWarps = 8;

struct TensorCoreCode {
  std::string code;      // kernel_tensor_core.cuh (or _tf32.cuh) filled
  int32_t k = 8;         // vectors per block: the MMA's K (8 for fp16 and bf16, 4 for tf32)
  int32_t windows = 0;   // with non-zeros, then those of the empty rows (no blocks)
  int64_t blocks = 0;    // MMAs per 16 columns of C
  int64_t vectors = 0;   // 8 x 1 or 16 x 1 vectors (the windows' rows), padding excluded
  int64_t padded = 0;    // zero vectors that fill the windows' last blocks
  int32_t chunk_rows = 0;  // the staged kernel's rows of B per chunk in shared memory (0: the direct kernel)
  int64_t staged_from_n = 0;  // the entry point takes the staged kernel from this n (0: none)
  int64_t staged_max_n = 0;   // up to this n (0: none)
  // The direct kernel splits K below these n: 2 (4) warps per window (0: never; fp16 and bf16).
  int64_t split2_below_n = 0, split4_below_n = 0;
};

// The code for A (values already rounded to `dtype`, fp16, bf16 or tf32) with its rows in the windows
// of `windows` (a RowTiling of M1 = 8, or 16 in fp16 and bf16: its tiles in order, then its empty rows
// M1 at a time).
// fp16 and bf16 get the staged form (B's slab in shared memory) where the windows reuse the rows of
// B, taken from the n whose launch fills `sm_count` SMs, and printed only where that n is at most
// `tuned_n` (0: any; print_tensor_core.cpp says the rules). Deterministic.
TensorCoreCode print_tensor_core(const Csr& a, const RowTiling& windows, DType dtype, int64_t sm_count, int64_t tuned_n = 0);

// Whether print_tensor_core prints the staged form for these windows (its rules: the windows reuse
// the rows of B, and the staged kernel's launch fills the SMs at `tuned_n`, 0: any).
bool tensor_core_staged(const Csr& a, const RowTiling& windows, DType dtype, int64_t sm_count, int64_t tuned_n);

// Whether `windows` of 16 rows (fp16, bf16) are worth taking over windows of 8: the staged kernel
// runs on them at `tuned_n` (tensor_core_staged), and they fill at least kTcMinStagedWarpFill of the
// staged kernel's warps (a block of 8 windows: a 64-row layer has 4 windows of 16, and its blocks
// would copy B for half their warps). Measured on an H200 over the 42 shared layers where the staged
// kernel runs on 16-row windows (docs/design/precision.md): 1.13x the 8-row windows (0.90-1.46x) on
// the 32 that fill at least 0.82 of the warps, 0.92x (0.84-1.00x) on the ten 64-row ResNet-50 layers.
bool tensor_core_tall_windows(const Csr& a, const RowTiling& windows, DType dtype, int64_t sm_count, int64_t tuned_n);

}  // namespace spmmc
