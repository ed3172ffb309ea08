#include "tuner/tune_exhaustively.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "codegen/emit_unrolled_kernel.h"
#include "runtime/reference_spmm.h"
#include "tuner/measurement.h"
#include "tuner/tune_with_proxies.h"

namespace spmmc {
namespace {

using Clock = std::chrono::steady_clock;

// Above this relative Frobenius error against float64 a real kernel is wrong (float32 FMAs in
// a fixed order stay near 1e-7 on every matrix tested; see docs/benchmarks.md).
constexpr double kMaxRelativeError = 1e-4;

CompileJob real_kernel_job(const Csr& a, const Plan& plan, const TileCandidate& tile, const std::string& arch,
                           std::string& symbol) {
  EmitOptions emit;
  emit.name = fmt::format("candidate_m{}_n{}", tile.m1, tile.n1);
  emit.arch = arch;
  emit.nvrtc_form = true;
  EmittedKernel k = emit_unrolled_kernel(a, plan.for_m1(tile.m1).tiling, tile, emit);
  symbol = k.kernel_symbol;
  return {{emit.name + ".cu", std::move(k.nvrtc_cu)}, {arch, {}}};
}

}  // namespace

TuningResult tune_exhaustively(const Csr& a, const Plan& plan, const std::vector<const PlannedCandidate*>& candidates,
                               const GpuContext& gpu, const TuningOptions& options) {
  TuningResult result = tune_with_proxies(a, plan, candidates, gpu, options);
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const std::string arch = gpu.device().arch();

  // Compile in batches, so the budget is checked between them.
  std::vector<CompileOutcome> compiled(candidates.size());
  std::vector<std::string> symbols(candidates.size());
  std::vector<char> attempted(candidates.size(), 0);
  double emit_seconds = 0.0;
  // One job per possible worker; the pool itself lowers the parallelism when memory is short.
  const size_t batch = std::max<size_t>(1, options.pool.max_workers ? options.pool.max_workers : std::thread::hardware_concurrency());
  for (size_t first = 0; first < candidates.size();) {
    if (elapsed() > options.budget_seconds) break;
    const auto emit_start = Clock::now();
    std::vector<CompileJob> jobs;
    jobs.push_back(real_kernel_job(a, plan, candidates[first]->tile, arch, symbols[first]));
    const size_t last = std::min(candidates.size(), first + batch);
    for (size_t i = first + 1; i < last; ++i) jobs.push_back(real_kernel_job(a, plan, candidates[i]->tile, arch, symbols[i]));
    emit_seconds += std::chrono::duration<double>(Clock::now() - emit_start).count();
    auto outcomes = compile_in_parallel(jobs, options.pool, options.cache, {});
    for (size_t i = first; i < last; ++i) {
      compiled[i] = std::move(outcomes[i - first]);
      attempted[i] = 1;
    }
    first = last;
    if (options.progress) options.progress({"compiling kernels", first, candidates.size()});
  }
  result.seconds.emplace_back("real_emit", emit_seconds);
  result.seconds.emplace_back("real_compile", elapsed() - emit_seconds);

  // Check and time, serially.
  const auto time_start = Clock::now();
  const std::vector<float> b_host = random_floats(static_cast<size_t>(a.cols) * static_cast<size_t>(options.n), options.seed);
  const std::vector<double> want = reference_spmm(a, b_host, options.n);
  DeviceBuffer b(gpu, b_host.size() * sizeof(float));
  b.upload(b_host.data(), b_host.size() * sizeof(float));
  std::vector<float> got(static_cast<size_t>(a.rows) * static_cast<size_t>(options.n));
  DeviceBuffer c(gpu, got.size() * sizeof(float));
  for (size_t i = 0; i < candidates.size(); ++i) {
    Measurement& m = result.candidates[i].real;
    const TileCandidate& tile = candidates[i]->tile;
    if (options.progress) options.progress({"timing kernels", i, candidates.size()});
    if (!attempted[i]) {
      m.outcome = Outcome::kNotRun;
      m.detail = fmt::format("the --tune-budget of {} s was spent before it was compiled", options.budget_seconds);
      continue;
    }
    if (!compiled[i].ok()) {
      m.outcome = Outcome::kCompileFailed;
      m.detail = compiled[i].error;
      continue;
    }
    m.compile_seconds = compiled[i].cubin->seconds;
    try {
      Module module(gpu, compiled[i].cubin->image, symbols[i]);
      const Kernel kernel = module.kernel(symbols[i]);
      const KernelAttributes attributes = kernel.attributes();
      m.registers_per_thread = attributes.registers_per_thread;
      m.local_bytes_per_thread = attributes.local_bytes_per_thread;
      if (attributes.max_threads_per_block < tile.threads_per_block()) {
        m.outcome = Outcome::kInvalid;
        m.detail = fmt::format("the kernel can launch at most {} threads per block ({} registers per thread)",
                               attributes.max_threads_per_block, attributes.registers_per_thread);
        continue;
      }
      // No local memory, ever (docs/design/kernel.md): a candidate whose registers spill is slow
      // by construction and is not what --tune should pick.
      if (attributes.local_bytes_per_thread > 0) {
        m.outcome = Outcome::kInvalid;
        m.detail = fmt::format("registers spill: {} bytes of local memory per thread at {} registers",
                               attributes.local_bytes_per_thread, attributes.registers_per_thread);
        continue;
      }
      m.blocks_per_sm = kernel.active_blocks_per_sm(tile.threads_per_block(), 0);
      const LaunchShape shape = tile_launch_shape(plan.for_m1(tile.m1).tiling.num_blocks(), options.n, tile,
                                                  int64_t{gpu.device().sm_count} * m.blocks_per_sm);
      uint64_t b_ptr = b.address(), c_ptr = c.address();
      int64_t n = options.n;
      void* args[] = {&b_ptr, &c_ptr, &n};
      c.fill_zero();
      kernel.launch(shape, args);
      gpu.synchronize();
      c.download(got.data(), got.size() * sizeof(float));
      m.max_relative_error = relative_frobenius_error(got.data(), want.data(), static_cast<int64_t>(got.size()));
      if (!(m.max_relative_error <= kMaxRelativeError)) {
        m.outcome = Outcome::kWrongResult;
        m.detail = fmt::format("relative error {:.3g} against the float64 reference", m.max_relative_error);
        continue;
      }
      m.time = time_kernel(gpu, kernel, shape, args, options.timing);
      m.outcome = Outcome::kOk;
    } catch (const DriverError& e) {
      m.outcome = Outcome::kLaunchFailed;
      m.detail = e.what();
    }
  }
  result.seconds.emplace_back("real_check_and_time", std::chrono::duration<double>(Clock::now() - time_start).count());
  result.chosen = fastest_candidate(result.candidates, true);
  return result;
}

}  // namespace spmmc
