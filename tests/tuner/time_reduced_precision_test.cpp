// tuner/time_reduced_precision.h: the choice among a half-precision file's timed kernels and what the
// report says of the dense GEMM, from given measurements (no GPU; the timing itself runs in
// spmmc-tuner-gpu-check and on the GPU in docs/benchmarks.md).
#include "tuner/time_reduced_precision.h"

#include "tests/test_util.h"
#include "tests/tuner/measurement_util.h"

namespace spmmc {
namespace {

Measurement ok(double median_ms) { return test::ok_measurement(median_ms); }

Measurement failed(Outcome outcome, const std::string& detail) {
  Measurement m;
  m.outcome = outcome;
  m.detail = detail;
  return m;
}

// Three candidates: the tensor-core family on 8- and 16-row windows, the generic family.
struct Fixture {
  RowTiling rows8, rows16, generic;
  ReducedPrecisionRequest request;
  Fixture() {
    rows8.m1 = 8, rows16.m1 = 16, generic.m1 = 16;
    request.dtype = DType::kFp16;
    request.n = 256;
    request.candidates = {ReducedPrecisionCandidate::tensor_core(rows8), ReducedPrecisionCandidate::tensor_core(rows16),
                          ReducedPrecisionCandidate::generic(generic)};
  }
  ReducedPrecisionTiming timing(std::vector<Measurement> measured, std::optional<double> dense_ms) const {
    ReducedPrecisionTiming t;
    t.measured = std::move(measured);
    for (size_t i = 0; i < t.measured.size(); ++i)
      if (t.measured[i].outcome == Outcome::kOk &&
          (t.fastest < 0 || t.measured[i].time.median_ms < t.measured[static_cast<size_t>(t.fastest)].time.median_ms))
        t.fastest = static_cast<int32_t>(i);
    if (dense_ms) t.dense = {true, "", *dense_ms};
    return t;
  }
};

TEST_CASE("choose_reduced_precision: the rule's kernel stays unless another is faster beyond the noise", "[tuner][dtype]") {
  const Fixture f;
  // The 16-row windows 1% faster than the rule's 8-row ones: noise, the rule's kept.
  ReducedPrecisionChoice c = choose_reduced_precision(f.request, f.timing({ok(1.00), ok(0.99), ok(2.0)}, std::nullopt), 0);
  CHECK(c.chosen == 0);
  CHECK(c.timed);
  CHECK_THAT(c.why, Catch::Contains("the rule's tensor-core, 8-row windows (1.0000 ms) is the fastest of the 3 kernels timed"));
  // 10% faster: taken, and the report says by how much.
  c = choose_reduced_precision(f.request, f.timing({ok(1.00), ok(0.90), ok(2.0)}, std::nullopt), 0);
  CHECK(c.chosen == 1);
  CHECK_THAT(c.why, Catch::Contains("tensor-core, 16-row windows (0.9000 ms) is 1.11x the rule's tensor-core, 8-row windows"));
  // The generic family where it is the fastest, whatever the rule said.
  c = choose_reduced_precision(f.request, f.timing({ok(1.00), ok(0.90), ok(0.5)}, std::nullopt), 1);
  CHECK(c.chosen == 2);
  REQUIRE(c.candidates.size() == 3);
  CHECK(c.candidates[2]["family"] == "generic");
  CHECK(c.candidates[2]["window_rows"].is_null());
  CHECK(c.candidates[2]["chosen"] == true);
  CHECK(c.candidates[1]["rule"] == true);
  CHECK(c.candidates[1]["window_rows"] == 16);
  CHECK(c.candidates[0]["median_ms"] == 1.0);
}

TEST_CASE("choose_reduced_precision: failures never win, and with nothing measured the rule decides", "[tuner][dtype]") {
  const Fixture f;
  // The rule's kernel failed: the fastest that measured.
  ReducedPrecisionChoice c = choose_reduced_precision(
      f.request, f.timing({failed(Outcome::kWrongResult, "an element of C is 3 times its bound"), ok(0.9), ok(1.5)}, std::nullopt), 0);
  CHECK(c.chosen == 1);
  CHECK(c.timed);
  CHECK_THAT(c.why, Catch::Contains("did not measure (WrongResult)"));
  CHECK(c.candidates[0]["outcome"] == "WrongResult");
  CHECK(c.candidates[0]["detail"] == "an element of C is 3 times its bound");
  CHECK(!c.candidates[0].contains("median_ms"));
  // A faster kernel that failed is not taken over the rule's.
  c = choose_reduced_precision(f.request, f.timing({ok(1.0), failed(Outcome::kLaunchFailed, "fault"), ok(1.5)}, std::nullopt), 0);
  CHECK(c.chosen == 0);
  // Nothing measured: the rule's, untimed, and nothing said of the dense layer's speed against it.
  c = choose_reduced_precision(f.request,
                            f.timing({failed(Outcome::kCompileFailed, "log"), failed(Outcome::kCompileFailed, "log"),
                                      failed(Outcome::kNotRun, "not run")},
                                     0.1),
                            2);
  CHECK(c.chosen == 2);
  CHECK(!c.timed);
  CHECK_THAT(c.why, Catch::Contains("no kernel could be measured"));
  CHECK(c.dense["median_ms"] == 0.1);
  CHECK(!c.dense.contains("faster_than_emitted"));
  CHECK(c.note.empty());
}

TEST_CASE("choose_reduced_precision: the dense GEMM of the dtype, and the note where it is faster", "[tuner][dtype]") {
  Fixture f;
  // HGEMM faster than the emitted kernel: said, with the ratio.
  ReducedPrecisionChoice c = choose_reduced_precision(f.request, f.timing({ok(0.2), ok(0.3), ok(0.4)}, 0.1), 0);
  CHECK(c.dense["name"] == "cuBLAS HGEMM");
  CHECK(c.dense["available"] == true);
  CHECK(c.dense["emitted_ms"] == 0.2);
  CHECK(c.dense["faster_than_emitted"] == true);
  CHECK(c.dense["ratio"] == Approx(2.0));
  CHECK_THAT(c.note, Catch::Contains("cuBLAS HGEMM (dense, FP16 on the tensor cores) took 0.1000 ms, the emitted sparse kernel "
                                     "0.2000 ms: at this sparsity the dense layer is faster (2.00x)"));
  // Slower: reported, no note.
  c = choose_reduced_precision(f.request, f.timing({ok(0.2), ok(0.3), ok(0.4)}, 0.5), 0);
  CHECK(c.dense["faster_than_emitted"] == false);
  CHECK(c.note.empty());
  // bf16 names its GEMM; an unavailable cuBLAS says why.
  f.request.dtype = DType::kBf16;
  ReducedPrecisionTiming t = f.timing({ok(0.2), ok(0.3), ok(0.4)}, std::nullopt);
  t.dense.why_unavailable = "no usable cuBLAS: libcublas.so.13: cannot open shared object file";
  c = choose_reduced_precision(f.request, t, 0);
  CHECK(c.dense["name"] == "cuBLAS BF16 GEMM");
  CHECK(c.dense["available"] == false);
  CHECK_THAT(c.dense["why_unavailable"].get<std::string>(), Catch::Contains("libcublas.so.13"));
  CHECK(c.note.empty());
  // Not timed at all (no dense timing asked): no object.
  c = choose_reduced_precision(f.request, f.timing({ok(0.2), ok(0.3), ok(0.4)}, std::nullopt), 0);
  CHECK(c.dense.is_null());
}

TEST_CASE("ReducedPrecisionCandidate: labels name the family and the windows", "[tuner][dtype]") {
  const Fixture f;
  CHECK(f.request.candidates[0].label() == "tensor-core, 8-row windows");
  CHECK(f.request.candidates[1].label() == "tensor-core, 16-row windows");
  CHECK(f.request.candidates[2].label() == "generic");
  RowTiling tiles;
  tiles.m1 = 16;
  const ReducedPrecisionCandidate u = ReducedPrecisionCandidate::unrolled(tiles, {16, 1024, 1, 1}, 8192, 3.0);
  CHECK(u.label() == "unrolled, tile 16x1024");
  CHECK(std::string(u.family_name()) == "unrolled");
}

// tf32: the rule's unrolled kernel (float32's code), the tensor-core family and the generic family.
TEST_CASE("choose_reduced_precision: an unrolled kernel competes, and beyond the compile budget the rule's is kept untimed",
          "[tuner][dtype]") {
  Fixture f;
  RowTiling tiles;
  tiles.m1 = 16;
  f.request.dtype = DType::kTf32;
  f.request.max_compile_seconds = 20.0;
  f.request.candidates = {ReducedPrecisionCandidate::tensor_core(f.rows8), ReducedPrecisionCandidate::generic(f.generic),
                          ReducedPrecisionCandidate::unrolled(tiles, {16, 1024, 1, 1}, 0, 5.0)};
  // Within the budget it is timed like the others: the tensor cores taken where 10% faster.
  ReducedPrecisionChoice c = choose_reduced_precision(f.request, f.timing({ok(0.9), ok(2.0), ok(1.0)}, 0.5), 2);
  CHECK(c.chosen == 0);
  CHECK_THAT(c.why, Catch::Contains("tensor-core, 8-row windows (0.9000 ms) is 1.11x the rule's unrolled, tile 16x1024"));
  CHECK(c.candidates[2]["family"] == "unrolled");
  CHECK(c.candidates[2]["tile"] == "16x1024");
  CHECK(c.candidates[0]["tile"].is_null());
  CHECK(c.dense["name"] == "cuBLAS TF32 GEMM");
  CHECK_THAT(c.note, Catch::Contains("TF32 on the tensor cores"));
  // Beyond the budget (not compiled: NotRun) the rule's kernel is kept, whatever the others measured,
  // as the float32 search keeps the heuristic's there; nothing is said of the dense GEMM against it.
  f.request.candidates[2].compile_seconds_estimate = 45.0;
  CHECK(f.request.beyond_budget(f.request.candidates[2]));
  CHECK(!f.request.beyond_budget(f.request.candidates[0]));
  c = choose_reduced_precision(f.request, f.timing({ok(0.9), ok(2.0), failed(Outcome::kNotRun, "not compiled")}, 0.5), 2);
  CHECK(c.chosen == 2);
  CHECK(!c.timed);
  CHECK_THAT(c.why, Catch::Contains("its build (about 45 s) is beyond the compile budget of 20 s, so it was not timed and is kept"));
  CHECK(!c.dense.contains("ratio"));
  CHECK(c.note.empty());
  // No budget (0): nothing is beyond it.
  f.request.max_compile_seconds = 0.0;
  CHECK(!f.request.beyond_budget(f.request.candidates[2]));
}

}  // namespace
}  // namespace spmmc
