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

#include "compiler/planning/reorder_rows.h"
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
  std::string proxy_name;   // the proxy that stood for it (empty: timed by its real kernel instead)
  Measurement proxy;
  Measurement real;         // measured by tune_exhaustively; by tune_with_proxies where it did not build a
                            // proxy (kRealInsteadOfProxyShare), for the finalists (real_finalists) and
                            // for its pick (kRealCheckRatio)
};

struct TuningProgress {
  std::string stage;        // "compiling proxies", "timing proxies", "compiling kernels", "timing kernels",
                            // "timing real kernels instead of proxies", "timing the finalists' real
                            // kernels", "timing the generic kernel",
                            // "timing the chosen real kernel", "timing cuBLAS SGEMM" (HGEMM, BF16 GEMM,
                            // TF32 GEMM: tuner/time_reduced_precision.h)
  size_t done = 0, total = 0;
};

// --tune proxy's default finalists (TuningOptions::real_finalists), measured on the H100
// (docs/benchmarks.md, the proxy study with finalists).
inline constexpr int32_t kDefaultRealFinalists = 3;
// --tune rank's default finalists: none, the fastest proxy of the ranker's first --top-k wins
// (LO-SpMM-Rank). On the held-out H100 problems finalists cut its loss (4.4% -> 2.5% with 3) but
// their real compile made the search 2.8x slower, leaving 2.7x over --tune proxy, below the 3x the
// mode is for (docs/benchmarks.md, "The ranker on held-out problems").
inline constexpr int32_t kDefaultRankFinalists = 0;

// TuningOptions::max_real_compile_seconds' default.
inline constexpr double kMaxRealCompileSeconds = 20.0;

// The kernel a timed search emits, decided against the heuristic's (decide_against_heuristic.h).
struct Decision {
  int32_t chosen = -1;           // the candidate whose tile is emitted (the unrolled family), or -1
  bool generic = false;          // the generic family's kernel is emitted instead
  bool heuristic_kept = false;   // the heuristic's own kernel is emitted
  std::optional<double> heuristic_ms;  // its real kernel's median, where it was measured
  std::optional<double> emitted_ms;    // the emitted kernel's real median, where it was measured
  std::string why;
};

// The heuristic's pick that a timed search must not lose to (TuningOptions::heuristic).
struct HeuristicPick {
  int32_t index = -1;    // into the candidates; -1: no heuristic given (the search decides alone)
  bool generic = false;  // --tune none would emit the generic family for this layer (its wave rule)
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
  // Also time the generic family's kernel (tuner/time_generic_kernel.h), its rows in the order of
  // this tiling's A-tiles, once, after the candidates: TuningResult::generic. None: not timed.
  const RowTiling* generic_tiling = nullptr;
  // Also time the balanced family's kernel (tuner/time_balanced_kernel.h) with rows cut at this many
  // products, once the search has decided, and at the other batch sizes: TuningResult::balanced and
  // BatchSizeMeasurement::balanced, with this many pieces per warp at the batch sizes. 0: not timed.
  int32_t balanced_piece_length = 0;
  int32_t balanced_groups = 1;
  // --tune proxy: the real kernels of this many candidates with the fastest proxies are compiled,
  // checked and timed, and the fastest real kernel wins (docs/design/proxies.md, "The finalists");
  // 0: the fastest proxy wins.
  int32_t real_finalists = kDefaultRealFinalists;
  // The heuristic's pick (spmmc compile always gives it): its real kernel and the search's pick's
  // are measured, and TuningResult::decision says which kernel to emit (never one measured slower
  // than the heuristic's: decide_against_heuristic.h).
  HeuristicPick heuristic;
  // With `heuristic`: the real kernels of the heuristic and the pick are compiled only where the size
  // guard estimates their compile at most this many seconds (0: always); above it the heuristic's
  // pick is kept unmeasured. A search is meant to take seconds (issue 25: 30 s median).
  double max_real_compile_seconds = kMaxRealCompileSeconds;
};

