#include "compiler/planning/choose_tile.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace spmmc {

const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target,
                                                 const std::function<bool(const PlannedCandidate&)>& fits, std::string& why) {
  const int64_t warps = (plan.shape.n + target.warp_size - 1) / target.warp_size;
  const int64_t n1 = std::min<int64_t>(warps * target.warp_size, std::min<int64_t>(1024, target.max_threads_per_block));
  const PlannedCandidate* largest = nullptr;  // the M1 = 32 candidate, when M1 = 16 does not fit either
  for (const int32_t m1 : {16, 32}) {
    for (const PlannedCandidate& c : plan.candidates) {
      if (c.tile.m1 != m1 || c.tile.n1 != n1 || c.tile.cols_per_thread != 1 || c.verdict.rejected_by == Constraint::kRegister)
        continue;
      largest = &c;
      if (!fits(c)) break;
      why = fmt::format("heuristic (--tune none): the measured design, V = 1, N1 = {} threads (n rounded up to the warp "
                        "size, at most 1024), {} blocks per SM of launch bounds (64 registers per thread), M1 = {}{}",
                        n1, c.tile.min_blocks_per_sm, m1,
                        m1 == 16 ? "" : " (M1 = 16 would exceed the compile-time limit)");
      return &c;
    }
  }
  if (largest) {
    // Larger tiles would compile faster but spill under the register budget: the size guard
    // refuses this one with a message naming the limit, rather than emitting a slow kernel.
    why = fmt::format("heuristic (--tune none): the measured design with M1 = {}, N1 = {} (no tile of the design fits the "
                      "compile-time limit)", largest->tile.m1, n1);
    return largest;
  }
  std::vector<const PlannedCandidate*> pool = plan.survivors();
  std::string origin = "the survivors";
  if (pool.empty()) {
    // Small or irregular matrices can fail utilisation or balance whatever the tile; a kernel
    // is still needed, so every launchable candidate that passes the register constraint competes.
    for (const auto& c : plan.candidates)
      if (c.verdict.rejected_by == Constraint::kBalance ||
          (c.verdict.rejected_by == Constraint::kHardware && c.tile.threads_per_block() % target.warp_size == 0 &&
           c.tile.threads_per_block() <= target.max_threads_per_block))
        pool.push_back(&c);
    origin = "the candidates failing only utilisation or balance (none passed every constraint)";
  }
  if (pool.empty()) return nullptr;

  struct Preference {
    const char* text;
    bool (*keep)(const PlannedCandidate&, const Target&);
  };
  static const Preference kPreferences[] = {
      {"M1 <= 64, N1 <= 256, at least one thread block per SM and full waves (the last wave of blocks at "
       "least 90% busy)",
       [](const PlannedCandidate& c, const Target& t) {
         const int64_t blocks = c.features.block_num;
         const int64_t waves = (blocks + t.sm_count - 1) / t.sm_count;
         return c.tile.m1 <= 64 && c.tile.n1 <= 256 && blocks >= t.sm_count &&
                10 * blocks >= 9 * waves * t.sm_count;
       }},
      {"M1 <= 64 and N1 <= 256", [](const PlannedCandidate& c, const Target&) { return c.tile.m1 <= 64 && c.tile.n1 <= 256; }},
      {"any tile", [](const PlannedCandidate&, const Target&) { return true; }},
  };
  const auto key = [](const PlannedCandidate* c) {
    return std::make_tuple(-int64_t{c->tile.m1} * c->tile.n1, c->features.nnc_sum, -c->tile.n1);
  };
  for (const Preference& preference : kPreferences) {
    const PlannedCandidate* best = nullptr;
    for (const auto* c : pool)
      if (preference.keep(*c, target) && (!best || key(c) < key(best))) best = c;
    if (!best) continue;
    why = fmt::format(
        "heuristic (--tune none): among {} ({}), those with {}; the largest tile area M1 x N1 ({}), then the "
        "fewest B loads (NNC_sum {}), then the larger N1",
        origin, pool.size(), preference.text, int64_t{best->tile.m1} * best->tile.n1, best->features.nnc_sum);
    return best;
  }
  return nullptr;
}

}  // namespace spmmc
