#include "tuner/balanced_candidate.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/families/balanced/balanced_launch.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/common/diagnostics.h"
#include "tuner/generic_candidate.h"

namespace spmmc {

PlannedCandidate balanced_candidate(const Csr& a, const Plan& plan, const Target& target, int32_t piece_length,
                                    int32_t groups) {
  SPMMC_CHECK(a.rows >= 1 && (groups == 1 || groups == 2 || groups == 4),
              fmt::format("balanced candidate of {} rows, {} pieces per warp", a.rows, groups));
  const int64_t n = plan.shape.n;
  const BalancedSchedule s = schedule_balanced(a, piece_length, kBalancedWarps, groups);
  const BalancedLaunch l = balanced_launch(n, 16, s.blocks(), s.warps, groups);
  const int64_t lanes = 32 / groups;
  const int64_t cols_per_block = lanes * l.cols_per_lane;
  const int64_t threads = int64_t{32} * s.warps;

  PlannedCandidate c;
  c.tile.family = KernelFamily::kBalanced;
  c.tile.m1 = s.slots_per_block();
  c.tile.n1 = static_cast<int32_t>(cols_per_block);
  c.tile.cols_per_thread = l.cols_per_lane;
  c.tile.min_blocks_per_sm = groups > 1 ? 2 : 1;  // the printer's launch bound (print_balanced.cpp)

  CandidateFeatures& f = c.features;
  f.family = 2;
  f.a_tile_num = s.blocks();
  f.b_tile_num = (n + cols_per_block - 1) / cols_per_block;
  f.block_num = f.a_tile_num * f.b_tile_num;
  f.sparsity = 1.0 - static_cast<double>(a.nnz()) / (static_cast<double>(plan.shape.m) * static_cast<double>(plan.shape.k));
  f.nnc_sum = a.nnz();
  f.nnz_max = s.longest_piece;
  f.m1 = c.tile.m1;
  f.n1 = cols_per_block;
  f.k = plan.shape.k;
  f.cols_per_thread = l.cols_per_lane;
  f.threads_per_block = threads;
  f.min_blocks_per_sm = c.tile.min_blocks_per_sm;
  f.blocks_per_a_tile = 1;
  f.b_tiles_per_block = 1;
  constexpr int64_t kRegistersPerThread = 64;  // the kernels' cap (kernel_balanced.cuh)
  const LaunchFill fill = launch_fill(f.block_num, threads, target, kRegistersPerThread);
  f.wave_fill = fill.wave_fill;
  f.resident_warps_per_sm = fill.resident_warps_per_sm;
  f.kernels = 1;
  return c;
}

}  // namespace spmmc
