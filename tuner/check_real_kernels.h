// The second half of --tune exhaustive: check every compiled real kernel against the float64
// product and time it, one after the other, in this process or in a worker process
// (measure_worker.h) so that a kernel that faults costs only its candidate.
#pragma once

#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/tile_space.h"
#include "runtime/cuda_driver.h"
#include "runtime/nvrtc_compile.h"
#include "tuner/tuning.h"

namespace spmmc {

// One compiled candidate kernel: its tile, the A-tiles of its tiling (grid x), the cubin and the
// kernel's symbol in it (signature: const float* B, float* C, int64_t n).
struct RealKernel {
  TileCandidate tile;
  int64_t a_tiles = 0;
  const Cubin* cubin = nullptr;
  std::string symbol;
};

// Checks each kernel against the float64 product A·B for a random B (options.seed, options.n
// columns) and times the correct ones (options.timing), in order; returns one Measurement per
// kernel: Ok, Invalid (more threads than its registers allow, or registers that spill),
// WrongResult, or LaunchFailed with the driver's message.
// With options.worker set, the kernels run in a worker process (measure_worker.h): a kernel that
// faults is LaunchFailed and the next one runs in a new worker. Without it they run on `gpu`, and
// a kernel that faults (a sticky error, is_sticky_error) leaves this process unable to use the
// GPU: it is LaunchFailed, every later kernel NotRun naming it.
std::vector<Measurement> check_and_time_real_kernels(const Csr& a, const std::vector<RealKernel>& kernels,
                                                     const GpuContext& gpu, const TuningOptions& options);

// What every kernel of one A is checked and timed with: B on the device, C, the float64 product.
struct KernelCheckInputs {
  KernelCheckInputs(const GpuContext& gpu, const std::vector<float>& b_host, std::vector<double> want_host, int64_t n);
  DeviceBuffer b, c;
  std::vector<double> want;
  int64_t n;
};

// Checks and times one kernel (the step both ways above share); a DriverError escapes.
Measurement check_and_time_real_kernel(const RealKernel& k, const GpuContext& gpu, const KernelCheckInputs& inputs,
                                       const TimingOptions& timing);

}  // namespace spmmc
