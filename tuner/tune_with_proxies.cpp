#include "tuner/tune_with_proxies.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "codegen/size_guard.h"
#include "compiler/common/diagnostics.h"
#include "proxy/align_occupancy.h"
#include "proxy/build_proxy.h"
#include "tuner/check_real_kernels.h"
#include "tuner/measurement.h"
#include "tuner/time_generic_kernel.h"
#include "tuner/time_sgemm.h"
#include "tuner/tune_exhaustively.h"

namespace spmmc {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point& start) {
  const auto now = Clock::now();
  const double s = std::chrono::duration<double>(now - start).count();
  start = now;
  return s;
}

struct ProxyGroup {
  int32_t m1 = 0;
  int32_t cols_per_thread = 1;
  int32_t min_blocks = 1;
  std::vector<size_t> members;  // indices into the candidates
  ProxyKernel proxy;
  double code_share = 0.0;      // proxy_code_share(proxy)
  bool real_instead = false;    // code_share >= kRealInsteadOfProxyShare: its real kernels are timed
};

void report(const TuningOptions& options, const char* stage, size_t done, size_t total) {
  if (options.progress) options.progress({stage, done, total});
}

// Why the real kernel of `tile` is not compiled by a search against the heuristic: its compile would
// cost more than options.max_real_compile_seconds (the size guard's estimate); nullopt where it may be.
std::optional<std::string> beyond_compile_budget(const Csr& a, const Plan& plan, const TileCandidate& tile,
                                                 const TuningOptions& options) {
  if (options.heuristic.index < 0 || options.max_real_compile_seconds <= 0) return std::nullopt;
  const double seconds = estimate_unrolled_size(a, plan.for_m1(tile.m1).after, tile, options.fmas_per_kernel).nvcc_seconds;
  if (seconds <= options.max_real_compile_seconds) return std::nullopt;
  return fmt::format("not compiled: its compile would take about {:.0f} s (the size guard's estimate), above the {:.0f} s "
                     "a search spends on one real kernel",
                     seconds, options.max_real_compile_seconds);
}

// cuBLAS SGEMM for the dense layer (with options.time_sgemm), once, into result.sgemm.
void time_dense_baseline(const Csr& a, const GpuContext& gpu, const TuningOptions& options, TuningResult& result,
                         Clock::time_point& clock) {
  if (!options.time_sgemm) return;
  report(options, "timing cuBLAS SGEMM", 0, 1);
  result.sgemm = time_sgemm(gpu, a.rows, a.cols, options.n, options.timing);
  result.seconds.emplace_back("sgemm", seconds_since(clock));
}

}  // namespace

int32_t launch_bound_class(int32_t threads) { return threads <= 256 ? 256 : threads <= 512 ? 512 : 1024; }

