// The tile space of LO-SpMM §3.1 (hierarchical 2-D tiling): a thread block computes an
// (M1, N1) tile of C, each thread an (M1, cols_per_thread) strip; N1 / V threads per block and
// __launch_bounds__'s minimum blocks per SM (the register cap) are fields of the candidate too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/planning/target.h"

namespace spmmc {

// The kernel families: LO-SpMM's fully unrolled, constant-propagated kernel; the generic kernel over A's
// CSR constants; FlashSparse's 8 x 1 vectors on the tensor cores (fp16, bf16, tf32); the balanced
// kernel over A's rows cut into pieces (codegen/families/balanced/).
enum class KernelFamily { kUnrolled, kGeneric, kTensorCore, kBalanced };

struct TileCandidate {
  int32_t m1 = 1;               // rows of A (and C) per thread block: the A-tile size
  int32_t n1 = 32;              // columns of B (and C) per thread block
  int32_t cols_per_thread = 1;  // V: columns of C per thread (1: the (M1, 1) strip of the paper)
  int32_t min_blocks_per_sm = 1;  // __launch_bounds__ minimum blocks per SM: caps registers per thread
  KernelFamily family = KernelFamily::kUnrolled;

  int32_t threads_per_block() const { return n1 / cols_per_thread; }
  std::string label() const;  // "32x128" (V = 1), "32x1024x4" (V = 4)
};

struct TileSpaceAxes {
  std::vector<int32_t> m1;
  std::vector<int32_t> n1;
  std::vector<int32_t> cols_per_thread = {1};  // V; a (N1, V) pair is kept when V divides N1
  // Minimum blocks per SM of every candidate's launch bounds; 0: the register budget's
  // (min_blocks_for_register_budget), which is what spmmc plans with unless --min-blocks-per-sm.
  int32_t min_blocks_per_sm = 0;
};

// The register budget of every emitted kernel: __launch_bounds__(threads, min_blocks) with
// threads x min_blocks = 1024 caps ptxas at 64 registers per thread, so that 32 warps per SM run
// each tile's code at once (docs/design/kernel.md: uncapped, ptxas hoists every load of a tile
// and takes 255 registers, 8 warps per SM, and the SMs starve for instructions; capped at 64 the
// kernels ran 1.2-1.8x faster on an H100).
constexpr int32_t kRegistersPerThreadBudget = 64;

// The minimum blocks per SM that keep `threads` threads per block within the register budget
// on a GPU of `registers_per_sm` registers: max(1, registers_per_sm / (64 x threads)), at most 32.
int32_t min_blocks_for_register_budget(int32_t threads, int64_t registers_per_sm);

// M1 in {1, 2, 4, ..., 128}; N1 the multiples of the warp size up to the target's
// max_threads_per_block (32, 64, ..., 1024 on NVIDIA GPUs).
TileSpaceAxes default_tile_axes(const Target& target);

// Every (M1, N1, V) of the axes with V dividing N1, M1-major, for the unrolled family; each with
// axes.min_blocks_per_sm, or the register budget's minimum blocks per SM when that is 0.
std::vector<TileCandidate> build_tile_space(const TileSpaceAxes& axes, int64_t registers_per_sm);

// grid.y of the emitted launch (codegen/templates/kernel.cu, spmmc_grid_y, which computes the
// same): the blocks per A-tile, each looping over its share of the `b_tiles` B-tiles, so that
// all `a_tiles` x grid.y blocks fit `resident_blocks` (SMs x blocks per SM) in one wave and the
// busiest block has as few B-tiles as that wave allows: with at most W = resident / a_tiles
// blocks per A-tile, each block takes ceil(b_tiles / W) B-tiles and grid.y = ceil(b_tiles /
// that). 1 when the A-tiles alone fill the wave; at most min(b_tiles, 65535).
int64_t blocks_per_a_tile(int64_t a_tiles, int64_t b_tiles, int64_t resident_blocks);

}  // namespace spmmc
