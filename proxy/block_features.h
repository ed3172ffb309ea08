// The static features of the thread-block functions of an unrolled kernel (LO-SpMM §5.1.2):
// per A-tile, the global loads of B and the FMAs its function executes per thread. They equal
// what codegen/emit_unrolled_kernel.cpp writes (tests check the sums) and what `spmmc verify`
// counts in emitted code, without emitting it.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"

namespace spmmc {

struct BlockFunction {
  int32_t first_row_index = 0;  // into RowTiling::rows (or empty_rows, for the zero tiles)
  int32_t rows = 0;             // rows of A (and C) the function handles
  int64_t loads = 0;            // non-empty columns of the tile: one load of B each
  int64_t fmas = 0;             // non-zeros of the tile: one FMA each
  bool zero_tile = false;       // a tile of empty rows that stores zeros
};

// The block functions of the kernel emitted for `tiling`, in the emitter's order (the
// tiles of the tiling, then tiles of at most M1 empty rows): index = blockIdx.x.
std::vector<BlockFunction> block_functions(const Csr& a, const RowTiling& tiling);

}  // namespace spmmc
