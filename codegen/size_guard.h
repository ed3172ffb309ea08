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

struct SizeEstimate {
  int64_t fmas = 0;          // FMA instructions: V per non-zero
  int64_t loads = 0;         // NNC_sum: one B load per non-empty column per tile
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
