// The options stage of `spmmc compile`: its command line checked as a whole before any work (a
// usage error, exit 64, names the option), --tune auto resolved (the GPU it tunes on opened here,
// once) and the ranker of --tune model|rank loaded. What depends on A (the split of the unrolled
// code, the tensor cores' warps, the balanced family's piece length) is decided after reading it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "codegen/size_guard.h"
#include "compiler/common/dtype.h"
#include "compiler/planning/batch_sizes.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"
#include "runtime/cuda_driver.h"
#include "tools/spmmc/cli.h"
#include "tools/spmmc/tune_stage.h"
#include "tuner/ranker.h"

namespace spmmc::cli {

struct CompileOptions {
  std::string path;     // the matrix file
  std::string name;     // --name: a C identifier the emitted code can own
  std::string out_dir;  // -o
  Target target;

  // --family: auto, unrolled, generic or tensor-core; --family balanced is the generic family's file
  // with the balanced kernel (codegen/families/balanced), so `family` is "generic" and balanced_asked set.
  std::string family_arg;  // as given
  std::string family;
  bool balanced_asked = false;
  std::optional<int32_t> balanced_groups;   // --balanced-groups
  std::optional<int64_t> piece_length;      // --piece-length (default: from A, default_piece_length)

  DType dtype = DType::kFp32;  // --dtype: B's and C's elements (tf32: B and C float)
  bool tf32 = false;
  bool tensor_core_asked = false;     // --family tensor-core
  bool tensor_core_possible = false;  // --family auto may take the tensor cores (half precision, sm_80+, no tile)
  std::string window_rows = "auto";   // --window-rows: auto, 8 or 16

  std::optional<TileCandidate> tile;  // --tile
  int32_t min_blocks_per_sm = 0;      // --min-blocks-per-sm with --tile (0: the register budget's)
  int64_t k_parts = 1;                // --k-parts
  int32_t loads_ahead = 0;            // --loads-ahead
  bool auto_split = true;             // --fmas-per-kernel auto (the default)
  int64_t fmas_per_kernel = 0;        // --fmas-per-kernel F where not auto
  std::optional<int64_t> generic_below;  // --generic-below
  std::optional<int64_t> balanced_below;  // --balanced-below (0: no balanced small-n path)
  std::optional<int64_t> balanced_pairs_below;  // --balanced-pairs-below (0: no pairs kernel)
  std::optional<int64_t> balanced_mid_below;  // --balanced-mid-below (0: no second table)
  bool batch_invariant = false;           // --batch-invariant
  std::string arrays = "auto";            // --arrays: auto (default), device or host
  bool host_arrays = false;               // A's arrays on the host: --arrays host, or auto by its rule (run_compile)
  std::string arrays_why;                 // why they travel where they do

  // --tune, with auto resolved: none, model, rank, proxy or exhaustive.
  std::string tune;
  bool tune_auto = false;         // --tune auto (given or by default)
  bool auto_without_gpu = false;  // --tune auto took the heuristic for want of a usable GPU
  // fp16, bf16 and tf32 time their families' real kernels (tuner/time_reduced_precision.h).
  bool timed_families = false;
  bool ranked = false;            // --tune model or rank
  size_t top_k = 10;              // --top-k
  std::unique_ptr<GpuContext> gpu;  // the GPU the search runs on; null where nothing is timed
  std::optional<RankerModel> ranker;  // --tune model|rank where the model exists (or --model)
  std::string ranker_path;
  TuningSettings tuning;

  PlanOptions plan;               // n: batch_sizes.tune_n
  bool reorder_given = false;     // --reorder (the tensor-core family's windows default to grow)
  BatchSizes batch_sizes;         // --n
  SizeLimits limits;              // --max-compile-seconds
  bool reproducible = false;
  bool quiet = false;
  bool json = false;  // --json: the report on stdout instead of the summary line
  std::optional<std::string> depfile;
  ReadOptions read;
};

// Checks the options of `spmmc compile` (args.positional[0] is the matrix file) and resolves --tune
// auto; fails with a usage error (exit 64) on the first bad one, or exit 69 where a tuning mode that
// needs a GPU has none.
CompileOptions parse_compile_options(const Args& args);

}  // namespace spmmc::cli
