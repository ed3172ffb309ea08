#include "tools/spmmc/json_fields.h"

namespace spmmc::cli {

nlohmann::ordered_json tiling_json(const TilingStats& s) {
  // A tile's non-empty columns are its M1 x 1 non-zero vectors (FlashSparse's 8 x 1 at M1 = 8);
  // grouped k at a time they are the sparse operands of a tensor-core MMA: k = 8 for FP16 and BF16
  // (m16n8k8), 4 for TF32 (m16n8k4), the last group of a tile padded.
  int64_t groups_of_8 = 0, groups_of_4 = 0;
  for (const int32_t nnc : s.nnc_per_tile) groups_of_8 += (nnc + 7) / 8, groups_of_4 += (nnc + 3) / 4;
  return {{"tiles", s.tiles},     {"max_nnc", s.max_nnc}, {"mean_nnc", s.mean_nnc},
          {"nnc_sum", s.nnc_sum}, {"max_nnz", s.max_nnz}, {"nnz_cov", s.nnz_cov},
          {"vector_groups_of_8", groups_of_8}, {"vector_groups_of_4", groups_of_4}};
}

}  // namespace spmmc::cli
