// tuner/balanced_candidate.h: the balanced family as candidates of the ranker (family 2): the
// features of its launch, its database lines and labels, and the training domain counting the
// problems that hold them (no GPU).
#include "tuner/balanced_candidate.h"

#include <nlohmann/json.hpp>

#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/planning/features.h"
#include "compiler/planning/target.h"
#include "tests/test_util.h"
#include "tuner/choose_by_model.h"
#include "tuner/collect_problem.h"
#include "tuner/generic_candidate.h"
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

TEST_CASE("ranking data: balanced lines join their problem; the domain counts them apart from the tiles",
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

}  // namespace
}  // namespace spmmc
