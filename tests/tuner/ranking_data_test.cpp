// tuner/ranking_data.h and tuner/evaluate_ranker.h: reading the tuning database into query groups
// (errors at file:line), the split by matrix, NDCG and the ranking metrics; and `spmmc
// train-ranker` end to end on a generated database (no GPU).
#include "tuner/ranking_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"
#include "compiler/planning/choose_tile.h"
#include "compiler/planning/features.h"
#include "compiler/planning/target.h"
#include "tests/test_util.h"
#include "tuner/choose_by_model.h"
#include "tuner/collect_problem.h"
#include "tuner/evaluate_ranker.h"
#include "tuner/ranker_domain.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/plan_tiles.h"
#include "codegen/kernel_program.h"
#include "codegen/size_guard.h"
#include "runtime/cuda_driver.h"
#include <sstream>

namespace spmmc {
namespace {

const FeatureSchema kSchema{3, {"m1", "n1", "k"}};

std::string line(const std::string& matrix, int64_t n, int m1, int n1, const std::string& outcome, double ms,
                 int version = 3) {
  nlohmann::ordered_json j = {{"format", "spmmc.collect/1"}, {"matrix", matrix}, {"n", n},
                              {"tile", fmt::format("{}x{}", m1, n1)}, {"feature_schema_version", version},
                              {"features", {{"m1", m1}, {"n1", n1}, {"k", 512}}}, {"outcome", outcome}, {"ms", ms}};
  return j.dump() + "\n";
}

TEST_CASE("ranking data: lines become one query group per (matrix, n)", "[ranker]") {
  test::TempDir dir;
  const auto a = dir.path / "a.jsonl", b = dir.path / "b.jsonl";
  test::write_file(a, line("q", 4096, 16, 1024, "Ok", 0.03) + "\n" + line("q", 4096, 32, 512, "Ok", 0.035) +
                          line("q", 4096, 8, 64, "Invalid", 0.0) + line("q", 1568, 16, 512, "Ok", 0.02) +
                          line("k", 4096, 16, 1024, "Ok", 0.05));
  // A resumed collection measured q's 32x512 again: the later line counts.
  test::write_file(b, line("q", 4096, 32, 512, "Ok", 0.025) + line("k", 4096, 32, 512, "Ok", 0.06));
  const RankingData data = read_ranking_data({a.string(), b.string()}, kSchema);
  CHECK(data.lines == 7);
  CHECK(data.not_ok == 1);
  CHECK(data.single == 1);  // q at n = 1568 has one candidate
  REQUIRE(data.problems.size() == 2);
  const RankingProblem& q = data.problems[0];
  CHECK(q.group.problem == "q@4096");
  CHECK(q.tiles == std::vector<std::string>{"16x1024", "32x512"});
  CHECK(q.group.times_ms == std::vector<double>{0.03, 0.025});
  CHECK(q.group.features[1] == std::vector<double>{32, 512, 512});
  CHECK(data.problems[1].matrix == "k");
}

TEST_CASE("ranking data: a bad line is an error at file:line", "[ranker]") {
  test::TempDir dir;
  const auto f = dir.path / "bad.jsonl";
  const auto refused = [&](const std::string& second_line, const std::string& why) {
    test::write_file(f, line("q", 4096, 16, 1024, "Ok", 0.03) + second_line + "\n");
    try {
      read_ranking_data({f.string()}, kSchema);
      FAIL("read " << second_line);
    } catch (const UserError& e) {
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().str() == f.string() + ":2");
      CHECK_THAT(e.message(), Catch::Contains(why));
    }
  };
  refused("{\"format\": ", "not a JSON line");
  refused(R"({"format": "other"})", "not a tuning database line");
  refused(line("q", 4096, 32, 512, "Ok", 0.03, 2), "collected with feature schema 2, this spmmc trains on schema 3");
  refused(R"({"format": "spmmc.collect/1", "feature_schema_version": 3, "matrix": "q", "n": 4096, "tile": "1x1", "outcome": "Ok", "ms": 1, "features": {"m1": 1, "n1": 2}})",
          "feature \"k\" is missing");
  refused(R"({"format": "spmmc.collect/1", "feature_schema_version": 3, "matrix": "q", "n": "many"})", "wrong type");
  refused(line("q", 4096, 32, 512, "Ok", 0.0), "an Ok candidate with time 0 ms");
  try {
    read_ranking_data({(dir.path / "absent.jsonl").string()}, kSchema);
    FAIL("read a missing file");
  } catch (const UserError& e) {
    CHECK(e.code() == ExitCode::kNoInput);
  }
}

TEST_CASE("ranking data: lines of feature schema 2 are read for schema 3 with the launch derived on the target", "[ranker]") {
  // A 512-row layer at n = 4096 with tile 16x1024 as schema 2 stored it, split into 3 kernels.
  const nlohmann::ordered_json v2 = {{"a_tile_num", 32},  {"b_tile_num", 4},        {"block_num", 128},
                                     {"sparsity", 0.9},   {"nnc_sum", 9000},        {"nnz_max", 900},
                                     {"m1", 16},          {"n1", 1024},             {"k", 512},
                                     {"cols_per_thread", 1}, {"threads_per_block", 1024}, {"min_blocks_per_sm", 1}};
  std::string lines;
  for (const double ms : {0.03, 0.04}) {
    nlohmann::ordered_json j = {{"format", "spmmc.collect/1"}, {"matrix", "q"}, {"n", 4096},
                                {"tile", ms < 0.035 ? "16x1024" : "16x1024b"}, {"feature_schema_version", 2},
                                {"features", v2}, {"outcome", "Ok"}, {"ms", ms}, {"kernels", 3}};
    lines += j.dump() + "\n";
  }
  test::TempDir dir;
  const auto f = dir.path / "v2.jsonl";
  test::write_file(f, lines);
  const FeatureSchema schema{CandidateFeatures::kSchemaVersion, CandidateFeatures::names()};
  const Target h100 = load_target("h100");
  const RankingData data = read_ranking_data({f.string()}, schema, &h100);
  REQUIRE(data.problems.size() == 1);
  const std::vector<double>& row = data.problems[0].group.features[0];
  REQUIRE(row.size() == CandidateFeatures::names().size());
  CandidateFeatures expected;
  expected.a_tile_num = 32, expected.b_tile_num = 4, expected.block_num = 128, expected.sparsity = 0.9;
  expected.nnc_sum = 9000, expected.nnz_max = 900, expected.m1 = 16, expected.n1 = 1024, expected.k = 512;
  expected.threads_per_block = 1024, expected.min_blocks_per_sm = 1;
  derive_launch_features(expected, h100, 3);
  CHECK(row == expected.values());
  CHECK(expected.kernels == 3);
  CHECK(expected.blocks_per_a_tile == 4);
  // Without a target to derive them on, the old lines are refused.
  CHECK_THROWS_AS(read_ranking_data({f.string()}, schema), UserError);
}

TEST_CASE("ranking data: the split keeps each matrix on one side, deterministically", "[ranker]") {
  std::vector<RankingProblem> all;
  for (int m = 0; m < 200; ++m)
    for (const int64_t n : {1568, 4096}) {
      RankingProblem p;
      p.matrix = "matrix-" + std::to_string(m);
      p.n = n;
      all.push_back(p);
    }
  std::vector<RankingProblem> train, validation, train2, validation2;
  split_by_matrix(all, 0.2, 5, train, validation);
  split_by_matrix(all, 0.2, 5, train2, validation2);
  CHECK(train.size() + validation.size() == all.size());
  CHECK(validation.size() == validation2.size());
  std::set<std::string> in_train, in_validation;
  for (const auto& p : train) in_train.insert(p.matrix);
  for (const auto& p : validation) in_validation.insert(p.matrix);
  for (const auto& m : in_validation) CHECK(in_train.count(m) == 0);
  CHECK(in_validation.size() >= 20);  // about 40 of 200
  CHECK(in_validation.size() <= 60);
  split_by_matrix(all, 0.0, 5, train, validation);
  CHECK(validation.empty());
}

TEST_CASE("ranking metrics: NDCG by hand, and a ranker that learned the fixture", "[ranker]") {
  // Grades 4, 0, 2: the ideal order 0, 2, 1; DCG of the order 2, 0, 1 = 3/1 + 15/log2(3).
  const std::vector<int> grades = {4, 0, 2};
  CHECK(ndcg_at(grades, {0, 2, 1}, 10) == Approx(1.0));
  CHECK(ndcg_at(grades, {2, 0, 1}, 10) == Approx((3.0 + 15.0 / std::log2(3.0)) / (15.0 + 3.0 / std::log2(3.0))));
  CHECK(ndcg_at(grades, {2, 0, 1}, 1) == Approx(3.0 / 15.0));
  CHECK(ndcg_at({0, 0}, {1, 0}, 10) == 1.0);

  // Problems where the time grows with the distance of M1 from 16: a trained model ranks 16 first.
  std::vector<RankingProblem> problems;
  for (int p = 0; p < 10; ++p) {
    RankingProblem problem;
    problem.matrix = "m" + std::to_string(p);
    for (const double m1 : {4.0, 8.0, 16.0, 32.0}) {
      problem.group.features.push_back({m1, 512.0, 256.0 * (p + 1)});
      problem.group.times_ms.push_back((p + 1) * (1.0 + std::abs(std::log2(m1 / 16.0))));
    }
    problems.push_back(problem);
  }
  std::vector<RankingGroup> groups;
  for (const auto& p : problems) groups.push_back(p.group);
  RankerParams params;
  params.rounds = 20;
  params.max_depth = 3;
  const RankerModel model = RankerModel::train(groups, kSchema, params);
  const RankingMetrics m = evaluate_ranker(model, problems);
  CHECK(m.problems == 10);
  CHECK(m.top1_hit_rate == 1.0);
  CHECK(m.top1_loss == 0.0);
  CHECK(m.top10_loss == 0.0);
  CHECK(m.ndcg_at_10 > 0.99);  // the lower grades may tie differently
}

// A database of 30 matrices at two widths with the real feature schema: the time is lowest at
// M1 = 16, N1 = 512 and grows with the distance from it.
std::string generated_database() {
  std::string out;
  const auto& names = CandidateFeatures::names();
  for (int m = 0; m < 30; ++m)
    for (const int64_t n : {1568, 4096})
      for (const int m1 : {4, 8, 16, 32})
        for (const int n1 : {128, 256, 512, 1024}) {
          nlohmann::ordered_json features;
          for (size_t i = 0; i < names.size(); ++i) features[names[i]] = static_cast<double>(i + m);
          features["m1"] = m1;
          features["n1"] = n1;
          const double ms = (1.0 + 0.1 * m) * (1.0 + 0.5 * std::abs(std::log2(m1 / 16.0))) *
                            (1.0 + 0.3 * std::abs(std::log2(n1 / 512.0))) * (n == 4096 ? 2.0 : 1.0);
          nlohmann::ordered_json j = {{"format", "spmmc.collect/1"},
                                      {"matrix", "gen-" + std::to_string(m)},
                                      {"n", n},
                                      {"tile", fmt::format("{}x{}", m1, n1)},
                                      {"feature_schema_version", CandidateFeatures::kSchemaVersion},
                                      {"features", features},
                                      {"outcome", "Ok"},
                                      {"ms", ms}};
          out += j.dump() + "\n";
        }
  return out;
}

TEST_CASE("spmmc train-ranker: trains, validates on held-out matrices and writes the model", "[ranker][cli]") {
  test::TempDir dir;
  const auto db = dir.path / "collect.jsonl";
  test::write_file(db, generated_database());
  const auto model = dir.path / "models" / "h100.ranker.json";
  std::filesystem::create_directories(model.parent_path());
  const auto r = test::run_spmmc({"train-ranker", db.string(), "-o", model.string(), "--rounds", "40", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  CHECK(report["schema"] == "spmmc.train-ranker/1");
  CHECK(report["lines"] == 30 * 2 * 16);
  CHECK(report["validation"]["problems"].get<int>() > 0);
  CHECK(report["validation"]["top1_hit_rate"] == 1.0);
  CHECK(report["train"]["problems"].get<int>() + report["validation"]["problems"].get<int>() == 60);
  const std::string first = test::read_file(model);
  CHECK_THAT(first, Catch::Contains("\"format\": \"spmmc.ranker/1\""));
  // Deterministic: the same data and options write the same file.
  REQUIRE(test::run_spmmc({"train-ranker", db.string(), "-o", model.string(), "--rounds", "40", "--json"}).exit_code == 0);
  CHECK(test::read_file(model) == first);
  // The text report names both parts.
  const auto text = test::run_spmmc({"train-ranker", db.string(), "-o", model.string(), "--rounds", "5"});
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("validation: "));
  CHECK_THAT(text.out, Catch::Contains("wrote " + model.string()));
}

TEST_CASE("spmmc train-ranker: usage and data errors", "[ranker][cli]") {
  test::TempDir dir;
  const auto db = dir.path / "collect.jsonl";
  test::write_file(db, generated_database() + "{oops\n");
  const auto out = (dir.path / "m.json").string();
  const auto bad_line = test::run_spmmc({"train-ranker", db.string(), "-o", out});
  CHECK(bad_line.exit_code == 65);
  CHECK_THAT(bad_line.err, Catch::Contains(db.string() + ":961: error: not a JSON line"));
  CHECK(!std::filesystem::exists(out));
  CHECK(test::run_spmmc({"train-ranker", db.string()}).exit_code == 64);
  const auto objective = test::run_spmmc({"train-ranker", db.string(), "-o", out, "--objective", "reg:linear"});
  CHECK(objective.exit_code == 64);
  CHECK_THAT(objective.err, Catch::Contains("expected rank:ndcg (default) or rank:pairwise"));
  CHECK(test::run_spmmc({"train-ranker", (dir.path / "none.jsonl").string(), "-o", out}).exit_code == 66);
}

}  // namespace
}  // namespace spmmc

