// JSON fragments shared by the reports of several commands (plan, compile).
#pragma once

#include <nlohmann/json.hpp>

#include "compiler/planning/tiling_stats.h"

namespace spmmc::cli {

// {"tiles", "max_nnc", "mean_nnc", "nnc_sum", "max_nnz", "nnz_cov"} of a row tiling.
nlohmann::ordered_json tiling_json(const TilingStats& s);

}  // namespace spmmc::cli
