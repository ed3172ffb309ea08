#include "tools/spmmc/json_fields.h"

namespace spmmc::cli {

nlohmann::ordered_json tiling_json(const TilingStats& s) {
  return {{"tiles", s.tiles},     {"max_nnc", s.max_nnc}, {"mean_nnc", s.mean_nnc},
          {"nnc_sum", s.nnc_sum}, {"max_nnz", s.max_nnz}, {"nnz_cov", s.nnz_cov}};
}

}  // namespace spmmc::cli
