#include "compiler/planning/tile_space.h"

#include <algorithm>

#include <fmt/format.h>

namespace spmmc {

std::string TileCandidate::label() const {
  return cols_per_thread == 1 ? fmt::format("{}x{}", m1, n1) : fmt::format("{}x{}x{}", m1, n1, cols_per_thread);
}

TileSpaceAxes default_tile_axes(const Target& target) {
  TileSpaceAxes axes;
  for (int32_t m1 = 1; m1 <= 128; m1 *= 2) axes.m1.push_back(m1);
  const int64_t widest = std::min<int64_t>(1024, target.max_threads_per_block);
  for (int64_t n1 = target.warp_size; n1 <= widest; n1 += target.warp_size) axes.n1.push_back(static_cast<int32_t>(n1));
  return axes;
}

int32_t min_blocks_for_register_budget(int32_t threads, int64_t registers_per_sm) {
  const int64_t blocks = registers_per_sm / (int64_t{kRegistersPerThreadBudget} * std::max(threads, 1));
  return static_cast<int32_t>(std::clamp<int64_t>(blocks, 1, 32));
}

std::vector<TileCandidate> build_tile_space(const TileSpaceAxes& axes, int64_t registers_per_sm) {
  std::vector<TileCandidate> space;
  space.reserve(axes.m1.size() * axes.n1.size());
  for (int32_t m1 : axes.m1)
    for (int32_t n1 : axes.n1)
      for (int32_t v : axes.cols_per_thread) {
        if (n1 % v != 0) continue;
        TileCandidate c;
        c.m1 = m1;
        c.n1 = n1;
        c.cols_per_thread = v;
        c.min_blocks_per_sm = axes.min_blocks_per_sm > 0 ? axes.min_blocks_per_sm
                                                         : min_blocks_for_register_budget(c.threads_per_block(), registers_per_sm);
        space.push_back(c);
      }
  return space;
}

int64_t blocks_per_a_tile(int64_t a_tiles, int64_t b_tiles, int64_t resident_blocks) {
  const int64_t most = resident_blocks / std::max<int64_t>(a_tiles, 1);  // blocks per A-tile in one wave
  if (most <= 1 || b_tiles <= 1) return 1;
  const int64_t per_block = (b_tiles + most - 1) / most;  // B-tiles of the busiest block
  return std::clamp<int64_t>((b_tiles + per_block - 1) / per_block, 1, std::min<int64_t>(b_tiles, 65535));
}

}  // namespace spmmc
