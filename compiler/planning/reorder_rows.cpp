#include "compiler/planning/reorder_rows.h"

#include <algorithm>
#include <set>

#include "compiler/common/diagnostics.h"
#include "compiler/planning/grow_row_tiles.h"

namespace spmmc {
namespace {

// The bitset method is used only while its bitsets stay below this size.
constexpr double kMaxBitsetBytes = 256.0 * (1 << 20);

// The state of the tiles while rows are assigned.
struct Tiles {
  std::vector<int32_t> size, nnz, nnc;
  std::vector<std::vector<int32_t>> members;
  int32_t m1;

  Tiles(int32_t count, int32_t m1_) : size(count, 0), nnz(count, 0), nnc(count, 0), members(count), m1(m1_) {}
  bool open(int32_t t) const { return size[t] < m1; }
};

// The tile Algorithm 1 picks among candidates offered one by one as (tile, merged nnc).
struct Choice {
  double nnz_limit;
  int32_t row_nnz;
  int32_t best_within = -1, best_within_nnc = 0;  // smallest merged nnc within TH_nnz
  int32_t best_any = -1, best_any_nnc = 0;        // smallest merged nnc overall (fallback)

  void offer(const Tiles& tiles, int32_t t, int32_t merged_nnc) {
    const auto better = [&](int32_t current, int32_t current_nnc) {
      return current < 0 || merged_nnc < current_nnc || (merged_nnc == current_nnc && t < current);
    };
    if (better(best_any, best_any_nnc)) best_any = t, best_any_nnc = merged_nnc;
    if (tiles.nnz[t] + row_nnz <= nnz_limit && better(best_within, best_within_nnc))
      best_within = t, best_within_nnc = merged_nnc;
  }
  int32_t tile() const { return best_within >= 0 ? best_within : best_any; }
};

// Overlaps by bitsets: one bit per column per tile; every open tile is scanned for every row.
class BitsetOverlap {
 public:
  BitsetOverlap(int32_t tiles, int32_t cols) : words_((cols + 63) / 64), bits_(static_cast<size_t>(tiles) * words_, 0) {}

  template <typename Offer>
  void candidates(const Tiles& tiles, const int32_t* row_cols, int32_t len, Offer&& offer) {
    row_bits_.assign(words_, 0);
    for (int32_t i = 0; i < len; ++i) row_bits_[row_cols[i] >> 6] |= uint64_t{1} << (row_cols[i] & 63);
    const int32_t count = static_cast<int32_t>(tiles.size.size());
    for (int32_t t = 0; t < count; ++t) {
      if (!tiles.open(t)) continue;
      const uint64_t* tb = &bits_[static_cast<size_t>(t) * words_];
      int32_t overlap = 0;
      for (size_t w = 0; w < words_; ++w) overlap += __builtin_popcountll(tb[w] & row_bits_[w]);
      offer(t, tiles.nnc[t] + len - overlap);
    }
  }
  // Returns how many of the row's columns the tile already had.
  int32_t add(int32_t t, const int32_t* row_cols, int32_t len) {
    uint64_t* tb = &bits_[static_cast<size_t>(t) * words_];
    int32_t overlap = 0;
    for (int32_t i = 0; i < len; ++i) {
      uint64_t& w = tb[row_cols[i] >> 6];
      const uint64_t bit = uint64_t{1} << (row_cols[i] & 63);
      overlap += (w & bit) != 0;
      w |= bit;
    }
    return overlap;
  }
  void update(const Tiles&, int32_t, int32_t, int32_t) {}

