#include "compiler/planning/small_n_dispatch.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"
#include "compiler/planning/balanced_pieces.h"

namespace spmmc {

namespace {

// A's mean row length in products (0 without rows).
double mean_row_length(const Csr& a) { return a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0; }

}  // namespace

double unrolled_fill_at_crossing(int64_t a_tiles) {
  return a_tiles <= kFewATiles ? kFewATilesFillAtCrossing : kUnrolledFillAtCrossing;
}

SmallNDispatch choose_generic_below_n(int64_t n, std::optional<double> family_ms, std::optional<double> generic_ms,
                                      const UnrolledLaunch& launch) {
  SPMMC_CHECK(n >= 1, fmt::format("the small-n dispatch of a file for n = {}", n));
  SmallNDispatch d;
  if (family_ms && generic_ms) {
    SPMMC_CHECK(*family_ms > 0.0 && *generic_ms > 0.0, "the small-n dispatch needs positive times");
    const double at = std::floor(static_cast<double>(n) * *family_ms / *generic_ms);
    d.generic_below_n = std::clamp<int64_t>(static_cast<int64_t>(std::min(at, static_cast<double>(n))), 1, n);
    d.why = fmt::format("measured at n = {}: the kernel {:.4f} ms, the generic kernel {:.4f} ms; the generic kernel's "
                        "time in proportion to n meets the kernel's at n = {}",
                        n, *family_ms, *generic_ms, d.generic_below_n);
  } else if (launch.a_tiles > 0 && launch.n1 > 0 && launch.sms > 0) {
    const double fill = unrolled_fill_at_crossing(launch.a_tiles);
    const auto fills = static_cast<int64_t>(
        std::ceil(fill * static_cast<double>(launch.sms) * static_cast<double>(launch.n1) / static_cast<double>(launch.a_tiles)));
    d.generic_below_n = std::clamp<int64_t>(fills, 1, n);
    d.why = fmt::format("not measured: where its {} A-tiles x n / {} columns reach {} x the {} SMs{} (docs/design/small-n.md, "
                        "item 1)",
                        launch.a_tiles, launch.n1, fill, launch.sms,
                        fills >= n ? fmt::format(", at or above the n it is tuned for ({})", n) : std::string());
  } else {
    d.generic_below_n = std::max<int64_t>(1, n / 2);
    d.why = fmt::format("not measured: half the n it is tuned for ({}), where kernels about twice as fast as the "
                        "generic one at their n meet it (docs/benchmarks.md, issue 27)",
                        n);
  }
  return d;
}

SmallNDispatch choose_generic_below_n(const std::vector<BatchSizeTime>& measured) {
  SPMMC_CHECK(!measured.empty(), "the small-n dispatch of several batch sizes needs a measured one");
  for (size_t i = 0; i < measured.size(); ++i) {
    const BatchSizeTime& t = measured[i];
    SPMMC_CHECK(t.n >= 1 && t.family_ms > 0.0 && t.generic_ms > 0.0 && (i == 0 || measured[i - 1].n < t.n),
                fmt::format("the small-n dispatch: batch size {} of {} (n = {})", i, measured.size(), t.n));
  }
  if (measured.size() == 1) return choose_generic_below_n(measured[0].n, measured[0].family_ms, measured[0].generic_ms);
  std::string times;
  for (const BatchSizeTime& t : measured)
    times += fmt::format("{}n = {}: {:.4f} / {:.4f} ms", times.empty() ? "" : ", ", t.n, t.family_ms, t.generic_ms);
  // The first size of the suffix where the family's kernel is at least as fast.
  size_t first = measured.size();
  while (first > 0 && measured[first - 1].family_ms <= measured[first - 1].generic_ms) --first;
  SmallNDispatch d;
  if (first == measured.size()) {
    d.generic_below_n = measured.back().n + 1;
    d.why = fmt::format("measured (the kernel / the generic kernel) at {}: the generic kernel was faster at every size, "
                        "so the kernel runs only above n = {}",
                        times, measured.back().n);
    return d;
  }
  if (first == 0) {
    d = choose_generic_below_n(measured[0].n, measured[0].family_ms, measured[0].generic_ms);
    d.why = fmt::format("measured (the kernel / the generic kernel) at {}: the kernel at least as fast from the smallest "
                        "size on; below it, the generic kernel's time in proportion to n meets the kernel's at n = {}",
                        times, d.generic_below_n);
    return d;
  }
  const BatchSizeTime& a = measured[first - 1];  // the generic kernel faster
  const BatchSizeTime& b = measured[first];      // the family's kernel at least as fast
  const double gap_a = a.family_ms - a.generic_ms, gap_b = b.family_ms - b.generic_ms;  // > 0, <= 0
  const double at = static_cast<double>(a.n) + static_cast<double>(b.n - a.n) * gap_a / (gap_a - gap_b);
  d.generic_below_n = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(at)), a.n + 1, b.n);
  d.why = fmt::format("measured (the kernel / the generic kernel) at {}: the generic kernel faster at n = {}, the kernel "
                      "from n = {} on; the two times, linear in n between them, meet at n = {}",
                      times, a.n, b.n, d.generic_below_n);
  return d;
}

