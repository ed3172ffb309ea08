#include "compiler/choose_tile.h"

#include <tuple>

#include <fmt/format.h>

namespace spmmc {

const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target, std::string& why) {
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
