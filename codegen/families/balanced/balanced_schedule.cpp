#include "codegen/families/balanced/balanced_schedule.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {

int32_t default_piece_length(const Csr& a) {
  return a.longest_row() > 2048 ? kBalancedLongRowsPieceLength : kBalancedPieceLength;
}

std::vector<int32_t> shorter_piece_lengths_to_try(int32_t rule_length) {
  if (rule_length == kBalancedPieceLength) return {kBalancedShortPieceLength, kBalancedShortestPieceLength};
  if (rule_length == kBalancedLongRowsPieceLength) return {kBalancedLongRowsShortPieceLength, kBalancedPieceLength};
  return {};
}

BalancedSchedule schedule_balanced(const Csr& a, int32_t piece_length, int32_t warps, int32_t groups) {
  SPMMC_CHECK(piece_length >= 1 && warps >= 1 && warps <= 32 && (groups == 1 || groups == 2 || groups == 4),
              "balanced schedule: piece length >= 1, 1..32 warps, 1, 2 or 4 pieces per warp");
  BalancedSchedule s;
  s.warps = warps;
  s.groups = groups;
  s.piece_length = piece_length;
  const size_t per_block = static_cast<size_t>(s.slots_per_block());
  std::vector<int32_t> order(static_cast<size_t>(a.rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return a.row_length(x) > a.row_length(y); });
  const auto pad_block = [&] {
    while (s.slots.size() % per_block != 0) s.slots.push_back(BalancedPiece{});
  };
  for (const int32_t r : order) {
    const int32_t len = a.row_length(r), begin = a.row_ptr[static_cast<size_t>(r)];
    const int32_t pieces = balanced_row_pieces(len, piece_length, warps);
    if (s.slots.size() % per_block + static_cast<size_t>(pieces) > per_block) pad_block();
    const int32_t first = static_cast<int32_t>(s.slots.size() % per_block);
    const int32_t size = pieces == 1 ? len : (len + pieces - 1) / pieces;
    for (int32_t q = 0; q < pieces; ++q) {
      const int32_t lo = std::min(len, q * size), hi = std::min(len, (q + 1) * size);
      s.slots.push_back({r, begin + lo, begin + hi, first, pieces});
      s.longest_piece = std::max(s.longest_piece, hi - lo);
    }
    s.rows_cut += pieces > 1;
  }
  if (s.slots.empty()) s.slots.push_back(BalancedPiece{});
  pad_block();
  return s;
}

namespace {

struct RowStats {
  double mean = 0.0, cov = 0.0;
};

RowStats row_stats(const Csr& a) {
  RowStats st;
  st.mean = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
  double var = 0.0;
  for (int32_t r = 0; r < a.rows; ++r) var += (a.row_length(r) - st.mean) * (a.row_length(r) - st.mean);
  st.cov = st.mean > 0 ? std::sqrt(var / a.rows) / st.mean : 0.0;
  return st;
}

}  // namespace

int32_t default_balanced_groups(const Csr& a, int64_t n) {
  if (n >= 128) return 1;
  const RowStats st = row_stats(a);
  if (st.mean <= 8.0 && st.cov < 0.5 && a.rows >= 8192) return 4;
  return a.rows >= 60000 ? 2 : 1;
}

bool balanced_by_rule(const Csr& a, std::string& why) {
  const int32_t longest = a.longest_row(), length = default_piece_length(a);
  const double cov = row_stats(a).cov;
  const bool skewed = cov >= kBalancedMinCov, cut = longest > 2 * length;
  why = fmt::format("rows' coefficient of variation {:.2f} ({} {}), longest row {} products ({} 2 x {})", cov,
                    skewed ? ">=" : "<", kBalancedMinCov, longest, cut ? ">" : "<=", length);
  return skewed && cut;
}

}  // namespace spmmc