int64_t small_n_pieces(const Csr& a) {
  int64_t pieces = 0;
  for (int32_t r = 0; r < a.rows; ++r) {
    pieces += balanced_row_pieces(a.row_length(r), kSmallNPieceLength, kBalancedWarps);
  }
  return pieces;
}

int64_t balanced_pairs_below_n(const Csr& a, int64_t below_n) {
  return small_n_pieces(a) >= kBalancedPairsFromPieces ? std::min(kBalancedPairsBelowN, below_n) : 0;
}

int64_t balanced_path_below_n(const Csr& a, int64_t sms, std::string& why) {
  const double mean = mean_row_length(a);
  if (mean <= kBalancedShortRowsMean) {
    why = fmt::format("rows of {:.1f} products on average, at most {:.0f}", mean, kBalancedShortRowsMean);
    return kBalancedLongestBelowN;
  }
  // The generic path's warps: one per row and 128 columns (a warp per row from n = 512, four columns per
  // thread below).
  const int64_t rows = std::max<int32_t>(1, a.rows);
  const int64_t few = sms > 0 ? 128 * (kBalancedFewWarpsPerSm * sms / rows) + 1 : 0;
  if (few > kBalancedBelowN) {
    why = fmt::format("{} rows: the generic path's launch has at most {} warps per SM up to n = {}", a.rows,
                      kBalancedFewWarpsPerSm, std::min(few, kBalancedLongestBelowN) - 1);
    return std::min(few, kBalancedLongestBelowN);
  }
  why = fmt::format("rows of {:.1f} products on average, {} of them", mean, a.rows);
  return kBalancedBelowN;
}

int64_t balanced_v1_below_n(const Csr& a, int64_t below_n, int64_t pairs_below_n) {
  const int64_t end = std::max(kBalancedV1BelowN, pairs_below_n);
  return mean_row_length(a) > kBalancedShortRowsMean && a.rows >= kBalancedV1FromRows && end < below_n ? end : below_n;
}

