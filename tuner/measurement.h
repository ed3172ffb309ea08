// Helpers both tuners use to run kernels: the SM resources of the device, the launch shape of a
// real candidate, deterministic inputs and picking the fastest result.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/planning/tile_space.h"
#include "proxy/align_occupancy.h"
#include "runtime/cuda_driver.h"
#include "tuner/tuning.h"

namespace spmmc {

// Eq. 5-6 inputs from the driver's device attributes.
SmResources sm_resources(const DeviceInfo& device);

// The grid the emitted kernels use (codegen/templates/kernel.cu, spmmc_grid_y): x = `blocks_x`
// A-tiles; y = blocks_per_a_tile over the B-tiles of n1 columns for one wave of
// `resident_blocks` (the blocks of the kernel the whole GPU holds at once: SMs x active blocks
// per SM); N1 / V threads per block.
LaunchShape tile_launch_shape(int64_t blocks_x, int64_t n, const TileCandidate& tile, int64_t resident_blocks);

// `count` floats uniform in [-1, 1) from a fixed generator seeded with `seed`.
std::vector<float> random_floats(size_t count, uint64_t seed);

// Index of the Ok candidate with the smallest median time of `real` (or, when `use_real` is false,
// of `proxy`, and of `real` for a candidate whose proxy was not run: --tune proxy timed its real
// kernel instead); -1 when none is Ok. Ties go to the earlier candidate.
int32_t fastest_candidate(const std::vector<CandidateResult>& results, bool use_real);

}  // namespace spmmc
