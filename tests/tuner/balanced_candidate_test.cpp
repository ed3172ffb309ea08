// tuner/balanced_candidate.h: the balanced family as candidates of the ranker (family 2): the
// features of its launch, its database lines and labels, and the training domain counting the
// problems that hold them (no GPU).
#include "tuner/balanced_candidate.h"

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/planning/features.h"
#include "compiler/planning/target.h"
#include "tests/test_util.h"
#include "tuner/choose_by_model.h"
#include "tuner/collect_problem.h"
#include "tuner/generic_candidate.h"
#include "tuner/ranker.h"
#include "tuner/ranker_domain.h"
#include "tuner/ranking_data.h"

namespace spmmc {
namespace {

Plan plan_at(const Csr& a, int64_t n) {
  PlanOptions options;
  options.n = n;
  options.threads = 1;
  return plan_tiles(a, load_target("h100"), options);
}

// 256 x 256 at sparsity 0.9: rows of about 26 products, none cut at 64.
Csr short_rows() {
  GeneratorOptions g;
  g.rows = 256, g.cols = 256, g.sparsity = 0.9, g.seed = 5;
  return generate_matrix(g);
}

TEST_CASE("balanced candidate: the features of its launch for 1 and 4 pieces per warp", "[ranker][balanced]") {
  const Csr a = short_rows();
  const Target h100 = load_target("h100");
  REQUIRE(h100.registers_per_sm == 65536);
  const Plan plan = plan_at(a, 128);
  // One piece per warp: 256 rows in 16 blocks of 16 warps, 32 lanes x 4 columns: one column block.
  const PlannedCandidate one = balanced_candidate(a, plan, h100, 64, 1);
  CHECK(candidate_label(one) == "balanced-g1");
  CHECK(one.tile.family == KernelFamily::kBalanced);
  const CandidateFeatures& f = one.features;
  CHECK(f.family == 2);
  CHECK(f.values().back() == 2.0);
  CHECK(f.m1 == 16);
  CHECK(f.n1 == 128);
  CHECK(f.cols_per_thread == 4);
  CHECK(f.threads_per_block == 512);
  CHECK(f.min_blocks_per_sm == 1);
  CHECK(f.a_tile_num == 16);
  CHECK(f.b_tile_num == 1);
  CHECK(f.block_num == 16);
  CHECK(f.nnc_sum == a.nnz());
  CHECK(f.nnz_max == schedule_balanced(a, 64).longest_piece);
  CHECK(f.k == 256);
  CHECK(f.blocks_per_a_tile == 1);
  CHECK(f.b_tiles_per_block == 1);
  CHECK(f.kernels == 1);
  // Two blocks of 512 threads at 64 registers per SM (the registers bind before the threads' 4).
  CHECK(f.wave_fill == Approx(16.0 / 264.0));
  CHECK(f.resident_warps_per_sm == Approx(16.0 * 16.0 / 132.0));

  // Four pieces per warp: 64 slots a block (4 blocks), groups of 8 lanes x 4 columns: 4 column blocks.
  const PlannedCandidate four = balanced_candidate(a, plan, h100, 64, 4);
  CHECK(candidate_label(four) == "balanced-g4");
  CHECK(four.features.m1 == 64);
  CHECK(four.features.n1 == 32);
  CHECK(four.features.a_tile_num == 4);
  CHECK(four.features.b_tile_num == 4);
  CHECK(four.features.block_num == 16);
  CHECK(four.features.min_blocks_per_sm == 2);
  CHECK(four.tile.min_blocks_per_sm == 2);

  // n = 32 with one piece per warp: one column per lane.
  const PlannedCandidate narrow = balanced_candidate(a, plan_at(a, 32), h100, 64, 1);
  CHECK(narrow.features.cols_per_thread == 1);
  CHECK(narrow.features.n1 == 32);
  CHECK(narrow.features.b_tile_num == 1);
}

TEST_CASE("balanced candidate: a long row's pieces set nnz_max", "[ranker][balanced]") {
  // Row 0 holds 200 products (cut into pieces of 50 at length 64), the others one each.
  Csr a;
  a.rows = 4, a.cols = 256;
  a.row_ptr = {0, 200, 201, 202, 203};
  for (int32_t c = 0; c < 200; ++c) a.col_idx.push_back(c);
  a.col_idx.insert(a.col_idx.end(), {0, 1, 2});
  a.values.assign(a.col_idx.size(), 1.0f);
  const PlannedCandidate c = balanced_candidate(a, plan_at(a, 64), load_target("h100"), 64, 1);
  CHECK(c.features.nnz_max == 50);
  CHECK(c.features.a_tile_num == 1);  // 4 + 3 slots in one block of 16
  CHECK(c.features.nnc_sum == 203);
}

TEST_CASE("ranking data: balanced lines join their problem, and the domain counts them apart from the tiles",
          "[ranker][balanced][domain]") {
  const Csr a = short_rows();
  const Target h100 = load_target("h100");
  const Plan plan = plan_at(a, 128);
  const PlannedCandidate& tile = *plan.survivors().front();
  Measurement m;
  m.outcome = Outcome::kOk;
  m.time.median_ms = 0.02;
  const std::string tile_line = database_line("q", 128, tile, m, true);
  m.time.median_ms = 0.01;
  const std::string balanced_line = database_line("q", 128, balanced_candidate(a, plan, h100, 64, 2), m, false);
  CHECK(nlohmann::json::parse(balanced_line)["tile"] == "balanced-g2");
  CHECK(nlohmann::json::parse(balanced_line)["features"]["family"] == 2.0);
  test::TempDir dir;
  test::write_file(dir.path / "tiles.jsonl", tile_line + "\n");
  test::write_file(dir.path / "balanced.jsonl", balanced_line + "\n");
  const RankingData data =
      read_ranking_data({(dir.path / "tiles.jsonl").string(), (dir.path / "balanced.jsonl").string()}, ranking_schema());
  REQUIRE(data.problems.size() == 1);
  const RankingProblem& p = data.problems[0];
  CHECK(p.tiles == std::vector<std::string>{tile.tile.label(), "balanced-g2"});
  CHECK(p.group.times_ms == std::vector<double>{0.02, 0.01});

  const ProblemDescriptor with = describe_problem(p.group.features, ranking_schema(), 128);
  const ProblemDescriptor without = describe_problem({p.group.features[0]}, ranking_schema(), 128);
  CHECK(with.rows == without.rows);
  CHECK(with.nnz == without.nnz);
  CHECK(with.row_spread == without.row_spread);
  CHECK(with.has_balanced);
  CHECK_FALSE(with.has_generic);
  CHECK_FALSE(without.has_balanced);
  const TrainingDomain domain = training_domain({p}, ranking_schema());
  CHECK(domain.balanced_problems == 1);
  CHECK(domain.generic_problems == 0);
  CHECK(domain_from_json(nlohmann::json::parse(domain_json(domain).dump())).balanced_problems == 1);
  // A model file written before the field reads as one that never saw the family.
  nlohmann::json old = domain_json(domain);
  old.erase("balanced_problems");
  CHECK(domain_from_json(old).balanced_problems == 0);
}

// A problem of `plan`'s survivors, the generic candidate and the balanced ones: the balanced kernel
// with `fastest_groups` pieces per warp fastest (0: every balanced kernel slowest), the generic next.
RankingProblem problem_with_balanced(const Plan& plan, const PlannedCandidate& generic,
                                     const std::vector<PlannedCandidate>& balanced, const std::string& matrix,
                                     int32_t fastest_groups) {
  RankingProblem p;
  p.matrix = matrix;
  p.n = plan.shape.n;
  p.group.problem = matrix;
  for (const auto* c : plan.survivors()) {
    p.tiles.push_back(c->tile.label());
    p.group.features.push_back(c->features.values());
    p.group.times_ms.push_back(10.0 + c->tile.m1 + c->tile.n1 / 64.0);
  }
  p.tiles.push_back("generic");
  p.group.features.push_back(generic.features.values());
  p.group.times_ms.push_back(5.0);
  for (const PlannedCandidate& b : balanced) {
    p.tiles.push_back(candidate_label(b));
    p.group.features.push_back(b.features.values());
    p.group.times_ms.push_back(b.tile.m1 == fastest_groups * kBalancedWarps ? 1.0 : 100.0 + b.tile.m1);
  }
  return p;
}

TEST_CASE("model choice: --tune model ranks the balanced family where its model was trained on it", "[ranker][balanced]") {
  const Csr a = short_rows();
  const Target h100 = load_target("h100");
  const Plan plan = plan_at(a, 128);
  const PlannedCandidate generic = generic_candidate(a, plan, h100);
  std::vector<PlannedCandidate> balanced;
  for (const int32_t g : kBalancedGroupsTried) balanced.push_back(balanced_candidate(a, plan, h100, 64, g));
  const std::vector<const PlannedCandidate*> balanced_ptrs{&balanced[0], &balanced[1], &balanced[2]};
  const PlannedCandidate* heuristic = plan.survivors().front();
  RankerParams params;
  params.rounds = 60;
  const auto train = [&](int32_t fastest_groups) {
    std::vector<RankingProblem> problems;
    for (int i = 0; i < 8; ++i)
      problems.push_back(problem_with_balanced(plan, generic, balanced, "m" + std::to_string(i), fastest_groups));
    std::vector<RankingGroup> groups;
    for (const RankingProblem& p : problems) groups.push_back(p.group);
    RankerModel model = RankerModel::train(groups, ranking_schema(), params);
    model.set_domain(training_domain(problems, ranking_schema()));
    return model;
  };
  const RankerModel likes_g2 = train(2);
  REQUIRE(likes_g2.domain().balanced_problems == 8);
  const ModelChoice b = choose_tile_by_model(plan, h100, likes_g2, heuristic, &generic, false, balanced_ptrs);
  CHECK(b.balanced_ranked);
  CHECK(b.balanced_groups == 2);
  CHECK_FALSE(b.generic);
  CHECK(b.chosen == heuristic);  // the balanced family is emitted with the heuristic's plan
  CHECK_FALSE(b.heuristic_kept);
  CHECK_THAT(b.why, Catch::StartsWith("the balanced family (balanced-g2), the ranker's first"));
  // Not ranked where the family is not free (no generic candidate) or no balanced candidate is given.
  CHECK(choose_tile_by_model(plan, h100, likes_g2, heuristic, nullptr, false, balanced_ptrs).balanced_groups == 0);
  CHECK_FALSE(choose_tile_by_model(plan, h100, likes_g2, heuristic, &generic, false).balanced_ranked);
  // The heuristic's file being the balanced family with two pieces per warp: kept.
  const ModelChoice kept = choose_tile_by_model(plan, h100, likes_g2, heuristic, &generic, true, balanced_ptrs, &balanced[1]);
  CHECK(kept.balanced_groups == 2);
  CHECK(kept.heuristic_kept);
  // ... with one piece per warp: the model departs to two, and says from what.
  const ModelChoice departs = choose_tile_by_model(plan, h100, likes_g2, heuristic, &generic, true, balanced_ptrs, &balanced[0]);
  CHECK(departs.balanced_groups == 2);
  CHECK_FALSE(departs.heuristic_kept);
  CHECK_THAT(departs.why, Catch::Contains("above the heuristic's kernel (the balanced family, balanced-g1)"));

  // A model that saw the balanced kernels lose everywhere ranks the generic family first.
  const ModelChoice generic_first =
      choose_tile_by_model(plan, h100, train(0), heuristic, &generic, true, balanced_ptrs, &balanced[0]);
  CHECK(generic_first.balanced_ranked);
  CHECK(generic_first.balanced_groups == 0);
  CHECK(generic_first.generic);

  // A model never trained on balanced kernels ignores them, and a balanced heuristic is its generic kernel.
  RankerModel unaware = train(2);
  TrainingDomain no_balanced = unaware.domain();
  no_balanced.balanced_problems = 0;
  unaware.set_domain(no_balanced);
  const ModelChoice ignored = choose_tile_by_model(plan, h100, unaware, heuristic, &generic, true, balanced_ptrs, &balanced[0]);
  CHECK_FALSE(ignored.balanced_ranked);
  CHECK(ignored.balanced_groups == 0);
}

TEST_CASE("spmmc compile --tune model: a model trained on balanced kernels emits the balanced family it ranks first",
          "[ranker][balanced][cli]") {
  namespace fs = std::filesystem;
  test::TempDir dir;
  const fs::path weights = dir.path / "w.mtx";
  REQUIRE(test::run_spmmc({"gen", "uniform", "--rows", "256", "--cols", "256", "--sparsity", "0.9", "--seed", "5", "-q", "-o",
                           weights.string()}).exit_code == 0);
  const Csr a = read_matrix_file(weights.string(), ReadOptions{}).csr;
  const Target h100 = load_target("h100");
  const Plan plan = plan_at(a, 128);
  const PlannedCandidate generic = generic_candidate(a, plan, h100);
  std::vector<PlannedCandidate> balanced;
  for (const int32_t g : kBalancedGroupsTried) balanced.push_back(balanced_candidate(a, plan, h100, default_piece_length(a), g));
  // Ten problems of this matrix's features, the balanced kernel with 2 pieces per warp fastest in each.
  std::string db;
  for (int i = 0; i < 10; ++i) {
    const RankingProblem p = problem_with_balanced(plan, generic, balanced, "m" + std::to_string(i), 2);
    const std::vector<const PlannedCandidate*> survivors = plan.survivors();
    for (size_t j = 0; j < p.tiles.size(); ++j) {
      const PlannedCandidate& c = j < survivors.size()        ? *survivors[j]
                                  : j == survivors.size()     ? generic
                                                              : balanced[j - survivors.size() - 1];
      Measurement m;
      m.outcome = Outcome::kOk;
      m.time.median_ms = p.group.times_ms[j];
      db += database_line(p.matrix, 128, c, m, false) + "\n";
    }
  }
  test::write_file(dir.path / "db.jsonl", db);
  const fs::path model = dir.path / "m.json";
  const auto trained = test::run_spmmc({"train-ranker", (dir.path / "db.jsonl").string(), "-o", model.string(), "--rounds", "40"});
  INFO(trained.err);
  REQUIRE(trained.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(model))["domain"]["balanced_problems"].get<int>() > 0);
  const auto compiled = test::run_spmmc({"compile", weights.string(), "--n", "128", "--name", "k", "-o", (dir.path / "out").string(),
                                         "--tune", "model", "--model", model.string()});
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  const auto report = nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json"));
  CHECK(report["choice"]["family"] == "balanced");
  CHECK_THAT(report["choice"]["family_why"].get<std::string>(),
             Catch::Contains("auto: --tune model ranked the balanced family's kernel first (2 pieces per warp)"));
  CHECK_THAT(report["choice"]["why"].get<std::string>(), Catch::Contains("the balanced family (balanced-g2)"));
  CHECK(report["kernel"]["variants"][0]["kernel"].get<std::string>().rfind("balanced", 0) == 0);
  CHECK(report["versus_heuristic"]["kept"] == false);
  // --tune none (the rules) keeps its own family: this layer's unrolled kernel, not the model's pick.
  REQUIRE(test::run_spmmc({"compile", weights.string(), "--n", "128", "--name", "k", "-o", (dir.path / "out").string(),
                           "--tune", "none"}).exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json"))["choice"]["family"] != "balanced");
}

}  // namespace
}  // namespace spmmc