SmallNDispatch choose_balanced_path(SmallNDispatch d, const Csr& a, bool generic_family, bool batch_invariant,
                                    int64_t sms) {
  d.balanced_from_n = d.balanced_below_n = d.balanced_pairs_below_n = d.balanced_v1_below_n = 0;
  d.balanced_spmv = false;
  d.piece_length = kSmallNPieceLength;
  if (batch_invariant) {
    d.balanced_why = "--batch-invariant: every n sums each row in column order (no balanced path)";
    return d;
  }
  const int32_t longest = a.longest_row();
  if (longest <= kSmallNPieceLength) {
    d.balanced_why = fmt::format("no row of A has more than {} products (the longest {}): the balanced kernel would sum "
                                 "whole rows, slower than the generic path",
                                 kSmallNPieceLength, longest);
    return d;
  }
  std::string end_why;
  const int64_t end = balanced_path_below_n(a, sms, end_why);
  const int64_t below = generic_family ? end : std::min(end, d.generic_below_n);
  if (below <= kBalancedFromN) {
    d.balanced_why = fmt::format("the file leaves its generic path at n = {}, below the balanced path's n = {}",
                                 d.generic_below_n, kBalancedFromN);
    return d;
  }
  d.balanced_from_n = kBalancedFromN;
  d.balanced_below_n = below;
  const int64_t pieces = small_n_pieces(a);
  d.balanced_pairs_below_n = balanced_pairs_below_n(a, below);
  d.balanced_v1_below_n = balanced_v1_below_n(a, below, d.balanced_pairs_below_n);
  const bool v1_ends = d.balanced_v1_below_n < below;
  d.balanced_spmv = kBalancedSpmv;
  d.balanced_why = fmt::format("rows up to {} products, cut into {} pieces of at most {} (at most 16 per row): the balanced "
                               "kernel for n = {}{} to {} ({}){}{}{}",
                               longest, pieces, kSmallNPieceLength, d.balanced_spmv ? "1 (a lane per product) and " : "",
                               kBalancedFromN, below - 1, end_why,
                               generic_family || below == end ? "" : ", where the generic path ends",
                               d.balanced_pairs_below_n > kBalancedFromN
                                   ? fmt::format(", two pieces per warp below n = {} (at least {} pieces)",
                                                 d.balanced_pairs_below_n, kBalancedPairsFromPieces)
                                   : std::string(),
                               v1_ends ? fmt::format("; from n = {} one column per lane (n odd, or B and C not aligned to "
                                                     "8 bytes) on the generic path instead ({} rows of {:.1f} products)",
                                                     d.balanced_v1_below_n, a.rows, mean_row_length(a))
                                       : std::string());
  return d;
}

int32_t balanced_mid_piece_length(const Csr& a) {
  const int64_t rows = std::max<int32_t>(1, a.rows);
  return static_cast<int32_t>(std::max<int64_t>(kSmallNPieceLength, (a.nnz() + rows - 1) / rows));
}

SmallNDispatch choose_balanced_mid_path(SmallNDispatch d, const Csr& a, bool generic_family, int64_t wide_from_n) {
  d.balanced_mid_from_n = d.balanced_mid_below_n = 0;
  d.mid_piece_length = 0;
  if (d.balanced_below_n <= d.balanced_from_n) {
    d.balanced_mid_why = "no balanced path";
    return d;
  }
  int64_t below = generic_family ? kBalancedMidBelowN : std::min(kBalancedMidBelowN, d.generic_below_n);
  const bool wide = wide_from_n > 0 && wide_from_n < below;
  if (wide) below = wide_from_n;
  if (d.balanced_below_n >= below) {
    d.balanced_mid_why = wide ? fmt::format("the path reaches n = {}, where the generic path's blocks of 32 warps start", below)
                              : fmt::format("the path reaches n = {}", below);
    return d;
  }
  const double mean = mean_row_length(a);
  const int32_t longest = a.longest_row(), piece = balanced_mid_piece_length(a);
  if (static_cast<double>(longest) < kUnevenRowsLongestOverMean * mean || longest <= piece) {
    d.balanced_mid_why = fmt::format("the longest row ({} products) is less than {:.0f} x the mean ({:.1f}) or no longer than "
                                     "a piece of {}",
                                     longest, kUnevenRowsLongestOverMean, mean, piece);
    return d;
  }
  d.balanced_mid_from_n = d.balanced_below_n;
  d.balanced_mid_below_n = below;
  d.mid_piece_length = piece;
  d.balanced_mid_why = fmt::format("the longest row ({} products) at least {:.0f} x the mean ({:.1f}): pieces of {} for n = {} to {}",
                                   longest, kUnevenRowsLongestOverMean, mean, piece, d.balanced_mid_from_n, below - 1);
  return d;
}

}  // namespace spmmc

