#include "codegen/size_guard.h"

#include <algorithm>
#include <cmath>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// Bytes of NAME.cu, measured on emitted kernels: per non-zero its generic-path CSR entry (13)
// and one FMA statement per column of a thread (40 x V); per B load (one per non-empty column
// of a tile) and per stored row; an empty row's zero costs a move besides its store (about 100
// bytes in all: 131 072 rows of one non-zero gave 14.4 MB); per tile function; the fixed part (the
// template: 44 KB for a 1 x 1 matrix).
constexpr double kBytesPerNonZero = 13.0, kBytesPerFmaLane = 40.0, kBytesPerLoad = 68.0, kBytesPerRow = 40.0,
                 kBytesPerEmptyRow = 60.0, kBytesPerTile = 300.0, kBytesFixed = 44000.0;

// nvcc -O3 -arch=sm_90 time of one process on the H100 machine's cores (docs/design/kernel.md,
// "Compile time"): cicc takes 0.4-4 s whatever the size (the tile bodies are inline PTX it
// passes through), ptxas the rest. ptxas compiles each kernel function on its own, and its time
// per kernel, fitted over 79 builds of 13k-315k non-zeros in 1-128 kernels (M1 = 4-32, the
// 64-register budget; studies 4 and 5, 15-16 builds in parallel on the 16 cores), is
//   e^-13.123 x nnz_k^0.592 x NNC_k^1.128 x M1^0.162
// for a kernel of nnz_k non-zeros and NNC_k loads; times V^0.6 for V columns per thread (V FMAs
// per non-zero, from the one-kernel fit of study 1). The fit is within 0.49-1.5x of every build
// (the machine's load alone moved one layer's time by 1.6x between runs), so the guard takes
// twice the fit: it errs on the side of refusing.
constexpr double kNvccStartSeconds = 2.0, kPtxasScale = 2.0;

// Empty rows are code the fit above never saw (its layers had non-zeros in nearly every row): each
// is a store of zeros in its tile's PTX. nvcc of files of 32 768 and 131 072 rows with one non-zero
// took 22.5 and 103 s (development machine, one build, ptxas -O1) where the fit said 2 s: about 0.8
// ms per row, taken twice as the fit is.
constexpr double kPtxasSecondsPerEmptyRow = 0.8e-3;

}  // namespace

SizeEstimate estimate_unrolled_size(const Csr& a, const TilingStats& tiling, const TileCandidate& tile,
                                    int64_t fmas_per_kernel) {
  SizeEstimate e;
  const double v = tile.cols_per_thread;
  e.fmas = a.nnz() * tile.cols_per_thread;
  e.loads = tiling.nnc_sum;
  const auto nnz = static_cast<double>(a.nnz()), loads = static_cast<double>(std::max<int64_t>(tiling.nnc_sum, 1));
  const auto empty = static_cast<double>(tiling.empty_rows);
  e.source_bytes = static_cast<int64_t>((kBytesPerNonZero + kBytesPerFmaLane * v) * nnz + kBytesPerLoad * loads +
                                        kBytesPerRow * static_cast<double>(a.rows) + kBytesPerEmptyRow * empty +
                                        kBytesPerTile * static_cast<double>(tiling.tiles) + kBytesFixed);
  // The kernels: taken as equal parts of the non-zeros and loads; ptxas compiles each on its own.
  const double kernels = fmas_per_kernel > 0 ? std::max(1.0, std::ceil(nnz / static_cast<double>(fmas_per_kernel))) : 1.0;
  const double ptxas = kernels * std::exp(-13.123) * std::pow(std::max(nnz / kernels, 1.0), 0.592) *
                       std::pow(std::max(loads / kernels, 1.0), 1.128) * std::pow(static_cast<double>(tile.m1), 0.162) *
                       std::pow(v, 0.6);
  e.nvcc_seconds = kNvccStartSeconds + kPtxasScale * (ptxas + kPtxasSecondsPerEmptyRow * empty);
  e.kernel_loads = loads / kernels;
  return e;
}

void check_size_guard(const SizeEstimate& e, const SizeLimits& limits, const std::string& file) {
  if (e.nvcc_seconds > limits.max_nvcc_seconds)
    fail_data(SourceLocation::whole(file),
              "size guard: the unrolled kernel ({} FMAs) would take about {:.0f} s to compile with nvcc, above the limit "
              "of {:.0f} s; raise --max-compile-seconds to accept it",
              e.fmas, e.nvcc_seconds, limits.max_nvcc_seconds);
  if (e.source_bytes > limits.max_source_bytes)
    fail_data(SourceLocation::whole(file),
              "size guard: the unrolled kernel would be about {} MiB of source, above the limit of {} MiB",
              e.source_bytes >> 20, limits.max_source_bytes >> 20);
}

}  // namespace spmmc
