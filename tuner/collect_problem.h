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

// One database line (format spmmc.collect/1, no newline) for a candidate of `plan` measured as `m`;
// `heuristic` adds "heuristic": true (the tile --tune none would pick: studies measure its loss).
std::string database_line(const std::string& matrix, int64_t n, const PlannedCandidate& candidate, const Measurement& m,
                          bool heuristic);

// The candidates a problem's collection measures (issue 25): tunable_candidates(plan) (the set the
// ranker and the tuners rank at compile time), at most `sample` of them evenly spaced in plan order
// where `sample` > 0 (a bounded cost per problem for layers of real size), and the heuristic's pick
// (choose_tile_by_heuristic with the size guard's default limit) always, last where it is not among
// them. `heuristic` receives its index, or -1 where there is none.
std::vector<const PlannedCandidate*> collection_candidates(const Csr& a, const Plan& plan, const Target& target,
                                                           size_t sample, int32_t& heuristic);

// Plans A for n on `target`, compiles the real kernel of every collection_candidates (split as spmmc
// compile splits it: default_fmas_per_kernel) on options.pool, checks and times each (options.timing,
// in the measuring worker of options.worker), and returns their database lines in that order.
std::vector<std::string> collect_problem(const Csr& a, const std::string& matrix, int64_t n, const Target& target,
                                         const GpuContext& gpu, TuningOptions options, size_t sample = 0);

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
