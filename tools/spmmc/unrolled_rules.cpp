#include "tools/spmmc/unrolled_rules.h"

#include <fmt/format.h>

#include "compiler/planning/choose_tile.h"

namespace spmmc::cli {

UnrolledRules::UnrolledRules(const Csr& a, const Plan& plan, const Target& target, int64_t n, int64_t finest_fmas_per_kernel,
                             const SizeLimits& limits)
    : a_(a), plan_(plan), target_(target), n_(n), finest_fmas_per_kernel_(finest_fmas_per_kernel), limits_(limits) {}

double UnrolledRules::finest_nvcc_seconds(const PlannedCandidate& c) const {
  return estimate_unrolled_size(a_, plan_.for_m1(c.tile.m1).after, c.tile, finest_fmas_per_kernel_).nvcc_seconds;
}

bool UnrolledRules::fits_size_guard(const PlannedCandidate& c) const {
  return finest_nvcc_seconds(c) <= limits_.max_nvcc_seconds;
}

bool UnrolledRules::generic_by_rule(const PlannedCandidate& c, std::string& why) const {
  const double fill = unrolled_wave_fill(plan_.for_m1(c.tile.m1).tiling.num_blocks(), n_, c.tile, target_);
  const bool by_fill = fill < kGenericBelowWaveFill && a_.nnz() >= kGenericMinNonZeros;
  why = fmt::format("auto: the unrolled launch of tile {} fills {:.0f}% of one wave of blocks on the {} SMs{}", c.tile.label(),
                    100.0 * fill, target_.sm_count,
                    fill >= kGenericBelowWaveFill ? fmt::format(" (at least {:.0f}%)", 100.0 * kGenericBelowWaveFill)
                    : by_fill                     ? fmt::format(" (below {:.0f}%)", 100.0 * kGenericBelowWaveFill)
                                                  : fmt::format(", but A has fewer than {} non-zeros", kGenericMinNonZeros));
  if (by_fill) return true;
  const double finest = finest_nvcc_seconds(c);
  if (finest > limits_.max_nvcc_seconds) {  // fits_size_guard's test, with the number for the message
    why = fmt::format("auto: the unrolled code of tile {} would take about {:.0f} s of nvcc, above the limit of {:.0f} s",
                      c.tile.label(), finest, limits_.max_nvcc_seconds);
    return true;
  }
  const double products = products_per_b_load(c, a_.nnz());
  if (a_.nnz() >= kGenericMinNonZeros && products < kGenericBelowProductsPerLoad) {
    why = fmt::format("auto: the A-tiles of tile {} share few columns: {:.2f} products per row of B its unrolled code loads "
                      "(below {}), nothing for the unrolled kernel's registers to reuse",
                      c.tile.label(), products, kGenericBelowProductsPerLoad);
    return true;
  }
  return false;
}

}  // namespace spmmc::cli