 private:
  size_t words_;
  std::vector<uint64_t> bits_;
  std::vector<uint64_t> row_bits_;
};

// Overlaps by an inverted index: for each column, the open tiles holding it; tiles sharing no
// column with the row are taken from an ordered set by (nnc, id). Cost follows the overlaps,
// not the tile count, which suits large, very sparse matrices. Columns marked in `skipped` (hub
// columns, above the work budget) have no index: no tile is credited with them, as if every
// tile lacked them; the tiles' nnc still counts them.
class IndexOverlap {
 public:
  IndexOverlap(int32_t tiles, int32_t cols, double nnz_limit, std::vector<bool> skipped)
      : col_tiles_(cols), tile_cols_(tiles), overlap_(tiles, 0), skipped_(std::move(skipped)), limit_(nnz_limit) {
    if (skipped_.empty()) skipped_.assign(static_cast<size_t>(cols), false);
    for (int32_t t = 0; t < tiles; ++t) {
      by_nnc_.insert({0, t});
      by_nnz_.insert({0, t});
    }
  }

  template <typename Offer>
  void candidates(const Tiles& tiles, const int32_t* row_cols, int32_t len, Offer&& offer) {
    touched_.clear();
    for (int32_t i = 0; i < len; ++i) {
      if (skipped_[row_cols[i]]) continue;
      std::vector<int32_t>& list = col_tiles_[row_cols[i]];
      for (size_t k = 0; k < list.size();) {
        const int32_t t = list[k];
        if (!tiles.open(t)) {  // full tiles never come back: drop them here, once
          list[k] = list.back();
          list.pop_back();
          continue;
        }
        if (overlap_[t]++ == 0) touched_.push_back(t);
        ++k;
      }
    }
    for (int32_t t : touched_) offer(t, tiles.nnc[t] + len - overlap_[t]);
    // Untouched open tiles in (nnc, id) order: the first is the best fallback among them; go on
    // until one also stays within TH_nnz, unless none can (the smallest open nnz is too big).
    const bool any_within = !by_nnz_.empty() && by_nnz_.begin()->first + len <= limit_;
    bool offered = false;
    for (const auto& [nnc, t] : by_nnc_) {
      if (overlap_[t] != 0) continue;
      const bool within = tiles.nnz[t] + len <= limit_;
      if (!offered || within) offer(t, nnc + len);
      offered = true;
      if (within || !any_within) break;
    }
    for (int32_t t : touched_) overlap_[t] = 0;
  }

  // Adds a row's (sorted) columns to tile t; returns how many the tile already had.
  int32_t add(int32_t t, const int32_t* row_cols, int32_t len) {
    std::vector<int32_t>& have = tile_cols_[t];
    merged_.clear();
    int32_t overlap = 0;
    size_t i = 0;
    for (int32_t k = 0; k < len; ++k) {
      const int32_t c = row_cols[k];
      while (i < have.size() && have[i] < c) merged_.push_back(have[i++]);
      if (i < have.size() && have[i] == c) {
        ++overlap;
        merged_.push_back(have[i++]);
      } else {
        merged_.push_back(c);
        if (!skipped_[c]) col_tiles_[c].push_back(t);
      }
    }
    merged_.insert(merged_.end(), have.begin() + static_cast<std::ptrdiff_t>(i), have.end());
    have.swap(merged_);
    return overlap;
  }

  // Keeps the ordered sets in step with tile t's (nnc, nnz) before and after an assignment.
  void update(const Tiles& tiles, int32_t t, int32_t old_nnc, int32_t old_nnz) {
    by_nnc_.erase({old_nnc, t});
    by_nnz_.erase({old_nnz, t});
    if (tiles.open(t)) {
      by_nnc_.insert({tiles.nnc[t], t});
      by_nnz_.insert({tiles.nnz[t], t});
    } else {
      std::vector<int32_t>().swap(tile_cols_[t]);
    }
  }

