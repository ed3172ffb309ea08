// What the tuners share: the outcome of one candidate (failures are data, not exceptions),
// options, progress, and the result of a search. The tuners themselves are
// tuner/tune_with_proxies.h (LO-SpMM §5) and tuner/tune_exhaustively.h (real kernels).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/planning/tile_space.h"
#include "runtime/compile_pool.h"
#include "runtime/time_kernel.h"
#include "tuner/time_sgemm.h"

namespace spmmc {

enum class Outcome { kOk, kInvalid, kCompileFailed, kLaunchFailed, kWrongResult, kNotRun };
std::string_view outcome_name(Outcome o);  // "Ok", "Invalid", "CompileFailed", "LaunchFailed", "WrongResult", "NotRun"

// One timed kernel (a proxy or a real candidate).
struct Measurement {
  Outcome outcome = Outcome::kNotRun;
  std::string detail;                  // why, for every outcome but kOk
  TimingStats time;                    // valid for kOk
  int registers_per_thread = 0;
  int local_bytes_per_thread = 0;      // > 0: spills
  int64_t dynamic_shared_bytes = 0;    // proxies: the occupancy padding of Eq. 6
  int64_t expected_blocks_per_sm = 0;  // proxies: NUM_ATB of the real kernel (Eq. 5)
  int64_t blocks_per_sm = 0;           // what the driver's occupancy calculator gives this launch
  double max_relative_error = 0.0;     // real kernels: relative Frobenius error vs float64
  int32_t kernels = 0;                 // real kernels: the kernels launched in order for one run
  double compile_seconds = 0.0;        // of the module it came from (shared by a proxy's candidates)
};

struct CandidateResult {
  TileCandidate tile;
  std::string proxy_name;   // the proxy that stood for it
  Measurement proxy;
  Measurement real;         // measured by tune_exhaustively only
};

struct TuningProgress {
  std::string stage;        // "compiling proxies", "timing proxies", "compiling kernels", "timing kernels",
                            // "timing cuBLAS SGEMM"
  size_t done = 0, total = 0;
};

struct TuningOptions {
  int64_t n = 0;                        // columns of B and C
  TimingOptions timing{3, 20, false};   // per candidate
  PoolLimits pool;                      // NVRTC workers
  const CubinCache* cache = nullptr;    // none: compile everything
  double budget_seconds = 3600.0;       // exhaustive: stop compiling new candidates after this
  // Exhaustive: EmitOptions::fmas_per_kernel of the real candidates, i.e. how the code spmmc
  // compile emits is split into kernels (its --fmas-per-kernel; 0: one kernel).
  int64_t fmas_per_kernel = 0;
  uint64_t seed = 1;                    // of the random B
  std::function<void(const TuningProgress&)> progress;
  // The command line of a measuring worker process (tuner/measure_worker.h), e.g.
  // {"/proc/self/exe", "__measure-worker"}; empty: real kernels run in this process.
  std::vector<std::string> worker;
  // Also time cuBLAS SGEMM for the dense layer (tuner/time_sgemm.h), once, after the candidates,
  // with `timing`: TuningResult::sgemm.
  bool time_sgemm = true;
};

struct TuningResult {
  std::vector<CandidateResult> candidates;  // in the order given
  int32_t chosen = -1;                      // index of the fastest Ok candidate, -1 when none
  // Wall seconds per stage: "proxy_build", "proxy_compile", "proxy_time", "real_emit",
  // "real_compile", "real_check_and_time", "sgemm".
  std::vector<std::pair<std::string, double>> seconds;
  int32_t proxies = 0;                      // proxy kernels compiled
  // cuBLAS SGEMM for the dense layer (M x K times K x n), timed like the candidates; absent when
  // TuningOptions::time_sgemm is off. Unavailable (with the reason) where cuBLAS is missing or fails.
  std::optional<SgemmTiming> sgemm;
};

}  // namespace spmmc
