#include "compiler/planning/plan_tiles.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Reorders for every M1 of the axis on a small pool of threads; results land in axis order.
std::vector<M1Plan> reorder_per_m1(const Csr& a, const std::vector<int32_t>& m1_axis, ReorderMethod method,
                                   unsigned threads) {
  std::vector<M1Plan> plans(m1_axis.size());
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < m1_axis.size(); i = next++) {
      const auto start = std::chrono::steady_clock::now();
      M1Plan& p = plans[i];
      p.m1 = m1_axis[i];
      p.tiling = tile_rows(a, p.m1, method);
      p.after = measure_tiling(a, p.tiling);
      p.before = method == ReorderMethod::kNone ? p.after : measure_tiling(a, tile_rows(a, p.m1, ReorderMethod::kNone));
      p.seconds = seconds_since(start);
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(m1_axis.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  return plans;
}

}  // namespace

std::vector<const PlannedCandidate*> Plan::survivors() const {
  std::vector<const PlannedCandidate*> out;
  for (const auto& c : candidates)
    if (c.verdict.accepted()) out.push_back(&c);
  return out;
}

TunableCandidates tunable_candidates(const Plan& plan, int64_t warp_size) {
  TunableCandidates out;
  std::vector<const PlannedCandidate*> pool = plan.survivors();
  out.fallback = pool.empty();
  if (out.fallback)
    for (const auto& c : plan.candidates)
      if (c.verdict.rejected_by != Constraint::kRegister) pool.push_back(&c);
  const int64_t n = plan.shape.n;
  for (const PlannedCandidate* c : pool) {
    const int64_t v = c->tile.cols_per_thread;
    const int64_t useful_threads = (n + v - 1) / v;
    const int64_t threads_with_work = (useful_threads + warp_size - 1) / warp_size * warp_size;
    if (n > 0 && warp_size > 0 && c->tile.threads_per_block() > threads_with_work)
      ++out.too_wide;
    else
      out.list.push_back(c);
  }
  if (out.list.empty()) {  // only wide tiles: keep them rather than nothing
    out.list = pool;
    out.too_wide = 0;
  }
  out.why = fmt::format("{} {}", out.list.size(),
                        out.fallback ? "candidates kept by the register constraint (none passed every constraint)"
                                     : "survivors of every constraint");
  if (out.too_wide > 0)
    out.why += fmt::format(", {} tile(s) wider than n = {} left out (threads without a column)", out.too_wide, n);
  return out;
}

std::vector<const PlannedCandidate*> evenly_spaced(const std::vector<const PlannedCandidate*>& candidates, size_t k) {
  if (k == 0 || candidates.size() <= k) return candidates;
  std::vector<const PlannedCandidate*> kept;
  for (size_t i = 0; i < k; ++i) kept.push_back(candidates[i * candidates.size() / k]);
  return kept;
}

int32_t index_adding(std::vector<const PlannedCandidate*>& candidates, const PlannedCandidate* pick) {
  if (!pick) return -1;
  auto it = std::find(candidates.begin(), candidates.end(), pick);
  if (it == candidates.end()) it = candidates.insert(candidates.end(), pick);
  return static_cast<int32_t>(it - candidates.begin());
}

const M1Plan& Plan::for_m1(int32_t m1) const {
  for (const auto& p : per_m1)
    if (p.m1 == m1) return p;
  SPMMC_CHECK(false, "no plan for this M1");
  return per_m1.front();
}

const M1Plan& Plan::for_generic(int32_t rows_per_block) const {
  SPMMC_CHECK(!per_m1.empty(), "a plan without M1 values");
  const M1Plan* best = nullptr;
  for (const auto& p : per_m1)
    if (p.m1 <= rows_per_block && (best == nullptr || p.m1 > best->m1)) best = &p;
  if (best != nullptr) return *best;
  for (const auto& p : per_m1)
    if (best == nullptr || p.m1 < best->m1) best = &p;
  return *best;
}

double planning_memory_bytes(const Csr& a) {
  constexpr double kBytesPerRow = 72.0, kBytesPerColumn = 8.0, kBytesPerNonZero = 150.0;
  return kBytesPerRow * static_cast<double>(a.rows) + kBytesPerColumn * static_cast<double>(a.cols) +
         kBytesPerNonZero * static_cast<double>(a.nnz());
}

Plan plan_tiles(const Csr& a, const Target& target, const PlanOptions& options) {
  SPMMC_CHECK(a.nnz() > 0, "planning needs a matrix with non-zeros");
  SPMMC_CHECK(options.n >= 1, "n must be at least 1");
  const auto start = std::chrono::steady_clock::now();
  const TileSpaceAxes axes = options.axes.m1.empty() ? default_tile_axes(target) : options.axes;
  SPMMC_CHECK(!axes.m1.empty() && !axes.n1.empty(), "empty tile space axes");

  Plan plan;
  plan.shape = {a.rows, a.cols, options.n};
  plan.nnz = a.nnz();
  plan.per_m1 = reorder_per_m1(a, axes.m1, options.reorder, options.threads);
  for (const TileCandidate& tile : build_tile_space(axes, target.registers_per_sm)) {
    const TilingStats& tiling = plan.for_m1(tile.m1).after;
    PlannedCandidate c{tile, check_constraints(tile, plan.shape, target, tiling, options.constraints),
                       compute_features(tile, plan.shape, plan.nnz, tiling, target, options.fmas_per_kernel)};
    ++plan.remaining[0];
    const int stage = c.verdict.accepted() ? 4 : static_cast<int>(c.verdict.rejected_by);
    for (int s = 1; s < stage && s < 4; ++s) ++plan.remaining[s];
    plan.candidates.push_back(std::move(c));
  }
  plan.seconds = seconds_since(start);
  return plan;
}

}  // namespace spmmc
