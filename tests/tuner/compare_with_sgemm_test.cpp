// tuner/compare_with_sgemm.h: the "sgemm" object of spmmc compile's report and the note it
// prints, from given tuning results (no GPU).
#include "tuner/compare_with_sgemm.h"

#include "tests/test_util.h"
#include "tests/tuner/measurement_util.h"

namespace spmmc {
namespace {

Measurement ok(double median_ms) { return test::ok_measurement(median_ms); }

// Two candidates; the second (proxy 0.8 ms, real kernel 0.5 ms) is chosen.
TuningResult tuned(std::optional<SgemmTiming> sgemm) {
  TuningResult r;
  r.candidates.resize(2);
  r.candidates[0].proxy = ok(0.9);
  r.candidates[0].real = ok(0.7);
  r.candidates[1].proxy = ok(0.8);
  r.candidates[1].real = ok(0.5);
  r.chosen = 1;
  r.sgemm = std::move(sgemm);
  return r;
}

SgemmTiming timed(double ms) {
  SgemmTiming t;
  t.available = true;
  t.median_ms = ms;
  return t;
}

TEST_CASE("compare_with_sgemm: nothing to say when SGEMM was not timed", "[tuner][sgemm]") {
  for (const bool use_real : {true, false}) {
    const SgemmComparison c = compare_with_sgemm(tuned(std::nullopt), use_real);
    CHECK(c.json.is_null());
    CHECK(c.note.empty());
  }
}

TEST_CASE("compare_with_sgemm: an unavailable cuBLAS is reported with its reason and no note", "[tuner][sgemm]") {
  SgemmTiming missing;
  missing.why_unavailable = "no usable cuBLAS: libcublas.so.13: cannot open shared object file";
  const SgemmComparison c = compare_with_sgemm(tuned(missing), true);
  CHECK(c.json.dump() ==
        R"({"available":false,"why_unavailable":"no usable cuBLAS: libcublas.so.13: cannot open shared object file"})");
  CHECK(c.note.empty());
}

TEST_CASE("compare_with_sgemm: exhaustive tuning compares with the chosen real kernel, and a faster SGEMM gets a note",
          "[tuner][sgemm]") {
  const SgemmComparison c = compare_with_sgemm(tuned(timed(0.2)), true);
  CHECK(c.json.dump() ==
        R"({"available":true,"median_ms":0.2,"compared_with":"real kernel","chosen_ms":0.5,"faster_than_chosen":true,"ratio":2.5})");
  CHECK(c.note ==
        "cuBLAS SGEMM (dense, FP32) took 0.2 ms, the chosen sparse kernel 0.5 ms: at this sparsity the dense layer is "
        "faster (2.50x)");
}

TEST_CASE("compare_with_sgemm: proxy tuning compares with the chosen real kernel where its finalists timed it",
          "[tuner][sgemm]") {
  const SgemmComparison c = compare_with_sgemm(tuned(timed(0.4)), false);
  CHECK(c.json.dump() ==
        R"({"available":true,"median_ms":0.4,"compared_with":"real kernel","chosen_ms":0.5,"faster_than_chosen":true,"ratio":1.25})");
  CHECK(c.note ==
        "cuBLAS SGEMM (dense, FP32) took 0.4 ms, the chosen sparse kernel 0.5 ms: at this sparsity the dense layer is "
        "faster (1.25x)");
}

TEST_CASE("compare_with_sgemm: proxy tuning without finalists reports SGEMM without comparing it with a proxy's time",
          "[tuner][sgemm]") {
  TuningResult r = tuned(timed(0.4));
  r.candidates[1].real = Measurement{};  // --finalists 0: only the proxies were timed
  const SgemmComparison c = compare_with_sgemm(r, false);
  CHECK(c.json.dump() ==
        R"({"available":true,"median_ms":0.4,"compared_with":null,"why_not_compared":"the emitted kernel's real time was not measured (its compile was beyond the search's budget): a proxy's time is not the kernel's"})");
  CHECK(c.note.empty());
}

TEST_CASE("compare_with_sgemm: a faster sparse kernel is reported without a note, and equal times are no win for SGEMM",
          "[tuner][sgemm]") {
  const SgemmComparison slower = compare_with_sgemm(tuned(timed(1.25)), true);
  CHECK(slower.json.dump() ==
        R"({"available":true,"median_ms":1.25,"compared_with":"real kernel","chosen_ms":0.5,"faster_than_chosen":false,"ratio":0.4})");
  CHECK(slower.note.empty());
  const SgemmComparison equal = compare_with_sgemm(tuned(timed(0.5)), true);
  CHECK(equal.json.at("faster_than_chosen") == false);
  CHECK(equal.json.at("ratio") == 1.0);
  CHECK(equal.note.empty());
}

TEST_CASE("compare_with_sgemm: without a chosen, measured candidate SGEMM's time alone is reported", "[tuner][sgemm]") {
  TuningResult none = tuned(timed(0.2));
  none.chosen = -1;
  const SgemmComparison c = compare_with_sgemm(none, true);
  CHECK(c.json.dump() == R"({"available":true,"median_ms":0.2})");
  CHECK(c.note.empty());
  TuningResult failed = tuned(timed(0.2));
  failed.candidates[1].real.outcome = Outcome::kWrongResult;  // chosen by a caller, but not Ok
  CHECK(compare_with_sgemm(failed, true).json.dump() == R"({"available":true,"median_ms":0.2})");
}

TEST_CASE("compare_with_sgemm: the note keeps four significant digits of small and large times", "[tuner][sgemm]") {
  TuningResult r = tuned(timed(0.0123456));
  r.candidates[1].real = ok(12.34567);
  const SgemmComparison c = compare_with_sgemm(r, true);
  CHECK(c.note == "cuBLAS SGEMM (dense, FP32) took 0.01235 ms, the chosen sparse kernel 12.35 ms: at this sparsity the "
                  "dense layer is faster (1000.01x)");
}

TEST_CASE("compare_with_sgemm: the generic family emitted is compared by its real time, in both modes", "[tuner][sgemm]") {
  TuningResult r = tuned(timed(0.2));
  r.generic = ok(0.3);
  for (const bool use_real : {true, false}) {
    const SgemmComparison c = compare_with_sgemm(r, use_real, true);
    CHECK(c.json["compared_with"] == "generic kernel");
    CHECK(c.json["chosen_ms"] == 0.3);
    CHECK(c.json["faster_than_chosen"] == true);
    CHECK_THAT(c.note, Catch::Contains("the chosen sparse kernel 0.3 ms"));
  }
  // Not emitted, or not measured: as before, the chosen real kernel where it was timed (the
  // proxy's time is never compared).
  CHECK(compare_with_sgemm(r, false, false).json["compared_with"] == "real kernel");
  r.generic->outcome = Outcome::kCompileFailed;
  CHECK(compare_with_sgemm(r, true, true).json["compared_with"] == "real kernel");
  r.candidates[1].real = Measurement{};
  CHECK(compare_with_sgemm(r, false, false).json["compared_with"].is_null());
  CHECK(compare_with_sgemm(r, false, true).json["compared_with"].is_null());
}

TEST_CASE("compare_with_sgemm: the balanced family emitted is compared by its kernel's time", "[tuner][sgemm][balanced]") {
  TuningResult r = tuned(timed(0.2));
  r.generic = ok(0.3);
  r.balanced_tried = {{1, 64, ok(0.4)}, {2, 64, ok(0.25)}};  // the faster is the one kept
  const SgemmComparison c = compare_with_sgemm(r, false, true, true);
  CHECK(c.json["compared_with"] == "balanced kernel");
  CHECK(c.json["chosen_ms"] == 0.25);
  CHECK_THAT(c.note, Catch::Contains("the chosen sparse kernel 0.25 ms"));
  // Not measured: the proxy's time is never compared, nor the generic kernel's in its place.
  r.balanced_tried.clear();
  r.candidates[1].real = Measurement{};
  CHECK(compare_with_sgemm(r, false, true, true).json["compared_with"].is_null());
}

}  // namespace
}  // namespace spmmc
