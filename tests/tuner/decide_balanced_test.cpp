// tuner/decide_balanced.h: the balanced family replaces the search's decision only where its kernel
// was measured faster at n and at every other batch size the file serves (no GPU: given results).
#include "tuner/decide_balanced.h"

#include "tests/test_util.h"
#include "tests/tuner/measurement_util.h"

namespace spmmc {
namespace {

Measurement ok(double median_ms) { return test::ok_measurement(median_ms); }

Measurement failed(Outcome o, std::string detail) {
  Measurement m;
  m.outcome = o;
  m.detail = std::move(detail);
  return m;
}

// The search decided for candidate 0 (tile 16x128, unrolled, `unrolled_ms`) or, with `generic`, the
// generic kernel (`generic_ms`); the balanced kernel ran `balanced`.
TuningResult decided(bool generic, std::optional<double> unrolled_ms, double generic_ms, std::optional<Measurement> balanced) {
  TuningResult r;
  r.candidates.resize(1);
  r.candidates[0].tile = {16, 128};
  if (unrolled_ms) r.candidates[0].real = ok(*unrolled_ms);
  r.chosen = 0;
  r.generic = ok(generic_ms);
  if (balanced) r.balanced_tried = {{1, 64, std::move(*balanced)}};
  Decision d;
  d.chosen = 0;
  d.generic = generic;
  d.emitted_ms = generic ? std::optional<double>(generic_ms) : unrolled_ms;
  r.decision = d;
  return r;
}

BatchSizeMeasurement at(int64_t n, std::optional<double> family, double generic, std::optional<double> balanced) {
  BatchSizeMeasurement b;
  b.n = n;
  if (family) b.family = ok(*family);
  b.generic = ok(generic);
  if (balanced) b.balanced = ok(*balanced);
  return b;
}

TEST_CASE("decide_balanced: the balanced kernel only where measured faster than the decided one", "[tuner][balanced]") {
  SECTION("faster than the generic kernel the search decided on") {
    const BalancedDecision b = decide_balanced(decided(true, std::nullopt, 1.0, ok(0.5)), "rank");
    CHECK(b.balanced);
    CHECK(b.why == "--tune rank: the balanced kernel ran 0.5 ms, 2.00x faster than the generic kernel (1 ms)");
  }
  SECTION("faster than the unrolled kernel, which was compared, not the slower generic one") {
    CHECK(decide_balanced(decided(false, 0.6, 2.0, ok(0.5)), "proxy").balanced);
    const BalancedDecision slower = decide_balanced(decided(false, 0.4, 2.0, ok(0.5)), "proxy");
    CHECK_FALSE(slower.balanced);
    CHECK(slower.why == "--tune proxy: the balanced kernel ran 0.5 ms, the unrolled kernel of tile 16x128 0.4 ms: kept");
  }
  SECTION("within the noise margin: kept") {
    CHECK_FALSE(decide_balanced(decided(true, std::nullopt, 1.0, ok(0.985)), "rank").balanced);
    CHECK(decide_balanced(decided(true, std::nullopt, 1.0, ok(0.975)), "rank").balanced);
  }
  SECTION("not timed, failed, or the decided kernel unmeasured: kept") {
    CHECK(decide_balanced(decided(true, std::nullopt, 1.0, std::nullopt), "rank").why == "the balanced kernel was not timed");
    const BalancedDecision wrong = decide_balanced(decided(true, std::nullopt, 1.0, failed(Outcome::kWrongResult, "C[3] off")), "rank");
    CHECK_FALSE(wrong.balanced);
    CHECK(wrong.why.find("could not be measured") != std::string::npos);
    CHECK(wrong.why.find("C[3] off") != std::string::npos);
    const BalancedDecision unmeasured = decide_balanced(decided(false, std::nullopt, 1.0, ok(0.1)), "rank");
    CHECK_FALSE(unmeasured.balanced);
    CHECK(unmeasured.why == "the balanced kernel ran 0.1 ms; the unrolled kernel of tile 16x128 was not measured, so it is kept");
  }
}

TEST_CASE("best_balanced: the fastest of the shapes measured, else the first tried", "[tuner][balanced]") {
  TuningResult r;
  CHECK(r.best_balanced() == nullptr);
  r.balanced_tried = {{1, 64, failed(Outcome::kCompileFailed, "ptxas")}, {2, 64, ok(0.4)}, {4, 64, ok(0.3)}};
  REQUIRE(r.best_balanced() != nullptr);
  CHECK(r.best_balanced()->groups == 4);
  // The shorter length at the fastest pieces per warp: kept where faster, with its length.
  r.balanced_tried.push_back({4, 32, ok(0.25)});
  CHECK(r.best_balanced()->groups == 4);
  CHECK(r.best_balanced()->piece_length == 32);
  r.balanced_tried[3].measurement = ok(0.35);
  CHECK(r.best_balanced()->piece_length == 64);
  r.balanced_tried.pop_back();
  r.balanced_tried[2].measurement = failed(Outcome::kWrongResult, "C[0] off");
  CHECK(r.best_balanced()->groups == 2);
  r.balanced_tried[1].measurement = failed(Outcome::kLaunchFailed, "fault");
  CHECK(r.best_balanced()->groups == 1);  // none measured: the first, whose failure is reported
  CHECK(decide_balanced(decided(true, std::nullopt, 1.0, std::nullopt), "rank").why == "the balanced kernel was not timed");
  TuningResult d = decided(true, std::nullopt, 1.0, std::nullopt);
  d.balanced_tried = {{1, 64, ok(0.9)}, {2, 64, ok(0.5)}};
  CHECK(decide_balanced(d, "rank").why == "--tune rank: the balanced kernel ran 0.5 ms, 2.00x faster than the generic kernel (1 ms)");
}

TEST_CASE("next_balanced_piece_length: shorter lengths while each one wins", "[tuner][balanced]") {
  const std::vector<int32_t> shorter = {32, 16};
  TuningResult r;
  CHECK(next_balanced_piece_length(r, 64, shorter) == 0);  // nothing timed
  r.balanced_tried = {{1, 64, failed(Outcome::kCompileFailed, "ptxas")}, {2, 64, failed(Outcome::kWrongResult, "C")}};
  CHECK(next_balanced_piece_length(r, 64, shorter) == 0);  // no shape ran
  r.balanced_tried = {{1, 64, ok(0.5)}, {2, 64, ok(0.4)}, {4, 64, ok(0.45)}};
  CHECK(next_balanced_piece_length(r, 64, shorter) == 32);
  CHECK(next_balanced_piece_length(r, 64, {}) == 0);
  CHECK(next_balanced_piece_length(r, 64, {64, 128}) == 0);  // none shorter than the rule's
  r.balanced_tried.push_back({2, 32, ok(0.41)});  // lost by a little: no 16
  CHECK(next_balanced_piece_length(r, 64, shorter) == 0);
  r.balanced_tried.back().measurement = failed(Outcome::kLaunchFailed, "fault");
  CHECK(next_balanced_piece_length(r, 64, shorter) == 0);
  r.balanced_tried.back().measurement = ok(0.3);  // won: 16 next
  CHECK(next_balanced_piece_length(r, 64, shorter) == 16);
  r.balanced_tried.push_back({2, 16, ok(0.2)});  // won too: nothing shorter is listed
  CHECK(next_balanced_piece_length(r, 64, shorter) == 0);
  CHECK(r.best_balanced()->piece_length == 16);
  CHECK(next_balanced_piece_length(r, 64, {32, 16, 8}) == 8);
  r.balanced_tried.back().measurement = ok(0.35);  // lost: 32 is kept
  CHECK(next_balanced_piece_length(r, 64, {32, 16, 8}) == 0);
  CHECK(r.best_balanced()->piece_length == 32);
}

TEST_CASE("decide_balanced: a file of several batch sizes takes it only where it is faster at each", "[tuner][balanced]") {
  // At each other size the file runs the faster of its unrolled kernel and its generic path.
  TuningResult r = decided(false, 1.0, 2.0, ok(0.5));
  r.batch_sizes = {at(8, 0.30, 0.20, 0.15), at(64, 0.5, 0.6, 0.4)};
  const BalancedDecision all = decide_balanced(r, "rank");
  CHECK(all.balanced);
  CHECK(all.why.find("faster at every other batch size timed") != std::string::npos);
  r.batch_sizes[0] = at(8, 0.30, 0.20, 0.25);  // slower than the generic path at n = 8
  const BalancedDecision small = decide_balanced(r, "rank");
  CHECK_FALSE(small.balanced);
  CHECK(small.why.find("0.25 ms against 0.2 ms at n = 8") != std::string::npos);
  r.batch_sizes[0] = at(8, 0.30, 0.20, std::nullopt);  // not measured there
  CHECK_FALSE(decide_balanced(r, "rank").balanced);
  // A generic decision: the generic kernel at each size.
  TuningResult g = decided(true, std::nullopt, 1.0, ok(0.5));
  g.batch_sizes = {at(8, std::nullopt, 0.20, 0.10)};
  CHECK(decide_balanced(g, "rank").balanced);
  g.batch_sizes = {at(8, std::nullopt, 0.20, 0.30)};
  CHECK_FALSE(decide_balanced(g, "rank").balanced);
}

TEST_CASE("family_of_search: the decided family, or the balanced one where it replaced it", "[tuner][balanced]") {
  SECTION("a generic decision whose balanced kernel lost stays the generic family (not the unrolled kernel)") {
    TuningResult r = decided(true, std::nullopt, 1.0, ok(1.2));
    r.decision->why = "the generic family";
    r.balanced_decision = decide_balanced(r, "rank");
    const SearchedFamily f = family_of_search(r);
    CHECK(f.generic);
    CHECK_FALSE(f.balanced);
    CHECK(f.why.rfind("the generic family; not the balanced family: --tune rank: the balanced kernel ran 1.2 ms", 0) == 0);
    CHECK(f.decision.emitted_ms == 1.0);
  }
  SECTION("an unrolled decision whose balanced kernel lost stays unrolled") {
    TuningResult r = decided(false, 0.4, 2.0, ok(0.5));
    r.balanced_decision = decide_balanced(r, "proxy");
    const SearchedFamily f = family_of_search(r);
    CHECK_FALSE(f.generic);
    CHECK_FALSE(f.balanced);
    CHECK(f.decision.emitted_ms == 0.4);
  }
  SECTION("the balanced kernel replaced the decision: its time and reason are the decision's") {
    TuningResult r = decided(false, 0.6, 2.0, std::nullopt);
    r.decision->heuristic_kept = true;
    r.balanced_tried = {{1, 64, ok(0.5)}, {4, 32, ok(0.3)}};
    r.balanced_decision = decide_balanced(r, "proxy");
    const SearchedFamily f = family_of_search(r);
    CHECK(f.generic);
    CHECK(f.balanced);
    CHECK_FALSE(f.decision.heuristic_kept);
    CHECK(f.decision.emitted_ms == 0.3);
    CHECK(f.why == r.balanced_decision->why);
    CHECK(f.decision.why == f.why);
  }
  SECTION("nothing balanced timed: the decision as it is") {
    const TuningResult r = decided(true, std::nullopt, 1.0, std::nullopt);
    const SearchedFamily f = family_of_search(r);
    CHECK(f.generic);
    CHECK_FALSE(f.balanced);
  }
}

}  // namespace
}  // namespace spmmc
