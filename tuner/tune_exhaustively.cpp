#include "tuner/tune_exhaustively.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/common/diagnostics.h"
#include "tuner/check_real_kernels.h"
#include "tuner/time_generic_kernel.h"
#include "tuner/time_sgemm.h"
#include "tuner/measurement.h"
#include "tuner/tune_with_proxies.h"

namespace spmmc {
namespace {

using Clock = std::chrono::steady_clock;

// The candidate's NVRTC source, split into kernels as spmmc compile splits it
// (options.fmas_per_kernel); `launches` receives its kernels in launch order.
CompileJob real_kernel_job(const Csr& a, const Plan& plan, const TileCandidate& tile, const std::string& arch,
                           int64_t fmas_per_kernel, std::vector<RealKernel::Launch>& launches) {
  EmitOptions emit;
  emit.name = fmt::format("candidate_m{}_n{}_v{}_b{}", tile.m1, tile.n1, tile.cols_per_thread, tile.min_blocks_per_sm);
  emit.arch = arch;
  emit.nvrtc_form = true;
  emit.fmas_per_kernel = fmas_per_kernel;
  EmittedKernel k = emit_unrolled_kernel(a, plan.for_m1(tile.m1).tiling, tile, emit);
  launches = unrolled_launches(k);
  return {{emit.name + ".cu", std::move(k.nvrtc_cu)}, {arch, k.nvrtc_options}};
}

}  // namespace

TuningResult tune_exhaustively(const Csr& a, const Plan& plan, const std::vector<const PlannedCandidate*>& candidates,
                               const GpuContext& gpu, const TuningOptions& options) {
  // The proxies first; SGEMM is timed once, after the real kernels.
  TuningOptions proxy_options = options;
  proxy_options.time_sgemm = false;
  proxy_options.generic_tiling = nullptr;
  proxy_options.real_finalists = 0;  // every real kernel is timed below
  TuningResult result = tune_with_proxies(a, plan, candidates, gpu, proxy_options);
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const std::string arch = gpu.device().arch();

  // Compile in batches, so the budget is checked between them.
  std::vector<CompileOutcome> compiled(candidates.size());
  std::vector<std::vector<RealKernel::Launch>> launches(candidates.size());
  std::vector<char> attempted(candidates.size(), 0);
  double emit_seconds = 0.0;
  // One job per possible worker; the pool itself lowers the parallelism when memory is short.
  const size_t batch = std::max<size_t>(1, options.pool.max_workers ? options.pool.max_workers : std::thread::hardware_concurrency());
  for (size_t first = 0; first < candidates.size();) {
    if (elapsed() > options.budget_seconds) break;
    const auto emit_start = Clock::now();
    std::vector<CompileJob> jobs;
    jobs.push_back(real_kernel_job(a, plan, candidates[first]->tile, arch, options.fmas_per_kernel, launches[first]));
    const size_t last = std::min(candidates.size(), first + batch);
    for (size_t i = first + 1; i < last; ++i)
      jobs.push_back(real_kernel_job(a, plan, candidates[i]->tile, arch, options.fmas_per_kernel, launches[i]));
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

  // Check and time, serially (check_real_kernels.h).
  const auto time_start = Clock::now();
  std::vector<RealKernel> kernels;
  std::vector<size_t> index;  // kernels[j] is candidates[index[j]]
  for (size_t i = 0; i < candidates.size(); ++i) {
    Measurement& m = result.candidates[i].real;
    if (!attempted[i]) {
      m.outcome = Outcome::kNotRun;
      m.detail = fmt::format("the --tune-budget of {} s was spent before it was compiled", options.budget_seconds);
    } else if (!compiled[i].ok()) {
      m.outcome = Outcome::kCompileFailed;
      m.detail = compiled[i].error;
    } else {
      kernels.push_back({candidates[i]->tile, &*compiled[i].cubin, std::move(launches[i]), std::nullopt, nullptr});
      index.push_back(i);
    }
  }
  // B and the float64 product once, for the candidates and the generic kernel.
  const ReferenceProduct reference = reference_product(a, options);
  const std::vector<Measurement> measured = check_and_time_real_kernels(a, kernels, gpu, options, &reference);
  for (size_t j = 0; j < measured.size(); ++j) result.candidates[index[j]].real = measured[j];
  result.seconds.emplace_back("real_check_and_time", std::chrono::duration<double>(Clock::now() - time_start).count());
  result.chosen = fastest_candidate(result.candidates, true);

  // The generic family's kernel, checked and timed like the candidates.
  if (options.generic_tiling) {
    if (options.progress) options.progress({"timing the generic kernel", 0, 1});
    const auto generic_start = Clock::now();
    result.generic = time_generic_kernel(a, *options.generic_tiling, gpu, options, &reference);
    result.seconds.emplace_back("generic", std::chrono::duration<double>(Clock::now() - generic_start).count());
  }

  // The dense baseline, in this process (the real kernels ran in workers).
  if (options.time_sgemm) {
    if (options.progress) options.progress({"timing cuBLAS SGEMM", 0, 1});
    const auto sgemm_start = Clock::now();
    result.sgemm = time_sgemm(gpu, a.rows, a.cols, options.n, options.timing);
    result.seconds.emplace_back("sgemm", std::chrono::duration<double>(Clock::now() - sgemm_start).count());
  }
  return result;
}

std::vector<Measurement> measure_real_candidates(const Csr& a, const Plan& plan, const std::vector<TileCandidate>& tiles,
                                                 const GpuContext& gpu, const TuningOptions& options,
                                                 const ReferenceProduct* reference) {
  std::vector<std::vector<RealKernel::Launch>> launches(tiles.size());
  std::vector<CompileJob> jobs;
  for (size_t i = 0; i < tiles.size(); ++i)
    jobs.push_back(real_kernel_job(a, plan, tiles[i], gpu.device().arch(), options.fmas_per_kernel, launches[i]));
  const std::vector<CompileOutcome> compiled = compile_in_parallel(jobs, options.pool, options.cache, {});
  std::vector<Measurement> out(tiles.size());
  std::vector<RealKernel> kernels;
  std::vector<size_t> index;
  for (size_t i = 0; i < tiles.size(); ++i) {
    if (!compiled[i].ok()) {
      out[i].outcome = Outcome::kCompileFailed;
      out[i].detail = compiled[i].error;
      continue;
    }
    kernels.push_back({tiles[i], &*compiled[i].cubin, std::move(launches[i]), std::nullopt, nullptr});
    index.push_back(i);
  }
  const std::vector<Measurement> measured = check_and_time_real_kernels(a, kernels, gpu, options, reference);
  for (size_t j = 0; j < measured.size(); ++j) out[index[j]] = measured[j];
  return out;
}

}  // namespace spmmc