// Whether the balanced family's kernel replaces the kernel the search decided on (decide_balanced.h):
// `why` gives the times compared, or what was not measured.
struct BalancedDecision {
  bool balanced = false;
  std::string why;
};

// The emitted kernel, the generic family's and the balanced family's at one batch size (NotRun
// where not timed: `family` where the search emits the generic family, `balanced` where
// TuningOptions::balanced_piece_length is 0).
struct BatchSizeMeasurement {
  int64_t n = 0;
  Measurement family, generic, balanced;
};

// One balanced kernel the search timed at n: its pieces per warp, the length its rows were cut at, and
// its measurement.
struct BalancedTrial {
  int32_t groups = 1;
  int32_t piece_length = 0;
  Measurement measurement;
};

struct TuningResult {
  std::vector<CandidateResult> candidates;  // in the order given
  int32_t chosen = -1;                      // index of the fastest Ok candidate, -1 when none
  // Wall seconds per stage: "proxy_build", "proxy_compile", "proxy_time", "real_emit",
  // "real_compile", "real_check_and_time", "real_instead_of_proxy", "real_finalists", "generic",
  // "real_pick" (--tune proxy without a heuristic), "real_against_heuristic", "skipped" (the
  // heuristic's real kernel beyond the compile budget: no search), "sgemm".
  std::vector<std::pair<std::string, double>> seconds;
  int32_t proxies = 0;                      // proxy kernels compiled
  int32_t finalists = 0;                    // --tune proxy: real kernels timed as finalists
  // cuBLAS SGEMM for the dense layer (M x K times K x n), timed like the candidates; absent when
  // TuningOptions::time_sgemm is off. Unavailable (with the reason) where cuBLAS is missing or fails.
  std::optional<SgemmTiming> sgemm;
  // The generic family's kernel, compiled, checked and timed for real in both modes; absent when
  // TuningOptions::generic_tiling is none. (With it, --tune proxy may also time its pick's real
  // kernel: candidates[chosen].real, kRealCheckRatio.)
  std::optional<Measurement> generic;
  // The balanced family's kernel at n, timed after the decision where the search asks it (then also at
  // each batch size, at the kept one's shape), once per shape tried (pieces per warp, piece length);
  // empty where not timed. best_balanced() is the one kept.
  std::vector<BalancedTrial> balanced_tried;
  // Whether the balanced kernel replaces the decided one (tuner/decide_balanced.h), judged once every
  // batch size was timed; absent where the balanced kernel was not timed or nothing was decided.
  std::optional<BalancedDecision> balanced_decision;
  // With TuningOptions::heuristic: what to emit, decided real kernel against real kernel.
  std::optional<Decision> decision;
  // A file compiled for several batch sizes (spmmc compile --n LIST or LO:HI): the emitted kernel,
  // the generic family's kernel and the balanced one timed at each of the other sizes
  // (tuner/time_batch_sizes.h); empty where not asked or not measured.
  std::vector<BatchSizeMeasurement> batch_sizes;

  // Of balanced_tried, the fastest that was measured, else the first (its failure to report); null
  // where nothing was tried.
  const BalancedTrial* best_balanced() const;
};

// --tune proxy times the real kernel of its pick too where the generic kernel's time lies within
// [pick's proxy / kRealCheckBelow, pick's proxy x kRealCheckRatio): measured on the H100, the picks'
// real kernels ran 0.84-1.66x their proxies' time (other candidates up to 7.8x; docs/design/
// proxies.md, "The generic family"), so outside that range the proxy alone decides.
inline constexpr double kRealCheckRatio = 2.0;

// --tune proxy times a group's candidates by their real kernels where its proxy would keep at
// least this share of the real code (proxy_code_share, proxy/build_proxy.h): a proxy is one kernel
// function, which ptxas compiles super-linearly, where the real code is split into kernels
// (docs/design/proxies.md, "Proxies that would not reduce").
inline constexpr double kRealInsteadOfProxyShare = 0.5;
inline constexpr double kRealCheckBelow = 1.25;

}  // namespace spmmc
