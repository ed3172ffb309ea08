#include "tools/spmmc/tune_stage.h"
#include "tuner/choose_by_model.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "codegen/generic_launch.h"
#include "runtime/cubin_cache.h"
#include "runtime/cuda_driver.h"
#include "tools/spmmc/stage_progress.h"
#include "tuner/decide_against_heuristic.h"
#include "tuner/decide_balanced.h"
#include "tuner/time_balanced_kernel.h"
#include "tuner/time_batch_sizes.h"
#include "tuner/tune_exhaustively.h"
#include "tuner/tune_with_proxies.h"

namespace spmmc::cli {
namespace {

using Json = nlohmann::ordered_json;

Json measurement_json(const Measurement& m) {
  Json j = {{"outcome", std::string(outcome_name(m.outcome))}};
  if (m.outcome == Outcome::kOk)
    j["ms"] = {{"median", m.time.median_ms}, {"p20", m.time.p20_ms}, {"p80", m.time.p80_ms}, {"runs", m.time.runs}};
  if (!m.detail.empty()) j["detail"] = m.detail;
  if (m.registers_per_thread) j["registers_per_thread"] = m.registers_per_thread;
  if (m.registers_per_thread) j["local_bytes_per_thread"] = m.local_bytes_per_thread;
  if (m.expected_blocks_per_sm) j["real_blocks_per_sm_eq5"] = m.expected_blocks_per_sm;
  if (m.blocks_per_sm) j["blocks_per_sm"] = m.blocks_per_sm;
  if (m.expected_blocks_per_sm) j["dynamic_shared_bytes"] = m.dynamic_shared_bytes;
  if (m.max_relative_error > 0) j["relative_error"] = m.max_relative_error;
  if (m.kernels) j["kernels"] = m.kernels;
  if (m.compile_seconds > 0) j["compile_seconds"] = m.compile_seconds;
  return j;
}

// "spmmc compile: timing proxies 12/40, 3 s, about 6 s left in this stage" on a terminal's last line
// (tools/spmmc/stage_progress.h); nothing otherwise.
class Progress {
 public:
  explicit Progress(bool enabled) : line_("spmmc compile", enabled) {}
  void operator()(const TuningProgress& p) {
    const double s = line_.seconds();
    std::string eta;
    if (p.done > 0 && p.done < p.total && stage_ == p.stage) {
      const double left = (s - stage_start_) / static_cast<double>(p.done) * static_cast<double>(p.total - p.done);
      eta = fmt::format(", about {:.0f} s left in this stage", left);
    }
    if (stage_ != p.stage) stage_ = p.stage, stage_start_ = s;
    line_.stage(fmt::format("{} {}/{}", p.stage, p.done, p.total), eta);
  }

