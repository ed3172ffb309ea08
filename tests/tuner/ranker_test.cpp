// tuner/ranker.h: the LambdaMART ranker trained through XGBoost's C API on a small fixture (no
// GPU): it learns to put the clearly fastest configuration first, saves and loads without changing
// a score, refuses a model of another feature schema, and trains and predicts deterministically.
#include "tuner/ranker.h"

#include <cmath>
#include <fstream>

#include "compiler/common/diagnostics.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

const FeatureSchema kSchema{7, {"m1", "n1", "size"}};

// Problem `p`: every (M1, N1) of a small grid; the time grows with the distance of M1 from 16 and
// of N1 from 512 (in octaves) and with the problem's size, so 16x512 is the fastest of every group.
RankingGroup fixture_group(int p) {
  RankingGroup g;
  g.problem = "fixture-" + std::to_string(p);
  const double size = 1.0 + 0.37 * p;
  for (const double m1 : {4.0, 8.0, 16.0, 32.0, 64.0})
    for (const double n1 : {128.0, 256.0, 512.0, 1024.0}) {
      g.features.push_back({m1, n1, size});
      g.times_ms.push_back(size * (1.0 + 0.6 * std::abs(std::log2(m1 / 16.0))) * (1.0 + 0.3 * std::abs(std::log2(n1 / 512.0))));
    }
  return g;
}

std::vector<RankingGroup> fixture(int first, int count) {
  std::vector<RankingGroup> groups;
  for (int p = first; p < first + count; ++p) groups.push_back(fixture_group(p));
  return groups;
}

RankerParams small_params() {
  RankerParams p;
  p.rounds = 30;
  p.max_depth = 3;
  return p;
}

TEST_CASE("ranker: relevance grades quantise the speed relative to the group's best", "[ranker]") {
  CHECK(relevance_grade(1.0, 1.0) == 4);
  CHECK(relevance_grade(1.0, 1.05) == 4);   // r = 0.952
  CHECK(relevance_grade(1.0, 1.1) == 3);    // 0.909
  CHECK(relevance_grade(1.0, 1.4) == 2);    // 0.714
  CHECK(relevance_grade(1.0, 1.9) == 1);    // 0.526
  CHECK(relevance_grade(1.0, 2.5) == 0);    // 0.4
  CHECK(relevance_grade(1.0, 0.0) == 0);    // no time: the lowest grade
}

TEST_CASE("ranker: trained on a fixture, it ranks the fastest configuration first on unseen problems", "[ranker]") {
  const RankerModel model = RankerModel::train(fixture(0, 12), kSchema, small_params());
  for (const RankingGroup& held_out : fixture(40, 3)) {
    const std::vector<size_t> order = model.rank(held_out.features);
    REQUIRE(order.size() == held_out.features.size());
    INFO(held_out.problem);
    CHECK(held_out.features[order[0]] == std::vector<double>{16.0, 512.0, held_out.features[0][2]});
    // The slowest corner (M1 = 4, N1 = 128) is not in the top half.
    const auto worst = std::find(order.begin(), order.end(), size_t{0});
    CHECK(worst - order.begin() >= static_cast<std::ptrdiff_t>(order.size() / 2));
  }
}

TEST_CASE("ranker: a saved model loads with the same scores, deterministically", "[ranker]") {
  test::TempDir dir;
  const auto groups = fixture(0, 8);
  const RankerModel a = RankerModel::train(groups, kSchema, small_params());
  const RankerModel b = RankerModel::train(groups, kSchema, small_params());
  const auto probe = fixture_group(20).features;
  CHECK(a.predict(probe) == b.predict(probe));  // training is reproducible bit for bit
  const auto file = dir.path / "h100.json";
  a.save(file);
  const RankerModel loaded = RankerModel::load(file, kSchema);
  CHECK(loaded.predict(probe) == a.predict(probe));
  CHECK(loaded.predict(probe) == loaded.predict(probe));
  CHECK(loaded.params().rounds == 30);
  CHECK(loaded.schema().names == kSchema.names);
  // Saving the loaded model writes the same file.
  loaded.save(dir.path / "again.json");
  CHECK(test::read_file(dir.path / "again.json") == test::read_file(file));
}

TEST_CASE("ranker: a model of another feature schema, or not a model, is refused naming the file", "[ranker]") {
  test::TempDir dir;
  const auto file = dir.path / "old.json";
  RankerModel::train(fixture(0, 4), kSchema, small_params()).save(file);
  const auto refused = [&](const std::filesystem::path& f, const FeatureSchema& s, const std::string& why) {
    try {
      RankerModel::load(f, s);
      FAIL("loaded " << f);
    } catch (const UserError& e) {
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == f.string());
      CHECK_THAT(e.message(), Catch::Contains(why));
    }
  };
  refused(file, FeatureSchema{8, kSchema.names}, "trained on feature schema 7 (3 features: m1, n1, size)");
  refused(file, FeatureSchema{7, {"m1", "n1", "k"}}, "this spmmc ranks with schema 7 (3 features: m1, n1, k)");
  test::write_file(dir.path / "other.json", R"({"format": "something else"})");
  refused(dir.path / "other.json", kSchema, "not a spmmc ranker model");
  test::write_file(dir.path / "broken.json", "{\"format\": ");
  refused(dir.path / "broken.json", kSchema, "invalid JSON");
  try {
    RankerModel::load(dir.path / "absent.json", kSchema);
    FAIL("loaded a missing file");
  } catch (const UserError& e) {
    CHECK(e.code() == ExitCode::kNoInput);
  }
}

TEST_CASE("ranker: malformed training data is refused naming the group", "[ranker]") {
  auto groups = fixture(0, 2);
  groups[1].features[3].pop_back();
  CHECK_THROWS_WITH(RankerModel::train(groups, kSchema, small_params()),
                    Catch::Contains("group fixture-1: candidate 3 has 2 features, the schema 3"));
  groups = fixture(0, 2);
  groups[0].times_ms[5] = 0.0;
  CHECK_THROWS_WITH(RankerModel::train(groups, kSchema, small_params()),
                    Catch::Contains("group fixture-0: candidate 5 has no positive time"));
  CHECK_THROWS_WITH(RankerModel::train({}, kSchema, small_params()), Catch::Contains("no query groups"));
  RankerParams wrong = small_params();
  wrong.objective = "reg:squarederror";
  CHECK_THROWS_WITH(RankerModel::train(fixture(0, 2), kSchema, wrong), Catch::Contains("expected rank:ndcg or rank:pairwise"));
}

}  // namespace
}  // namespace spmmc