namespace spmmc {
namespace {

TEST_CASE("collect: generated problems are deterministic and within the ranges", "[ranker][collect]") {
  const auto a = generated_problems(40, 11, 40000);
  const auto b = generated_problems(40, 11, 40000);
  REQUIRE(a.size() == 40);
  std::set<std::string> kinds, ids;
  for (size_t i = 0; i < a.size(); ++i) {
    const GeneratedProblem& p = a[i];
    INFO(p.id);
    CHECK(p.id == b[i].id);
    CHECK(p.n == b[i].n);
    CHECK(p.matrix.rows >= 64);
    CHECK(p.matrix.rows <= 4096);
    CHECK(p.matrix.cols >= 64);
    CHECK(p.matrix.cols <= 4096);
    CHECK((p.matrix.rows & (p.matrix.rows - 1)) == 0);
    CHECK(p.matrix.sparsity >= 0.5);
    CHECK(p.matrix.sparsity <= 0.99);
    CHECK(p.n >= 256);
    CHECK(p.n <= 8192);
    CHECK((1.0 - p.matrix.sparsity) * static_cast<double>(p.matrix.rows * p.matrix.cols) <= 40000.0);
    kinds.insert(std::string(generator_kind_name(p.matrix.kind)));
    ids.insert(p.id);
  }
  CHECK(kinds.size() == 4);
  CHECK(ids.size() == 40);
  CHECK(generated_problems(5, 12, 40000)[0].id != a[0].id);
}

TEST_CASE("collect: database lines read back as the candidates' features and times", "[ranker][collect]") {
  GeneratorOptions g;
  g.rows = 256, g.cols = 128, g.sparsity = 0.9, g.seed = 3;
  PlanOptions options;
  options.n = 1024;
  options.threads = 1;
  const Plan plan = plan_tiles(generate_matrix(g), load_target("h100"), options);
  const auto survivors = plan.survivors();
  REQUIRE(survivors.size() >= 3);
  std::string text;
  for (size_t i = 0; i < 3; ++i) {
    Measurement m;
    m.outcome = i == 2 ? Outcome::kInvalid : Outcome::kOk;
    m.detail = "spills 128 bytes";
    m.time.median_ms = 0.01 * static_cast<double>(i + 1);
    text += database_line("gen-x", 1024, *survivors[i], m, i == 1) + "\n";
  }
  test::TempDir dir;
  test::write_file(dir.path / "p.jsonl", text);
  const FeatureSchema schema{CandidateFeatures::kSchemaVersion, CandidateFeatures::names()};
  const RankingData data = read_ranking_data({(dir.path / "p.jsonl").string()}, schema);
  CHECK(data.not_ok == 1);
  REQUIRE(data.problems.size() == 1);
  const RankingProblem& p = data.problems[0];
  CHECK(p.group.problem == "gen-x@1024");
  CHECK(p.tiles == std::vector<std::string>{survivors[0]->tile.label(), survivors[1]->tile.label()});
  CHECK(p.group.features[1] == survivors[1]->features.values());
  CHECK(p.group.times_ms == std::vector<double>{0.01, 0.02});
  CHECK_THAT(text, Catch::Contains("\"detail\":\"spills 128 bytes\""));
  CHECK_THAT(text, Catch::Contains("\"heuristic\":true"));  // on the second line only, which still reads
}

TEST_CASE("collect: the candidates, sampled, and the heuristic's pick always among them", "[ranker][collect]") {
  GeneratorOptions g;
  g.rows = 512, g.cols = 512, g.sparsity = 0.9, g.seed = 4;
  PlanOptions options;
  options.n = 4096;
  options.threads = 1;
  const Csr a = generate_matrix(g);
  const Target h100 = load_target("h100");
  const Plan plan = plan_tiles(a, h100, options);
  std::string why;
  const PlannedCandidate* h = choose_tile_by_heuristic(plan, h100, [](const PlannedCandidate&) { return true; }, why);
  REQUIRE(h != nullptr);
  const int64_t fmas = default_fmas_per_kernel(a.nnz(), options.n, h100.arch);
  const CollectionCandidates all = collection_candidates(a, plan, h100, 0, fmas, 0.0);
  const auto tunable = tunable_candidates(plan, h100.warp_size).list;
  REQUIRE(tunable.size() > 8);
  REQUIRE(all.heuristic >= 0);
  CHECK(all.beyond_budget == 0);
  CHECK(all.list[static_cast<size_t>(all.heuristic)] == h);
  CHECK(all.list.size() == tunable.size() + (std::find(tunable.begin(), tunable.end(), h) == tunable.end() ? 1 : 0));
  const CollectionCandidates sampled = collection_candidates(a, plan, h100, 8, fmas, 0.0);
  CHECK(sampled.list.size() <= 9);
  CHECK(sampled.list.size() >= 8);
  CHECK(sampled.list[static_cast<size_t>(sampled.heuristic)] == h);
  CHECK(sampled.list.front() == tunable.front());  // evenly spaced from the first, deterministic
  CHECK(collection_candidates(a, plan, h100, 8, fmas, 0.0).list == sampled.list);

  // The compile budget (issue 25: a bounded cost per problem): candidates whose real kernel the size
  // guard estimates beyond it are left out and counted; the heuristic's pick beyond it empties the list.
  std::vector<double> seconds;
  for (const PlannedCandidate* c : tunable)
    seconds.push_back(estimate_unrolled_size(a, plan.for_m1(c->tile.m1).after, c->tile, fmas).nvcc_seconds);
  const double h_seconds = estimate_unrolled_size(a, plan.for_m1(h->tile.m1).after, h->tile, fmas).nvcc_seconds;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double budget = std::max(h_seconds, sorted[sorted.size() / 2]);
  const auto expected_out = static_cast<size_t>(std::count_if(seconds.begin(), seconds.end(), [&](double s) { return s > budget; }));
  REQUIRE(expected_out > 0);  // the budget must bite for this test to prove anything
  const CollectionCandidates bounded = collection_candidates(a, plan, h100, 0, fmas, budget);
  CHECK(bounded.beyond_budget == expected_out);
  CHECK_FALSE(bounded.heuristic_beyond_budget);
  REQUIRE(bounded.heuristic >= 0);
  CHECK(bounded.list[static_cast<size_t>(bounded.heuristic)] == h);
  for (const PlannedCandidate* c : bounded.list)
    CHECK(estimate_unrolled_size(a, plan.for_m1(c->tile.m1).after, c->tile, fmas).nvcc_seconds <= budget);
  const CollectionCandidates none = collection_candidates(a, plan, h100, 8, fmas, h_seconds * 0.5);
  CHECK(none.heuristic_beyond_budget);
  CHECK(none.list.empty());
  CHECK(none.heuristic == -1);
}

TEST_CASE("spmmc collect: usage, and no GPU before any work", "[ranker][collect][cli]") {
  test::TempDir dir;
  const auto out = dir.path / "db";
  CHECK(test::run_spmmc({"collect", "--generate", "2"}).exit_code == 64);
  CHECK(test::run_spmmc({"collect", "--out", out.string()}).exit_code == 64);
  const auto widths = test::run_spmmc({"collect", "--out", out.string(), "--generate", "2", "--n", "256,x"});
  CHECK(widths.exit_code == 64);
  CHECK_THAT(widths.err, Catch::Contains("expected widths in [1, 2^30]"));
  const auto families = test::run_spmmc({"collect", "--out", out.string(), "--generate", "2", "--families", "generic,tc"});
  CHECK(families.exit_code == 64);
  CHECK_THAT(families.err,
             Catch::Contains("--families generic,tc: expected some of unrolled, generic and balanced, separated by commas"));
  // The balanced family is a family collect knows: the same options get past usage (to the GPU check).
  const auto balanced = test::run_spmmc({"collect", "--out", out.string(), "--generate", "2", "--families", "balanced"});
  CHECK(balanced.exit_code != 64);
  std::string why;
  if (!GpuContext::available(&why)) {
    const auto r = test::run_spmmc({"collect", "--out", out.string(), "--generate", "2"});
    CHECK(r.exit_code == 69);
    CHECK_THAT(r.err, Catch::Contains("spmmc collect times kernels on a GPU, and none is usable here"));
    CHECK(!std::filesystem::exists(out));
  }
}

TEST_CASE("spmmc train-ranker reads a folder's database files", "[ranker][cli]") {
  test::TempDir dir;
  const std::string all = generated_database();
  // Split the database into one file per 16 lines, as collect writes one per problem.
  std::filesystem::create_directories(dir.path / "db");
  std::istringstream in(all);
  std::string l, chunk;
  int count = 0, files = 0;
  while (std::getline(in, l)) {
    chunk += l + "\n";
    if (++count % 16 == 0) test::write_file(dir.path / "db" / fmt::format("p{:03}.jsonl", files++), chunk), chunk.clear();
  }
  const auto r = test::run_spmmc({"train-ranker", (dir.path / "db").string(), "-o", (dir.path / "m.json").string(),
                                  "--rounds", "10", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["lines"] == 960);
  // --held-out: the same measures on a database never trained on.
  const auto held = test::run_spmmc({"train-ranker", (dir.path / "db" / "p000.jsonl").string(), (dir.path / "db" / "p001.jsonl").string(),
                                     (dir.path / "db" / "p002.jsonl").string(), (dir.path / "db" / "p003.jsonl").string(),
                                     "-o", (dir.path / "m.json").string(), "--rounds", "10", "--json",
                                     "--validation-share", "0", "--held-out", (dir.path / "db").string()});
  INFO(held.err);
  REQUIRE(held.exit_code == 0);
  const auto report = nlohmann::json::parse(held.out);
  CHECK(report["held_out"]["problems"] == 60);
  CHECK(report["validation"]["problems"] == 0);
  std::filesystem::create_directories(dir.path / "empty");
  CHECK(test::run_spmmc({"train-ranker", (dir.path / "empty").string(), "-o", (dir.path / "m.json").string()}).exit_code == 66);
}

}  // namespace
}  // namespace spmmc

namespace spmmc {
namespace {

TEST_CASE("spmmc compile --tune model: the ranker's first survivor, or the heuristic where the target has none",
          "[ranker][cli]") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  const fs::path models = dir.path / "models";
  fs::create_directories(models / "targets");
  fs::copy_file(fs::path(SPMMC_SOURCE_MODELS_DIR) / "targets" / "h100.json", models / "targets" / "h100.json");
  const std::string env = "SPMMC_MODELS_DIR='" + models.string() + "'";
  const fs::path weights = dir.path / "w.mtx";
  REQUIRE(test::run_spmmc({"gen", "uniform", "--rows", "128", "--cols", "128", "--sparsity", "0.9", "-q", "-o",
                           weights.string()}).exit_code == 0);
  const auto compile = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"compile", weights.string(), "--n", "1024", "--name", "k", "-o", (dir.path / "out").string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return test::run_spmmc(a, env);
  };
  const auto why = [&] {
    return nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json"))["choice"]["why"].get<std::string>();
  };
  // No model for the target: the heuristic, with a warning.
  const auto none = compile({"--tune", "model"});
  INFO(none.err);
  REQUIRE(none.exit_code == 0);
  CHECK_THAT(none.err, Catch::Contains("--tune model: no ranker for the target 'h100'"));
  CHECK_THAT(why(), Catch::Contains("heuristic (no ranker model for the target)"));
  // The default (--tune auto) is the heuristic where no GPU is usable (issue 25: the model's own
  // picks lost to it on real layers), said in the report, with no warning.
  std::string no_gpu;
  const bool gpu = GpuContext::available(&no_gpu);
  if (!gpu) {
    const auto automatic = compile({});
    REQUIRE(automatic.exit_code == 0);
    CHECK_THAT(automatic.err, !Catch::Contains("warning"));
    CHECK_THAT(why(), Catch::Contains("--tune auto without a usable GPU of the target's architecture takes the heuristic"));
    const auto report = nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json"));
    CHECK(report["options"]["tune"] == "none");
    CHECK(report["options"]["tune_auto"] == true);
  }
  // A model beside the targets (its default place) is used; --model names another.
  test::write_file(dir.path / "db.jsonl", generated_database());
  REQUIRE(test::run_spmmc({"train-ranker", (dir.path / "db.jsonl").string(), "-o", (models / "h100.ranker.json").string(),
                           "--rounds", "10"}).exit_code == 0);
  const auto ranked = compile({"--tune", "model"});
  INFO(ranked.err);
  REQUIRE(ranked.exit_code == 0);
  CHECK_THAT(ranked.err, Catch::Contains("(--tune model)"));
  // The fixture database's problems are at n = 1568..4096: at n = 1024 the model knows nothing and
  // the heuristic's pick is kept, said in the report (issue 25).
  CHECK_THAT(why(), Catch::Contains("the heuristic's pick kept by --tune model: the layer is outside what the model "
                                    "was trained on (n 1024 is outside the training range [1568, 4096]"));
  const auto versus = nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json"))["versus_heuristic"];
  CHECK(versus["kept"] == true);
  CHECK(versus["measured"] == false);
  const std::string first = test::read_file(dir.path / "out" / "k.cu");
  // The model is a prerequisite of the generated source (a new model may choose another tile).
  REQUIRE(compile({"--tune", "model", "--depfile", (dir.path / "k.d").string()}).exit_code == 0);
  CHECK_THAT(test::read_file(dir.path / "k.d"), Catch::Contains("h100.ranker.json"));
  fs::rename(models / "h100.ranker.json", dir.path / "elsewhere.json");
  REQUIRE(compile({"--tune", "model", "--model", (dir.path / "elsewhere.json").string()}).exit_code == 0);
  CHECK(test::read_file(dir.path / "out" / "k.cu") == first);  // deterministic
  CHECK(compile({"--tune", "model", "--model", (dir.path / "absent.json").string()}).exit_code == 66);
  CHECK(compile({"--tune", "none", "--model", (dir.path / "elsewhere.json").string()}).exit_code == 64);
  if (!gpu) {  // --tune auto: --model names the ranker a GPU would rank with; without one, the heuristic
    REQUIRE(compile({"--model", (dir.path / "elsewhere.json").string()}).exit_code == 0);
    CHECK_THAT(why(), Catch::Contains("--tune auto without a usable GPU"));
  }
  CHECK(compile({"--tune", "model", "--top-k", "5"}).exit_code == 64);  // --top-k is --tune rank's
  if (!gpu) {
    // --tune rank times proxies: without a GPU it stops at once, before reading anything.
    const auto rank = compile({"--tune", "rank", "--model", (dir.path / "elsewhere.json").string(), "--top-k", "5"});
    CHECK(rank.exit_code == 69);
  }
  // A model of another feature schema is refused before any work.
  std::string text = test::read_file(dir.path / "elsewhere.json");
  const std::string version = fmt::format("\"feature_schema_version\": {}", CandidateFeatures::kSchemaVersion);
  REQUIRE(text.find(version) != std::string::npos);
  text.replace(text.find(version), version.size(), "\"feature_schema_version\": 1");
  test::write_file(dir.path / "old.json", text);
  const auto old = compile({"--tune", "model", "--model", (dir.path / "old.json").string()});
  CHECK(old.exit_code == 65);
  CHECK_THAT(old.err, Catch::Contains("trained on feature schema 1"));
}

}  // namespace
}  // namespace spmmc