 private:
  std::vector<std::vector<int32_t>> col_tiles_;
  std::vector<std::vector<int32_t>> tile_cols_;
  std::vector<int32_t> overlap_;
  std::vector<int32_t> touched_;
  std::vector<int32_t> merged_;
  std::vector<bool> skipped_;
  std::set<std::pair<int32_t, int32_t>> by_nnc_, by_nnz_;
  double limit_;
};

std::vector<int32_t> rows_by_length(const Csr& a, bool drop_empty) {
  std::vector<int32_t> rows;
  rows.reserve(static_cast<size_t>(a.rows));
  for (int32_t r = 0; r < a.rows; ++r)
    if (!drop_empty || a.row_length(r) > 0) rows.push_back(r);
  std::stable_sort(rows.begin(), rows.end(), [&](int32_t x, int32_t y) { return a.row_length(x) < a.row_length(y); });
  return rows;
}

void collect_empty_rows(const Csr& a, RowTiling& tiling) {
  for (int32_t r = 0; r < a.rows; ++r)
    if (a.row_length(r) == 0) tiling.empty_rows.push_back(r);
}

// Tiles of m1 consecutive entries of `order`.
void chunk(const std::vector<int32_t>& order, int32_t m1, RowTiling& tiling) {
  tiling.rows = order;
  tiling.tile_ptr.clear();
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(m1)) tiling.tile_ptr.push_back(static_cast<int32_t>(i));
  tiling.tile_ptr.push_back(static_cast<int32_t>(order.size()));
}

template <typename Overlap>
void assign_rows(const Csr& a, const std::vector<int32_t>& order, Tiles& tiles, Overlap& overlap, RowTiling& tiling) {
  for (int32_t r : order) {
    const int32_t* cols = a.col_idx.data() + a.row_ptr[r];
    const int32_t len = a.row_length(r);
    Choice choice{tiling.nnz_limit, len};
    overlap.candidates(tiles, cols, len, [&](int32_t t, int32_t merged) { choice.offer(tiles, t, merged); });
    const int32_t t = choice.tile();
    SPMMC_CHECK(t >= 0, "no open tile left for a row");
    if (choice.best_within < 0) tiling.fallback_rows.push_back(r);
    const int32_t old_nnc = tiles.nnc[t], old_nnz = tiles.nnz[t];
    tiles.nnc[t] += len - overlap.add(t, cols, len);
    tiles.nnz[t] += len;
    ++tiles.size[t];
    tiles.members[t].push_back(r);
    overlap.update(tiles, t, old_nnc, old_nnz);
  }
}

}  // namespace

std::string_view reorder_method_name(ReorderMethod method) {
  switch (method) {
    case ReorderMethod::kColumnOverlap: return "overlap";
    case ReorderMethod::kNone: return "none";
    case ReorderMethod::kRowLength: return "length";
    case ReorderMethod::kGrow: return "grow";
  }
  return "?";
}

std::optional<ReorderMethod> parse_reorder_method(std::string_view name) {
  for (ReorderMethod m : {ReorderMethod::kColumnOverlap, ReorderMethod::kNone, ReorderMethod::kRowLength, ReorderMethod::kGrow})
    if (name == reorder_method_name(m)) return m;
  return std::nullopt;
}

