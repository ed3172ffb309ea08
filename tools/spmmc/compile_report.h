// The report stage of `spmmc compile`: NAME.json (schema spmmc.compile/1, docs/user-guide.md,
// "The report"): the input and its statistics, the options, the plan's space after each constraint,
// the chosen tile and family and why, the kernel's shape, and what was timed (tuning, SGEMM or the
// dense GEMM of the dtype, the gain over the heuristic). Stage seconds are added by the caller.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/common/dtype.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/small_n_dispatch.h"
#include "tools/spmmc/compile_options.h"
#include "tools/spmmc/family_stage.h"
#include "tools/spmmc/tile_stage.h"
#include "tuner/compare_with_heuristic.h"
#include "tuner/compare_with_sgemm.h"

namespace spmmc::cli {

// Everything one compile decided and emitted, as the report and the summary line read it.
struct CompiledLayer {
  const CompileOptions& options;
  const LoadedMatrix& matrix;
  const DTypeRounding& rounding;     // A's values rounded to --dtype
  const Plan& plan;
  const TileChoice& tile;
  const FamilyChoice& family;
  const M1Plan& rows_plan;           // the tiling whose rows the kernel takes
  const SmallNDispatch& small_n;
  const EmittedKernel& kernel;
  const std::string& weights_sha256;
  const SgemmComparison& sgemm;
  const HeuristicComparison& versus;
};

// NAME.json's content, without "seconds".
nlohmann::ordered_json compile_report(const CompiledLayer& layer);

}  // namespace spmmc::cli
