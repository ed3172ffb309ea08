#include "compiler/choose_tile.h"

#include <cstdlib>
#include <tuple>

#include <fmt/format.h>

namespace spmmc {

const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target, std::string& why) {
  auto survivors = plan.survivors();
  bool fallback = false;
  if (survivors.empty()) {
    // Small or irregular matrices can fail utilisation or balance whatever the tile; a kernel
    // is still needed, so fall back to every launchable candidate that passes the register
    // constraint (hardware rejections for too few blocks, and balance rejections).
    for (const auto& c : plan.candidates)
      if (c.verdict.rejected_by == Constraint::kBalance ||
          (c.verdict.rejected_by == Constraint::kHardware && c.tile.threads_per_block() % target.warp_size == 0 &&
           c.tile.threads_per_block() <= target.max_threads_per_block))
        survivors.push_back(&c);
    fallback = true;
  }
  if (survivors.empty()) return nullptr;
  const int64_t enough_threads = 1024 * target.sm_count;
  const auto threads = [](const PlannedCandidate* c) { return c->features.block_num * c->tile.threads_per_block(); };
  bool any_enough = false;
  for (const auto* c : survivors) any_enough |= threads(c) >= enough_threads;
  const PlannedCandidate* best = nullptr;
  auto key = [](const PlannedCandidate* c) {
    return std::make_tuple(c->features.nnc_sum, std::abs(c->tile.n1 - 128), c->tile.m1);
  };
  for (const auto* c : survivors) {
    if (any_enough && threads(c) < enough_threads) continue;
    if (!best || key(c) < key(best)) best = c;
  }
  why = fmt::format("{}{}", fallback ? "no candidate passed every constraint, so candidates failing only hardware "
                                       "utilisation (too few blocks) or load balance competed; " : "",
                    fmt::format(
      "heuristic (--tune none): of {} survivors, {} with at least {} threads (1024 per SM); the fewest B loads "
      "(NNC_sum {}), then N1 closest to 128, then the smaller M1",
      survivors.size(), any_enough ? "those" : "none had enough threads, so all", enough_threads, best->features.nnc_sum));
  return best;
}

}  // namespace spmmc
