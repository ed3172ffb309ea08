// The balanced schedule's cut rule (docs/design/balanced.md), kept in planning so that the schedule
// (codegen/families/balanced/balanced_schedule.h) and the small-n dispatch's count of pieces
// (small_n_dispatch.h) apply the same one.
#pragma once

#include <cstdint>

namespace spmmc {

constexpr int32_t kBalancedWarps = 16;  // warps per block (16 ran best of 8, 16 and 32: docs/benchmarks.md, issue 28)

// The pieces a row of `length` products is cut into: one where length <= piece_length (an empty row
// too), else min(most, ceil(length / piece_length)). Needs piece_length and most of at least one.
int32_t balanced_row_pieces(int64_t length, int32_t piece_length, int32_t most);

}  // namespace spmmc
