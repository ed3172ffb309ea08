#include "tuner/generic_candidate.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/families/balanced/balanced_schedule.h"
#include "codegen/generic_launch.h"

namespace spmmc {

std::string candidate_label(const PlannedCandidate& c) {
  switch (c.tile.family) {
    case KernelFamily::kGeneric: return "generic";
    case KernelFamily::kBalanced: return fmt::format("balanced-g{}", c.tile.m1 / kBalancedWarps);
    case KernelFamily::kUnrolled:
    case KernelFamily::kTensorCore: break;
  }
  return c.tile.label();
}

LaunchFill launch_fill(int64_t grid, int64_t threads, const Target& target, int64_t registers_per_thread) {
  const int64_t sms = std::max<int64_t>(target.sm_count, 1);
  const int64_t warps_per_block = (threads + target.warp_size - 1) / std::max<int64_t>(target.warp_size, 1);
  int64_t blocks_per_sm = std::min(target.max_blocks_per_sm, target.max_threads_per_sm / std::max<int64_t>(threads, 1));
  if (registers_per_thread > 0)
    blocks_per_sm = std::min(blocks_per_sm, target.registers_per_sm / (registers_per_thread * std::max<int64_t>(threads, 1)));
  blocks_per_sm = std::max<int64_t>(blocks_per_sm, 1);
  LaunchFill out;
  out.wave_fill = std::min(1.0, static_cast<double>(grid) / static_cast<double>(sms * blocks_per_sm));
  out.resident_warps_per_sm =
      static_cast<double>(std::min(grid, sms * blocks_per_sm) * warps_per_block) / static_cast<double>(sms);
  return out;
}

PlannedCandidate generic_candidate(const Csr& a, const Plan& plan, const Target& target) {
  const int64_t n = plan.shape.n;
  const int sms = static_cast<int>(std::max<int64_t>(target.sm_count, 1));
  const GenericLaunch l = generic_launch(generic_shape(a, sms, /*weights_ahead=*/true, DType::kFp32), n, true);
  const int64_t threads = int64_t{l.block_x} * l.block_y;
  const int64_t rows_per_block = l.rows_per_block;
  const int64_t cols_per_block = l.columns_per_block;

  PlannedCandidate c;
  c.tile.family = KernelFamily::kGeneric;
  c.tile.m1 = static_cast<int32_t>(rows_per_block);
  c.tile.n1 = static_cast<int32_t>(std::min<int64_t>(cols_per_block, int64_t{1} << 30));
  c.tile.cols_per_thread = l.cols_per_thread;
  c.tile.min_blocks_per_sm = 1;

  CandidateFeatures& f = c.features;
  f.family = 1;
  f.a_tile_num = (a.rows + rows_per_block - 1) / rows_per_block;
  f.b_tile_num = (n + cols_per_block - 1) / cols_per_block;
  f.block_num = f.a_tile_num * f.b_tile_num;
  f.sparsity = 1.0 - static_cast<double>(a.nnz()) / (static_cast<double>(plan.shape.m) * static_cast<double>(plan.shape.k));
  f.nnc_sum = a.nnz();
  f.nnz_max = a.longest_row();
  f.m1 = rows_per_block;
  f.n1 = cols_per_block;
  f.k = plan.shape.k;
  f.cols_per_thread = l.cols_per_thread;
  f.threads_per_block = threads;
  f.min_blocks_per_sm = 1;
  const int64_t grid = int64_t{l.grid_x} * l.grid_y;
  f.blocks_per_a_tile = 1;
  // The tiles a block loops over beyond grid.y's.
  const int64_t looped = l.loops_over_columns ? f.b_tile_num : f.a_tile_num;
  f.b_tiles_per_block = (looped + l.grid_y - 1) / l.grid_y;
  const LaunchFill fill = launch_fill(grid, threads, target);
  f.wave_fill = fill.wave_fill;
  f.resident_warps_per_sm = fill.resident_warps_per_sm;
  f.kernels = 1;
  return c;
}

}  // namespace spmmc
