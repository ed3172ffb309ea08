#include "compiler/planning/choose_tile.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace spmmc {

int64_t busiest_sm_columns(int64_t a_tiles, int64_t n, int64_t n1, int64_t blocks_per_sm, int64_t sms) {
  a_tiles = std::max<int64_t>(a_tiles, 1);
  n1 = std::max<int64_t>(n1, 1);
  sms = std::max<int64_t>(sms, 1);
  const int64_t b_tiles = (n + n1 - 1) / n1;
  const int64_t y = blocks_per_a_tile(a_tiles, b_tiles, sms * std::max<int64_t>(blocks_per_sm, 1));
  std::vector<int64_t> block_columns(static_cast<size_t>(y), 0);  // by blockIdx.y: its B-tiles' columns
  for (int64_t bt = 0; bt < b_tiles; ++bt) block_columns[static_cast<size_t>(bt % y)] += std::min(n1, n - bt * n1);
  // Blocks in launch order (x fastest), block i on SM i mod sms.
  std::vector<int64_t> sm_columns(static_cast<size_t>(std::min(sms, a_tiles * y)), 0);
  int64_t i = 0;
  for (int64_t j = 0; j < y; ++j)
    for (int64_t a = 0; a < a_tiles; ++a, ++i)
      sm_columns[static_cast<size_t>(i % static_cast<int64_t>(sm_columns.size()))] += block_columns[static_cast<size_t>(j)];
  return *std::max_element(sm_columns.begin(), sm_columns.end());
}

int64_t tensor_core_warps(const Csr& a, int64_t n) {
  int64_t non_empty = 0;
  for (int32_t r = 0; r < a.rows; ++r) non_empty += a.row_ptr[r + 1] > a.row_ptr[r];
  const int64_t windows = (non_empty + 7) / 8 + (a.rows - non_empty + 7) / 8;
  return windows * ((n + 63) / 64);
}

double unrolled_wave_fill(int64_t a_tiles, int64_t n, const TileCandidate& tile, const Target& target) {
  const int64_t wave = std::max<int64_t>(target.sm_count, 1) * std::max<int32_t>(tile.min_blocks_per_sm, 1);
  a_tiles = std::max<int64_t>(a_tiles, 1);
  const int64_t n1 = std::max<int32_t>(tile.n1, 1);
  const int64_t blocks = a_tiles * blocks_per_a_tile(a_tiles, (n + n1 - 1) / n1, wave);
  return static_cast<double>(std::min(blocks, wave)) / static_cast<double>(wave);
}

double products_per_b_load(const PlannedCandidate& c, int64_t nnz) {
  return c.features.nnc_sum > 0 ? static_cast<double>(nnz) / static_cast<double>(c.features.nnc_sum) : 1.0;
}

int64_t balanced_threads(int64_t a_tiles, int64_t n, const Target& target) {
  const int64_t warp = std::max<int64_t>(target.warp_size, 1);
  const int64_t widest = std::min<int64_t>(1024, target.max_threads_per_block) / warp * warp;
  const int64_t rounded = std::min((n + warp - 1) / warp * warp, widest);
  const int64_t narrowest = 512;  // 16 warps: measured as fast as 32 per block (study 2); 8 lost 15%
  if (rounded <= narrowest) return rounded;
  int64_t best = rounded, best_columns = -1;
  for (int64_t t = rounded; t >= narrowest; t -= warp) {
    const int64_t per_sm = min_blocks_for_register_budget(static_cast<int32_t>(t), target.registers_per_sm);
    const int64_t columns = busiest_sm_columns(a_tiles, n, t, per_sm, target.sm_count);
    if (best_columns < 0 || columns < best_columns) best = t, best_columns = columns;
  }
  return best;
}

