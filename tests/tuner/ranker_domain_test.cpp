// tuner/ranker_domain.h: a problem described from its candidates' feature rows, the training domain
// over problems, the test of a problem against it (with the slack), its place in the model file
// (saved, loaded, absent from older files), and `spmmc train-ranker` recording it (no GPU).
#include "tuner/ranker_domain.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"
#include "compiler/planning/features.h"
#include "tests/test_util.h"
#include "tuner/ranker.h"
#include "tuner/ranking_data.h"

namespace spmmc {
namespace {

const FeatureSchema kSchema{CandidateFeatures::kSchemaVersion, CandidateFeatures::names()};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The feature row of candidate M1 x N1 of a problem of `rows` x `k` with `nnz` non-zeros at width n,
// whose busiest A-tile has `nnz_max` non-zeros.
std::vector<double> feature_row(int64_t rows, int64_t k, int64_t nnz, int64_t n, int64_t m1, int64_t n1, int64_t nnz_max) {
  CandidateFeatures f;
  f.a_tile_num = ceil_div(rows, m1);
  f.b_tile_num = ceil_div(n, n1);
  f.block_num = f.a_tile_num * f.b_tile_num;
  f.sparsity = 1.0 - static_cast<double>(nnz) / static_cast<double>(rows * k);
  f.nnc_sum = f.a_tile_num * k / 2;
  f.nnz_max = nnz_max;
  f.m1 = m1;
  f.n1 = n1;
  f.k = k;
  f.threads_per_block = n1;
  return f.values();
}

// A balanced problem: every A-tile holds its share of the non-zeros, plus one.
RankingProblem balanced_problem(const std::string& matrix, int64_t rows, int64_t k, int64_t nnz, int64_t n) {
  RankingProblem p;
  p.matrix = matrix;
  p.n = n;
  p.group.problem = fmt::format("{}@{}", matrix, n);
  for (const int64_t m1 : {4, 8, 16})
    for (const int64_t n1 : {128, 256}) {
      p.tiles.push_back(fmt::format("{}x{}", m1, n1));
      p.group.features.push_back(feature_row(rows, k, nnz, n, m1, n1, nnz / ceil_div(rows, m1) + 1));
      p.group.times_ms.push_back(0.01 * static_cast<double>(m1 + n1));
    }
  return p;
}

TEST_CASE("ranker domain: a problem is described from its candidates' features", "[ranker][domain]") {
  // 100 x 64 with 1280 non-zeros (sparsity 0.8); the smallest M1 tiles the rows exactly.
  const std::vector<std::vector<double>> rows = {feature_row(100, 64, 1280, 512, 8, 256, 110),   // 13 tiles: 104 rows
                                                 feature_row(100, 64, 1280, 512, 4, 256, 60),    // 25 tiles: 100 rows
                                                 feature_row(100, 64, 1280, 512, 16, 128, 250)};  // 7 tiles: 112 rows
  const ProblemDescriptor p = describe_problem(rows, kSchema, 512);
  CHECK(p.n == 512);
  CHECK(p.k == 64);
  CHECK(p.rows == 100);  // the smallest a_tile_num * m1
  CHECK(p.nnz == 1280);
  CHECK(p.row_spread == Approx(250.0 * 7 / 1280));  // the busiest tile relative to the mean, over the candidates

  // 90 rows: the smallest M1 (4) rounds them up to 92, and nnz follows that estimate.
  const ProblemDescriptor q = describe_problem({feature_row(90, 64, 1152, 256, 4, 128, 52)}, kSchema, 256);
  CHECK(q.rows == 92);
  CHECK(q.nnz == std::round(0.2 * 92 * 64));  // 1177.6 -> 1178
  CHECK(q.row_spread == Approx(52.0 * 23 / 1178));

  // The features are looked up by name, in any order; a missing one is a bug of spmmc.
  FeatureSchema shuffled{kSchema.version, {"k", "nnz_max", "m1", "sparsity", "a_tile_num"}};
  const ProblemDescriptor s = describe_problem({{64, 60, 4, 0.8, 25}}, shuffled, 512);
  CHECK(s.rows == 100);
  CHECK(s.nnz == 1280);
  FeatureSchema missing{kSchema.version, {"k", "nnz_max", "m1", "sparsity"}};
  CHECK_THROWS_AS(describe_problem({{64, 60, 4, 0.8}}, missing, 512), InternalError);
}

TEST_CASE("ranker domain: the training domain is each field's range over the problems", "[ranker][domain]") {
  const std::vector<RankingProblem> problems = {balanced_problem("a", 64, 128, 800, 256),
                                                balanced_problem("b", 256, 64, 1600, 4096),
                                                balanced_problem("c", 128, 512, 12000, 1024)};
  const TrainingDomain d = training_domain(problems, kSchema);
  CHECK(d.problems == 3);
  CHECK(!d.empty());
  CHECK(d.n.min == 256);
  CHECK(d.n.max == 4096);
  CHECK(d.k.min == 64);
  CHECK(d.k.max == 512);
  CHECK(d.rows.min == 64);
  CHECK(d.rows.max == 256);
  CHECK(d.nnz.min == 800);
  CHECK(d.nnz.max == 12000);
  // Balanced: the busiest tile holds its share plus one, a little more than the mean.
  CHECK(d.row_spread.min > 1.0);
  CHECK(d.row_spread.max < 1.2);
  CHECK(training_domain({}, kSchema).empty());
}

TrainingDomain fixed_domain() {
  TrainingDomain d;
  d.problems = 49;
  d.n = {256, 8192};
  d.k = {64, 4096};
  d.rows = {64, 4096};
  d.nnz = {312, 11984};
  d.row_spread = {1.0, 4.0};
  return d;
}

TEST_CASE("ranker domain: a problem is inside up to the slack, else the first field outside is named",
          "[ranker][domain]") {
  const TrainingDomain d = fixed_domain();
  const ProblemDescriptor inside{1024, 512, 512, 5000, 2.0};
  CHECK(!outside_domain(d, inside));
  // Just inside the slack at both ends of every field.
  CHECK(!outside_domain(d, {8192 * kDomainSlack, 4096 * kDomainSlack, 4096 * kDomainSlack, 11984 * kDomainSlack,
                            4.0 * kDomainSlack}));
  CHECK(!outside_domain(d, {256 / kDomainSlack, 64 / kDomainSlack, 64 / kDomainSlack, 312 / kDomainSlack,
                            1.0 / kDomainSlack}));
  CHECK(kDomainSlack == 1.25);

  const auto outside = [&](ProblemDescriptor p) {
    const auto why = outside_domain(d, p);
    REQUIRE(why);
    return *why;
  };
  ProblemDescriptor p = inside;
  p.nnz = 176000;
  CHECK(outside(p) == "nnz 176000 is outside the training range [312, 11984] (x1.25)");
  p = inside;
  p.nnz = 249;  // below 312 / 1.25 = 249.6
  CHECK(outside(p) == "nnz 249 is outside the training range [312, 11984] (x1.25)");
  p = inside;
  p.n = 16384;
  CHECK(outside(p) == "n 16384 is outside the training range [256, 8192] (x1.25)");
  p = inside;
  p.k = 32;
  CHECK(outside(p) == "k 32 is outside the training range [64, 4096] (x1.25)");
  p = inside;
  p.rows = 65536;
  CHECK(outside(p) == "rows 65536 is outside the training range [64, 4096] (x1.25)");
  p = inside;
  p.row_spread = 12.5;
  CHECK(outside(p) == "row_spread 12.5 is outside the training range [1, 4] (x1.25)");
  // Several outside: the first in the order n, k, rows, nnz, row_spread.
  p = {16384, 512, 65536, 176000, 12.5};
  CHECK_THAT(outside(p), Catch::StartsWith("n 16384 "));
  p.n = 1024;
  CHECK_THAT(outside(p), Catch::StartsWith("rows 65536 "));
  // An unknown domain says so (the caller decides what that means).
  CHECK_THAT(outside_domain(TrainingDomain{}, inside).value_or(""), Catch::Contains("no training domain"));
}

TEST_CASE("ranker domain: JSON round trip", "[ranker][domain]") {
  TrainingDomain d = fixed_domain();
  d.row_spread = {1.0625, 3.7109375};
  const nlohmann::ordered_json j = domain_json(d);
  CHECK(j.dump() ==
        R"({"problems":49,"n":{"min":256,"max":8192},"k":{"min":64,"max":4096},"rows":{"min":64,"max":4096},)"
        R"("nnz":{"min":312,"max":11984},"row_spread":{"min":1.0625,"max":3.7109375},"generic_problems":0,"balanced_problems":0})");
  const TrainingDomain back = domain_from_json(nlohmann::json::parse(j.dump()));
  CHECK(back.problems == 49);
  CHECK(back.nnz.max == 11984);
  CHECK(back.row_spread.max == 3.7109375);
  CHECK(domain_json(back) == j);
  CHECK_THROWS_AS(domain_from_json(nlohmann::json::parse(R"({"problems": 3})")), nlohmann::json::exception);
}

RankerModel tiny_model(const std::vector<RankingProblem>& problems) {
  std::vector<RankingGroup> groups;
  for (const RankingProblem& p : problems) groups.push_back(p.group);
  RankerParams params;
  params.rounds = 5;
  params.max_depth = 3;
  return RankerModel::train(groups, kSchema, params);
}

TEST_CASE("ranker domain: the model file records the domain, and a file without one loads with an empty domain",
          "[ranker][domain]") {
  test::TempDir dir;
  const std::vector<RankingProblem> problems = {balanced_problem("a", 64, 128, 800, 256),
                                                balanced_problem("b", 256, 64, 1600, 4096)};
  RankerModel model = tiny_model(problems);
  CHECK(model.domain().empty());  // train() leaves it to the caller
  model.set_domain(training_domain(problems, kSchema));
  const auto file = dir.path / "with.json";
  model.save(file);
  const auto saved = nlohmann::ordered_json::parse(test::read_file(file));
  std::vector<std::string> keys;
  for (const auto& [key, value] : saved.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"format", "feature_schema_version", "features", "params", "trained_on", "domain",
                                         "xgboost"});
  CHECK(saved["domain"] == domain_json(model.domain()));

