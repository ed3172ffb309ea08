#include "tuner/time_generic_kernel.h"

#include <fmt/format.h>

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/generic_launch.h"
#include "tuner/check_real_kernels.h"

namespace spmmc {

EmittedKernel emit_generic_nvrtc_form(const Csr& a, const RowTiling& tiling, const std::string& arch) {
  return emit_unrolled_kernel(a, tiling, TileCandidate{}, csr_nvrtc_form_options("generic_family", arch));
}

Measurement time_generic_kernel(const Csr& a, const RowTiling& tiling, const GpuContext& gpu, const TuningOptions& options,
                                const ReferenceProduct* reference) {
  const std::string arch = gpu.device().arch();
  const EmittedKernel k = emit_generic_nvrtc_form(a, tiling, arch);
  const std::vector<CompileOutcome> compiled =
      compile_in_parallel({{{"generic_family.cu", k.nvrtc_cu}, {arch, k.nvrtc_options}}}, options.pool, options.cache, {});
  Measurement m;
  if (!compiled.front().ok()) {
    m.outcome = Outcome::kCompileFailed;
    m.detail = compiled.front().error;
    return m;
  }
  // The tuner's B and C come from the driver's allocator: aligned far beyond 16 bytes.
  const GenericLaunch launch = generic_launch(generic_shape(a, gpu.device().sm_count, /*weights_ahead=*/true, DType::kFp32), options.n, true);
  LaunchShape shape;
  shape.grid_x = launch.grid_x, shape.grid_y = launch.grid_y;
  shape.block_x = launch.block_x, shape.block_y = launch.block_y;
  TileCandidate block;
  block.m1 = kGenericRowsPerBlock;
  block.cols_per_thread = launch.cols_per_thread;
  block.n1 = static_cast<int32_t>(launch.block_x) * launch.cols_per_thread;
  const RealKernel kernel = family_kernel(*compiled.front().cubin, launch.symbol, shape, block, k.nvrtc_arrays);
  return check_and_time_real_kernels(a, {kernel}, gpu, options, reference).front();
}

}  // namespace spmmc
