// The tuning stage of `spmmc compile`: --tune proxy|exhaustive, their options, progress on a
// terminal, and the "tuning" section of NAME.json. --tune none (the heuristic) needs none of it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"
#include "tools/spmmc/cli.h"
#include "tuner/ranker.h"
#include "tuner/tuning.h"

namespace spmmc {
class GpuContext;
}

namespace spmmc::cli {

// --tune-budget, --finalists, --timing-runs, --flush-l2, --no-flush-l2, --max-candidates, --jobs, --cache-dir,
// --no-cache.
std::vector<OptionSpec> tuning_option_specs();

struct TuningSettings {
  int timing_runs = 20;
  bool flush_l2 = true;         // as the benchmarks time (docs/design/proxies.md, "Timing")
  double budget_seconds = 3600.0;
  int finalists = kDefaultRealFinalists;  // --tune proxy: real kernels of the fastest proxies timed
  unsigned jobs = 0;            // 0: the pool decides
  size_t max_candidates = 0;    // 0: all
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

// Runs --tune `mode` ("proxy" or "exhaustive") over the planning survivors (or, when none
// survived, over every candidate the register constraint kept) and returns the result;
// `candidates` receives the candidates in the result's order. Exhaustive tuning splits each
// real candidate into kernels of at most `fmas_per_kernel` FMAs (0: one kernel), as the compile
// that tunes will emit it. With `time_generic` (--family auto) the generic family's kernel is
// timed too, its rows ordered by plan.for_generic(kGenericRowsPerBlock) as spmmc compile emits it.
// Progress is shown on a terminal unless `quiet`.
// With `ranker` (--tune rank), only the `top_k` candidates it ranks first are tuned (by proxies),
// in plan order.
TuningResult run_tuning(const std::string& mode, const Csr& a, const Plan& plan, const GpuContext& gpu,
                        const TuningSettings& settings, int64_t n, int64_t fmas_per_kernel, bool time_generic, bool quiet,
                        std::vector<const PlannedCandidate*>& candidates, const RankerModel* ranker = nullptr,
                        size_t top_k = 0);

// The "tuning" section of NAME.json: device, per-stage seconds, every candidate with its outcome,
// proxy time and real time where measured, and the generic family's kernel where it was timed.
nlohmann::ordered_json tuning_json(const std::string& mode, const TuningResult& result, const GpuContext& gpu);

}  // namespace spmmc::cli
