#include "codegen/size_guard.h"

#include "compiler/diagnostics.h"

namespace spmmc {
namespace {

// Measured on emitted kernels (docs/emitted-code.md): bytes of source per FMA line, per load
// line, per stored row and per tile function. nvcc's time grows faster than linearly with the
// FMAs of the one kernel function (26k FMAs: 39-55 s; 52k: over 9 minutes), so the estimate is
// quadratic, fitted to the 26k point; it still underestimates beyond it, which only makes the
// guard refuse sooner than needed.
constexpr double kBytesPerFma = 40.0, kBytesPerLoad = 44.0, kBytesPerRow = 22.0, kBytesPerTile = 260.0;
constexpr double kNvccSecondsPerFmaSquared = 8.0e-8, kNvccStartSeconds = 2.0;

}  // namespace

SizeEstimate estimate_unrolled_size(const Csr& a, const TilingStats& tiling) {
  SizeEstimate e;
  e.fmas = a.nnz();
  e.loads = tiling.nnc_sum;
  e.source_bytes = static_cast<int64_t>(kBytesPerFma * static_cast<double>(e.fmas) + kBytesPerLoad * static_cast<double>(e.loads) +
                                        kBytesPerRow * a.rows + kBytesPerTile * tiling.tiles) + 4096;
  const double fmas = static_cast<double>(e.fmas);
  e.nvcc_seconds = kNvccStartSeconds + kNvccSecondsPerFmaSquared * fmas * fmas;
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