namespace spmmc {
namespace {

TEST_CASE("ranker: the committed H100 model takes today's features and meets --tune model's target on its held-out data",
          "[ranker]") {
  // A change of the features (their schema) without a retrained model fails here, not in a user's build.
  namespace fs = std::filesystem;
  const fs::path models = SPMMC_SOURCE_MODELS_DIR;
  const RankerModel model = RankerModel::load(models / "h100.ranker.json", ranking_schema());
  std::vector<std::string> files;
  for (const char* part : {"heldout-dlmc", "heldout-gen"})
    for (const auto& e : fs::directory_iterator(models / "collect" / "h100" / part)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  const Target h100 = load_target("h100");  // the held-out lines are of schema 2: launch features derived
  const RankingData held_out = read_ranking_data(files, ranking_schema(), &h100);
  REQUIRE(held_out.problems.size() >= 24);
  const RankingMetrics m = evaluate_ranker(model, held_out.problems);
  // docs/design/ranker.md: NDCG@10 0.836, first-ranked loss 2.1% (with the dlmc part); the issue's target for --tune model is 15%.
  CHECK(m.top1_loss < 0.15);
  CHECK(m.ndcg_at_10 > 0.8);
  CHECK(m.top10_loss < 0.05);
}

TEST_CASE("ranker: --tune rank keeps the model's first K candidates in plan order, --tune model takes the first", "[ranker]") {
  GeneratorOptions g;
  g.rows = 256, g.cols = 256, g.sparsity = 0.9, g.seed = 5;
  PlanOptions options;
  options.n = 2048;
  options.threads = 1;
  const Plan plan = plan_tiles(generate_matrix(g), load_target("h100"), options);
  const std::vector<const PlannedCandidate*> survivors = plan.survivors();
  REQUIRE(survivors.size() > 12);
  // A model that learned "16 rows and 512 columns are fastest" on this plan's own candidates.
  RankingGroup group;
  group.problem = "fixture";
  for (const auto* c : survivors) {
    group.features.push_back(c->features.values());
    group.times_ms.push_back((1.0 + std::abs(std::log2(c->tile.m1 / 16.0))) * (1.0 + std::abs(std::log2(c->tile.n1 / 512.0))));
  }
  // Several query groups (a single one carries little hessian weight for min_child_weight).
  std::vector<RankingGroup> groups(8, group);
  for (size_t i = 0; i < groups.size(); ++i)
    for (double& t : groups[i].times_ms) t *= 1.0 + 0.01 * static_cast<double>(i);
  RankerParams params;
  params.rounds = 100;
  const RankerModel model = RankerModel::train(groups, ranking_schema(), params);
  const auto kept = top_ranked_candidates(survivors, model, 5);
  REQUIRE(kept.size() == 5);
  // In plan order, each a survivor, and among them the model's first.
  std::vector<size_t> positions;
  for (const auto* c : kept) positions.push_back(static_cast<size_t>(std::find(survivors.begin(), survivors.end(), c) - survivors.begin()));
  CHECK(std::is_sorted(positions.begin(), positions.end()));
  CHECK(positions.back() < survivors.size());
  const Target target = load_target("h100");
  const ModelChoice choice = choose_tile_by_model(plan, target, model, nullptr);
  const PlannedCandidate* first = choice.chosen;
  REQUIRE(first != nullptr);
  CHECK_FALSE(choice.heuristic_kept);
  CHECK(std::find(kept.begin(), kept.end(), first) != kept.end());
  CHECK(first->tile.m1 == 16);
  CHECK(first->tile.n1 >= 384);  // near the fastest width (512): a grade of at least 2
  CHECK(first->tile.n1 <= 640);
  CHECK_THAT(choice.why, Catch::Contains("the ranker's first of " + std::to_string(survivors.size()) + " survivors"));

  // Against the heuristic's pick (issue 25): taken where the scores separate it from the model's
  // first by kModelScoreMargin, kept otherwise.
  std::vector<std::vector<double>> rows;
  for (const auto* c : survivors) rows.push_back(c->features.values());
  const std::vector<double> scores = model.predict(rows);
  // The worst-scored tile of the first's M1 (the model changes only the width, kModelMaxM1).
  size_t worst = survivors.size();
  for (size_t i = 0; i < survivors.size(); ++i)
    if (survivors[i]->tile.m1 == first->tile.m1 && (worst == survivors.size() || scores[i] < scores[worst])) worst = i;
  REQUIRE(worst < survivors.size());
  const double top = *std::max_element(scores.begin(), scores.end());
  REQUIRE(top - scores[worst] > kModelScoreMargin);
  const ModelChoice over_worst = choose_tile_by_model(plan, target, model, survivors[worst]);
  CHECK(over_worst.chosen == first);
  CHECK_FALSE(over_worst.heuristic_kept);
  // A heuristic's tile of another M1 is kept, whatever the scores.
  size_t other_m1 = survivors.size();
  for (size_t i = 0; i < survivors.size(); ++i)
    if (survivors[i]->tile.m1 != first->tile.m1 && top - scores[i] > kModelScoreMargin) other_m1 = i;
  REQUIRE(other_m1 < survivors.size());
  const ModelChoice over_other = choose_tile_by_model(plan, target, model, survivors[other_m1]);
  CHECK(over_other.chosen == survivors[other_m1]);
  CHECK(over_other.heuristic_kept);
  CHECK_THAT(over_other.why, Catch::Contains("another M1 than the heuristic's tile " + survivors[other_m1]->tile.label()));
  size_t close = worst;  // a candidate of the first's M1 other than the first scoring within the margin
  for (size_t i = 0; i < survivors.size(); ++i)
    if (survivors[i] != first && survivors[i]->tile.m1 == first->tile.m1 && top - scores[i] < kModelScoreMargin) close = i;
  REQUIRE(close != worst);
  const ModelChoice over_close = choose_tile_by_model(plan, target, model, survivors[close]);
  CHECK(over_close.chosen == survivors[close]);
  CHECK(over_close.heuristic_kept);
  CHECK_THAT(over_close.why, Catch::Contains("scores only"));
  const ModelChoice same = choose_tile_by_model(plan, target, model, first);
  CHECK(same.chosen == first);
  CHECK(same.heuristic_kept);

  // Outside the training domain: the heuristic's pick, whatever the scores.
  const auto domain_of = [](const ProblemDescriptor& p) {  // trained on that one problem
    TrainingDomain d;
    d.problems = 1;
    d.n = {p.n, p.n}, d.k = {p.k, p.k}, d.rows = {p.rows, p.rows}, d.nnz = {p.nnz, p.nnz};
    d.row_spread = {p.row_spread, p.row_spread};
    return d;
  };
  RankerModel bounded = model;
  ProblemDescriptor small = describe_problem(rows, model.schema(), options.n);
  small.nnz /= 10.0;  // trained only on layers of a tenth of this one's non-zeros
  bounded.set_domain(domain_of(small));
  const ModelChoice outside = choose_tile_by_model(plan, target, bounded, survivors[worst]);
  CHECK(outside.chosen == survivors[worst]);
  CHECK(outside.heuristic_kept);
  CHECK_THAT(outside.why, Catch::Contains("outside what the model was trained on (nnz"));
  // Inside it (trained on this very problem): the model's first.
  bounded.set_domain(domain_of(describe_problem(rows, model.schema(), options.n)));
  CHECK(choose_tile_by_model(plan, target, bounded, survivors[worst]).chosen == first);
  CHECK(top_ranked_candidates(survivors, model, survivors.size() + 3) == survivors);
}

}  // namespace
}  // namespace spmmc
