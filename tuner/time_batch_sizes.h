// The per-batch-size timing of a file compiled for several batch sizes (spmmc compile --n LIST or
// LO:HI, issue 27): once the search has decided which kernel to emit, that kernel and the generic
// family's kernel are checked and timed at each of the other sizes, so that spmmc compile places
// the file's dispatch between them from measurements (compiler/planning/small_n_dispatch.h) rather
// than from the rule.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "runtime/cuda_driver.h"
#include "tuner/tuning.h"

namespace spmmc {

// For each n of `sizes`: `tile`'s real kernel (none: the generic family is emitted, not timed), emitted
// and split as tune_exhaustively emits it (options.fmas_per_kernel), the generic family's kernel with
// its rows in the order of *options.generic_tiling (required) and, where
// options.balanced_piece_length asks, the balanced family's (options.balanced_groups), each checked against the float64
// product at that n and timed (options.timing, in a worker where options.worker is set). The real
// kernel's cubin comes from options.cache where the search compiled it. One entry per size, in order.
std::vector<BatchSizeMeasurement> time_batch_sizes(const Csr& a, const Plan& plan, const TileCandidate* tile,
                                                   const std::vector<int64_t>& sizes, const GpuContext& gpu,
                                                   const TuningOptions& options);

}  // namespace spmmc
