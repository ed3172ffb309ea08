// How well a ranker orders held-out problems (issue 12's measures), from their measured times.
#pragma once

#include <vector>

#include "tuner/ranker.h"
#include "tuner/ranking_data.h"

namespace spmmc {

struct RankingMetrics {
  int64_t problems = 0;
  double ndcg_at_10 = 0.0;      // mean NDCG@10 over problems, with the relevance grades of relevance_grade
  double top1_hit_rate = 0.0;   // share of problems whose first-ranked candidate is (one of) the fastest
  double top1_loss = 0.0;       // mean over problems of time(first ranked) / best time - 1: `--tune model`
  double top10_loss = 0.0;      // mean of min time(first 10 ranked) / best - 1: `--tune rank` with perfect proxies
  double max_top1_loss = 0.0;
};

// Ranks every problem's candidates with `model` and compares the order with their measured times.
// Problems with no candidate are skipped; none at all gives zeros.
RankingMetrics evaluate_ranker(const RankerModel& model, const std::vector<RankingProblem>& problems);

// NDCG@k of an order (indices into `grades`, best first) against the ideal order of the grades:
// DCG = sum over the first k of (2^grade - 1) / log2(position + 2). 1 when the ideal DCG is 0.
double ndcg_at(const std::vector<int>& grades, const std::vector<size_t>& order, size_t k);

}  // namespace spmmc
