// The balanced family's schedule (docs/design/balanced.md): A's rows cut into pieces ahead of time,
// from A alone, and the pieces placed one per warp in blocks so that a row's pieces share a block.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/balanced_pieces.h"

namespace spmmc {

// One slot's work (a warp's, or a lane group's where a warp takes several pieces): products [begin,
// end) of `row` (row -1: an idle slot that pads a block), its row's `pieces`, the first of them the
// block's slot `first`.
struct BalancedPiece {
  int32_t row = -1, begin = 0, end = 0;
  int32_t first = 0, pieces = 1;
  bool operator==(const BalancedPiece& o) const {
    return row == o.row && begin == o.begin && end == o.end && first == o.first && pieces == o.pieces;
  }
};

struct BalancedSchedule {
  int32_t warps = kBalancedWarps;    // per block
  int32_t groups = 1;                // pieces per warp (1, 2 or 4), each on 32 / groups lanes
  int32_t piece_length = 0;          // rows of more products are cut
  std::vector<BalancedPiece> slots;  // slot b * slots_per_block() + s of the grid; whole blocks (at least one)
  int32_t rows_cut = 0;              // rows of more than one piece
  int32_t longest_piece = 0;         // products
  int32_t slots_per_block() const { return warps * groups; }
  int32_t blocks() const { return static_cast<int32_t>(slots.size()) / slots_per_block(); }
};

// The piece length of the measured rule: kBalancedPieceLength products, kBalancedLongRowsPieceLength
// where a row has more than 2048 (there the longest rows are cut into `warps` pieces whatever the length,
// and cutting rows of 65-256 products cost more than it gained: docs/benchmarks.md, issue 28).
inline constexpr int32_t kBalancedPieceLength = 64;
inline constexpr int32_t kBalancedLongRowsPieceLength = 256;
int32_t default_piece_length(const Csr& a);
// The shorter lengths a timed search also tries where the default is kBalancedPieceLength, at the fastest
// pieces per warp, the shortest only where the short one won (tools/spmmc/tune_stage.h): on eight shared
// graphs pieces of 32 ran 1.07x pieces of 64 at n = 128 (0.99-1.23x; 1.08x at n = 32, 1.04x at 256), most
// where rows are few and uneven, and pieces of 16 1.05x (0.93-1.30x: faster still on some, slower on
// others) (H100, docs/benchmarks.md, *Shorter pieces*).
inline constexpr int32_t kBalancedShortPieceLength = 32;
inline constexpr int32_t kBalancedShortestPieceLength = 16;
// Where the default is kBalancedLongRowsPieceLength, the search tries 128 and, where 128 won, 64: on the
// R-MAT graph of scale 14 and edge factor 32, pieces of 128 ran 1.03-1.10x pieces of 256 at n = 32-128 (on
// scale 16, factor 8, 0.98x), and 512 lost (0.68-0.73x) (H100, docs/benchmarks.md, *Pieces of R-MAT graphs'
// long rows*).
inline constexpr int32_t kBalancedLongRowsShortPieceLength = 128;
// The lengths a timed search tries after the rule's, longest first, each only where the one before it won
// (next_balanced_piece_length): {32, 16} after kBalancedPieceLength, {128, 64} after
// kBalancedLongRowsPieceLength, none after any other length.
std::vector<int32_t> shorter_piece_lengths_to_try(int32_t rule_length);

// Rows longest first (ties: lower row first); a row of more than piece_length products becomes
// balanced_row_pieces(len, piece_length, warps) pieces of ceil(len / pieces) products (the last shorter),
// every other row one piece (empty rows too: their slots store zeros). The cuts do not depend on
// `groups`, so neither do the sums. Pieces fill blocks of warps x groups slots in that order; where a
// row's pieces do not fit in what is left of a block, the block's rest is idle and they start the
// next one. Deterministic.
BalancedSchedule schedule_balanced(const Csr& a, int32_t piece_length, int32_t warps = kBalancedWarps, int32_t groups = 1);

// The pieces per warp of the measured rule for a file tuned for n (docs/design/balanced.md): at n below
// 128, 4 (groups of 8 lanes, four columns each) where the rows are short and even (mean at most 8
// products, coefficient of variation below 0.5) and at least 8192, 2 where A has at least 60 000 rows,
// else 1; at n of 128 and more, 1.
int32_t default_balanced_groups(const Csr& a, int64_t n);

// The family rule (docs/design/balanced.md): the balanced family instead of the generic one where A's
// row lengths vary (coefficient of variation at least kBalancedMinCov) and its longest row is cut into
// at least two whole pieces; `why` says which held or failed. Fitted on 10 shared graphs, 6 R-MAT
// graphs and 3 DNN layers at n = 32 and 128 (H100, docs/benchmarks.md, issue 28): at 1.0 a ResNet-50
// layer (1.02) ran 0.81x its generic kernel.
constexpr double kBalancedMinCov = 1.3;
bool balanced_by_rule(const Csr& a, std::string& why);

}  // namespace spmmc