double resident_warps_per_sm(int64_t a_tiles, int64_t n, const TileCandidate& tile, const Target& target) {
  const int64_t sms = std::max<int64_t>(target.sm_count, 1);
  const int64_t wave = sms * std::max<int32_t>(tile.min_blocks_per_sm, 1);
  a_tiles = std::max<int64_t>(a_tiles, 1);
  const int64_t n1 = std::max<int32_t>(tile.n1, 1);
  const int64_t blocks = a_tiles * blocks_per_a_tile(a_tiles, (n + n1 - 1) / n1, wave);
  const double warps_per_block = static_cast<double>(tile.threads_per_block()) / static_cast<double>(std::max<int64_t>(target.warp_size, 1));
  return static_cast<double>(std::min(blocks, wave)) * warps_per_block / static_cast<double>(sms);
}

int64_t single_tile_threads(const Plan& plan, int64_t a_tiles, const Target& target) {
  int64_t best = 0, best_columns = -1;
  for (const PlannedCandidate& c : plan.candidates) {
    if (c.tile.m1 != 64 || c.tile.cols_per_thread != 1 || c.verdict.rejected_by == Constraint::kRegister ||
        c.tile.min_blocks_per_sm != kSingleTileBlocksPerSm)
      continue;
    const int64_t columns = busiest_sm_columns(a_tiles, plan.shape.n, c.tile.n1, c.tile.min_blocks_per_sm, target.sm_count);
    if (best_columns < 0 || columns < best_columns || (columns == best_columns && c.tile.n1 > best))
      best = c.tile.n1, best_columns = columns;
  }
  return best;
}

namespace {

// A rule's candidate (nullptr where it has none) and the A-tiles of its launch.
struct DesignTile {
  const PlannedCandidate* candidate = nullptr;
  int64_t a_tiles = 0;  // the emitted grid.x, empty-row tiles included
};

// The plan of the tiling at M1 = m1, or nullptr where the plan has none.
const M1Plan* tiling_for(const Plan& plan, int32_t m1) {
  const auto t = std::find_if(plan.per_m1.begin(), plan.per_m1.end(), [m1](const M1Plan& p) { return p.m1 == m1; });
  return t == plan.per_m1.end() ? nullptr : &*t;
}

// The planned candidate M1 x N1 with V = 1 that the register constraint kept, or nullptr.
const PlannedCandidate* v1_candidate(const Plan& plan, int32_t m1, int64_t n1) {
  const PlannedCandidate* found = nullptr;
  for (const PlannedCandidate& c : plan.candidates)
    if (c.tile.m1 == m1 && c.tile.n1 == n1 && c.tile.cols_per_thread == 1 && c.verdict.rejected_by != Constraint::kRegister)
      found = &c;
  return found;
}

// The design's candidate for one M1 (V = 1, N1 = balanced_threads), or nullptr where the plan has
// no such M1 or the register constraint rejected it.
DesignTile design_tile(const Plan& plan, const Target& target, int32_t m1) {
  DesignTile d;
  const M1Plan* tiling = tiling_for(plan, m1);
  if (!tiling) return d;
  d.a_tiles = tiling->tiling.num_blocks();
  d.candidate = v1_candidate(plan, m1, balanced_threads(d.a_tiles, plan.shape.n, target));
  return d;
}

// The single-tile rule's candidate (M1 = 64, V = 1, N1 = single_tile_threads), or nullptr where
// A's non-empty rows are not one A-tile at M1 = 64 and several at M1 = 32, or the plan has no such
// candidate. The launch counts the blocks that store the empty rows' zeros too (a_tiles).
DesignTile single_tile(const Plan& plan, const Target& target) {
  DesignTile d;
  const M1Plan* whole = tiling_for(plan, 64);
  const M1Plan* halves = tiling_for(plan, 32);
  if (!whole || !halves || whole->tiling.num_tiles() != 1 || halves->tiling.num_tiles() < 2) return d;
  d.a_tiles = whole->tiling.num_blocks();
  d.candidate = v1_candidate(plan, 64, single_tile_threads(plan, d.a_tiles, target));
  return d;
}

}  // namespace

