// tuner/generic_candidate.h, and the generic family as a candidate of the ranker (feature schema 4):
// its features, database lines joining a problem across files, the training domain, and --tune
// model ranking it beside the tiles (no GPU).
#include "tuner/generic_candidate.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "codegen/generic_launch.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/features.h"
#include "compiler/planning/target.h"
#include "tests/test_util.h"
#include "tuner/choose_by_model.h"
#include "tuner/collect_problem.h"
#include "tuner/ranker_domain.h"
#include "tuner/ranking_data.h"

namespace spmmc {
namespace {

Csr fixture_matrix() {
  GeneratorOptions g;
  g.rows = 256, g.cols = 256, g.sparsity = 0.9, g.seed = 5;
  return generate_matrix(g);
}

Plan plan_at(const Csr& a, int64_t n) {
  PlanOptions options;
  options.n = n;
  options.threads = 1;
  return plan_tiles(a, load_target("h100"), options);
}

int64_t longest_row(const Csr& a) {
  int64_t longest = 0;
  for (int32_t r = 0; r < a.rows; ++r) longest = std::max<int64_t>(longest, a.row_length(r));
  return longest;
}

TEST_CASE("generic candidate: the features of its launch at large and small n", "[ranker][generic]") {
  const Csr a = fixture_matrix();
  const Target h100 = load_target("h100");
  // n = 2048: a warp per row, blocks of 8 rows x 128 columns of C (four per lane).
  const PlannedCandidate wide = generic_candidate(a, plan_at(a, 2048), h100);
  CHECK(candidate_label(wide) == "generic");
  CHECK(wide.tile.family == KernelFamily::kGeneric);
  const CandidateFeatures& f = wide.features;
  CHECK(f.family == 1);
  CHECK(f.m1 == 8);
  CHECK(f.n1 == 128);
  CHECK(f.cols_per_thread == 4);
  CHECK(f.threads_per_block == 256);
  CHECK(f.a_tile_num == 32);
  CHECK(f.b_tile_num == 16);
  CHECK(f.block_num == 512);
  CHECK(f.nnc_sum == a.nnz());
  CHECK(f.nnz_max == longest_row(a));
  CHECK(f.k == 256);
  CHECK(f.sparsity == Approx(1.0 - static_cast<double>(a.nnz()) / (256.0 * 256.0)));
  CHECK(f.blocks_per_a_tile == 1);
  CHECK(f.b_tiles_per_block == 1);
  CHECK(f.kernels == 1);
  // 8 blocks of 256 threads per SM (2048 threads), 132 SMs: 512 of 1056 places, 8 warps each.
  CHECK(f.wave_fill == Approx(512.0 / 1056.0));
  CHECK(f.resident_warps_per_sm == Approx(512.0 * 8 / 132.0));
  CHECK(f.values().back() == 1.0);  // "family" is the schema's last feature
  CHECK(CandidateFeatures::names().back() == "family");

  // n = 8: the split kernel, a warp per row in blocks of 128 threads, every column in one block.
  const PlannedCandidate narrow = generic_candidate(a, plan_at(a, 8), h100);
  CHECK(narrow.features.m1 == 4);
  CHECK(narrow.features.n1 == 8);
  CHECK(narrow.features.cols_per_thread == 1);
  CHECK(narrow.features.a_tile_num == 64);
  CHECK(narrow.features.b_tile_num == 1);
  CHECK(narrow.features.threads_per_block == kGenericSplitThreads);
  // A tile candidate keeps its label and family 0.
  const Plan plan = plan_at(a, 2048);
  CHECK(candidate_label(plan.candidates.front()) == plan.candidates.front().tile.label());
  CHECK(plan.candidates.front().features.family == 0);
}

TEST_CASE("ranking data: schema 3 lines read as the unrolled family, a generic line joins its problem from another file",
          "[ranker][generic]") {
  const Csr a = fixture_matrix();
  const Plan plan = plan_at(a, 2048);
  const PlannedCandidate& tile = *plan.survivors().front();
  Measurement m;
  m.outcome = Outcome::kOk;
  m.time.median_ms = 0.02;
  // The tile's line as schema 3 wrote it: without "family".
  nlohmann::json old = nlohmann::json::parse(database_line("q", 2048, tile, m, true));
  old["feature_schema_version"] = 3;
  old["features"].erase("family");
  m.time.median_ms = 0.01;
  const std::string generic_line = database_line("q", 2048, generic_candidate(a, plan, load_target("h100")), m, false);
  CHECK(nlohmann::json::parse(generic_line)["tile"] == "generic");
  test::TempDir dir;
  test::write_file(dir.path / "unrolled.jsonl", old.dump() + "\n");
  test::write_file(dir.path / "generic.jsonl", generic_line + "\n");
  const RankingData data =
      read_ranking_data({(dir.path / "unrolled.jsonl").string(), (dir.path / "generic.jsonl").string()}, ranking_schema());
  REQUIRE(data.problems.size() == 1);
  const RankingProblem& p = data.problems[0];
  CHECK(p.tiles == std::vector<std::string>{tile.tile.label(), "generic"});
  CHECK(p.group.features[0] == tile.features.values());
  CHECK(p.group.features[0].back() == 0.0);
  CHECK(p.group.features[1].back() == 1.0);
  CHECK(p.group.times_ms == std::vector<double>{0.02, 0.01});
}

// A problem of `plan`'s survivors and its generic candidate, the generic kernel fastest when
// `generic_fastest`, else slowest; the tiles timed so that `best_m1` x 512 is the fastest tile.
RankingProblem problem_of(const Plan& plan, const PlannedCandidate& generic, const std::string& matrix, bool generic_fastest,
                          double best_m1 = 16.0) {
  RankingProblem p;
  p.matrix = matrix;
  p.n = plan.shape.n;
  p.group.problem = matrix;
  for (const auto* c : plan.survivors()) {
    p.tiles.push_back(c->tile.label());
    p.group.features.push_back(c->features.values());
    p.group.times_ms.push_back((1.0 + std::abs(std::log2(c->tile.m1 / best_m1))) * (1.0 + std::abs(std::log2(c->tile.n1 / 512.0))));
  }
  p.tiles.push_back("generic");
  p.group.features.push_back(generic.features.values());
  p.group.times_ms.push_back(generic_fastest ? 0.5 : 100.0);
  return p;
}

TEST_CASE("ranker domain: the generic row does not describe the problem, and the problems with one are counted",
          "[ranker][generic][domain]") {
  const Csr a = fixture_matrix();
  const Plan plan = plan_at(a, 2048);
  const PlannedCandidate generic = generic_candidate(a, plan, load_target("h100"));
  const RankingProblem with = problem_of(plan, generic, "m", true);
  RankingProblem without = with;
  without.group.features.pop_back();
  const ProblemDescriptor d1 = describe_problem(with.group.features, ranking_schema(), 2048);
  const ProblemDescriptor d0 = describe_problem(without.group.features, ranking_schema(), 2048);
  CHECK(d1.rows == d0.rows);
  CHECK(d1.nnz == d0.nnz);
  CHECK(d1.row_spread == d0.row_spread);
  CHECK(d1.has_generic);
  CHECK_FALSE(d0.has_generic);
  const TrainingDomain domain = training_domain({with, without}, ranking_schema());
  CHECK(domain.problems == 2);
  CHECK(domain.generic_problems == 1);
  CHECK(domain_from_json(nlohmann::json::parse(domain_json(domain).dump())).generic_problems == 1);
}

TEST_CASE("model choice: --tune model ranks the generic family beside the tiles where its model was trained on it", "[ranker][generic]") {
  const Csr a = fixture_matrix();
  const Target h100 = load_target("h100");
  const Plan plan = plan_at(a, 2048);
  const PlannedCandidate generic = generic_candidate(a, plan, h100);
  const PlannedCandidate* heuristic = plan.survivors().front();
  RankerParams params;
  params.rounds = 60;
  const auto train = [&](bool generic_fastest) {
    std::vector<RankingProblem> problems;
    for (int i = 0; i < 8; ++i) problems.push_back(problem_of(plan, generic, "m" + std::to_string(i), generic_fastest));
    std::vector<RankingGroup> groups;
    for (const RankingProblem& p : problems) groups.push_back(p.group);
    RankerModel model = RankerModel::train(groups, ranking_schema(), params);
    model.set_domain(training_domain(problems, ranking_schema()));
    return model;
  };
  const RankerModel likes_generic = train(true);
  const ModelChoice g = choose_tile_by_model(plan, h100, likes_generic, heuristic, &generic, false);
  CHECK(g.generic);
  CHECK(g.chosen == heuristic);  // the generic family is emitted with the heuristic's plan
  CHECK_FALSE(g.heuristic_kept);
  CHECK_THAT(g.why, Catch::StartsWith("the generic family, the ranker's first"));
  // Where the family is forced (no generic candidate given), the tiles only.
  const ModelChoice tiles_only = choose_tile_by_model(plan, h100, likes_generic, heuristic);
  CHECK_FALSE(tiles_only.generic);
  // The heuristic's kernel being the generic family: kept where the model ranks it first.
  const ModelChoice kept = choose_tile_by_model(plan, h100, likes_generic, heuristic, &generic, true);
  CHECK(kept.generic);
  CHECK(kept.heuristic_kept);

  // A model that saw the generic kernel lose everywhere departs from a generic heuristic to a tile.
  const RankerModel dislikes_generic = train(false);
  const ModelChoice tile = choose_tile_by_model(plan, h100, dislikes_generic, heuristic, &generic, true);
  CHECK_FALSE(tile.generic);
  CHECK_FALSE(tile.heuristic_kept);
  CHECK(tile.chosen->tile.m1 == 16);
  CHECK_THAT(tile.why, Catch::Contains("above the heuristic's kernel (the generic family)"));

  // A model never trained on a generic kernel neither ranks it nor judges a generic heuristic.
  RankerModel unaware = train(true);
  TrainingDomain no_generic = unaware.domain();
  no_generic.generic_problems = 0;
  unaware.set_domain(no_generic);
  CHECK_FALSE(choose_tile_by_model(plan, h100, unaware, heuristic, &generic, false).generic);
  const ModelChoice unknown = choose_tile_by_model(plan, h100, unaware, heuristic, &generic, true);
  CHECK(unknown.chosen == heuristic);
  CHECK(unknown.heuristic_kept);
  CHECK_THAT(unknown.why, Catch::Contains("the generic family, which the model was not trained on"));
}

TEST_CASE("model choice: --tune model keeps a heuristic's tile of more than kModelMaxM1 rows", "[ranker]") {
  // 64 rows at n = 100352 (a ResNet-50 group-1 shape): 64-row tiles survive planning.
  GeneratorOptions g;
  g.rows = 64, g.cols = 256, g.sparsity = 0.9, g.seed = 5;
  const Csr a = generate_matrix(g);
  const Target h100 = load_target("h100");
  const Plan plan = plan_at(a, 100352);
  const PlannedCandidate generic = generic_candidate(a, plan, h100);
  std::vector<RankingProblem> problems;
  for (int i = 0; i < 8; ++i) problems.push_back(problem_of(plan, generic, "m" + std::to_string(i), false, 64.0));
  std::vector<RankingGroup> groups;
  for (const RankingProblem& p : problems) groups.push_back(p.group);
  RankerParams params;
  params.rounds = 60;
  RankerModel model = RankerModel::train(groups, ranking_schema(), params);
  model.set_domain(training_domain(problems, ranking_schema()));
  // The model's first is a 64-row tile; the heuristic the worst-scored 64-row tile.
  const ModelChoice free_choice = choose_tile_by_model(plan, h100, model, nullptr);
  REQUIRE(free_choice.chosen != nullptr);
  REQUIRE(free_choice.chosen->tile.m1 == 64);
  std::vector<std::vector<double>> rows;
  const std::vector<const PlannedCandidate*> survivors = plan.survivors();
  for (const auto* c : survivors) rows.push_back(c->features.values());
  const std::vector<double> scores = model.predict(rows);
  const PlannedCandidate* worst64 = nullptr;
  double worst_score = 0;
  for (size_t i = 0; i < survivors.size(); ++i)
    if (survivors[i]->tile.m1 == 64 && (!worst64 || scores[i] < worst_score)) worst64 = survivors[i], worst_score = scores[i];
  REQUIRE(worst64 != nullptr);
  REQUIRE(worst64 != free_choice.chosen);
  const ModelChoice kept = choose_tile_by_model(plan, h100, model, worst64);
  CHECK(kept.chosen == worst64);
  CHECK(kept.heuristic_kept);
  CHECK_THAT(kept.why, Catch::Contains("has 64 rows"));
  CHECK_THAT(kept.why, Catch::Contains("the model changes only the width of tiles of at most 32 rows"));
}

}  // namespace
}  // namespace spmmc
