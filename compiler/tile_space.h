// The tile space of LO-SpMM §3.1 (hierarchical 2-D tiling): a thread block computes an
// (M1, N1) tile of C, each thread an (M1, cols_per_thread) strip. Later issues add axes
// (columns per thread, kernel family); every candidate carries them already.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/target.h"

namespace spmmc {

enum class KernelFamily { kUnrolled };  // LO-SpMM's fully unrolled, constant-propagated kernel

struct TileCandidate {
  int32_t m1 = 1;               // rows of A (and C) per thread block: the A-tile size
  int32_t n1 = 32;              // columns of B (and C) per thread block
  int32_t cols_per_thread = 1;  // columns of C per thread (1: the (M1, 1) strip of the paper)
  KernelFamily family = KernelFamily::kUnrolled;

  int32_t threads_per_block() const { return n1 / cols_per_thread; }
  std::string label() const;  // "32x128"
};

struct TileSpaceAxes {
  std::vector<int32_t> m1;
  std::vector<int32_t> n1;
};

// M1 in {1, 2, 4, ..., 128}; N1 the multiples of the warp size up to the target's
// max_threads_per_block (32, 64, ..., 1024 on NVIDIA GPUs).
TileSpaceAxes default_tile_axes(const Target& target);

// Every (M1, N1) of the axes, M1-major, for the unrolled family with one column per thread.
std::vector<TileCandidate> build_tile_space(const TileSpaceAxes& axes);

}  // namespace spmmc
