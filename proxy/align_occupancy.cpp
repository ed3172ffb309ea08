#include "proxy/align_occupancy.h"

#include <algorithm>

#include "compiler/common/diagnostics.h"

namespace spmmc {

OccupancyAlignment align_occupancy(const SmResources& sm, int64_t thread_blocks, int64_t threads_per_block,
                                   int64_t registers_per_thread, int64_t proxy_static_shared_bytes) {
  SPMMC_CHECK(sm.sm_count > 0 && sm.registers_per_sm > 0 && sm.max_threads_per_sm > 0 && sm.max_blocks_per_sm > 0 &&
                  sm.shared_memory_per_sm > 0 && sm.warp_size > 0 && sm.register_allocation_unit > 0,
              "SM resources must be known");
  SPMMC_CHECK(thread_blocks > 0 && threads_per_block > 0 && registers_per_thread > 0, "a launchable kernel");
  OccupancyAlignment out;
  // Registers are allocated per warp, rounded up to the allocation unit.
  const int64_t warps = (threads_per_block + sm.warp_size - 1) / sm.warp_size;
  const int64_t unit = sm.register_allocation_unit;
  const int64_t per_warp = (registers_per_thread * sm.warp_size + unit - 1) / unit * unit;
  const int64_t by_registers = sm.registers_per_sm / per_warp / warps;
  const int64_t by_grid = (thread_blocks + sm.sm_count - 1) / sm.sm_count;
  const int64_t by_threads = sm.max_threads_per_sm / threads_per_block;
  const int64_t hardware = std::min(by_threads, sm.max_blocks_per_sm);
  out.real_blocks_per_sm = std::max<int64_t>(1, std::min({by_grid, by_registers, hardware}));
  if (out.real_blocks_per_sm >= hardware) return out;  // the proxy cannot exceed it either
  const int64_t bytes = sm.shared_memory_per_sm / out.real_blocks_per_sm - sm.reserved_shared_memory_per_block -
                        proxy_static_shared_bytes;
  const int64_t limit = sm.max_shared_memory_per_block - proxy_static_shared_bytes;
  out.dynamic_shared_bytes = std::clamp<int64_t>(bytes, 0, std::max<int64_t>(0, limit));
  return out;
}

}  // namespace spmmc
