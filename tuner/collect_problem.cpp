#include "tuner/collect_problem.h"

#include <cmath>
#include <iterator>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/kernel_program.h"
#include "codegen/size_guard.h"
#include "compiler/planning/choose_tile.h"
#include "compiler/planning/features.h"
#include "codegen/generic_launch.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "tuner/balanced_candidate.h"
#include "tuner/generic_candidate.h"
#include "tuner/time_balanced_kernel.h"
#include "tuner/time_generic_kernel.h"
#include "tuner/tune_exhaustively.h"

namespace spmmc {

std::string database_line(const std::string& matrix, int64_t n, const PlannedCandidate& candidate, const Measurement& m,
                          bool heuristic) {
  nlohmann::ordered_json features = nlohmann::ordered_json::object();
  const std::vector<double> values = candidate.features.values();
  for (size_t i = 0; i < values.size(); ++i) features[CandidateFeatures::names()[i]] = values[i];
  nlohmann::ordered_json j = {{"format", "spmmc.collect/1"},
                              {"matrix", matrix},
                              {"n", n},
                              {"tile", candidate_label(candidate)},
                              {"feature_schema_version", CandidateFeatures::kSchemaVersion},
                              {"features", features},
                              {"outcome", std::string(outcome_name(m.outcome))},
                              {"ms", m.outcome == Outcome::kOk ? m.time.median_ms : 0.0},
                              {"registers", m.registers_per_thread},
                              {"local_bytes", m.local_bytes_per_thread},
                              {"kernels", m.kernels}};
  if (heuristic) j["heuristic"] = true;
  if (m.outcome != Outcome::kOk) j["detail"] = m.detail.substr(0, 300);
  return j.dump();
}

CollectionCandidates collection_candidates(const Csr& a, const Plan& plan, const Target& target, size_t sample,
                                           int64_t fmas_per_kernel, double max_compile_seconds) {
  const auto compile_seconds = [&](const PlannedCandidate& c, int64_t fmas) {
    return estimate_unrolled_size(a, plan.for_m1(c.tile.m1).after, c.tile, fmas).nvcc_seconds;
  };
  const auto within_budget = [&](const PlannedCandidate& c) {
    return max_compile_seconds <= 0 || compile_seconds(c, fmas_per_kernel) <= max_compile_seconds;
  };
  CollectionCandidates out;
  const SizeLimits limits;
  std::string why;
  const PlannedCandidate* h = choose_tile_by_heuristic(
      plan, target, [&](const PlannedCandidate& c) { return compile_seconds(c, kMinFmasPerKernel) <= limits.max_nvcc_seconds; },
      why);
  if (h != nullptr && !within_budget(*h)) {
    out.heuristic_beyond_budget = true;
    return out;
  }
  std::vector<const PlannedCandidate*> within;
  for (const PlannedCandidate* c : tunable_candidates(plan, target.warp_size).list) {
    if (within_budget(*c)) {
      within.push_back(c);
    } else {
      ++out.beyond_budget;
    }
  }
  out.list = evenly_spaced(within, sample);
  out.heuristic = index_adding(out.list, h);
  return out;
}

CollectedProblem collect_problem(const Csr& a, const std::string& matrix, int64_t n, const Target& target,
                                 const GpuContext& gpu, TuningOptions options, size_t sample, CollectFamilies families) {
  PlanOptions plan_options;
  plan_options.n = n;
  plan_options.fmas_per_kernel = default_fmas_per_kernel(a.nnz(), n, target.arch);
  const Plan plan = plan_tiles(a, target, plan_options);
  const CollectionCandidates candidates = collection_candidates(a, plan, target, sample, plan_options.fmas_per_kernel,
                                                                options.max_real_compile_seconds);
  CollectedProblem out;
  out.beyond_budget = candidates.beyond_budget;
  out.heuristic_beyond_budget = candidates.heuristic_beyond_budget;
  if (candidates.list.empty()) return out;
  options.n = n;
  options.fmas_per_kernel = plan_options.fmas_per_kernel;
  const ReferenceProduct reference = reference_product(a, options);
  if (families.unrolled) {
    std::vector<TileCandidate> tiles;
    for (const auto* c : candidates.list) tiles.push_back(c->tile);
    const std::vector<Measurement> measured = measure_real_candidates(a, plan, tiles, gpu, options, &reference);
    for (size_t i = 0; i < candidates.list.size(); ++i)
      out.lines.push_back(database_line(matrix, n, *candidates.list[i], measured[i],
                                        static_cast<int32_t>(i) == candidates.heuristic));
  }
  if (families.generic) {
    const Measurement m = time_generic_kernel(a, plan.for_generic(kGenericRowsPerBlock).tiling, gpu, options, &reference);
    out.lines.push_back(database_line(matrix, n, generic_candidate(a, plan, target), m, false));
  }
  if (families.balanced) {
    const int32_t piece_length = default_piece_length(a);
    const std::vector<int32_t> groups(std::begin(kBalancedGroupsTried), std::end(kBalancedGroupsTried));
    const std::vector<Measurement> measured = time_balanced_kernels(a, piece_length, groups, gpu, options, &reference);
    for (size_t i = 0; i < groups.size(); ++i)
      out.lines.push_back(
          database_line(matrix, n, balanced_candidate(a, plan, target, piece_length, groups[i]), measured[i], false));
  }
  return out;
}

std::vector<GeneratedProblem> generated_problems(int count, uint64_t seed, int64_t max_nnz) {
  std::mt19937_64 rng(seed);
  const GeneratorKind kinds[] = {GeneratorKind::kUniform, GeneratorKind::kMagnitude, GeneratorKind::kPatterns,
                                 GeneratorKind::kBlocks};
  std::vector<GeneratedProblem> out;
  for (int64_t drawn = 0; static_cast<int>(out.size()) < count && drawn < 1000000; ++drawn) {
    GeneratedProblem p;
    p.matrix.kind = kinds[drawn % 4];
    p.matrix.rows = int64_t{1} << std::uniform_int_distribution<int>(6, 12)(rng);
    p.matrix.cols = int64_t{1} << std::uniform_int_distribution<int>(6, 12)(rng);
    // Three decimals, so the id names the sparsity exactly.
    p.matrix.sparsity = std::round(std::uniform_real_distribution<double>(0.5, 0.99)(rng) * 1000.0) / 1000.0;
    p.matrix.seed = rng() % 1000000;
    p.n = int64_t{1} << std::uniform_int_distribution<int>(8, 13)(rng);
    const double nnz = (1.0 - p.matrix.sparsity) * static_cast<double>(p.matrix.rows) * static_cast<double>(p.matrix.cols);
    if (nnz > static_cast<double>(max_nnz) || nnz < 1.0) continue;
    p.id = fmt::format("gen-{}-{}x{}-s{:.3f}-{}", generator_kind_name(p.matrix.kind), p.matrix.rows, p.matrix.cols,
                       p.matrix.sparsity, p.matrix.seed);
    out.push_back(p);
  }
  return out;
}

}  // namespace spmmc
