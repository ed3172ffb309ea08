// The unrolled kernel as a small in-memory program: per A-tile, the ordered loads of B rows,
// the FMAs each load feeds (weight as a constant, accumulator slot) and the stores of C rows,
// plus the launch mapping. It is described once here; printers turn it into what needs it
// (codegen/print_tile_ptx.h: the inline PTX of NAME.cu and its NVRTC form; the tests' host
// interpreter runs the printed text; `spmmc verify` reconstructs the same program from the file).
#pragma once

#include <cstdint>
#include <string>
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
// Columns ascend; a tile of empty rows has no columns and stores zeros. With the split along K
// (KernelProgram::k_part_begin), a tile covers one range of K: in range 0 it stores every row
// (its partial sums), in a later range (`k_part` > 0) it computes its partial sums while the
// kernels before it run, then waits for them (griddepcontrol.wait) and adds each sum to the row of
// C they stored (a load of C, an add, a store), for the rows that have products in its range only.
struct TileProgram {
  std::vector<int32_t> rows;
  std::vector<TileColumn> columns;
  int32_t k_part = 0;

  bool accumulates() const { return k_part > 0; }
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

// The split of the unrolled code into several kernels (docs/design/kernel.md, "Compile time"):
// ptxas's time grows faster than linearly with the code of one kernel function and linearly over
// functions, but every kernel costs run time. The entry point launches several kernels as one
// CUDA graph (codegen/templates/kernel.cu), where each kernel after the first added 0.4-1.0 us
// (median 0.85 us) to a layer's run time on the H100 (study 8: the same layers split into 1 to 77
// kernels; a chain of plain launches cost about 3 us of host time per kernel).
// The default: as many kernels as keep that cost within 10% of the layer's estimated run time
// at 10 useful TFLOP/s, but no kernel below kMinFmasPerKernel FMAs (below that ptxas gains
// nothing: 32 one-tile kernels compiled only 15% faster than 8 of four tiles).
constexpr int64_t kMinFmasPerKernel = 4096;
constexpr double kSecondsPerKernel = 0.85e-6, kAssumedFlopsPerSecond = 10e12, kKernelShareOfRunTime = 0.1;

// Whether code for `arch` ("sm_90") has programmatic dependent launch (griddepcontrol): sm_90
// and later. Split kernels overlap only there, and the split along K needs it.
bool has_dependent_launch(const std::string& arch);

// FMAs per kernel by default for A with `nnz` non-zeros multiplied with B of `n` columns
// (the n spmmc compile tunes for) on a GPU of the architecture `arch` ("sm_90"): nnz itself (one
// kernel) for layers that run for less than ~17 us (a second kernel would cost more than 10%),
// smaller for longer ones, at least kMinFmasPerKernel. Before sm_90 there is no programmatic
// dependent launch and split kernels run one after the other (4-6x slower, measured): one kernel.
int64_t default_fmas_per_kernel(int64_t nnz, int64_t n, const std::string& arch = "sm_90");

struct KernelProgram {
  int32_t m = 0, k = 0;
  LaunchMapping launch;
  // The ranges of K (the split along K, `k_parts`): range p covers the columns of A
  // [k_part_begin[p], k_part_begin[p + 1]); {0, k} without a split. Each row of C is the sum of
  // its ranges' partial sums, added in range order: ((P0 + P1) + P2) ...
  std::vector<int32_t> k_part_begin;
  // Range 0: the tiling's tiles in order, then tiles of empty rows; then the tiles of range 1
  // (those with products in it), and so on.
  std::vector<TileProgram> tiles;
  // The kernels, launched in this order: kernel j runs tiles [kernel_first_tile[j],
  // kernel_first_tile[j + 1]) (the last to the end), tile first + blockIdx.x in each block.
  std::vector<int32_t> kernel_first_tile;

  int32_t kernels() const { return static_cast<int32_t>(kernel_first_tile.size()); }
  int32_t first_tile(int32_t kernel) const { return kernel_first_tile[static_cast<size_t>(kernel)]; }
  int32_t tiles_of(int32_t kernel) const;  // the A-tiles of kernel j: its grid.x

  int64_t fmas() const;   // one per non-zero
  int64_t loads() const;  // loads of B per thread: the sum of non-empty columns over tiles
};

// The split of K into `parts` ranges of about equal non-zeros (ascending, k_part_begin[0] = 0,
// the last = K, no range empty of columns): the boundaries KernelProgram::k_part_begin holds.
std::vector<int32_t> split_k(const Csr& a, int32_t parts);

// Builds the program of A under `tiling` (rows grouped into tiles of at most tile.m1 rows) for
// the launch of `tile`; rows of A without non-zeros become tiles of at most M1 rows storing
// zeros. With `k_parts` > 1, K is split into that many ranges (split_k) and every tile into one
// tile per range that has products (range 0 always: it stores). Consecutive tiles of one range
// are grouped into kernels of at most `fmas_per_kernel` FMAs (a tile with more gets a kernel of
// its own; 0: one kernel per range); a kernel never mixes ranges, so every accumulating kernel
// comes after all kernels of the ranges before it. Deterministic; every row of C is stored by
// exactly one tile of range 0, every non-zero is one FMA, every tile is in exactly one kernel.
KernelProgram build_kernel_program(const Csr& a, const RowTiling& tiling, const TileCandidate& tile,
                                   int64_t fmas_per_kernel = 0, int32_t k_parts = 1);

}  // namespace spmmc
