#include "codegen/tensor_core_launch.h"

#include <algorithm>

#include "compiler/common/diagnostics.h"

namespace spmmc {

TensorCoreLaunch tensor_core_launch(const TensorCoreCode& code, int64_t n) {
  SPMMC_CHECK(n >= 1 && n % 8 == 0, "the tensor-core kernels take n a multiple of 8");
  SPMMC_CHECK(code.windows >= 1, "a tensor-core file has windows");
  constexpr int64_t kColsPerWarp = 64, kWarps = 4, kStagedWarps = kTensorCoreStagedWarps, kMaxGridY = 65535;
  TensorCoreLaunch l;
  const int64_t x = (n + kColsPerWarp - 1) / kColsPerWarp;
  SPMMC_CHECK(x <= 0x7fffffff, "n within the grid's x dimension");
  l.grid_x = static_cast<unsigned>(x);
  int64_t per_block = kWarps;
  if (code.chunk_rows > 0 && n >= code.staged_from_n && n <= code.staged_max_n) {
    l.symbol = kTensorCoreStagedKernel;
    l.block_x = 32 * kStagedWarps;
    per_block = kStagedWarps;
  } else {
    l.parts = n < code.split4_below_n ? 4 : n < code.split2_below_n ? 2 : 1;
    per_block = kWarps / l.parts;
  }
  l.grid_y = static_cast<unsigned>(std::min((code.windows + per_block - 1) / per_block, kMaxGridY));
  return l;
}

}  // namespace spmmc
