// A row grouping aimed at the fewest non-empty columns per tile, without LO-SpMM's balance limit
// (`--reorder grow`, issue 26): each tile is grown from the longest row left by the row that adds
// the fewest new columns to it. A tile's non-empty columns are its M1 x 1 non-zero vectors, the
// units FlashSparse's tensor-core kernel multiplies (8 x 1 at M1 = 8), and the loads of B of the
// unrolled kernel; LO-SpMM's Algorithm 1 (reorder_rows.h) keeps every tile's non-zeros within
// nnz / tiles instead, which on the shared matrices saves few vectors and on banded ones loses
// against the natural order (docs/design/precision.md, "8 x 1 vectors").
#pragma once

#include <cstdint>

#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"

namespace spmmc {

// Groups the non-empty rows of `a` into tiles of M1 rows (the last may have fewer): the seed of a
// tile is the unassigned row with the most non-zeros (ties: the lower row); then, while the tile
// has room, the unassigned row with the fewest columns outside the tile's columns joins it (ties:
// the most columns shared, then the lower row), among the rows that share a column with the tile,
// or, when none does, the shortest unassigned row. Empty rows go to `empty_rows`. Exact and
// deterministic; the work is the sum over tiles of the rows sharing a column with the tile, times
// M1. Tiling method: ReorderMethod::kGrow.
RowTiling grow_row_tiles(const Csr& a, int32_t m1);

}  // namespace spmmc
