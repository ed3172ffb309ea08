// The second half of --tune exhaustive: check every compiled real candidate (its chain of
// kernels) against the float64 product and time it, one after the other, in this process or in a
// worker process (measure_worker.h) so that a kernel that faults costs only its candidate.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/arrays_on_host.h"
#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"
#include "compiler/planning/tile_space.h"
#include "runtime/cuda_driver.h"
#include "runtime/nvrtc_compile.h"
#include "tuner/tuning.h"

namespace spmmc {

struct EmittedKernel;  // codegen/emit_unrolled_kernel.h

// One compiled candidate: its tile, the cubin and the kernels in it that together compute C, in
// launch order (EmittedKernel::kernel_symbols and kernel_tiles; all with the signature
// const float* B, float* C, int64_t n). Kernel j runs with grid (its A-tiles, grid_y) where
// grid_y comes from the A-tiles of all kernels (tile_launch_shape), as in the emitted entry point
// (codegen/templates/kernel.cu); every kernel after the first overlaps the one before it
// (Kernel::launch with overlap_previous).
struct RealKernel {
  struct Launch {
    std::string symbol;
    int64_t a_tiles = 0;  // grid x
  };
  TileCandidate tile;
  const Cubin* cubin = nullptr;
  std::vector<Launch> launches;  // at least one
  // A launch of its own instead of the tile's: the generic family's kernel (one, with the grid and
  // block of codegen/generic_launch.h; `tile` and the launch's a_tiles are not used).
  std::optional<LaunchShape> shape;
  // Device arrays of the cubin to fill before the first launch (the generic and balanced families'
  // NVRTC form declares A's arrays without values: EmittedKernel::nvrtc_arrays); none elsewhere.
  std::shared_ptr<const std::vector<ArrayValues>> arrays;

  int64_t a_tiles() const;  // over all launches: the A-tiles of the tiling, zero-row tiles included
  // The candidate's kernels for messages: "S" for one, "S0 .. S2 (3 kernels)" for several.
  std::string describe() const;
};

// A kernel of a family with a launch of its own (generic, balanced, tensor-core): `symbol` of `cubin`,
// launched once with `shape`. `tile` says for messages and the worker what a block computes (rows,
// columns, columns per thread); the minimum of blocks per SM is 1.
// `arrays`: the file's EmittedKernel::nvrtc_arrays (RealKernel::arrays).
RealKernel family_kernel(const Cubin& cubin, std::string symbol, const LaunchShape& shape, TileCandidate tile = {},
                         std::shared_ptr<const std::vector<ArrayValues>> arrays = nullptr);

// The launches of an emitted file of the unrolled family, in launch order: each of its kernels
// (EmittedKernel::kernel_symbols) over its A-tiles (kernel_tiles).
std::vector<RealKernel::Launch> unrolled_launches(const EmittedKernel& k);

// Checks each candidate against the float64 product A·B for a random B (options.seed, options.n
// columns) and times the correct ones (options.timing), in order; returns one Measurement per
// candidate: Ok, Invalid (a kernel with more threads than its registers allow, or registers
// that spill; the worst kernel's registers and local memory are reported), WrongResult, or
// LaunchFailed with the driver's message. One check and one timing sample run the whole chain
// of the candidate's kernels.
// With options.worker set, the kernels run in a worker process (measure_worker.h): a kernel that
// faults is LaunchFailed and the next one runs in a new worker. Without it they run on `gpu`, and
// a kernel that faults (a sticky error, is_sticky_error) leaves this process unable to use the
// GPU: it is LaunchFailed, every later kernel NotRun naming it.
// B and the float64 product A·B that real kernels are checked against: B random (options.seed,
// options.n columns). A tuning that checks kernels in several calls computes it once and passes it.
struct ReferenceProduct {
  std::vector<float> b;
  std::vector<double> want;
};
ReferenceProduct reference_product(const Csr& a, const TuningOptions& options);

// `reference`: reference_product(a, options) computed before, or none (computed here).
std::vector<Measurement> check_and_time_real_kernels(const Csr& a, const std::vector<RealKernel>& kernels,
                                                     const GpuContext& gpu, const TuningOptions& options,
                                                     const ReferenceProduct* reference = nullptr);

// What every kernel of one A is checked and timed with: B on the device, C, the float64 product.
struct KernelCheckInputs {
  // float32 B and C, a kernel judged by its relative error against `want_host`.
  KernelCheckInputs(const GpuContext& gpu, const std::vector<float>& b_host, std::vector<double> want_host, int64_t n);
  // A kernel of fp16, bf16 or tf32, each element of C judged against its bound (error_bounds,
  // runtime/reference_spmm.h): fp16 and bf16 B and C as the dtype's 16-bit elements (`b_host` holds
  // values of the dtype: rounded_b); tf32 B and C float (`b_host` as drawn: the kernel rounds it).
  KernelCheckInputs(const GpuContext& gpu, DType dtype, const std::vector<float>& b_host, std::vector<double> want_host,
                    std::vector<double> bound, int64_t n);
  DeviceBuffer b, c;
  std::vector<double> want;
  int64_t n;
  DType dtype = DType::kFp32;
  std::vector<double> bound;  // fp16, bf16, tf32: per element of C
};

// Records in `m` what is known of `k` without running it: its compile time and its kernels.
void note_candidate(Measurement& m, const RealKernel& k);

// Checks and times one candidate (the step both ways above share); a DriverError escapes.
Measurement check_and_time_real_kernel(const RealKernel& k, const GpuContext& gpu, const KernelCheckInputs& inputs,
                                       const TimingOptions& timing);

}  // namespace spmmc
