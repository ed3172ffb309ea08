// The LambdaMART ranker of LO-SpMM §3.5 (issue 12): gradient-boosted trees (XGBoost, through its C
// API) that order the tile candidates of one problem by their ranking features, trained on measured
// kernel times with one query group per (matrix, n) problem. A model file holds the XGBoost model
// beside the feature schema it was trained on; loading one with another schema is refused. The file
// also records the range of problems the model was trained on (tuner/ranker_domain.h).
// docs/design/ranker.md describes features, labels, training and the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tuner/ranker_domain.h"

namespace spmmc {

// One query group: the candidates of one (matrix, n) problem, each with its feature values (in the
// schema's order) and its measured median time; the ranker learns to put the fastest first.
struct RankingGroup {
  std::string problem;                        // e.g. "dlmc/.../q.smtx@4096": for messages and splits
  std::vector<std::vector<double>> features;  // one row per candidate
  std::vector<double> times_ms;               // the same order; > 0
};

// The relevance grade of a candidate of time `ms` in a group whose fastest took `best_ms`: its speed
// relative to the best, r = best_ms / ms in (0, 1], quantised (rank:ndcg needs integer labels):
// 4 for r >= 0.95, 3 for >= 0.85, 2 for >= 0.70, 1 for >= 0.50, else 0.
int relevance_grade(double best_ms, double ms);

struct RankerParams {
  std::string objective = "rank:ndcg";  // or "rank:pairwise"
  int rounds = 200;                     // boosting rounds
  int max_depth = 6;
  double eta = 0.1;                     // learning rate
  double min_child_weight = 0.1;       // LambdaMART's hessians are small; 0.1 measured better than 1 (docs/design/ranker.md)
  double subsample = 1.0;
  uint64_t seed = 0;
  int threads = 1;                      // XGBoost's nthread: 1 makes training reproducible bit for bit
};

// What the model file says about the features a model takes.
struct FeatureSchema {
  int version = 0;
  std::vector<std::string> names;
};

class RankerModel {
 public:
  // Trains on `groups` (every group with at least one candidate; every row with names.size()
  // values). Throws UserError (exit 65) for malformed data, naming the group.
  static RankerModel train(const std::vector<RankingGroup>& groups, const FeatureSchema& schema, const RankerParams& params);

  // Reads a model file written by save(). Refuses (UserError naming the file) a file that is not a
  // spmmc ranker model, or whose feature schema differs from `expected` (version or names).
  static RankerModel load(const std::filesystem::path& file, const FeatureSchema& expected);

  // Writes the model file atomically (a temporary file, then a rename); the domain as "domain" after
  // "trained_on", unless it is empty.
  void save(const std::filesystem::path& file) const;

  // Scores, one per row (higher: expected faster). Deterministic.
  std::vector<double> predict(const std::vector<std::vector<double>>& rows) const;

  // Indices of `rows` ordered best first by predict() (ties: the earlier row first).
  std::vector<size_t> rank(const std::vector<std::vector<double>>& rows) const;

  const FeatureSchema& schema() const { return schema_; }
  const RankerParams& params() const { return params_; }

  // The problems the model was trained on (train() leaves it empty: the caller knows the problems;
  // spmmc train-ranker sets it from its training problems). An empty domain means "unknown" (a
  // model file written before domains were recorded loads with one), and the caller decides what
  // to do with it.
  const TrainingDomain& domain() const { return domain_; }
  void set_domain(TrainingDomain domain) { domain_ = std::move(domain); }

 private:
  RankerModel() = default;
  std::shared_ptr<void> booster_;  // BoosterHandle, freed with XGBoosterFree
  FeatureSchema schema_;
  RankerParams params_;
  int64_t trained_groups_ = 0, trained_rows_ = 0;
  TrainingDomain domain_;
};

}  // namespace spmmc
