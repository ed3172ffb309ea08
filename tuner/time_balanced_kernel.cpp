#include "tuner/time_balanced_kernel.h"

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/families/balanced/balanced_launch.h"
#include "codegen/families/balanced/balanced_schedule.h"

namespace spmmc {

EmittedKernel emit_balanced_nvrtc_form(const Csr& a, int32_t piece_length, int32_t groups, const std::string& arch) {
  EmitOptions emit = csr_nvrtc_form_options("balanced_family", arch);
  emit.balanced = true;
  emit.piece_length = piece_length;
  emit.balanced_groups = groups;
  // No tiling: the balanced family's schedule orders its pieces itself.
  return emit_unrolled_kernel(a, RowTiling{}, TileCandidate{}, emit);
}

std::vector<Measurement> time_balanced_kernels(const Csr& a, int32_t piece_length, const std::vector<int32_t>& groups,
                                               const GpuContext& gpu, const TuningOptions& options,
                                               const ReferenceProduct* reference) {
  std::vector<EmittedKernel> emitted;
  std::vector<CompileJob> jobs;
  const std::string arch = gpu.device().arch();
  for (const int32_t g : groups) {
    emitted.push_back(emit_balanced_nvrtc_form(a, piece_length, g, arch));
    jobs.push_back({{"balanced_family.cu", emitted.back().nvrtc_cu}, {arch, emitted.back().nvrtc_options}});
  }
  const std::vector<CompileOutcome> compiled = compile_in_parallel(jobs, options.pool, options.cache, {});
  std::vector<Measurement> out(groups.size());
  std::vector<RealKernel> kernels;
  std::vector<size_t> index;  // of each compiled kernel in `out`
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!compiled[i].ok()) {
      out[i].outcome = Outcome::kCompileFailed;
      out[i].detail = compiled[i].error;
      continue;
    }
    // The tuner's B and C come from the driver's allocator: aligned far beyond 16 bytes.
    const BalancedLaunch launch = balanced_launch(options.n, 256, emitted[i].balanced_blocks, kBalancedWarps, groups[i]);
    LaunchShape shape;
    shape.grid_x = launch.grid_x, shape.grid_y = launch.grid_y, shape.grid_z = launch.grid_z;
    shape.block_x = launch.block_x;
    TileCandidate group;  // what one lane group computes: a piece's row for its lanes' columns
    group.m1 = 1;
    group.cols_per_thread = launch.cols_per_lane;
    group.n1 = 32 / groups[i] * launch.cols_per_lane;
    kernels.push_back(family_kernel(*compiled[i].cubin, launch.symbol, shape, group, emitted[i].nvrtc_arrays));
    index.push_back(i);
  }
  if (kernels.empty()) return out;
  const std::vector<Measurement> timed = check_and_time_real_kernels(a, kernels, gpu, options, reference);
  for (size_t j = 0; j < timed.size(); ++j) out[index[j]] = timed[j];
  return out;
}

}  // namespace spmmc
