// The unrolled kernel as a small in-memory program: per A-tile, the ordered loads of B rows,
// the FMAs each load feeds (weight as a constant, accumulator slot) and the stores of C rows,
// plus the launch mapping. It is described once here; printers turn it into what needs it
// (codegen/print_tile_ptx.h: the inline PTX of NAME.cu and its NVRTC form; the tests' host
// interpreter runs the printed text; `spmmc verify` reconstructs the same program from the file).
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"
#include "compiler/planning/tile_space.h"

namespace spmmc {

struct TileFma {
  int32_t slot;  // the accumulator (row of the tile) the product adds to
  float weight;  // A's value, an immediate operand in the code
};

// One load of row `col` of B (V adjacent floats per thread), then the FMAs that use it, in
// ascending slot order.
struct TileColumn {
  int32_t col;
  std::vector<TileFma> fmas;
};

// One A-tile: rows[slot] is the original row of C that accumulator `slot` is stored to.
// Columns ascend; a tile of empty rows has no columns and stores zeros.
struct TileProgram {
  std::vector<int32_t> rows;
  std::vector<TileColumn> columns;

  int64_t fmas() const;
};

// How the tiles run on the GPU (docs/design/kernel.md): grid.x = tiles, a block of `threads`
// threads computes one tile for N1 = threads x cols_per_thread adjacent columns of C at a time
// and loops over the B-tiles given to it along grid.y.
struct LaunchMapping {
  int32_t m1 = 1;
  int32_t threads = 32;
  int32_t cols_per_thread = 1;  // V: float, float2 or float4 loads of B and stores of C
  int32_t min_blocks_per_sm = 1;  // __launch_bounds__'s second argument: caps registers per thread

  int32_t n1() const { return threads * cols_per_thread; }
};

struct KernelProgram {
  int32_t m = 0, k = 0;
  LaunchMapping launch;
  std::vector<TileProgram> tiles;  // the tiling's tiles in order, then tiles of empty rows

  int64_t fmas() const;   // one per non-zero
  int64_t loads() const;  // loads of B per thread: the sum of non-empty columns over tiles
};

// Builds the program of A under `tiling` (rows grouped into tiles of at most tile.m1 rows) for
// the launch of `tile`; rows of A without non-zeros become tiles of at most M1 rows storing
// zeros. Deterministic; every row of C appears in exactly one tile.
KernelProgram build_kernel_program(const Csr& a, const RowTiling& tiling, const TileCandidate& tile);

}  // namespace spmmc
