// The size guard: unrolled code grows with nnz and so does nvcc's time (ptxas's, since the tile
// bodies are inline PTX: docs/design/kernel.md), so spmmc estimates both before emitting and
// refuses above a limit rather than start an hour-long compile.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/planning/tile_space.h"
#include "compiler/planning/tiling_stats.h"

namespace spmmc {

// The model below was fitted on kernels of at most ~15k loads of B each; beyond that ptxas slows
// down faster than it predicts (kernels of 31k-38k loads took 2.7-2.8x the fit), so the automatic
// split keeps every kernel within this many loads (docs/design/kernel.md, section 4).
constexpr int64_t kMaxLoadsPerKernel = 16384;

struct SizeEstimate {
  int64_t fmas = 0;          // FMA instructions: V per non-zero
  int64_t loads = 0;         // NNC_sum: one B load per non-empty column per tile
  double kernel_loads = 0;   // loads of one kernel, the kernels taken as equal parts
  int64_t source_bytes = 0;  // of NAME.cu
  double nvcc_seconds = 0;   // nvcc -O3 -arch=sm_90, one process
};

struct SizeLimits {
  double max_nvcc_seconds = 600.0;
  int64_t max_source_bytes = int64_t{256} << 20;
};

// Estimates the kernel that `tile` gives: its size and compile time from the tiling (rows and
// tiles, non-zeros and non-empty columns), M1, V and the split into kernels of at most
// `fmas_per_kernel` FMAs (0: one kernel; codegen/kernel_program.h). Constants: measured, see
// size_guard.cpp.
SizeEstimate estimate_unrolled_size(const Csr& a, const TilingStats& tiling, const TileCandidate& tile,
                                    int64_t fmas_per_kernel);

// Throws a data error (naming `file`) when the estimate exceeds a limit: what the estimate is,
// what the limit is, and the flag that raises it.
void check_size_guard(const SizeEstimate& estimate, const SizeLimits& limits, const std::string& file);

}  // namespace spmmc