const PlannedCandidate* choose_tile_by_heuristic(const Plan& plan, const Target& target,
                                                 const std::function<bool(const PlannedCandidate&)>& fits, std::string& why) {
  const DesignTile narrow = design_tile(plan, target, 16);
  const DesignTile wide = design_tile(plan, target, 32);
  const auto warps = [&](const DesignTile& d) { return resident_warps_per_sm(d.a_tiles, plan.shape.n, d.candidate->tile, target); };
  const auto describe = [&](const DesignTile& d, const std::string& reason) {
    const PlannedCandidate& c = *d.candidate;
    return fmt::format("heuristic (--tune none): the measured design, V = 1, N1 = {} threads (the width of 512 to 1024 "
                       "threads, or n rounded up to the warp size below 512, that leaves the busiest of {} SMs the "
                       "fewest columns: {}), launch bounds of at least {} block(s) per SM (the register budget), M1 = {} ({})",
                       c.tile.n1, target.sm_count,
                       busiest_sm_columns(d.a_tiles, plan.shape.n, c.tile.n1, c.tile.min_blocks_per_sm, target.sm_count),
                       c.tile.min_blocks_per_sm, c.tile.m1, reason);
  };
  if (const DesignTile single = single_tile(plan, target); single.candidate && fits(*single.candidate)) {
    const double fill = unrolled_wave_fill(single.a_tiles, plan.shape.n, single.candidate->tile, target);
    if (fill >= kSingleTileMinWaveFill) {
      const PlannedCandidate& c = *single.candidate;
      const M1Plan* narrowest = tiling_for(plan, 16);
      const int64_t columns = busiest_sm_columns(single.a_tiles, plan.shape.n, c.tile.n1, c.tile.min_blocks_per_sm, target.sm_count);
      why = fmt::format("heuristic (--tune none): the single-tile design, A's non-empty rows (of {}) in one A-tile of "
                        "M1 = 64 (each column of B loaded once for every row: NNC_sum {}, against {} at M1 = 16), V = 1, "
                        "N1 = {} threads (the width with {} blocks per SM that leaves the busiest of {} SMs the fewest "
                        "columns: {}), its launch filling {:.2f} of a wave (at least {:.2f})",
                        plan.shape.m, c.features.nnc_sum, narrowest ? narrowest->after.nnc_sum : 0, c.tile.n1,
                        kSingleTileBlocksPerSm, target.sm_count, columns, fill, kSingleTileMinWaveFill);
      return single.candidate;
    }
  }
  const bool narrow_fits = narrow.candidate && fits(*narrow.candidate);
  const bool wide_fits = wide.candidate && fits(*wide.candidate);
  if (narrow_fits && wide_fits) {
    const double share = warps(wide) / warps(narrow);
    const std::string shares = fmt::format("M1 = 32 keeps {:.1f} resident warps per SM, M1 = 16 {:.1f}: {:.2f}", warps(wide),
                                           warps(narrow), share);
    if (share > kWiderTileWarpShare) {
      why = describe(wide, fmt::format("half the loads of B per FMA; {}, above {:.2f}", shares, kWiderTileWarpShare));
      return wide.candidate;
    }
    why = describe(narrow, fmt::format("{}, not above {:.2f}", shares, kWiderTileWarpShare));
    return narrow.candidate;
  }
  if (narrow_fits) {
    why = describe(narrow, "M1 = 32 is not in the plan or would exceed the compile-time limit");
    return narrow.candidate;
  }
  if (wide_fits) {
    why = describe(wide, narrow.candidate ? "M1 = 16 would exceed the compile-time limit" : "M1 = 16 is not in the plan");
    return wide.candidate;
  }
  if (const DesignTile& largest = wide.candidate ? wide : narrow; largest.candidate) {
    // Larger tiles would compile faster but spill under the register budget: the size guard
    // refuses this one with a message naming the limit, rather than emitting a slow kernel.
    why = fmt::format("heuristic (--tune none): the measured design with M1 = {}, N1 = {} (no tile of the design fits the "
                      "compile-time limit)", largest.candidate->tile.m1, largest.candidate->tile.n1);
    return largest.candidate;
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
