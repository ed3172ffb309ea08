// Helpers both tuners use to run kernels: the SM resources of the device, the launch shape of a
// real candidate, deterministic inputs and picking the fastest result.
#pragma once

#include <cstdint>
#include <vector>

#include "proxy/align_occupancy.h"
#include "runtime/cuda_driver.h"
#include "tuner/tuning.h"

namespace spmmc {

// Eq. 5-6 inputs from the driver's device attributes.
SmResources sm_resources(const DeviceInfo& device);

// The grid the emitted kernels use: x = `blocks_x` A-tiles, y = B-tiles of n1 columns, at most
// 65535 (the kernels loop over the rest); n1 threads per block.
LaunchShape tile_launch_shape(int64_t blocks_x, int64_t n, int32_t n1);

// `count` floats uniform in [-1, 1) from a fixed generator seeded with `seed`.
std::vector<float> random_floats(size_t count, uint64_t seed);

// Index of the Ok candidate with the smallest median time of `real` (or of `proxy` when
// `use_real` is false); -1 when none is Ok. Ties go to the earlier candidate.
int32_t fastest_candidate(const std::vector<CandidateResult>& results, bool use_real);

}  // namespace spmmc