  const RankerModel loaded = RankerModel::load(file, kSchema);
  CHECK(domain_json(loaded.domain()) == domain_json(model.domain()));
  CHECK(loaded.domain().nnz.max == 1600);
  loaded.save(dir.path / "again.json");
  CHECK(test::read_file(dir.path / "again.json") == test::read_file(file));

  // A model file of before domains: no "domain" key; it loads, with an empty (unknown) domain, and
  // saves without one.
  const auto old_file = dir.path / "old.json";
  tiny_model(problems).save(old_file);
  CHECK(nlohmann::json::parse(test::read_file(old_file)).count("domain") == 0);
  const RankerModel old = RankerModel::load(old_file, kSchema);
  CHECK(old.domain().empty());
  CHECK(old.predict(problems[0].group.features) == loaded.predict(problems[0].group.features));

  // A malformed domain is refused naming the file.
  auto broken = saved;
  broken["domain"] = {{"problems", 2}};
  test::write_file(dir.path / "broken.json", broken.dump(1));
  const UserError e = test::expect_user_error([&] { RankerModel::load(dir.path / "broken.json", kSchema); });
  CHECK(e.code() == ExitCode::kDataError);
  CHECK(e.where().file == (dir.path / "broken.json").string());
  CHECK_THAT(e.message(), Catch::Contains("missing or malformed"));
}

// 20 matrices of distinct shapes at two widths, six candidates each, features as the planner
// computes them; the time is lowest at M1 = 8, N1 = 256.
std::string realistic_database() {
  std::string out;
  const auto& names = CandidateFeatures::names();
  for (int m = 0; m < 20; ++m) {
    const int64_t rows = 64 * (m + 1), k = 128 + 32 * m, nnz = rows * k / 10;
    for (const int64_t n : {256, 1024})
      for (const int64_t m1 : {4, 8, 16})
        for (const int64_t n1 : {128, 256}) {
          const std::vector<double> values = feature_row(rows, k, nnz, n, m1, n1, nnz / ceil_div(rows, m1) + m);
          nlohmann::ordered_json features;
          for (size_t i = 0; i < names.size(); ++i) features[names[i]] = values[i];
          const double ms = (1.0 + 0.1 * m) * (1.0 + std::abs(std::log2(static_cast<double>(m1) / 8.0))) * (n1 == 256 ? 1.0 : 1.5);
          out += nlohmann::ordered_json({{"format", "spmmc.collect/1"},
                                         {"matrix", "gen-" + std::to_string(m)},
                                         {"n", n},
                                         {"tile", fmt::format("{}x{}", m1, n1)},
                                         {"feature_schema_version", CandidateFeatures::kSchemaVersion},
                                         {"features", features},
                                         {"outcome", "Ok"},
                                         {"ms", ms}})
                     .dump() +
                 "\n";
        }
  }
  return out;
}

TEST_CASE("spmmc train-ranker: the model records the domain of its training problems", "[ranker][domain][cli]") {
  test::TempDir dir;
  const auto db = dir.path / "collect.jsonl";
  test::write_file(db, realistic_database());
  const auto model = dir.path / "h100.ranker.json";
  const auto r = test::run_spmmc({"train-ranker", db.string(), "-o", model.string(), "--rounds", "10", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::ordered_json::parse(r.out);
  REQUIRE(report.contains("domain"));

  // The training problems only, as the command splits them (the default share and seed).
  const RankingData data = read_ranking_data({db.string()}, kSchema);
  std::vector<RankingProblem> train, validation;
  split_by_matrix(data.problems, 0.2, 0, train, validation);
  REQUIRE(!validation.empty());
  const TrainingDomain expected = training_domain(train, kSchema);
  CHECK(expected.problems == static_cast<int64_t>(train.size()));
  CHECK(report["domain"] == domain_json(expected));
  CHECK(report["domain"]["problems"] == report["train"]["problems"]);
  CHECK(RankerModel::load(model, kSchema).domain().problems == expected.problems);
  CHECK(domain_json(RankerModel::load(model, kSchema).domain()) == domain_json(expected));

  const auto text = test::run_spmmc({"train-ranker", db.string(), "-o", model.string(), "--rounds", "10"});
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains(fmt::format("  domain:     {} training problems: n 256..1024, k ", train.size())));
  CHECK_THAT(text.out, Catch::Contains("(--tune model keeps its heuristic beyond x1.25)"));
}

}  // namespace
}  // namespace spmmc
