// The family stage of `spmmc compile`: which family's kernel the file carries for the chosen tile
// (docs/design/tuning.md, "The family"): --family as given; else the timed search's decision with
// the balanced family where it measured faster (tuner/decide_balanced.h); --tune model's ranking;
// the family rules of --tune none (generic where the unrolled launch leaves the GPU short of warps,
// balanced where A's rows are uneven, the tensor cores in half precision where their launch has
// warps enough); the unrolled family's split into kernels and the size guard; and, for fp16, bf16
// and tf32 with a GPU, the families' real kernels timed (tuner/time_reduced_precision.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "codegen/size_guard.h"
#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/reorder_rows.h"
#include "tools/spmmc/compile_options.h"
#include "tools/spmmc/tile_stage.h"
#include "tools/spmmc/tune_stage.h"
#include "tools/spmmc/unrolled_rules.h"

namespace spmmc::cli {

// What the family rules of the tensor cores said before the tile was chosen (--dtype fp16|bf16).
struct TensorCoreRule {
  int64_t warps = 0;       // the warps of their launch at --n (0 where they are not possible)
  bool by_rule = false;    // --family auto takes them: at least kTensorCoreMinWarpsPerSm per SM
};

struct FamilyChoice {
  bool unrolled = false;
  bool generic = false;      // the generic family's file (the balanced family's is one)
  bool balanced = false;     // with the balanced kernel
  bool balanced_by_search = false;  // the timed search measured the balanced kernel faster
  bool tensor_core = false;
  std::string why;
  int32_t balanced_groups = 1;   // the balanced family's pieces per warp
  int32_t piece_length = 0;      // and the products its rows are cut at
  int64_t fmas_per_kernel = 0;   // the unrolled code's split (0: one kernel, or not unrolled)
  SizeEstimate estimate;         // of the chosen tile's unrolled code at that split
  RowTiling windows;             // the tensor-core family's windows (m1 0 otherwise)
  ReorderMethod window_method = ReorderMethod::kGrow;  // how their rows were grouped
  std::optional<ReducedPrecisionTuning> reduced;  // fp16, bf16 and tf32 timed on a GPU

  std::string name() const;  // "tensor-core", "balanced", "generic" or "unrolled"
};

// Chooses the family for `tile.chosen` as `o` asks. `family_auto`: as for choose_tile_stage;
// `fmas_per_kernel`: the split the unrolled code starts from (made finer here where the estimate would
// exceed the compile-time limit); `piece_length`: the balanced family's as given or by its rule (what
// choose_tile_stage timed first; a search may have kept a shorter one). Records the balanced decision in
// tile.tuning and makes tile.decision the balanced kernel's where it is emitted (what the report compares
// with the heuristic); with --dtype fp16|bf16|tf32 timed, tile.tuning becomes that timing's. Fails where
// the size guard refuses the unrolled code (exit 65) or --family balanced meets a half-precision dtype.
FamilyChoice choose_family_stage(const CompileOptions& o, const Csr& a, const Plan& plan, const UnrolledRules& rules,
                                 bool family_auto, const TensorCoreRule& tensor_cores, int64_t fmas_per_kernel,
                                 int32_t piece_length, TileChoice& tile);

}  // namespace spmmc::cli