 private:
  StageProgress line_;
  std::string stage_;
  double stage_start_ = 0.0;
};

}  // namespace

std::vector<OptionSpec> tuning_option_specs() {
  return {
      {"--tune-budget", "S", "--tune exhaustive: stop compiling candidates after S seconds (default 3600)"},
      {"--finalists", "K", fmt::format("--tune proxy|rank: compile, check and time the real kernels of the K candidates "
                                       "with the fastest proxies, and take the fastest real kernel (0: the fastest proxy; "
                                       "default {} for proxy, {} for rank)",
                                       kDefaultRealFinalists, kDefaultRankFinalists)},
      {"--timing-runs", "R", "timed runs per candidate after 3 warm-up runs; the median counts (default 20)"},
      {"--flush-l2", "", "flush L2 before every timed run, as the project's benchmarks do (default)"},
      {"--no-flush-l2", "", "time with L2 as the previous run left it (B may stay in L2 between runs)"},
      {"--max-candidates", "K", "tune over at most K candidates, evenly spaced over the survivors (default: all)"},
      {"--real-compile-budget", "S", fmt::format("--tune rank|proxy: compile the heuristic's and the pick's real kernels "
                                                 "only where the size guard estimates their compile at most S seconds; "
                                                 "the heuristic's pick is kept where its own is beyond (default {:.0f}; "
                                                 "0: no limit)", kMaxRealCompileSeconds)},
      {"--jobs|-j", "J", "NVRTC compilations in parallel (default: the cores, fewer when memory is short)"},
      {"--cache-dir", "DIR", "cubin cache (default $SPMMC_CACHE_DIR, $XDG_CACHE_HOME/spmmc/cubins or ~/.cache/spmmc/cubins)"},
      {"--no-cache", "", "compile everything, reading and writing no cubin cache"},
  };
}

std::unique_ptr<GpuContext> open_gpu_for_tuning(const std::string& mode, const Target& target) {
  std::string why;
  if (!GpuContext::available(&why))
    throw UserError(ExitCode::kUnavailable, SourceLocation{},
                    fmt::format("--tune {} times kernels on a GPU, and none is usable here: {}. Use --tune none "
                                "(the heuristic) or --tune model (the ranker) on machines without a GPU",
                                mode, why));
  auto gpu = GpuContext::open();
  if (gpu->device().arch() != target.arch)
    fail_usage("--tune {}: the GPU here is {} ({}) but the target '{}' is {}; give --target or --arch for this GPU", mode,
               gpu->device().name, gpu->device().arch(), target.name, target.arch);
  return gpu;
}

std::unique_ptr<GpuContext> usable_gpu_for(const Target& target) {
  std::string why;
  if (!GpuContext::available(&why)) return nullptr;
  auto gpu = GpuContext::open();
  return gpu->device().arch() == target.arch ? std::move(gpu) : nullptr;
}

TuningSettings tuning_settings_from(const Args& args, int default_finalists) {
  TuningSettings s;
  s.timing_runs = static_cast<int>(args.get_int("--timing-runs", 20, 1, 100000));
  if (args.has("--flush-l2") && args.has("--no-flush-l2")) fail_usage("give --flush-l2 or --no-flush-l2, not both");
  s.flush_l2 = !args.has("--no-flush-l2");
  s.budget_seconds = args.get_double("--tune-budget", 3600.0, 0.0, 1e9);
  s.finalists = static_cast<int>(args.get_int("--finalists", default_finalists, 0, 1 << 20));
  s.jobs = static_cast<unsigned>(args.get_int("--jobs", 0, 0, 1024));
  s.max_candidates = static_cast<size_t>(args.get_int("--max-candidates", 0, 0, 1 << 30));
  s.real_compile_budget = args.get_double("--real-compile-budget", kMaxRealCompileSeconds, 0.0, 1e7);
  s.use_cache = !args.has("--no-cache");
  s.cache_dir = args.get_or("--cache-dir", "");
  if (!s.use_cache && !s.cache_dir.empty()) fail_usage("give --cache-dir or --no-cache, not both");
  return s;
}

TuningResult run_tuning(const TuneRequest& request, const Csr& a, const Plan& plan, const Target& target,
                        const GpuContext& gpu, const TuningSettings& settings,
                        std::vector<const PlannedCandidate*>& candidates) {
  candidates.clear();
  for (const PlannedCandidate* c : tunable_candidates(plan, target.warp_size).list)
    if (!request.emittable || request.emittable(*c)) candidates.push_back(c);
  // --tune rank: the model's first top_k, kept in plan order.
  if (request.ranker && request.top_k > 0) candidates = top_ranked_candidates(candidates, *request.ranker, request.top_k);
  // --max-candidates K: K candidates evenly spaced in the plan's M1-major order (deterministic).
  candidates = evenly_spaced(candidates, settings.max_candidates);
  // The heuristic's pick is always a candidate: the search must not lose to it.
  const int32_t heuristic = index_adding(candidates, request.heuristic);
  if (candidates.empty())
    throw UserError(ExitCode::kDataError, SourceLocation{},
                    "every tile candidate exceeds the register limits of the target (see 'spmmc plan'); give --tile");

  TuningOptions options;
  options.n = request.n;
  options.heuristic = {heuristic, request.heuristic_generic};
  options.max_real_compile_seconds = settings.real_compile_budget;
  options.timing.runs = settings.timing_runs;
  options.timing.flush_l2 = settings.flush_l2;
  options.budget_seconds = settings.budget_seconds;
  options.real_finalists = settings.finalists;
  options.fmas_per_kernel = request.fmas_per_kernel;
  options.pool.max_workers = settings.jobs;
  if (request.time_generic) options.generic_tiling = &plan.for_generic(kGenericRowsPerBlock).tiling;
  std::unique_ptr<CubinCache> cache;
  if (settings.use_cache) {
    cache = std::make_unique<CubinCache>(settings.cache_dir.empty() ? default_cubin_cache_dir()
                                                                     : std::filesystem::path(settings.cache_dir));
    options.cache = cache.get();
  }
  // Real kernels run in a worker process (this binary, hidden command), so that one that faults
  // costs only its candidate (tuner/measure_worker.h).
  options.worker = {"/proc/self/exe", "__measure-worker"};
  Progress progress(!request.quiet);
  options.progress = [&](const TuningProgress& p) { progress(p); };
  TuningResult result = request.mode == "exhaustive" ? tune_exhaustively(a, plan, candidates, gpu, options)
                                                     : tune_with_proxies(a, plan, candidates, gpu, options);
  if (heuristic >= 0) {
    result.decision = decide_against_heuristic(result, options.heuristic, request.time_generic, request.mode);
    result.chosen = result.decision->chosen;  // what is emitted (its tile, where the family is unrolled)
  }
  // The balanced family's kernel at n, once the search has decided (tuner/decide_balanced.h).
  const Decision* decision = result.decision ? &*result.decision : nullptr;
  if (request.balanced_piece_length > 0 && decision && !request.balanced_groups.empty()) {
    const auto start = std::chrono::steady_clock::now();
    const ReferenceProduct reference = reference_product(a, options);  // one float64 product for every length
    const std::vector<Measurement> timed =
        time_balanced_kernels(a, request.balanced_piece_length, request.balanced_groups, gpu, options, &reference);
    for (size_t i = 0; i < timed.size(); ++i)
      result.balanced_tried.push_back({request.balanced_groups[i], request.balanced_piece_length, timed[i]});
    // Shorter lengths at the fastest pieces per warp, while each one wins (tuner/decide_balanced.h).
    while (const int32_t shorter = next_balanced_piece_length(result, request.balanced_piece_length,
                                                              request.balanced_shorter_piece_lengths)) {
      const int32_t groups = result.best_balanced()->groups;
      result.balanced_tried.push_back(
          {groups, shorter, time_balanced_kernels(a, shorter, {groups}, gpu, options, &reference).front()});
    }
    result.seconds.emplace_back("balanced", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // --n LIST or LO:HI: the emitted kernel, the generic kernel and (where it won at n: the decision
  // before any other size is timed) the balanced kernel at the other sizes, where the kernels were
  // measured at n (an unrolled kernel beyond the compile budget is kept unmeasured: the rule decides).
  const BalancedTrial* balanced = result.best_balanced();
  const bool balanced_won_at_n = balanced && decide_balanced(result, request.mode).balanced;
  if (!request.batch_sizes.empty() && decision && decision->chosen >= 0 && decision->emitted_ms && result.generic &&
      result.generic->outcome == Outcome::kOk && (!decision->generic || balanced_won_at_n)) {
    const auto start = std::chrono::steady_clock::now();
    options.balanced_piece_length = balanced_won_at_n ? balanced->piece_length : 0;
    options.balanced_groups = balanced ? balanced->groups : 1;
    const TileCandidate* tile = decision->generic ? nullptr : &result.candidates[static_cast<size_t>(decision->chosen)].tile;
    result.batch_sizes = time_batch_sizes(a, plan, tile, request.batch_sizes, gpu, options);
    result.seconds.emplace_back("batch_sizes",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // The balanced family against the decision at every size timed: what compile emits.
  if (balanced) result.balanced_decision = decide_balanced(result, request.mode);
  return result;
}

Json tuning_json(const std::string& mode, const TuningResult& result, const GpuContext& gpu) {
  Json seconds = Json::object();
  double total = 0.0;
  for (const auto& [stage, s] : result.seconds) seconds[stage] = s, total += s;
  seconds["total"] = total;
  Json candidates = Json::array();
  for (const CandidateResult& c : result.candidates) {
    Json j = {{"tile", c.tile.label()}, {"m1", c.tile.m1}, {"n1", c.tile.n1}, {"cols_per_thread", c.tile.cols_per_thread},
              {"proxy_kernel", c.proxy_name}, {"proxy", measurement_json(c.proxy)}};
    if (mode == "exhaustive" || c.real.outcome != Outcome::kNotRun) j["real"] = measurement_json(c.real);
    candidates.push_back(j);
  }
  const DeviceInfo& d = gpu.device();
  Json out = {{"mode", mode},
              {"device", {{"name", d.name}, {"arch", d.arch()}, {"sms", d.sm_count}, {"driver", d.driver_version}}},
              {"proxies_compiled", result.proxies},
              {"finalists", result.finalists},
              {"seconds", seconds},
              {"chosen", result.chosen},
              {"candidates", candidates}};
  if (result.generic) out["generic"] = measurement_json(*result.generic);
  if (const BalancedTrial* balanced = result.best_balanced()) {
    out["balanced"] = measurement_json(balanced->measurement);
    out["balanced"]["groups"] = balanced->groups;
    out["balanced"]["piece_length"] = balanced->piece_length;
    Json tried = Json::array();
    for (const BalancedTrial& t : result.balanced_tried) {
      Json one = measurement_json(t.measurement);
      one["groups"] = t.groups;
      one["piece_length"] = t.piece_length;
      tried.push_back(one);
    }
    out["balanced"]["tried"] = tried;
  }
  if (!result.batch_sizes.empty()) {
    Json sizes = Json::array();
    for (const BatchSizeMeasurement& m : result.batch_sizes) {
      Json size = {{"n", m.n}, {"kernel", measurement_json(m.family)}, {"generic", measurement_json(m.generic)}};
      if (m.balanced.outcome != Outcome::kNotRun) size["balanced"] = measurement_json(m.balanced);
      sizes.push_back(size);
    }
    out["batch_sizes"] = sizes;
  }
  if (result.decision) {
    const Decision& decision = *result.decision;
    const Json emitted = decision.generic ? Json("generic family")
                                          : Json(result.candidates[static_cast<size_t>(decision.chosen)].tile.label());
    out["decision"] = {{"emitted", emitted}, {"heuristic_kept", decision.heuristic_kept}, {"why", decision.why}};
  }
  return out;
}

ReducedPrecisionTuning run_reduced_precision_tuning(const ReducedPrecisionRequest& request, int32_t rule, const Csr& a,
                                              const GpuContext& gpu, const TuningSettings& settings, bool quiet) {
  TuningOptions options;
  options.n = request.n;
  options.timing.runs = settings.timing_runs;
  options.timing.flush_l2 = settings.flush_l2;
  options.pool.max_workers = settings.jobs;
  std::unique_ptr<CubinCache> cache;
  if (settings.use_cache) {
    cache = std::make_unique<CubinCache>(settings.cache_dir.empty() ? default_cubin_cache_dir()
                                                                     : std::filesystem::path(settings.cache_dir));
    options.cache = cache.get();
  }
  Progress progress(!quiet);
  options.progress = [&](const TuningProgress& p) { progress(p); };
  ReducedPrecisionTuning out;
  out.timing = time_reduced_precision(a, request, gpu, options);
  out.choice = choose_reduced_precision(request, out.timing, rule);
  Json seconds = Json::object();
  double total = 0.0;
  for (const auto& [stage, s] : out.timing.seconds) seconds[stage] = s, total += s;
  seconds["total"] = total;
  const DeviceInfo& d = gpu.device();
  out.json = {{"mode", "exhaustive"},
              {"device", {{"name", d.name}, {"arch", d.arch()}, {"sms", d.sm_count}, {"driver", d.driver_version}}},
              {"seconds", seconds},
              {"candidates", out.choice.candidates},
              {"decision", {{"emitted", request.candidates[static_cast<size_t>(out.choice.chosen)].label()},
                            {"rule_kept", out.choice.chosen == rule},
                            {"timed", out.choice.timed},
                            {"why", out.choice.why}}}};
  return out;
}

}  // namespace spmmc::cli
