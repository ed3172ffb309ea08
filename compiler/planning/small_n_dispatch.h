// Where an emitted file leaves its family for the generic path (issue 27; docs/emitted-code.md,
// *Every batch size*): the unrolled and tensor-core kernels are tuned for one n and take about the
// same time at every smaller n (each block walks its whole tile code), while the generic kernels'
// time shrinks with n, so below some n the generic path is the faster one. spmmc compile writes the
// answer into the file (EmitOptions::generic_below_n, NAME_info()->generic_below_n).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/common/csr.h"

namespace spmmc {

struct SmallNDispatch {
  int64_t generic_below_n = 0;  // the generic path for every n below this
  std::string why;              // for NAME.json
  // The balanced kernel as the small-n path, ahead of the generic path (choose_balanced_path): every n
  // in [balanced_from_n, balanced_below_n); none where balanced_below_n <= balanced_from_n.
  int64_t balanced_from_n = 0;
  int64_t balanced_below_n = 0;
  int32_t piece_length = 0;  // its rows of more products are cut
  // Every n of the path below this takes its pairs kernel (two pieces per warp); 0: none.
  int64_t balanced_pairs_below_n = 0;
  // The path's one column per lane (n odd, or B and C not aligned to 8 bytes) only below this; from it
  // such n go on to the generic path (choose_balanced_path: kBalancedV1BelowN). balanced_below_n where the
  // path keeps it to its end; 0 without a path.
  int64_t balanced_v1_below_n = 0;
  // n = 1 by the path's kernel with a lane per product of each piece (kBalancedSpmv); false without a path.
  bool balanced_spmv = false;
  std::string balanced_why;  // for NAME.json
  // The path's second table (choose_balanced_mid_path): the balanced kernel with pieces of
  // mid_piece_length products for every n in [balanced_mid_from_n, balanced_mid_below_n); none where
  // balanced_mid_below_n <= balanced_mid_from_n.
  int64_t balanced_mid_from_n = 0;
  int64_t balanced_mid_below_n = 0;
  int32_t mid_piece_length = 0;
  std::string balanced_mid_why;  // for NAME.json
};

// The unrolled launch of the emitted file, for the rule where nothing was measured.
struct UnrolledLaunch {
  int64_t a_tiles = 0;  // blocks along grid.x (every kernel's A-tiles)
  int64_t n1 = 0;       // columns of a block
  int64_t sms = 0;      // the target's SMs (0: unknown)
};

// Where the unrolled launch reaches this share of the SMs' blocks (a_tiles x n / N1 against the
// SMs), it and the generic path take about the same time. First fitted against four columns per
// thread: 0.3-0.7, median 0.45, over 16 layers of 256-2048 rows with tiles of N1 = 512 and 1024
// compiled for n = 8192 (H100, docs/benchmarks.md, *Fourth round*). The generic path's warp per row
// (from n = 512) is 1.10-1.14x faster, so the crossing moved: on the 23 range-sample files (H100,
// docs/benchmarks.md, *A warp per row on the GPU*) the unrolled kernel at fill 0.48 ran 0.61-0.88x
// the warp kernel on the four 2048-row layers, at fill 0.97 0.99-1.56x; interpolated, the two meet at
// 0.64-1.0. Replayed on the sample, 0.55-0.8 pick the same kernels (n = 1024 from 1.02 to 1.08x
// cuSPARSE, 2048 1.13x either way).
inline constexpr double kUnrolledFillAtCrossing = 0.7;
// Launches of at most kFewATiles A-tiles cross earlier: on eight 512-row layers in tiles of 32 rows (16
// A-tiles of N1 = 1024; H100, docs/benchmarks.md, *Two designs for n = 32-2048 that lost*), files for
// 1:8192 run at n = 2048-5120 with each kernel at every n, the unrolled kernel was the faster from
// fill 0.36-0.48 (K = 512, 100-256 products a row) or 0.48-0.6 (the others) up, one beyond 0.6; at
// 0.7 (n = 5914) the rule kept the generic path where it ran 0.66-0.94x at n = 5120 on seven of them.
// At 0.5 (n = 4224) those seven take the unrolled kernel at 5120, the eighth loses 6% there, and
// n = 4096 keeps the generic path (faster there on four of the eight).
inline constexpr int64_t kFewATiles = 16;
inline constexpr double kFewATilesFillAtCrossing = 0.5;
// The fill at the crossing for a launch of `a_tiles` A-tiles: one of the two above.
double unrolled_fill_at_crossing(int64_t a_tiles);

// The dispatch of a file tuned for n whose family is not the generic one. Where the tuner measured
// both at n (`family_ms`: the emitted kernel's median, `generic_ms`: the generic kernel's), the n at
// which the generic kernel's time, scaled in proportion to n, meets the family's flat time:
// floor(n x family_ms / generic_ms), at most n. Else, where `launch` is known, the n at which the
// unrolled blocks reach unrolled_fill_at_crossing(A-tiles) x the SMs: ceil(0.7 x SMs x N1 / A-tiles), 0.5 for
// at most 16 A-tiles, at most n
// (below it the unrolled kernel leaves SMs idle and the generic path is faster; above it the
// unrolled kernel fills the GPU). Without `launch`, n / 2, the crossover measured on an H100 for
// kernels about twice as fast as the generic one at their n. Until 2026-12-06 the fill's n was
// capped at n / 2 too; on ten layers of 32 A-tiles in files for n = 4096 the generic path at
// n = 2048 (fill 0.48) ran 1.17x the unrolled kernel (docs/benchmarks.md, *The 114 layers at every
// n*). At least 1. Needs n >= 1 and positive times (InternalError).
SmallNDispatch choose_generic_below_n(int64_t n, std::optional<double> family_ms, std::optional<double> generic_ms,
                                      const UnrolledLaunch& launch = {});

// Both kernels' medians at one batch size.
struct BatchSizeTime {
  int64_t n = 0;
  double family_ms = 0.0;
  double generic_ms = 0.0;
};

// The dispatch of a file compiled for several batch sizes (compiler/planning/batch_sizes.h), from
// both kernels timed at each of them (`measured`, ascending n, the largest the n it is tuned for).
// The family's kernel takes every n from the smallest measured n at which it is at least as fast as
// the generic kernel and stays so at every larger measured n. Below the smallest measured n, the
// rule above at that n; between a size where the generic kernel was faster and the next, where the
// family's was, the n where the two times, each linear in n between the sizes, meet. Where the
// generic kernel was faster at every size, the family's kernel takes only the n above the largest.
// One size: the rule above. Needs ascending n >= 1 and positive times (InternalError).
SmallNDispatch choose_generic_below_n(const std::vector<BatchSizeTime>& measured);

// The balanced kernel as the small-n path of a float32 file of the unrolled or generic family (issue 27,
// docs/design/small-n.md): rows of more than kSmallNPieceLength products cut into pieces that warps of one
// block sum, from n = kBalancedFromN up to kBalancedBelowN (and, in an unrolled file, no further than its
// generic path reaches: above it the unrolled kernel was tuned). Measured on 8 DNN layers (H200,
// docs/benchmarks.md, *Sixth round*): pieces of 32 ran 1.24 / 1.28 / 1.39 / 1.12x the best cuSPARSE
// algorithm at n = 4 / 16 / 64 / 256 where the generic kernels ran 1.15 / 0.82 / 0.88 / 0.84x, pieces of
// 64 1.07x at n = 512 against 0.89x, and at n = 2048 the two were even (1.00 and 1.04x); at n = 1 the
// split kernel was faster (1.00 against 0.93x). On the 23 range files of issue 27 the path's end moved
// from 512 to 1024 took n = 512 from 0.95 to 1.10x (geomean) against four columns per thread. From
// n = 512 the generic path has a warp per row (kGenericWarpFrom, 1.10x faster), and against it the path
// ran 0.92x at n = 512 (0.63-1.46, 13 of the 23 range-sample layers: neither short rows nor few, below),
// hence the end at 512 again (H100, docs/benchmarks.md, *A warp per row on the GPU*).
// Where no row is cut the kernel sums whole rows, a warp each, which ran slower than the generic
// path (0.36-0.85x), so A must have a row longer than the piece length. The cut rows' sums are in piece
// order, not column order: `batch_invariant` (spmmc compile --batch-invariant) keeps every path in column
// order and leaves this one out.
inline constexpr int32_t kSmallNPieceLength = 32;
inline constexpr int64_t kBalancedFromN = 4;
inline constexpr int64_t kBalancedBelowN = 512;
// Beyond kBalancedBelowN (balanced_path_below_n), measured on the 23 layers of range-sample.cases, each
// file built with the path at every n against the generic path's warp per row (H100, docs/benchmarks.md,
// *A warp per row on the GPU*): where A's rows average at most kBalancedShortRowsMean products (a piece
// of 32) the path ran 1.08, 1.09 and 1.03x the warp kernel at n = 512, 1024 and 2048 (geomeans, 6 layers;
// 0.94-1.51x); where they are longer it lost (0.92, 0.83, 0.77x; rows of 51 products 0.80-0.98x at 1024)
// unless the generic launch left the SMs short of warps (rows x ceil(n / 128) of them): at most
// kBalancedFewWarpsPerSm per SM, 1.42, 1.19, 1.02x (0.98-1.87x; A of 64-256 rows). Against four columns
// per thread the short rows' mean was 64 (*Where the balanced path ends*). Neither end goes past
// kBalancedLongestBelowN.
inline constexpr double kBalancedShortRowsMean = 32.0;
inline constexpr int64_t kBalancedFewWarpsPerSm = 8;
inline constexpr int64_t kBalancedLongestBelowN = 4096;
// Two pieces per warp (16 lanes each, V = 1) for the path's n below kBalancedPairsBelowN, where A cuts
// into at least kBalancedPairsFromPieces pieces. Measured on 8 DNN layers (H200, docs/benchmarks.md,
// *Seventh round*): at n = 4-16 two pieces per warp took 0.66-0.73x the time of one on the two layers
// of more pieces than one wave of warps holds (7 000 and 8 192 pieces; 132 SMs x 32 warps = 4 224), about
// the same on three of 2 048-3 584 pieces (0.96-1.02x), and 1.07-1.14x on three small layers of 64-1 024
// pieces, where a warp per piece hides more latency. From n = 17 a lane group of 16 would need a second
// block of columns.
inline constexpr int64_t kBalancedPairsBelowN = 17;
inline constexpr int64_t kBalancedPairsFromPieces = 4224;
// Where the path would run one column per lane (n odd, or B and C not aligned to 8 bytes: a load of one
// float per lane and product), on A of rows of more than kBalancedShortRowsMean products on average and at
// least kBalancedV1FromRows rows, the generic path from n = kBalancedV1BelowN on (docs/benchmarks.md, *Odd n
// on the balanced path*). On the 31 generic-family files of strided.cases (H100) the generic path ran
// 1.24-1.77x the path's one column per lane at n = 511 on the 22 such layers (every one faster), 0.97-1.08x
// on the short rows and the 64-row layers. On those 22 at odd n from 33 to 511 (H200, v1-end.cases, each
// file with the generic path from n = 32 against none) it ran 0.74, 0.75, 0.86 and 0.92x the path's speed at
// n = 33, 63, 95 and 127, 1.00x at 191, then 1.16, 1.33 and 1.47x at 255, 383 and 511: the two meet at
// about 192.
inline constexpr int64_t kBalancedV1FromRows = 128;
inline constexpr int64_t kBalancedV1BelowN = 192;
// n = 1 by the balanced kernel with a lane per product of each piece and a butterfly of shuffles
// (spmmc_balanced_spmv), in every file with the path and in the balanced family, unless batch_invariant
// (its sums are in a third order). Measured at n = 1 (H200, docs/benchmarks.md, *n = 1 as a lane per
// product*): on the 23 range-sample DNN layers (generic-family files) 1.23x faster than the path's split
// kernel (geomean; 0.98-1.56x), 1.14 -> 1.41x the best cuSPARSE algorithm; on the ten shared graphs (the
// default family) 1.00-3.01x, no graph slower.
inline constexpr bool kBalancedSpmv = true;
// Where the path ends by the rule above, for a target of `sms` SMs (0: unknown): kBalancedLongestBelowN
// where A's rows average at most kBalancedShortRowsMean products; else the n after the last multiple of 128
// at which the generic path's launch (a warp per row and 128 columns) has at most kBalancedFewWarpsPerSm warps per SM
// (rows x n / 128 <= kBalancedFewWarpsPerSm x sms), at least kBalancedBelowN and at most
// kBalancedLongestBelowN. Says why in `why`.
int64_t balanced_path_below_n(const Csr& a, int64_t sms, std::string& why);
// The pieces the balanced path cuts A into: balanced_row_pieces(length, kSmallNPieceLength, kBalancedWarps)
// per row (balanced_pieces.h: the schedule's rule).
int64_t small_n_pieces(const Csr& a);
// The rule's end of the pairs kernel for a path that ends below `below_n`: min(kBalancedPairsBelowN,
// below_n) where A cuts into at least kBalancedPairsFromPieces pieces, else 0.
int64_t balanced_pairs_below_n(const Csr& a, int64_t below_n);
// The rule's end of the one column per lane of a path that ends below `below_n` with pairs below
// `pairs_below_n`: max(kBalancedV1BelowN, pairs_below_n) where A's rows average more than
// kBalancedShortRowsMean products and A has at least kBalancedV1FromRows rows (and that is below
// `below_n`), else below_n.
int64_t balanced_v1_below_n(const Csr& a, int64_t below_n, int64_t pairs_below_n);
// `d` with its balanced fields set: for the generic family's file where `generic_family`, else for the
// unrolled file whose generic path reaches d.generic_below_n, ending at balanced_path_below_n(a, sms), with
// its pairs below kBalancedPairsBelowN where A has kBalancedPairsFromPieces pieces and its one column per
// lane below kBalancedV1BelowN where A's rows are long and many (above). Leaves them zero (and says why)
// where A has no row longer than the piece length, or batch_invariant.
SmallNDispatch choose_balanced_path(SmallNDispatch d, const Csr& a, bool generic_family, bool batch_invariant,
                                    int64_t sms);

// Uneven rows from n = 512 (docs/design/small-n.md, *Uneven rows from n = 512*). Where the path ends (at
// kBalancedBelowN for rows of more than kBalancedShortRowsMean products) the generic path's warp per row
// has half a wave of warps or less on a 512-row layer, so its time is its longest row's: Nsight Compute
// on the 0.9 attention v at n = 512 (rows of 51 products, the longest 209) put the warp kernel at
// 14.4 us against the 10.6 us of cuSPARSE's kernel of equal runs of non-zeros (H100, docs/benchmarks.md,
// *Rows over the union of their columns, and what ALG3 does*). On 31 layers (H100, *Long rows cut at
// n = 512*), the balanced kernel with pieces of A's mean row length (at least kSmallNPieceLength) against
// the warp per row: where A's longest row holds at least kUnevenRowsLongestOverMean times the mean, 1.23x
// as fast at n = 512 (geomean of 18 layers, 0.97-1.72x) and 1.08x at 1024 (0.83-1.55x); on the 13 others
// 0.93x at 512 (0.70-1.09x). So a file whose path exists and whose rows are that uneven carries a second
// table of pieces of that length, which the entry point takes from where the path ends up to below
// kBalancedMidBelowN (no further than the generic path of an unrolled file reaches); at 1024 and beyond
// the warp per row (and its wide blocks) again, where the second table lost on some layers. As emitted
// (H100, docs/benchmarks.md, *The second table as emitted*) it ran 1.28x the warp per row at n = 512 and
// 1.19x at 768 on the 11 of those layers whose files carry it, but its one-column-per-lane kernel 0.79x at
// n = 1023 (the files now take only its four columns per lane), and on the 0.98 classifier, whose
// generic path takes the warp per row in blocks of 32 warps (rows sharing B through L1 where K >= 2048),
// 16.1 us against that kernel's 13.1: so the table also ends where that kernel starts.
inline constexpr double kUnevenRowsLongestOverMean = 2.0;
inline constexpr int64_t kBalancedMidBelowN = 1024;
// The second table's piece length: A's mean row length rounded up, at least kSmallNPieceLength.
int32_t balanced_mid_piece_length(const Csr& a);
// `d` (choose_balanced_path's) with its second table's fields set by the rule above: from
// d.balanced_below_n up to below kBalancedMidBelowN (and d.generic_below_n unless `generic_family`, and
// `wide_from_n`, where the generic path takes its wide warp kernel, unless 0:
// codegen/generic_launch.h's generic_warp_wide_from_n), where the path exists, A's longest row is at least
// kUnevenRowsLongestOverMean times the mean and longer than the piece length; else left zero, and
// `balanced_mid_why` says why.
SmallNDispatch choose_balanced_mid_path(SmallNDispatch d, const Csr& a, bool generic_family, int64_t wide_from_n = 0);

}  // namespace spmmc
