// `spmmc collect` (issue 12): the measurements the ranker trains on. One problem, a matrix at one
// width n, gives one line of the tuning database (tuner/ranking_data.h) per collected candidate, from
// its real kernel compiled, checked against float64 and timed as `--tune exhaustive` times it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/target.h"
#include "runtime/cuda_driver.h"
#include "tuner/tuning.h"

namespace spmmc {

// One database line (format spmmc.collect/1, no newline) for a candidate of `plan` measured as `m`
// ("tile": candidate_label, tuner/generic_candidate.h); `heuristic` adds "heuristic": true (the
// tile --tune none would pick: studies measure its loss).
std::string database_line(const std::string& matrix, int64_t n, const PlannedCandidate& candidate, const Measurement& m,
                          bool heuristic);

// The candidates a problem's collection measures (issue 25).
struct CollectionCandidates {
  std::vector<const PlannedCandidate*> list;
  int32_t heuristic = -1;        // the index of the heuristic's pick in `list`, -1 where there is none
  size_t beyond_budget = 0;      // tunable candidates left out: their real compile is beyond the budget
  bool heuristic_beyond_budget = false;  // the heuristic's own real kernel is: `list` is empty
};

// tunable_candidates(plan) (the set the ranker and the tuners rank at compile time) whose real
// kernel, split into kernels of `fmas_per_kernel` FMAs, compiles within `max_compile_seconds` by the
// size guard's estimate (the budget a search spends on one real kernel: a search never compiles the
// others, so timing them would teach the ranker nothing it uses and cost minutes per candidate;
// 0: no budget), at most `sample` of them
// evenly spaced in plan order where `sample` > 0, and the heuristic's pick (choose_tile_by_heuristic
// with the size guard's default limit) always, last where it is not among them. Where the
// heuristic's real kernel is itself beyond the budget, no candidate (a search keeps that kernel
// unmeasured, tuner/tune_with_proxies.h).
CollectionCandidates collection_candidates(const Csr& a, const Plan& plan, const Target& target, size_t sample,
                                           int64_t fmas_per_kernel, double max_compile_seconds);

// The families a collection measures: the unrolled candidates (collection_candidates), the
// generic family's kernel (generic_candidate, one per problem) and the balanced family's
// (balanced_candidate, one per number of pieces per warp in kBalancedGroupsTried).
struct CollectFamilies {
  bool unrolled = true;
  bool generic = true;
  bool balanced = true;
};

// What a problem's collection gave: its database lines, one per measured candidate in the order
// of collection_candidates, then the generic family's, then the balanced family's, and what that
// left out.
struct CollectedProblem {
  std::vector<std::string> lines;
  size_t beyond_budget = 0;
  bool heuristic_beyond_budget = false;  // nothing measured: `lines` is empty
};

// Plans A for n on `target`, compiles the real kernel of every collection_candidates (split as spmmc
// compile splits it: default_fmas_per_kernel; the budget options.max_real_compile_seconds) on
// options.pool, the generic family's kernel (time_generic_kernel) and the balanced family's with the
// rows cut at default_piece_length (time_balanced_kernels), checks and times each
// (options.timing, in the measuring worker of options.worker), for the `families` asked. Where the
// heuristic's real kernel is beyond the budget, nothing (a search times no kernel there either).
CollectedProblem collect_problem(const Csr& a, const std::string& matrix, int64_t n, const Target& target,
                                 const GpuContext& gpu, TuningOptions options, size_t sample = 0,
                                 CollectFamilies families = {});

// A generated problem of the collection: the matrix's generator options and a width.
struct GeneratedProblem {
  std::string id;  // "gen-uniform-256x1024-s0.912-7": the matrix, unique per seed
  GeneratorOptions matrix;
  int64_t n = 0;
};

// `count` problems drawn from `seed` over and beyond LO-SpMM Table 3's ranges: M and K powers of two
// in [2^6, 2^12], sparsity uniform in [0.5, 0.99], n a power of two in [2^8, 2^13], the generators
// uniform, magnitude, patterns and blocks in turn; only problems of at most `max_nnz` non-zeros are
// kept (the drawing goes on until `count` are found). Deterministic.
std::vector<GeneratedProblem> generated_problems(int count, uint64_t seed, int64_t max_nnz);

}  // namespace spmmc
