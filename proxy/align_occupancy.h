// Occupancy alignment (LO-SpMM §5.2, Eq. 5-6): the proxy uses fewer registers than the real
// kernel, so it would fit more blocks per SM; dynamic shared memory, allocated at launch and
// never touched, brings its active blocks per SM down to the real kernel's.
#pragma once

#include <cstdint>

namespace spmmc {

// What one SM offers (from the driver's device attributes, or a target description).
struct SmResources {
  int64_t sm_count = 0;
  int64_t registers_per_sm = 0;
  int64_t register_allocation_unit = 256;   // registers per warp are allocated in these units
  int64_t warp_size = 32;
  int64_t max_threads_per_sm = 0;
  int64_t max_blocks_per_sm = 0;
  int64_t shared_memory_per_sm = 0;          // maxSmemUsage of Eq. 6
  int64_t reserved_shared_memory_per_block = 0;  // the "Constant" of Eq. 6, queried from the driver
  int64_t max_shared_memory_per_block = 0;   // opt-in limit for one block (dynamic + static)
};

struct OccupancyAlignment {
  int64_t real_blocks_per_sm = 0;     // NUM_ATB of the real kernel (Eq. 5)
  int64_t dynamic_shared_bytes = 0;   // for each proxy block (Eq. 6), 0 when none is needed
};

// Eq. 5: NUM_ATB = min(ceil(thread_blocks / SMs), blocks the register file holds at the real
// kernel's `registers_per_thread`), further bounded by the SM's thread and block limits (which
// the paper's form leaves implicit). Eq. 6: dynamic shared memory = shared_memory_per_sm /
// NUM_ATB - reserved per block - the proxy's static shared memory, clamped to [0, the
// per-block limit]; 0 when NUM_ATB is already the SM's block or thread limit (no padding
// could lower the proxy's occupancy below what the hardware allows anyway, and none is
// needed to reach it).
OccupancyAlignment align_occupancy(const SmResources& sm, int64_t thread_blocks, int64_t threads_per_block,
                                   int64_t registers_per_thread, int64_t proxy_static_shared_bytes);

}  // namespace spmmc
