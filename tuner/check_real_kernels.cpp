#include "tuner/check_real_kernels.h"

#include <fmt/format.h>

#include "runtime/reference_spmm.h"
#include "runtime/time_kernel.h"
#include "tuner/measure_worker.h"
#include "tuner/measurement.h"

namespace spmmc {
namespace {

// Largest relative Frobenius error of a correct kernel against the float64 product (FP32 sums in
// a fixed order stay near 1e-7 on every matrix tested; see docs/benchmarks.md).
constexpr double kMaxRelativeError = 1e-4;

// Most local memory per thread a candidate may use. The goal is none (docs/design/kernel.md), but
// under the 64-register budget ptxas's load hoisting spills 8-48 bytes in most kernels measured
// (a few stack slots, hit in L1); a candidate with more spills its accumulators or its prefetch.
constexpr int kMaxLocalBytesPerThread = 64;

}  // namespace

KernelCheckInputs::KernelCheckInputs(const GpuContext& gpu, const std::vector<float>& b_host, std::vector<double> want_host,
                                     int64_t n_)
    : b(gpu, b_host.size() * sizeof(float)), c(gpu, want_host.size() * sizeof(float)), want(std::move(want_host)), n(n_) {
  b.upload(b_host.data(), b_host.size() * sizeof(float));
}

Measurement check_and_time_real_kernel(const RealKernel& k, const GpuContext& gpu, const KernelCheckInputs& inputs,
                                       const TimingOptions& timing) {
  Measurement m;
  m.compile_seconds = k.cubin->seconds;
  Module module(gpu, k.cubin->image, k.symbol);
  const Kernel kernel = module.kernel(k.symbol);
  const KernelAttributes attributes = kernel.attributes();
  m.registers_per_thread = attributes.registers_per_thread;
  m.local_bytes_per_thread = attributes.local_bytes_per_thread;
  if (attributes.max_threads_per_block < k.tile.threads_per_block()) {
    m.outcome = Outcome::kInvalid;
    m.detail = fmt::format("the kernel can launch at most {} threads per block ({} registers per thread)",
                           attributes.max_threads_per_block, attributes.registers_per_thread);
    return m;
  }
  if (attributes.local_bytes_per_thread > kMaxLocalBytesPerThread) {
    m.outcome = Outcome::kInvalid;
    m.detail = fmt::format("registers spill: {} bytes of local memory per thread at {} registers (at most {} are accepted)",
                           attributes.local_bytes_per_thread, attributes.registers_per_thread, kMaxLocalBytesPerThread);
    return m;
  }
  m.blocks_per_sm = kernel.active_blocks_per_sm(k.tile.threads_per_block(), 0);
  const LaunchShape shape = tile_launch_shape(k.a_tiles, inputs.n, k.tile, int64_t{gpu.device().sm_count} * m.blocks_per_sm);
  uint64_t b_ptr = inputs.b.address(), c_ptr = inputs.c.address();
  int64_t n = inputs.n;
  void* args[] = {&b_ptr, &c_ptr, &n};
  inputs.c.fill_zero();
  kernel.launch(shape, args);
  gpu.synchronize();
  std::vector<float> got(inputs.want.size());
  inputs.c.download(got.data(), got.size() * sizeof(float));
  m.max_relative_error = relative_frobenius_error(got.data(), inputs.want.data(), static_cast<int64_t>(got.size()));
  if (!(m.max_relative_error <= kMaxRelativeError)) {
    m.outcome = Outcome::kWrongResult;
    m.detail = fmt::format("relative error {:.3g} against the float64 reference", m.max_relative_error);
    return m;
  }
  m.time = time_kernel(gpu, kernel, shape, args, timing);
  m.outcome = Outcome::kOk;
  return m;
}

std::vector<Measurement> check_and_time_real_kernels(const Csr& a, const std::vector<RealKernel>& kernels,
                                                     const GpuContext& gpu, const TuningOptions& options) {
  if (kernels.empty()) return {};
  const std::vector<float> b_host = random_floats(static_cast<size_t>(a.cols) * static_cast<size_t>(options.n), options.seed);
  std::vector<double> want = reference_spmm(a, b_host, options.n);
  if (!options.worker.empty()) return check_and_time_in_worker(b_host, want, kernels, options);

  std::vector<Measurement> out(kernels.size());
  const KernelCheckInputs inputs(gpu, b_host, std::move(want), options.n);
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (options.progress) options.progress({"timing kernels", i, kernels.size()});
    try {
      out[i] = check_and_time_real_kernel(kernels[i], gpu, inputs, options.timing);
    } catch (const DriverError& e) {
      out[i].compile_seconds = kernels[i].cubin->seconds;
      out[i].outcome = Outcome::kLaunchFailed;
      out[i].detail = e.what();
      if (!is_sticky_error(e.code())) continue;
      for (size_t j = i + 1; j < kernels.size(); ++j) {
        out[j].outcome = Outcome::kNotRun;
        out[j].compile_seconds = kernels[j].cubin->seconds;
        out[j].detail = fmt::format("not run: the kernel of candidate {} faulted before it ({}), which leaves the "
                                    "process unable to use the GPU",
                                    kernels[i].tile.label(), e.what());
      }
      break;
    }
  }
  return out;
}

}  // namespace spmmc
