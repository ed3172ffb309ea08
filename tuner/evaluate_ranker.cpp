#include "tuner/evaluate_ranker.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace spmmc {

double ndcg_at(const std::vector<int>& grades, const std::vector<size_t>& order, size_t k) {
  const auto dcg = [&](const std::vector<int>& g) {
    double sum = 0.0;
    for (size_t i = 0; i < std::min(k, g.size()); ++i) sum += (std::pow(2.0, g[i]) - 1.0) / std::log2(static_cast<double>(i) + 2.0);
    return sum;
  };
  std::vector<int> ranked;
  for (size_t i : order) ranked.push_back(grades.at(i));
  std::vector<int> ideal = grades;
  std::sort(ideal.begin(), ideal.end(), std::greater<int>());
  const double best = dcg(ideal);
  return best > 0.0 ? dcg(ranked) / best : 1.0;
}

RankingMetrics evaluate_ranker(const RankerModel& model, const std::vector<RankingProblem>& problems) {
  RankingMetrics m;
  for (const RankingProblem& p : problems) {
    const std::vector<double>& times = p.group.times_ms;
    if (times.empty()) continue;
    const double best = *std::min_element(times.begin(), times.end());
    std::vector<int> grades;
    for (double t : times) grades.push_back(relevance_grade(best, t));
    const std::vector<size_t> order = model.rank(p.group.features);
    double top10 = times[order[0]];
    for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i) top10 = std::min(top10, times[order[i]]);
    const double loss = times[order[0]] / best - 1.0;
    ++m.problems;
    m.ndcg_at_10 += ndcg_at(grades, order, 10);
    m.top1_hit_rate += times[order[0]] == best ? 1.0 : 0.0;
    m.top1_loss += loss;
    m.top10_loss += top10 / best - 1.0;
    m.max_top1_loss = std::max(m.max_top1_loss, loss);
  }
  if (m.problems > 0) {
    const double count = static_cast<double>(m.problems);
    m.ndcg_at_10 /= count;
    m.top1_hit_rate /= count;
    m.top1_loss /= count;
    m.top10_loss /= count;
  }
  return m;
}

}  // namespace spmmc
