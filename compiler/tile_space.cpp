#include "compiler/tile_space.h"

#include <fmt/format.h>

namespace spmmc {

std::string TileCandidate::label() const { return fmt::format("{}x{}", m1, n1); }

TileSpaceAxes default_tile_axes(const Target& target) {
  TileSpaceAxes axes;
  for (int32_t m1 = 1; m1 <= 128; m1 *= 2) axes.m1.push_back(m1);
  const int64_t widest = std::min<int64_t>(1024, target.max_threads_per_block);
  for (int64_t n1 = target.warp_size; n1 <= widest; n1 += target.warp_size) axes.n1.push_back(static_cast<int32_t>(n1));
  return axes;
}

std::vector<TileCandidate> build_tile_space(const TileSpaceAxes& axes) {
  std::vector<TileCandidate> space;
  space.reserve(axes.m1.size() * axes.n1.size());
  for (int32_t m1 : axes.m1)
    for (int32_t n1 : axes.n1) {
      TileCandidate c;
      c.m1 = m1;
      c.n1 = n1;
      space.push_back(c);
    }
  return space;
}

}  // namespace spmmc
