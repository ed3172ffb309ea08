// The ranker's training domain (issue 12): the range of problems a model was trained on, recorded in
// the model file, so that `spmmc compile --tune model` can keep its heuristic for a problem far
// outside it (trees extrapolate flatly: beyond the last split the model only repeats what it learned
// at the edge). docs/design/ranker.md, "The training domain".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace spmmc {

// Not included: ranking_data.h includes ranker.h, which includes this header for its member.
struct FeatureSchema;
struct RankingProblem;

// A little beyond the training range is still interpolation for trees, whose splits stop at the last
// value seen (a problem 25% larger than the largest trained on falls in the same leaves as that one),
// but twice the largest is a problem of another kind (other tiles win there).
inline constexpr double kDomainSlack = 1.25;

// One (matrix, n) problem, described ONLY from its candidates' feature rows (schema 2: a_tile_num,
// sparsity, nnz_max, m1, k), so that training (from the database) and compiling (from the plan)
// compute it by the same formula:
//   rows        min over the candidates of a_tile_num * m1: an upper bound of the non-empty rows,
//               tight at the smallest M1 (exact at M1 = 1);
//   nnz         round((1 - sparsity) * rows * k);
//   row_spread  max over the candidates of nnz_max * a_tile_num / nnz: how much busier the busiest
//               A-tile is than the mean one (~1 for balanced DNN layers, large for power-law graphs).
//               0 where nnz is 0.
// Only the tiles' rows count (family 0 where the schema has "family"; all rows where none is):
// the generic and balanced families' rows describe their own launches. `has_generic`: a row of the
// generic family (family 1) is among them; `has_balanced`: one of the balanced family (family 2).
// rows and nnz are estimates (sparsity is relative to all M rows, so a matrix with empty rows or
// rows rounded up to M1 reads a little off), which is fine: the domain compares a problem with the
// problems a model was trained on, and both ends go through this same function.
struct ProblemDescriptor {
  double n = 0, k = 0, rows = 0, nnz = 0, row_spread = 0;
  bool has_generic = false;
  bool has_balanced = false;
};

// Describes the problem of width `n` whose candidates have `feature_rows` (in `schema`'s order).
// A feature the formulas need missing from the schema, or no rows, is an internal error
// (SPMMC_CHECK): the schema is spmmc's own.
ProblemDescriptor describe_problem(const std::vector<std::vector<double>>& feature_rows, const FeatureSchema& schema,
                                   int64_t n);

// [min, max] of one descriptor field over the training problems.
struct DomainRange {
  double min = 0, max = 0;
};

// What a model was trained on: each descriptor field's range and the number of problems, and how
// many of them had the generic family's kernel among their candidates (0: the model has never seen
// one, so its scores of a generic candidate mean nothing). An empty domain (no problems: a model
// file written before domains were recorded) means "unknown".
struct TrainingDomain {
  int64_t problems = 0;
  int64_t generic_problems = 0;
  int64_t balanced_problems = 0;  // the same for the balanced family's kernels
  DomainRange n, k, rows, nnz, row_spread;

  bool empty() const { return problems == 0; }
};

// The domain of `problems` (each described by describe_problem with its own n): every field's
// min and max. Empty for no problems.
TrainingDomain training_domain(const std::vector<RankingProblem>& problems, const FeatureSchema& schema);

// nullopt when every field of `p` lies inside [min / kDomainSlack, max * kDomainSlack] of `domain`,
// else a sentence naming the first field outside (in the order n, k, rows, nnz, row_spread) and both
// numbers, e.g. "nnz 176000 is outside the training range [312, 11984] (x1.25)". An empty domain
// puts every problem outside ("the model records no training domain"); the caller decides what an
// unknown domain means.
std::optional<std::string> outside_domain(const TrainingDomain& domain, const ProblemDescriptor& p);

// The domain as the model file and train-ranker's --json report hold it:
//   {"problems": 49, "n": {"min": 256, "max": 8192}, "k": {...}, "rows": {...}, "nnz": {...},
//    "row_spread": {...}, "generic_problems": 30, "balanced_problems": 0}
// (integral values written as integers; "generic_problems" and "balanced_problems" absent from older
// files read as 0).
nlohmann::ordered_json domain_json(const TrainingDomain& domain);

// Reads what domain_json wrote; throws nlohmann's exception for a malformed object (the caller names
// the file).
TrainingDomain domain_from_json(const nlohmann::json& j);

}  // namespace spmmc