TuningResult tune_with_proxies(const Csr& a, const Plan& plan, const std::vector<const PlannedCandidate*>& candidates,
                               const GpuContext& gpu, const TuningOptions& options) {
  SPMMC_CHECK(options.n > 0, "tuning needs n");
  TuningResult result;
  auto clock = Clock::now();
  const SmResources sm = sm_resources(gpu.device());

  // Where the heuristic's own real kernel is beyond the compile budget, no search can show a kernel
  // measured faster than it (decide_against_heuristic keeps an unmeasured heuristic's pick): the
  // proxies are skipped, and only the dense baseline is timed for the report.
  if (options.heuristic.index >= 0 && !options.heuristic.generic) {
    const auto h = static_cast<size_t>(options.heuristic.index);
    if (auto why = beyond_compile_budget(a, plan, candidates.at(h)->tile, options)) {
      for (const PlannedCandidate* c : candidates) {
        CandidateResult r;
        r.tile = c->tile;
        r.proxy.detail = "not run: the heuristic's real kernel is beyond the compile budget, so nothing can replace it";
        result.candidates.push_back(r);
      }
      result.candidates[h].real.detail = *why;
      result.seconds.emplace_back("skipped", seconds_since(clock));
      time_dense_baseline(a, gpu, options, result, clock);
      return result;
    }
  }

  // Kernel function reduction: one proxy per (M1, V, blocks per SM, launch-bound class). A candidate
  // whose real kernel is beyond the compile budget is not proxied: its real kernel would never be
  // measured against the heuristic's, so it could not be emitted (a proxy of a large layer's narrow
  // M1 took 105 s to compile for nothing on an H100, docs/benchmarks.md, issue 25). With the
  // heuristic's check above, this is the search's only budget check: every real kernel compiled below
  // (groups timed for real, finalists, the heuristic's and the pick's) belongs to a candidate that passed it.
  std::map<std::tuple<int32_t, int32_t, int32_t, int32_t>, ProxyGroup> groups;
  for (size_t i = 0; i < candidates.size(); ++i) {
    CandidateResult r;
    r.tile = candidates[i]->tile;
    result.candidates.push_back(r);
    if (auto why = beyond_compile_budget(a, plan, r.tile, options)) {
      result.candidates[i].proxy.detail = "not run: its real kernel is beyond the compile budget, so it cannot replace "
                                          "the heuristic's";
      result.candidates[i].real.detail = *why;
      continue;
    }
    const TileCandidate& t = r.tile;
    ProxyGroup& g = groups[{t.m1, t.cols_per_thread, t.min_blocks_per_sm, launch_bound_class(t.threads_per_block())}];
    g.m1 = t.m1;
    g.cols_per_thread = t.cols_per_thread;
    g.min_blocks = t.min_blocks_per_sm;
    g.members.push_back(i);
  }

  // Thread-block function reduction bound: 3 x max NUM_ATB over the group's candidates. Real
  // register counts are unknown before compiling, so NUM_ATB is bounded from above with the
  // planner's (optimistic) register estimate.
  for (auto& [key, g] : groups) {
    const M1Plan& m1_plan = plan.for_m1(g.m1);
    const int64_t functions = m1_plan.tiling.num_blocks();
    int64_t max_blocks = 1;
    for (size_t i : g.members) {
      const TileCandidate& t = result.candidates[i].tile;
      // Resident blocks before compiling: bounded by threads alone (registers are not known yet).
      const int64_t resident = int64_t{sm.sm_count} * std::max<int64_t>(1, sm.max_threads_per_sm / t.threads_per_block());
      const LaunchShape shape = tile_launch_shape(functions, options.n, t, resident);
      const int64_t registers = estimate_registers_per_thread(t, ConstraintSettings{});
      max_blocks = std::max(max_blocks, align_occupancy(sm, int64_t{shape.grid_x} * shape.grid_y, t.threads_per_block(),
                                                        std::max<int64_t>(1, registers), 0).real_blocks_per_sm);
    }
    // Launch bounds: the widest block the proxy is launched with and the group's blocks per SM,
    // so its register budget is the tightest real kernel's of the group (the class only groups
    // the thread counts).
    int32_t widest = 32;
    for (size_t i : g.members) widest = std::max(widest, result.candidates[i].tile.threads_per_block());
    ProxyRequest request;
    request.max_threads = widest;
    request.min_blocks = g.min_blocks;
    request.cols_per_thread = g.cols_per_thread;
    request.max_clusters = static_cast<int32_t>(std::min<int64_t>(3 * max_blocks, 1 << 20));
    g.proxy = build_proxy(a, m1_plan.tiling, request);
    g.code_share = proxy_code_share(g.proxy);
    g.real_instead = g.code_share >= kRealInsteadOfProxyShare;
  }
  result.seconds.emplace_back("proxy_build", seconds_since(clock));

  // Compile every proxy in parallel.
  // Largest source first: the longest compilations start first, which shortens the pool's span.
  // Groups whose proxy would keep most of the real code are timed by their real kernels instead
  // (below): in one function it would compile slower than the real kernels, split.
  std::vector<ProxyGroup*> order, real_timed;
  for (auto& [key, g] : groups) (g.real_instead ? real_timed : order).push_back(&g);
  std::stable_sort(order.begin(), order.end(),
                   [](const ProxyGroup* x, const ProxyGroup* y) { return x->proxy.cu.size() > y->proxy.cu.size(); });
  std::vector<CompileJob> jobs;
  for (const ProxyGroup* g : order) jobs.push_back({{g->proxy.name, g->proxy.cu}, {gpu.device().arch(), g->proxy.nvrtc_options}});
  const auto outcomes = compile_in_parallel(jobs, options.pool, options.cache, [&](size_t done, size_t total) {
    report(options, "compiling proxies", done, total);
  });
  result.proxies = static_cast<int32_t>(jobs.size());
  result.seconds.emplace_back("proxy_compile", seconds_since(clock));

  // Time every candidate with its proxy: loading and timing are serial on one stream.
  const std::vector<float> b_host = random_floats(static_cast<size_t>(a.cols) * static_cast<size_t>(options.n), options.seed);
  DeviceBuffer b(gpu, b_host.size() * sizeof(float));
  b.upload(b_host.data(), b_host.size() * sizeof(float));
  size_t timed = 0;
  for (size_t gi = 0; gi < order.size(); ++gi) {
    ProxyGroup& g = *order[gi];
    const CompileOutcome& compiled = outcomes[gi];
    auto fail_all = [&](Outcome o, const std::string& why) {
      for (size_t i : g.members) {
        result.candidates[i].proxy_name = g.proxy.name;
        result.candidates[i].proxy.outcome = o;
        result.candidates[i].proxy.detail = why;
      }
      timed += g.members.size();
    };
    if (!compiled.ok()) {
      fail_all(Outcome::kCompileFailed, compiled.error);
      continue;
    }
    try {
      Module module(gpu, compiled.cubin->image, g.proxy.name);
      const Kernel kernel = module.kernel(kProxySymbol);
      const KernelAttributes attributes = kernel.attributes();
      const std::vector<int32_t>& table = g.proxy.clustering.cluster_of;
      DeviceBuffer table_buffer(gpu, table.size() * sizeof(int32_t));
      table_buffer.upload(table.data(), table.size() * sizeof(int32_t));
      const size_t c_floats = table.size() * static_cast<size_t>(g.m1) * static_cast<size_t>(options.n);
      DeviceBuffer c(gpu, c_floats * sizeof(float));
      for (size_t i : g.members) {
        CandidateResult& r = result.candidates[i];
        r.proxy_name = g.proxy.name;
        Measurement& m = r.proxy;
        m.registers_per_thread = attributes.registers_per_thread;
        m.local_bytes_per_thread = attributes.local_bytes_per_thread;
        m.compile_seconds = compiled.cubin->seconds;
        report(options, "timing proxies", timed++, candidates.size());
        const int threads = r.tile.threads_per_block();
        if (options.n % r.tile.cols_per_thread != 0) {
          m.outcome = Outcome::kInvalid;
          m.detail = fmt::format("n = {} is not a multiple of {} columns per thread: the real kernel would take the "
                                 "generic path",
                                 options.n, r.tile.cols_per_thread);
          continue;
        }
        if (attributes.max_threads_per_block < threads) {
          m.outcome = Outcome::kInvalid;
          m.detail = fmt::format("the proxy can launch at most {} threads per block ({} registers per thread)",
                                 attributes.max_threads_per_block, attributes.registers_per_thread);
          continue;
        }
        LaunchShape shape = tile_launch_shape(static_cast<int64_t>(table.size()), options.n, r.tile,
                                              int64_t{sm.sm_count} * kernel.active_blocks_per_sm(threads, 0));
        // Occupancy alignment; the real kernel's registers are taken to be the proxy's (same
        // M1, same launch-bound class, same loop block up to the truncation).
        const OccupancyAlignment aligned =
            align_occupancy(sm, int64_t{shape.grid_x} * shape.grid_y, threads, attributes.registers_per_thread,
                            attributes.static_shared_bytes);
        shape.dynamic_shared_bytes = static_cast<unsigned>(aligned.dynamic_shared_bytes);
        m.dynamic_shared_bytes = aligned.dynamic_shared_bytes;
        m.expected_blocks_per_sm = aligned.real_blocks_per_sm;
        try {
          kernel.allow_dynamic_shared(aligned.dynamic_shared_bytes);
          m.blocks_per_sm = kernel.active_blocks_per_sm(threads, aligned.dynamic_shared_bytes);
          uint64_t b_ptr = b.address(), c_ptr = c.address();
          int64_t n = options.n;
          int n1 = r.tile.n1;
          uint64_t table_ptr = table_buffer.address();
          void* args[] = {&b_ptr, &c_ptr, &n, &n1, &table_ptr};
          m.time = time_kernel(gpu, kernel, shape, args, options.timing);
          m.outcome = Outcome::kOk;
        } catch (const DriverError& e) {
          m.outcome = Outcome::kLaunchFailed;
          m.detail = e.what();
        }
      }
    } catch (const DriverError& e) {
      fail_all(Outcome::kLaunchFailed, e.what());
    }
  }
  report(options, "timing proxies", candidates.size(), candidates.size());
  result.seconds.emplace_back("proxy_time", seconds_since(clock));

  // The candidates of groups whose proxy would not reduce the code: their real kernels, compiled,
  // checked and timed as --tune exhaustive does (a real time where the others have a proxy's).
  // B and the float64 product for every real kernel timed below, computed once when first needed.
  std::optional<ReferenceProduct> reference_storage;
  const auto reference = [&] {
    if (!reference_storage) reference_storage = reference_product(a, options);
    return &*reference_storage;
  };
  std::vector<TileCandidate> real_tiles;
  std::vector<size_t> real_index;
  for (const ProxyGroup* g : real_timed)
    for (size_t i : g->members) {
      CandidateResult& r = result.candidates[i];
      r.proxy.outcome = Outcome::kNotRun;
      r.proxy.detail = fmt::format("timed by its real kernel: the proxy {} would keep {:.0f}% of the real code "
                                   "(docs/design/proxies.md, \"Proxies that would not reduce\")",
                                   g->proxy.name, 100.0 * g->code_share);
      if (options.n % r.tile.cols_per_thread != 0) {
        r.real.outcome = Outcome::kInvalid;
        r.real.detail = fmt::format("n = {} is not a multiple of {} columns per thread: the real kernel would take the "
                                    "generic path",
                                    options.n, r.tile.cols_per_thread);
        continue;
      }
      real_tiles.push_back(r.tile);
      real_index.push_back(i);
    }
  if (!real_tiles.empty()) {
    report(options, "timing real kernels instead of proxies", 0, real_tiles.size());
    const std::vector<Measurement> measured = measure_real_candidates(a, plan, real_tiles, gpu, options, reference());
    for (size_t j = 0; j < measured.size(); ++j) result.candidates[real_index[j]].real = measured[j];
    result.seconds.emplace_back("real_instead_of_proxy", seconds_since(clock));
  }
  result.chosen = fastest_candidate(result.candidates, false);

  // The finalists: the real kernels of the options.real_finalists candidates with the fastest
  // proxies, compiled (split as spmmc compile splits them), checked against float64 and timed;
  // the fastest real kernel among them and the groups timed for real wins. A proxy's time is not
  // its real kernel's (docs/design/proxies.md, "The finalists").
  std::vector<size_t> by_proxy;
  for (size_t i = 0; i < result.candidates.size(); ++i)
    if (result.candidates[i].proxy.outcome == Outcome::kOk) by_proxy.push_back(i);
  std::stable_sort(by_proxy.begin(), by_proxy.end(), [&](size_t x, size_t y) {
    return result.candidates[x].proxy.time.median_ms < result.candidates[y].proxy.time.median_ms;
  });
  by_proxy.resize(std::min(by_proxy.size(), static_cast<size_t>(std::max(options.real_finalists, 0))));
  if (!by_proxy.empty()) {
    report(options, "timing the finalists' real kernels", 0, by_proxy.size());
    std::vector<TileCandidate> tiles;
    for (size_t i : by_proxy) tiles.push_back(result.candidates[i].tile);
    const std::vector<Measurement> measured = measure_real_candidates(a, plan, tiles, gpu, options, reference());
    for (size_t j = 0; j < measured.size(); ++j) result.candidates[by_proxy[j]].real = measured[j];
    result.finalists = static_cast<int32_t>(by_proxy.size());
    result.seconds.emplace_back("real_finalists", seconds_since(clock));
    const int32_t fastest_real = fastest_candidate(result.candidates, true);
    if (fastest_real >= 0) result.chosen = fastest_real;
  }

  // The generic family's kernel, for real (it compiles in seconds), once, after the proxies.
  if (options.generic_tiling) {
    report(options, "timing the generic kernel", 0, 1);
    result.generic = time_generic_kernel(a, *options.generic_tiling, gpu, options, reference());
    result.seconds.emplace_back("generic", seconds_since(clock));
    // A proxy's time is not its real kernel's (docs/design/proxies.md, "The generic family"): where
    // the generic kernel's time is close to the pick's proxy's (kRealCheckRatio), the pick's real
    // kernel is compiled and timed, so that the family is decided real against real. (With the
    // heuristic's pick given, below, the pick's real kernel is measured anyway.)
    if (options.heuristic.index < 0 && result.generic->outcome == Outcome::kOk && result.chosen >= 0 &&
        result.candidates[static_cast<size_t>(result.chosen)].proxy.outcome == Outcome::kOk) {
      CandidateResult& pick = result.candidates[static_cast<size_t>(result.chosen)];
      const double generic_ms = result.generic->time.median_ms, proxy_ms = pick.proxy.time.median_ms;
      if (pick.real.outcome == Outcome::kNotRun && generic_ms >= proxy_ms / kRealCheckBelow &&
          generic_ms < kRealCheckRatio * proxy_ms) {
        report(options, "timing the chosen real kernel", 0, 1);
        pick.real = measure_real_candidates(a, plan, {pick.tile}, gpu, options, reference()).front();
        result.seconds.emplace_back("real_pick", seconds_since(clock));
      }
    }
  }

  // The heuristic's real kernel, then the pick's, so that the kernel emitted is decided real against
  // real (tuner/decide_against_heuristic.h). The pick's is not compiled where its proxy shows it
  // cannot win: a pick's real kernel ran at least 0.84x its proxy's time on the H100 (docs/design/
  // proxies.md), so a proxy slower than kRealCheckBelow x the heuristic's real kernel rules it out.
  if (options.heuristic.index >= 0) {
    const auto measure = [&](size_t i) {
      CandidateResult& r = result.candidates[i];
      if (r.real.outcome != Outcome::kNotRun || options.n % r.tile.cols_per_thread != 0) return;
      report(options, "timing the heuristic's and the pick's real kernels", 0, 1);
      r.real = measure_real_candidates(a, plan, {r.tile}, gpu, options, reference()).front();
    };
    const auto h = static_cast<size_t>(options.heuristic.index);
    if (!options.heuristic.generic) measure(h);
    const Measurement& base = options.heuristic.generic && result.generic ? *result.generic : result.candidates[h].real;
    if (result.chosen >= 0 && static_cast<size_t>(result.chosen) != h) {
      CandidateResult& pick = result.candidates[static_cast<size_t>(result.chosen)];
      if (base.outcome == Outcome::kOk && pick.real.outcome == Outcome::kNotRun && pick.proxy.outcome == Outcome::kOk &&
          pick.proxy.time.median_ms >= kRealCheckBelow * base.time.median_ms) {
        pick.real.detail = fmt::format("not compiled: its proxy ran {:.4g} ms, at least {}x the heuristic's real kernel "
                                       "({:.4g} ms), which its real kernel cannot beat",
                                       pick.proxy.time.median_ms, kRealCheckBelow, base.time.median_ms);
      } else {
        measure(static_cast<size_t>(result.chosen));
      }
    }
    result.seconds.emplace_back("real_against_heuristic", seconds_since(clock));
  }

  // The dense baseline, once, after the candidates.
  time_dense_baseline(a, gpu, options, result, clock);
  return result;
}

}  // namespace spmmc
