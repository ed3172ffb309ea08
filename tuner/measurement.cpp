#include "tuner/measurement.h"

#include <algorithm>
#include <random>

namespace spmmc {

SmResources sm_resources(const DeviceInfo& device) {
  SmResources sm;
  sm.sm_count = device.sm_count;
  sm.registers_per_sm = device.registers_per_sm;
  sm.register_allocation_unit = 256;  // per warp, on every architecture since Maxwell
  sm.warp_size = device.warp_size;
  sm.max_threads_per_sm = device.max_threads_per_sm;
  sm.max_blocks_per_sm = device.max_blocks_per_sm;
  sm.shared_memory_per_sm = device.shared_memory_per_sm;
  sm.reserved_shared_memory_per_block = device.reserved_shared_memory_per_block;
  sm.max_shared_memory_per_block = device.shared_memory_per_block_optin;
  return sm;
}

LaunchShape tile_launch_shape(int64_t blocks_x, int64_t n, const TileCandidate& tile, int64_t resident_blocks) {
  LaunchShape s;
  const int64_t b_tiles = (n + tile.n1 - 1) / tile.n1;
  s.grid_x = static_cast<unsigned>(blocks_x);
  s.grid_y = static_cast<unsigned>(blocks_per_a_tile(blocks_x, b_tiles, resident_blocks));
  s.block_x = static_cast<unsigned>(tile.threads_per_block());
  return s;
}

std::vector<float> random_floats(size_t count, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(count);
  for (auto& v : out) v = dist(gen);
  return out;
}

int32_t fastest_candidate(const std::vector<CandidateResult>& results, bool use_real) {
  int32_t best = -1;
  double best_ms = 0.0;
  for (size_t i = 0; i < results.size(); ++i) {
    const CandidateResult& r = results[i];
    const Measurement& m = use_real || r.proxy.outcome == Outcome::kNotRun ? r.real : r.proxy;
    if (m.outcome != Outcome::kOk || (best >= 0 && m.time.median_ms >= best_ms)) continue;
    best = static_cast<int32_t>(i);
    best_ms = m.time.median_ms;
  }
  return best;
}

}  // namespace spmmc