RowTiling reorder_rows_by_column_overlap(const Csr& a, int32_t m1, OverlapSearch overlaps, double max_work) {
  SPMMC_CHECK(m1 >= 1, "M1 must be at least 1");
  RowTiling tiling;
  tiling.m1 = m1;
  tiling.method = ReorderMethod::kColumnOverlap;
  collect_empty_rows(a, tiling);
  const std::vector<int32_t> order = rows_by_length(a, /*drop_empty=*/true);
  const int32_t count = static_cast<int32_t>((order.size() + m1 - 1) / m1);
  tiling.nnz_limit = count > 0 ? static_cast<double>(a.nnz()) / count : 0.0;
  if (m1 == 1 || count <= 1) {
    // One row per tile, or one tile: every choice Algorithm 1 can make is the row order itself
    // (all open tiles are empty and tie on merged nnc; the lowest id wins).
    chunk(order, m1, tiling);
    if (m1 == 1)
      for (int32_t r : order)
        if (a.row_length(r) > tiling.nnz_limit) tiling.fallback_rows.push_back(r);
    return tiling;
  }
  Tiles tiles(count, m1);
  // Cost of the two ways to find overlaps: scanning every open tile's bitset per row, or
  // walking the open tiles of each of the row's columns (a column of d non-zeros is walked d
  // times, through at most min(tiles, d) tiles, half of them on average as tiles fill up).
  const double words = static_cast<double>((a.cols + 63) / 64);
  const double bitset_cost = static_cast<double>(order.size()) * count * (words + 2.0);
  const double row_cost = static_cast<double>(order.size()) * 32.0;  // set operations per row
  std::vector<int32_t> col_len(static_cast<size_t>(a.cols), 0);
  for (int32_t c : a.col_idx) ++col_len[c];
  const auto column_cost = [&](int32_t d) { return static_cast<double>(d) * std::min<double>(count, d) / 2; };
  double index_cost = row_cost;
  for (int32_t d : col_len) index_cost += column_cost(d);
  const double bitset_bytes = static_cast<double>(count) * words * 8.0;
  // kAuto: the bitsets where they are the cheaper and within the work budget (they are exact).
  const bool use_bitsets = overlaps == OverlapSearch::kBitsets ||
                           (overlaps == OverlapSearch::kAuto && bitset_cost <= index_cost && bitset_cost <= max_work &&
                            bitset_bytes <= kMaxBitsetBytes);
  if (use_bitsets) {
    BitsetOverlap overlap(count, a.cols);
    assign_rows(a, order, tiles, overlap, tiling);
  } else {
    // Above the work budget, the columns with the most non-zeros (the hubs of a power-law graph)
    // leave the search: the longest first, until the rest fits the budget. Their walks are the
    // cost (every row with a hub column visits every open tile holding it), and they say least
    // about which rows belong together (almost every tile holds them).
    std::vector<bool> skipped;
    if (index_cost > max_work) {
      std::vector<int32_t> by_len = col_len;
      std::sort(by_len.begin(), by_len.end());
      double work = row_cost;
      int32_t kept_len = 0;  // the longest column that keeps its index
      for (size_t i = 0; i < by_len.size();) {
        size_t j = i;
        double group = 0;  // every column of this length: all stay, or all leave
        for (; j < by_len.size() && by_len[j] == by_len[i]; ++j) group += column_cost(by_len[j]);
        if (work + group > max_work) break;
        work += group;
        kept_len = by_len[i];
        i = j;
      }
      skipped.assign(static_cast<size_t>(a.cols), false);
      for (int32_t c = 0; c < a.cols; ++c)
        if (col_len[c] > kept_len) {
          skipped[c] = true;
          ++tiling.hub_columns;
        }
      tiling.hub_min_nnz = kept_len + 1;
    }
    IndexOverlap overlap(count, a.cols, tiling.nnz_limit, std::move(skipped));
    assign_rows(a, order, tiles, overlap, tiling);
  }
  tiling.tile_ptr.push_back(0);
  for (int32_t t = 0; t < count; ++t) {
    tiling.rows.insert(tiling.rows.end(), tiles.members[t].begin(), tiles.members[t].end());
    tiling.tile_ptr.push_back(static_cast<int32_t>(tiling.rows.size()));
  }
  return tiling;
}

RowTiling tile_rows(const Csr& a, int32_t m1, ReorderMethod method) {
  SPMMC_CHECK(m1 >= 1, "M1 must be at least 1");
  if (method == ReorderMethod::kColumnOverlap) return reorder_rows_by_column_overlap(a, m1);
  if (method == ReorderMethod::kGrow) return grow_row_tiles(a, m1);
  RowTiling tiling;
  tiling.m1 = m1;
  tiling.method = method;
  if (method == ReorderMethod::kNone) {
    std::vector<int32_t> order(static_cast<size_t>(a.rows));
    for (int32_t r = 0; r < a.rows; ++r) order[r] = r;
    chunk(order, m1, tiling);
  } else {
    collect_empty_rows(a, tiling);
    chunk(rows_by_length(a, /*drop_empty=*/true), m1, tiling);
  }
  return tiling;
}

}  // namespace spmmc
