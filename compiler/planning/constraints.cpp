#include "compiler/planning/constraints.h"

#include <algorithm>

#include <fmt/format.h>

namespace spmmc {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

Verdict reject(Constraint c, std::string reason) { return {c, std::move(reason)}; }

Verdict check_register_resource(const TileCandidate& c, const Target& target, const ConstraintSettings& settings) {
  const int64_t per_thread = estimate_registers_per_thread(c, settings);
  if (per_thread > target.max_registers_per_thread)
    return reject(Constraint::kRegister, fmt::format("{} registers per thread exceed the limit of {}", per_thread,
                                                     target.max_registers_per_thread));
  const int64_t allocated = ceil_div(per_thread, target.register_allocation_granularity) * target.register_allocation_granularity;
  const int64_t per_block = allocated * c.threads_per_block();
  if (per_block > target.max_registers_per_block)
    return reject(Constraint::kRegister, fmt::format("{} registers per block ({} threads x {}) exceed the limit of {}", per_block,
                                                     c.threads_per_block(), allocated, target.max_registers_per_block));
  // __launch_bounds__(threads, min_blocks) caps ptxas at what min_blocks blocks leave each thread:
  // accumulators beyond that cap spill to local memory (docs/design/kernel.md).
  const int64_t cap = target.registers_per_sm / (int64_t{c.threads_per_block()} * std::max(c.min_blocks_per_sm, 1));
  if (target.registers_per_sm > 0 && per_thread > cap)
    return reject(Constraint::kRegister,
                  fmt::format("{} registers per thread exceed the {} that {} blocks of {} threads per SM leave (launch bounds)",
                              per_thread, cap, c.min_blocks_per_sm, c.threads_per_block()));
  return {};
}

Verdict check_hardware_utilisation(const TileCandidate& c, const ProblemShape& shape, const Target& target,
                                   const TilingStats& tiling) {
  if (c.threads_per_block() % target.warp_size != 0)
    return reject(Constraint::kHardware, fmt::format("{} threads per block are not a multiple of the warp size {}",
                                                     c.threads_per_block(), target.warp_size));
  if (c.threads_per_block() > target.max_threads_per_block)
    return reject(Constraint::kHardware, fmt::format("{} threads per block exceed the limit of {}", c.threads_per_block(),
                                                     target.max_threads_per_block));
  const int64_t blocks = static_cast<int64_t>(tiling.tiles) * ceil_div(shape.n, c.n1);
  if (2 * blocks < target.sm_count)
    return reject(Constraint::kHardware, fmt::format("{} thread blocks ({} A-tiles x {} B-tiles) are fewer than half of the {} SMs",
                                                     blocks, tiling.tiles, ceil_div(shape.n, c.n1), target.sm_count));
  return {};
}

Verdict check_load_balance(const TileCandidate& c, const ProblemShape& shape, const TilingStats& tiling,
                           const ConstraintSettings& settings) {
  if (tiling.nnz_cov > settings.max_row_cov)
    return reject(Constraint::kBalance, fmt::format("COV_row {:.3f} of non-zeros across {} A-tiles exceeds TH_row {}",
                                                    tiling.nnz_cov, tiling.tiles, settings.max_row_cov));
  const double waste = column_waste(shape.n, c.n1);
  if (waste > settings.max_col_waste)
    return reject(Constraint::kBalance, fmt::format("WASTE_col {:.3f} ({} of {} B columns are padding) exceeds TH_col {}", waste,
                                                    ceil_div(shape.n, c.n1) * c.n1 - shape.n, ceil_div(shape.n, c.n1) * c.n1,
                                                    settings.max_col_waste));
  return {};
}

}  // namespace

std::string_view constraint_name(Constraint c) {
  switch (c) {
    case Constraint::kNone: return "none";
    case Constraint::kRegister: return "register";
    case Constraint::kHardware: return "hardware";
    case Constraint::kBalance: return "balance";
  }
  return "?";
}

int64_t estimate_registers_per_thread(const TileCandidate& c, const ConstraintSettings& settings) {
  return static_cast<int64_t>(c.cols_per_thread) * (c.m1 + settings.extra_registers_per_column) + settings.addressing_registers;
}

double column_waste(int64_t n, int32_t n1) {
  const int64_t spanned = ceil_div(n, n1) * n1;
  return static_cast<double>(spanned - n) / static_cast<double>(spanned);
}

Verdict check_constraints(const TileCandidate& c, const ProblemShape& shape, const Target& target, const TilingStats& tiling,
                          const ConstraintSettings& settings) {
  if (Verdict v = check_register_resource(c, target, settings); !v.accepted()) return v;
  if (Verdict v = check_hardware_utilisation(c, shape, target, tiling); !v.accepted()) return v;
  return check_load_balance(c, shape, tiling, settings);
}

}  // namespace spmmc
