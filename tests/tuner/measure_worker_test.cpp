// The parent side of the measuring worker (tuner/measure_worker.h) without a GPU: a shell script
// stands in for the worker, answering, crashing, talking nonsense or reporting a sticky fault, so
// that what the tuner records and when it starts a new worker are checked on every machine. The
// real worker is checked on a GPU by tests/gpu/tuner_gpu_check.cpp.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tuner/measure_worker.h"

namespace spmmc {
namespace {

// Reads requests; answers by the symbol in each: "ok" a good measurement (with the worker's
// pid as its register count, so a new worker is visible), "crash" dies of SIGSEGV, "nonsense"
// prints a line that is no answer, "sticky" reports a sticky fault and exits, as the real one.
constexpr const char* kFakeWorker = R"(
while IFS= read -r line; do
  case "$line" in
    *'"symbol":"crash"'*) kill -SEGV $$ ;;
    *'"symbol":"nonsense"'*) echo 'this is not JSON' ;;
    *'"symbol":"sticky"'*)
      echo '{"outcome":"LaunchFailed","detail":"cuStreamSynchronize(stream): CUDA_ERROR_ILLEGAL_ADDRESS","registers":0,"local_bytes":0,"blocks_per_sm":0,"error":0,"median_ms":0,"p20_ms":0,"p80_ms":0,"runs":0,"sticky":true}'
      exit 0 ;;
    *) echo "{\"outcome\":\"Ok\",\"detail\":\"\",\"registers\":$$,\"local_bytes\":0,\"blocks_per_sm\":2,\"error\":1e-7,\"median_ms\":0.5,\"p20_ms\":0.4,\"p80_ms\":0.6,\"runs\":5}" ;;
  esac
done
)";

std::vector<Measurement> run_fake(const std::vector<std::string>& symbols, std::vector<std::string> worker) {
  static const Cubin cubin{"not a real cubin", "", "", 1.5, false};
  std::vector<RealKernel> kernels;
  for (const std::string& s : symbols) {
    RealKernel k;
    k.tile.m1 = 16;
    k.tile.n1 = 256;
    k.a_tiles = 4;
    k.cubin = &cubin;
    k.symbol = s;
    kernels.push_back(k);
  }
  TuningOptions options;
  options.n = 8;
  options.worker = std::move(worker);
  return check_and_time_in_worker(std::vector<float>(24, 1.0f), std::vector<double>(16, 2.0), kernels, options);
}

TEST_CASE("measure worker: a crashed, confused or faulted worker costs only its candidate", "[tuner][worker]") {
  const auto m = run_fake({"ok", "ok", "crash", "ok", "nonsense", "ok", "sticky", "ok"}, {"sh", "-c", kFakeWorker});
  REQUIRE(m.size() == 8);
  for (size_t i : {0u, 1u, 3u, 5u, 7u}) {
    INFO(i << ": " << m[i].detail);
    CHECK(m[i].outcome == Outcome::kOk);
    CHECK(m[i].time.median_ms == 0.5);
    CHECK(m[i].time.runs == 5);
    CHECK(m[i].max_relative_error == 1e-7);
    CHECK(m[i].blocks_per_sm == 2);
    CHECK(m[i].compile_seconds == 1.5);
  }
  // One worker answers until it fails; each failure costs one candidate and a new worker.
  CHECK(m[0].registers_per_thread == m[1].registers_per_thread);
  CHECK(m[3].registers_per_thread != m[1].registers_per_thread);
  CHECK(m[5].registers_per_thread != m[3].registers_per_thread);
  CHECK(m[7].registers_per_thread != m[5].registers_per_thread);
  CHECK(m[2].outcome == Outcome::kLaunchFailed);
  CHECK_THAT(m[2].detail, Catch::Contains("ended without an answer") && Catch::Contains("signal 11"));
  CHECK(m[4].outcome == Outcome::kLaunchFailed);
  CHECK_THAT(m[4].detail, Catch::Contains("this is not JSON"));
  CHECK(m[6].outcome == Outcome::kLaunchFailed);
  CHECK_THAT(m[6].detail, Catch::Contains("ILLEGAL_ADDRESS"));
}

TEST_CASE("measure worker: a worker that cannot start fails every candidate, naming why", "[tuner][worker]") {
  const auto m = run_fake({"ok", "ok"}, {"/nonexistent/spmmc-worker"});
  REQUIRE(m.size() == 2);
  for (const Measurement& x : m) {
    CHECK(x.outcome == Outcome::kLaunchFailed);
    CHECK_THAT(x.detail, Catch::Contains("/nonexistent/spmmc-worker"));
  }
}

TEST_CASE("measure worker: without a GPU the worker answers each request with why, then exits 69", "[tuner][worker]") {
  std::istringstream in("{\"n\": 4}\n{\"n\": 4}\n");
  std::ostringstream out;
  const int code = run_measure_worker(in, out);
  if (code == 0) {
    WARN("a GPU is present: the worker ran the requests for real");
    return;
  }
  CHECK(code == 69);
  const std::string text = out.str();
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK_THAT(text, Catch::Contains("\"outcome\":\"LaunchFailed\"") && Catch::Contains("no GPU in the measuring process"));
}

}  // namespace
}  // namespace spmmc
