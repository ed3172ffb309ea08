#include "compiler/planning/balanced_pieces.h"

#include <algorithm>

#include "compiler/common/diagnostics.h"

namespace spmmc {

int32_t balanced_row_pieces(int64_t length, int32_t piece_length, int32_t most) {
  SPMMC_CHECK(piece_length >= 1 && most >= 1, "balanced pieces: a piece length and a most of at least one");
  if (length <= piece_length) return 1;
  return static_cast<int32_t>(std::min<int64_t>(most, (length + piece_length - 1) / piece_length));
}

}  // namespace spmmc
