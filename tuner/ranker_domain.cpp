#include "tuner/ranker_domain.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"
#include "tuner/ranker.h"
#include "tuner/ranking_data.h"

namespace spmmc {
namespace {

using Json = nlohmann::ordered_json;

// The column of feature `name` in `schema`; its absence is a bug (the schema is spmmc's own).
size_t column(const FeatureSchema& schema, const std::string& name) {
  const auto it = std::find(schema.names.begin(), schema.names.end(), name);
  SPMMC_CHECK(it != schema.names.end(),
              fmt::format("the feature schema {} has no feature '{}' (the training domain needs it)", schema.version, name));
  return static_cast<size_t>(it - schema.names.begin());
}

bool integral(double v) { return std::isfinite(v) && std::abs(v) < 1e15 && v == std::round(v); }

// 176000, 11984, 1.25, 3.42: integers as integers, others with 3 significant digits.
std::string number(double v) { return integral(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

Json number_json(double v) {
  if (integral(v)) return static_cast<int64_t>(v);
  return v;
}

Json range_json(const DomainRange& r) { return {{"min", number_json(r.min)}, {"max", number_json(r.max)}}; }

DomainRange range_from_json(const nlohmann::json& j) { return {j.at("min").get<double>(), j.at("max").get<double>()}; }

void widen(DomainRange& r, double v, bool first) {
  r.min = first ? v : std::min(r.min, v);
  r.max = first ? v : std::max(r.max, v);
}

}  // namespace

ProblemDescriptor describe_problem(const std::vector<std::vector<double>>& feature_rows, const FeatureSchema& schema,
                                   int64_t n) {
  SPMMC_CHECK(!feature_rows.empty(), "describe_problem: a problem without candidates");
  const size_t a_tile_num = column(schema, "a_tile_num"), sparsity = column(schema, "sparsity"),
               nnz_max = column(schema, "nnz_max"), m1 = column(schema, "m1"), k = column(schema, "k");
  for (const auto& row : feature_rows)
    SPMMC_CHECK(row.size() == schema.names.size(),
                fmt::format("describe_problem: a row of {} features, the schema {}", row.size(), schema.names.size()));
  // The tiles' rows (family 0): the generic and balanced families' describe their own launches, not A's tiles.
  const auto family = std::find(schema.names.begin(), schema.names.end(), "family");
  std::vector<const std::vector<double>*> tiles;
  for (const auto& row : feature_rows)
    if (family == schema.names.end() || row[static_cast<size_t>(family - schema.names.begin())] == 0.0) tiles.push_back(&row);
  if (tiles.empty())
    for (const auto& row : feature_rows) tiles.push_back(&row);
  ProblemDescriptor p;
  p.n = static_cast<double>(n);
  p.k = (*tiles.front())[k];
  p.rows = std::numeric_limits<double>::infinity();
  for (const auto* row : tiles) p.rows = std::min(p.rows, (*row)[a_tile_num] * (*row)[m1]);
  // Every candidate of a problem has the same sparsity; the first one's is as good as any.
  p.nnz = std::round((1.0 - (*tiles.front())[sparsity]) * p.rows * p.k);
  for (const auto* row : tiles)
    if (p.nnz > 0) p.row_spread = std::max(p.row_spread, (*row)[nnz_max] * (*row)[a_tile_num] / p.nnz);
  for (const auto& row : feature_rows) {
    if (family == schema.names.end()) break;
    const double f = row[static_cast<size_t>(family - schema.names.begin())];
    if (f == 1.0) p.has_generic = true;
    if (f == 2.0) p.has_balanced = true;
  }
  return p;
}

TrainingDomain training_domain(const std::vector<RankingProblem>& problems, const FeatureSchema& schema) {
  TrainingDomain d;
  for (const RankingProblem& problem : problems) {
    const ProblemDescriptor p = describe_problem(problem.group.features, schema, problem.n);
    const bool first = d.problems == 0;
    widen(d.n, p.n, first);
    widen(d.k, p.k, first);
    widen(d.rows, p.rows, first);
    widen(d.nnz, p.nnz, first);
    widen(d.row_spread, p.row_spread, first);
    ++d.problems;
    if (p.has_generic) ++d.generic_problems;
    if (p.has_balanced) ++d.balanced_problems;
  }
  return d;
}

std::optional<std::string> outside_domain(const TrainingDomain& domain, const ProblemDescriptor& p) {
  if (domain.empty()) return std::string("the model records no training domain");
  struct Field {
    const char* name;
    double value;
    const DomainRange& range;
  };
  const Field fields[] = {{"n", p.n, domain.n},
                          {"k", p.k, domain.k},
                          {"rows", p.rows, domain.rows},
                          {"nnz", p.nnz, domain.nnz},
                          {"row_spread", p.row_spread, domain.row_spread}};
  for (const Field& f : fields) {
    if (f.value >= f.range.min / kDomainSlack && f.value <= f.range.max * kDomainSlack) continue;
    return fmt::format("{} {} is outside the training range [{}, {}] (x{})", f.name, number(f.value), number(f.range.min),
                       number(f.range.max), number(kDomainSlack));
  }
  return std::nullopt;
}

nlohmann::ordered_json domain_json(const TrainingDomain& domain) {
  return {{"problems", domain.problems},          {"n", range_json(domain.n)},     {"k", range_json(domain.k)},
          {"rows", range_json(domain.rows)},      {"nnz", range_json(domain.nnz)},
          {"row_spread", range_json(domain.row_spread)}, {"generic_problems", domain.generic_problems},
          {"balanced_problems", domain.balanced_problems}};
}

TrainingDomain domain_from_json(const nlohmann::json& j) {
  TrainingDomain d;
  d.problems = j.at("problems").get<int64_t>();
  d.n = range_from_json(j.at("n"));
  d.k = range_from_json(j.at("k"));
  d.rows = range_from_json(j.at("rows"));
  d.nnz = range_from_json(j.at("nnz"));
  d.row_spread = range_from_json(j.at("row_spread"));
  d.generic_problems = j.value("generic_problems", int64_t{0});
  d.balanced_problems = j.value("balanced_problems", int64_t{0});
  return d;
}

}  // namespace spmmc
