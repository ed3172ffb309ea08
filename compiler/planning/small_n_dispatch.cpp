#include "compiler/planning/small_n_dispatch.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {

SmallNDispatch choose_generic_below_n(int64_t n, std::optional<double> family_ms, std::optional<double> generic_ms) {
  SPMMC_CHECK(n >= 1, fmt::format("the small-n dispatch of a file for n = {}", n));
  SmallNDispatch d;
  if (family_ms && generic_ms) {
    SPMMC_CHECK(*family_ms > 0.0 && *generic_ms > 0.0, "the small-n dispatch needs positive times");
    const double at = std::floor(static_cast<double>(n) * *family_ms / *generic_ms);
    d.generic_below_n = std::clamp<int64_t>(static_cast<int64_t>(std::min(at, static_cast<double>(n))), 1, n);
    d.why = fmt::format("measured at n = {}: the kernel {:.4f} ms, the generic kernel {:.4f} ms; the generic kernel's "
                        "time in proportion to n meets the kernel's at n = {}",
                        n, *family_ms, *generic_ms, d.generic_below_n);
  } else {
    d.generic_below_n = std::max<int64_t>(1, n / 2);
    d.why = fmt::format("not measured: half the n it is tuned for ({}), where kernels about twice as fast as the "
                        "generic one at their n meet it (docs/benchmarks.md, issue 27)",
                        n);
  }
  return d;
}

}  // namespace spmmc
