// The balanced family's schedule (docs/design/balanced.md): A's rows cut into pieces ahead of time,
// from A alone, and the pieces placed one per warp in blocks so that a row's pieces share a block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/csr.h"

namespace spmmc {

constexpr int32_t kBalancedWarps = 16;  // warps per block (16 ran best of 8, 16 and 32: docs/benchmarks.md, issue 28)

// One warp's work: products [begin, end) of `row` (row -1: an idle warp that pads a block), its
// row's `pieces`, the first of them the block's warp `first`.
struct BalancedPiece {
  int32_t row = -1, begin = 0, end = 0;
  int32_t first = 0, pieces = 1;
  bool operator==(const BalancedPiece& o) const {
    return row == o.row && begin == o.begin && end == o.end && first == o.first && pieces == o.pieces;
  }
};

struct BalancedSchedule {
  int32_t warps = kBalancedWarps;    // per block
  int32_t piece_length = 0;          // rows of more products are cut
  std::vector<BalancedPiece> slots;  // warp b * warps + w of the grid; a whole number of blocks (at least one)
  int32_t rows_cut = 0;              // rows of more than one piece
  int32_t longest_piece = 0;         // products
  int32_t blocks() const { return static_cast<int32_t>(slots.size()) / warps; }
};

// The piece length of the measured rule: 64 products, 256 where a row has more than 2048 (there the
// longest rows are cut into `warps` pieces whatever the length, and cutting rows of 65-256 products
// cost more than it gained: docs/benchmarks.md, issue 28).
int32_t default_piece_length(const Csr& a);

// Rows longest first (ties: lower row first); a row of more than piece_length products becomes
// min(warps, ceil(len / piece_length)) pieces of ceil(len / pieces) products (the last shorter),
// every other row one piece (empty rows too: their warps store zeros). Pieces fill blocks of `warps`
// warps in that order; where a row's pieces do not fit in what is left of a block, the block's rest
// is idle and they start the next one. Deterministic.
BalancedSchedule schedule_balanced(const Csr& a, int32_t piece_length, int32_t warps = kBalancedWarps);

// The family rule (docs/design/balanced.md): the balanced family instead of the generic one where A's
// row lengths vary (coefficient of variation at least kBalancedMinCov) and its longest row is cut into
// at least two whole pieces; `why` says which held or failed. Fitted on 10 shared graphs, 6 R-MAT
// graphs and 3 DNN layers at n = 32 and 128 (H100, docs/benchmarks.md, issue 28): at 1.0 a ResNet-50
// layer (1.02) ran 0.81x its generic kernel.
constexpr double kBalancedMinCov = 1.3;
bool balanced_by_rule(const Csr& a, std::string& why);
bool balanced_by_rule(const Csr& a, std::string& why);

}  // namespace spmmc
