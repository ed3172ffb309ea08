// The tuning stage of `spmmc compile`: --tune rank|proxy|exhaustive, their options, progress on a
// terminal, and the "tuning" section of NAME.json. --tune none (the heuristic) and model need none of it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"
#include "tools/spmmc/cli.h"
#include "tuner/ranker.h"
#include "tuner/time_reduced_precision.h"
#include "tuner/tuning.h"

namespace spmmc {
class GpuContext;
}

namespace spmmc::cli {

// --tune-budget, --finalists, --timing-runs, --flush-l2, --no-flush-l2, --max-candidates, --real-compile-budget,
// --jobs, --cache-dir, --no-cache.
std::vector<OptionSpec> tuning_option_specs();

struct TuningSettings {
  int timing_runs = 20;
  bool flush_l2 = true;         // as the benchmarks time (docs/design/proxies.md, "Timing")
  double budget_seconds = 3600.0;
  int finalists = kDefaultRealFinalists;  // --tune proxy: real kernels of the fastest proxies timed
  unsigned jobs = 0;            // 0: the pool decides
  size_t max_candidates = 0;    // 0: all
  double real_compile_budget = kMaxRealCompileSeconds;  // --real-compile-budget (0: none)
  bool use_cache = true;
  std::string cache_dir;        // empty: default_cubin_cache_dir()
};

// Reads the tuning options; a bad value is a usage error (checked before any work).
// `default_finalists`: --finalists where it is not given (--tune rank's default differs from proxy's).
TuningSettings tuning_settings_from(const Args& args, int default_finalists = kDefaultRealFinalists);

// The GPU here where one of the target's architecture is usable, else nullptr (never an error):
// what --tune auto (spmmc compile's default) tunes on, with rank, or without, with model.
std::unique_ptr<GpuContext> usable_gpu_for(const Target& target);

// Opens the GPU for a tuning mode that needs one, before any other work, so that a machine
// without one fails at once (exit 69). Checks that the GPU has the target's architecture.
std::unique_ptr<GpuContext> open_gpu_for_tuning(const std::string& mode, const Target& target);

// What one tuning run of `spmmc compile` searches.
struct TuneRequest {
  std::string mode;              // "proxy", "rank" or "exhaustive"
  int64_t n = 0;
  int64_t fmas_per_kernel = 0;   // exhaustive and real kernels: the split spmmc compile emits (0: one kernel)
  bool time_generic = false;     // --family auto: the generic family's kernel is a contender too
  // --family auto in float32: the balanced family's kernel with rows cut at this many products is
  // timed after the decision (and at the batch sizes where it won at n); 0: not timed.
  int32_t balanced_piece_length = 0;
  std::vector<int32_t> balanced_groups = {1, 2, 4};  // pieces per warp timed; the fastest is kept
  // Then, at the fastest of those pieces per warp, rows cut at each of these lengths in turn (longest
  // first), for as long as each runs faster than every length before it (next_balanced_piece_length);
  // the fastest length is kept.
  std::vector<int32_t> balanced_shorter_piece_lengths;
  bool quiet = false;            // no progress on the terminal
  const RankerModel* ranker = nullptr;  // --tune rank: only its first top_k candidates are tuned
  size_t top_k = 0;
  // The heuristic's pick (--tune none's tile) and whether --tune none would emit the generic family
  // for this layer: always a candidate, and the emitted kernel is never measured slower than its.
  const PlannedCandidate* heuristic = nullptr;
  bool heuristic_generic = false;
  // The tiles spmmc compile can emit unrolled (the size guard); others are not tuned. Empty: all.
  std::function<bool(const PlannedCandidate&)> emittable;
  // --n LIST or LO:HI: the other batch sizes, at which the emitted kernel (where unrolled and measured
  // at n) and the generic kernel are timed after the decision (TuningResult::batch_sizes).
  std::vector<int64_t> batch_sizes;
};

// Runs the search over tunable_candidates(plan) (compiler/planning/plan_tiles.h), the heuristic's
// pick always among them, and returns the result with its decision (tuner/decide_against_heuristic.h);
// `candidates` receives the candidates in the result's order. Exhaustive tuning splits each real
// candidate into kernels of at most `fmas_per_kernel` FMAs, as the compile that tunes will emit it.
// With `time_generic` the generic family's kernel is timed too, its rows ordered by
// plan.for_generic(kGenericRowsPerBlock) as spmmc compile emits it, and with balanced_piece_length
// the balanced family's (tuner/decide_balanced.h says when it replaces the decision). Progress is
// shown on a terminal unless `quiet`.
TuningResult run_tuning(const TuneRequest& request, const Csr& a, const Plan& plan, const Target& target,
                        const GpuContext& gpu, const TuningSettings& settings,
                        std::vector<const PlannedCandidate*>& candidates);

// The "tuning" section of NAME.json: device, per-stage seconds, every candidate with its outcome,
// proxy time and real time where measured, and the generic and balanced families' kernels where they
// were timed.
nlohmann::ordered_json tuning_json(const std::string& mode, const TuningResult& result, const GpuContext& gpu);

// --dtype fp16|bf16 with a GPU (--tune auto or exhaustive): the families of `request` compiled,
// checked and timed (tuner/time_reduced_precision.h) with the settings' timing, pool and cache, progress
// on a terminal unless `quiet`; then the choice against the candidate `rule` (--tune none's).
struct ReducedPrecisionTuning {
  ReducedPrecisionTiming timing;
  ReducedPrecisionChoice choice;
  nlohmann::ordered_json json;  // the report's "tuning": mode, device, seconds, candidates, decision
};
ReducedPrecisionTuning run_reduced_precision_tuning(const ReducedPrecisionRequest& request, int32_t rule, const Csr& a,
                                              const GpuContext& gpu, const TuningSettings& settings, bool quiet);

}  // namespace spmmc::cli
