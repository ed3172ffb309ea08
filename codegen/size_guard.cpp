#include "codegen/size_guard.h"

#include <algorithm>
#include <cmath>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// Bytes of NAME.cu, measured on emitted kernels: per non-zero its generic-path CSR entry (13)
// and one FMA statement per column of a thread (40 x V); per B load (one per non-empty column
// of a tile) and per stored row; per tile function; the fixed part.
constexpr double kBytesPerNonZero = 13.0, kBytesPerFmaLane = 40.0, kBytesPerLoad = 68.0, kBytesPerRow = 40.0,
                 kBytesPerTile = 300.0, kBytesFixed = 8192.0;

// nvcc -O3 -arch=sm_90 time of one process on the H100 machine's cores (docs/design/kernel.md,
// "Compile time"): cicc takes 0.4-1.5 s whatever the size (the tile bodies are inline PTX it
// passes through), ptxas the rest. ptxas's time, fitted over 19 kernels of 13k-79k non-zeros
// with the 64-register budget (max error 30%), is
//   e^-7.681 x nnz^0.688 x NNC_sum^0.690 x M1^-0.718,
// times V^0.6 for V columns per thread (V FMAs per non-zero), times 1.5 so that the guard errs
// on the side of refusing: ptxas grows faster than linearly with the tiles of one kernel, and one
// kernel (59k non-zeros, K = 2304, M1 = 16) ran past 240 s where this says 210.
constexpr double kNvccStartSeconds = 2.0, kPtxasScale = 1.5;

}  // namespace

SizeEstimate estimate_unrolled_size(const Csr& a, const TilingStats& tiling, const TileCandidate& tile) {
  SizeEstimate e;
  const double v = tile.cols_per_thread;
  e.fmas = a.nnz() * tile.cols_per_thread;
  e.loads = tiling.nnc_sum;
  const auto nnz = static_cast<double>(a.nnz()), loads = static_cast<double>(std::max<int64_t>(tiling.nnc_sum, 1));
  e.source_bytes = static_cast<int64_t>((kBytesPerNonZero + kBytesPerFmaLane * v) * nnz + kBytesPerLoad * loads +
                                        kBytesPerRow * static_cast<double>(a.rows) +
                                        kBytesPerTile * static_cast<double>(tiling.tiles) + kBytesFixed);
  const double ptxas = std::exp(-7.681) * std::pow(std::max(nnz, 1.0), 0.688) * std::pow(loads, 0.690) *
                       std::pow(static_cast<double>(tile.m1), -0.718) * std::pow(v, 0.6);
  e.nvcc_seconds = kNvccStartSeconds + kPtxasScale * ptxas;
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
