// The two rules of `spmmc compile` about a tile's unrolled code, which the tile, the search and the
// family stages all ask: whether the size guard lets it be emitted, and whether --tune none's family
// rule would emit the generic family for it instead (compiler/planning/choose_tile.h).
#pragma once

#include <cstdint>
#include <string>

#include "codegen/size_guard.h"
#include "compiler/common/csr.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"

namespace spmmc::cli {

class UnrolledRules {
 public:
  // `finest_fmas_per_kernel`: the finest split of the unrolled code the compile may make (kMinFmasPerKernel
  // with the automatic split, else --fmas-per-kernel's). All references must outlive the rules.
  UnrolledRules(const Csr& a, const Plan& plan, const Target& target, int64_t n, int64_t finest_fmas_per_kernel,
                const SizeLimits& limits);

  // The estimated nvcc seconds of `c`'s unrolled code at the finest split.
  double finest_nvcc_seconds(const PlannedCandidate& c) const;
  // Whether `c`'s unrolled code fits the size guard at its finest split.
  bool fits_size_guard(const PlannedCandidate& c) const;
  // --tune none's family rule for `c` (--family auto): the generic family where the unrolled launch
  // leaves the GPU short of warps and A is large, where the unrolled code would exceed the
  // compile-time limit, or where A is large and its A-tiles share few columns
  // (compiler/planning/choose_tile.h). `why` says which, or why not.
  bool generic_by_rule(const PlannedCandidate& c, std::string& why) const;

 private:
  const Csr& a_;
  const Plan& plan_;
  const Target& target_;
  int64_t n_;
  int64_t finest_fmas_per_kernel_;
  const SizeLimits& limits_;
};

}  // namespace spmmc::cli
