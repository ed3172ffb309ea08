// Row reordering (LO-SpMM §4, Algorithm 1): grouping the rows of A into A-tiles of at most M1
// rows so that rows in a tile share columns. Each tile's threads load one B row per non-empty
// column (nnc) of the tile, so fewer distinct columns per tile means fewer loads of B.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "compiler/common/csr.h"

namespace spmmc {

enum class ReorderMethod {
  kColumnOverlap,  // LO-SpMM Algorithm 1 (default)
  kNone,           // natural order: tiles of M1 consecutive rows, empty rows included
  kRowLength,      // rows sorted by non-zeros (ascending, stable), empty rows dropped
  kGrow,           // tiles grown by the row adding the fewest new columns (grow_row_tiles.h)
};

std::string_view reorder_method_name(ReorderMethod method);  // "overlap", "none", "length", "grow"
std::optional<ReorderMethod> parse_reorder_method(std::string_view name);

// A partition of rows into A-tiles: tile t holds rows[tile_ptr[t] .. tile_ptr[t+1]) (original
// row indices, at most m1 of them). Rows in no tile are empty and listed in empty_rows (the
// kernel still writes their C rows as zeros).
struct RowTiling {
  int32_t m1 = 0;
  ReorderMethod method = ReorderMethod::kColumnOverlap;
  std::vector<int32_t> tile_ptr;
  std::vector<int32_t> rows;
  std::vector<int32_t> empty_rows;
  double nnz_limit = 0.0;            // Algorithm 1's TH_nnz (0 for the other methods)
  // Rows no open tile could take within TH_nnz (Algorithm 1's fallback), in assignment order.
  // Every other assignment leaves its tile within TH_nnz.
  std::vector<int32_t> fallback_rows;
  // Columns left out of Algorithm 1's overlap search for its work budget (hub columns: all of
  // at least hub_min_nnz non-zeros; see reorder_rows_by_column_overlap). 0: the search was exact.
  int32_t hub_columns = 0;
  int32_t hub_min_nnz = 0;

  int32_t num_tiles() const { return static_cast<int32_t>(tile_ptr.size()) - 1; }
  // Thread blocks along x of a kernel for this tiling: the tiles, then tiles of at most m1
  // empty rows that store zeros (the emitter's order).
  int64_t num_blocks() const {
    return num_tiles() + (static_cast<int64_t>(empty_rows.size()) + m1 - 1) / m1;
  }
};

// Algorithm 1 of LO-SpMM, faithfully: rows sorted by non-zero count (ascending, stable) with
// empty rows removed; ceil(rows / M1) tiles; TH_nnz = nnz / tiles. Each row, in that order,
// goes to the tile with the fewest non-empty columns after merging it that still has room
// (< M1 rows) and whose non-zeros after merging stay within TH_nnz; ties go to the lower tile
// id. When no tile with room stays within TH_nnz, the row goes to the tile with room and the
// fewest merged non-empty columns. Deterministic; O(nnz x tiles-sharing-a-column) or
// O(rows x tiles x K/64), whichever is cheaper for the matrix.
// Exact while that estimated work is at most `max_work`. Above it (large power-law graphs, where
// a hub column is held by thousands of open tiles and every row holding it walks them all), the
// columns with the most non-zeros are left out of the overlap search, the longest first, until
// the estimated work of the rest fits: a tile is not credited with sharing such a column (its
// merged nnc counts the column as new, for every tile alike), while the tiles' nnc still counts
// it. RowTiling::hub_columns says how many were left out. kMaxExactOverlapWork keeps every shared
// DLMC layer and graph exact (their largest estimate is 2.1e7).
// `overlaps` picks how tile/row column overlaps are found; within the budget every choice gives
// the same tiling (tests check this), kAuto the fastest for the matrix; kBitsets is always exact.
enum class OverlapSearch { kAuto, kBitsets, kColumnIndex };
constexpr double kMaxExactOverlapWork = 3e7;
RowTiling reorder_rows_by_column_overlap(const Csr& a, int32_t m1, OverlapSearch overlaps = OverlapSearch::kAuto,
                                         double max_work = kMaxExactOverlapWork);

// Tiles the rows of `a` with `method` (kColumnOverlap calls the function above, kGrow
// grow_row_tiles).
RowTiling tile_rows(const Csr& a, int32_t m1, ReorderMethod method);

}  // namespace spmmc
