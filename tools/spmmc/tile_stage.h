// The tile stage of `spmmc compile`: which tile of the plan the emitted kernel takes, and with a
// timed search also which family: --tile as given; else the heuristic's pick (--tune none's,
// compiler/planning/choose_tile.h), which every other mode is measured against and falls back to;
// --tune model's ranked pick; or the decision of the timed search (tools/spmmc/tune_stage.h,
// tuner/decide_against_heuristic.h), with the generic and balanced families timed beside the tiles.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "tools/spmmc/compile_options.h"
#include "tools/spmmc/unrolled_rules.h"
#include "tuner/tuning.h"

namespace spmmc::cli {

struct TileChoice {
  const PlannedCandidate* chosen = nullptr;  // never null
  std::string why;
  // The heuristic's pick (null with --tile), whether --tune none would emit it in the generic family, and why.
  const PlannedCandidate* heuristic = nullptr;
  bool heuristic_generic = false;
  std::string heuristic_family_why;
  std::optional<TuningResult> tuned;  // --tune rank|proxy|exhaustive in float32
  std::optional<Decision> decision;   // what the timed search or the model decided against the heuristic
  bool model_generic = false;         // --tune model ranked the generic family first
  int32_t model_balanced_groups = 0;  // --tune model ranked the balanced family first, with these pieces per warp
  bool model_ranked_balanced = false; // --tune model ranked the balanced family's candidates: its rule does not apply
  nlohmann::ordered_json tuning;      // the report's "tuning" (null where nothing was timed)
};

// Chooses the tile of `plan` for A (`a`) as `o` asks. `family_auto`: the family is free (--family auto,
// no --tile or --k-parts, not the tensor cores by rule), so the generic family is a contender and the
// balanced family's kernel, with rows cut at `piece_length` products, is timed after a search's decision.
// `fmas_per_kernel`: the split of the unrolled code the search times. Throws a UserError (exit 65)
// where no tile fits the target's registers.
TileChoice choose_tile_stage(const CompileOptions& o, const Csr& a, const Plan& plan, const UnrolledRules& rules,
                             bool family_auto, int32_t piece_length, int64_t fmas_per_kernel);

}  // namespace spmmc::cli
