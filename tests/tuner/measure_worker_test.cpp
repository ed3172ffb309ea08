// The parent side of the measuring worker (tuner/measure_worker.h) without a GPU: a shell script
// stands in for the worker, answering, crashing, talking nonsense or reporting a sticky fault, so
// that what the tuner records and when it starts a new worker are checked on every machine. The
// real worker is checked on a GPU by tests/gpu/tuner_gpu_check.cpp.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <utility>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_util.h"
#include "tuner/measure_worker.h"

namespace spmmc {
namespace {

// Reads requests; answers by the symbol in each: "ok" a good measurement (with the worker's
// pid as its register count, so a new worker is visible), "crash" dies of SIGSEGV, "nonsense"
// prints a line that is no answer, "sticky" reports a sticky fault and exits, as the real one.
// With an argument, appends every request to the file it names.
constexpr const char* kFakeWorker = R"(
while IFS= read -r line; do
  if [ -n "$1" ]; then printf '%s\n' "$line" >> "$1"; fi
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

// One candidate per entry: its kernels' symbols in launch order, kernel j with j + 1 A-tiles.
std::vector<Measurement> run_fake(const std::vector<std::vector<std::string>>& candidates, std::vector<std::string> worker) {
  static const Cubin cubin{"not a real cubin", "", "", 1.5, false};
  std::vector<RealKernel> kernels;
  for (const auto& symbols : candidates) {
    RealKernel k;
    k.tile.m1 = 16;
    k.tile.n1 = 256;
    k.cubin = &cubin;
    for (size_t j = 0; j < symbols.size(); ++j) k.launches.push_back({symbols[j], static_cast<int64_t>(j) + 1});
    kernels.push_back(k);
  }
  TuningOptions options;
  options.n = 8;
  options.worker = std::move(worker);
  return check_and_time_in_worker(std::vector<float>(24, 1.0f), std::vector<double>(16, 2.0), kernels, options);
}

TEST_CASE("measure worker: a crashed, confused or faulted worker costs only its candidate", "[tuner][worker]") {
  const auto m = run_fake({{"ok"}, {"ok", "ok_1"}, {"crash"}, {"ok"}, {"ok_0", "nonsense"}, {"ok"}, {"sticky"}, {"ok"}},
                          {"sh", "-c", kFakeWorker});
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
  for (size_t i = 0; i < m.size(); ++i) CHECK(m[i].kernels == (i == 1 || i == 4 ? 2 : 1));
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

// The requests a fake worker received (one per line of `path`).
std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The real worker's answer to `request` (one line), and its exit code.
std::string worker_answer(const std::string& request, int* code = nullptr) {
  std::istringstream in(request + "\n");
  std::ostringstream out;
  const int c = run_measure_worker(in, out);
  if (code != nullptr) *code = c;
  return out.str();
}

TEST_CASE("measure worker: a request names every kernel of the candidate in launch order, and the worker reads it",
          "[tuner][worker]") {
  const test::TempDir dir;
  const std::filesystem::path log = dir.path / "requests.jsonl";
  const auto m = run_fake({{"single"}, {"c_kernel_0", "c_kernel_1", "c_kernel_2"}}, {"sh", "-c", kFakeWorker, "fake", log.string()});
  REQUIRE(m.size() == 2);
  CHECK(m[0].outcome == Outcome::kOk);
  CHECK(m[1].outcome == Outcome::kOk);
  CHECK(m[0].kernels == 1);
  CHECK(m[1].kernels == 3);
  const std::vector<std::string> requests = read_lines(log);
  REQUIRE(requests.size() == 2);
  const auto kernels_of = [](const std::string& line) {
    std::vector<std::pair<std::string, int64_t>> out;
    const nlohmann::json request = nlohmann::json::parse(line);
    for (const auto& k : request.at("kernels"))
      out.emplace_back(k.at("symbol").get<std::string>(), k.at("a_tiles").get<int64_t>());
    return out;
  };
  using Kernels = std::vector<std::pair<std::string, int64_t>>;
  CHECK(kernels_of(requests[0]) == Kernels{{"single", 1}});
  CHECK(kernels_of(requests[1]) == Kernels{{"c_kernel_0", 1}, {"c_kernel_1", 2}, {"c_kernel_2", 3}});
  const nlohmann::json r = nlohmann::json::parse(requests[1]);
  CHECK(r.at("m1") == 16);
  CHECK(r.at("n1") == 256);
  CHECK(r.at("n") == 8);
  CHECK_FALSE(r.contains("symbol"));

  // The real worker reads what the parent sends: without a GPU it gets as far as needing one.
  // (With a GPU it goes on to read B, whose file is gone: it reports that instead.)
  for (const std::string& request : requests) {
    const std::string answer = worker_answer(request);
    INFO(answer);
    CHECK_THAT(answer, Catch::Contains("\"outcome\":\"LaunchFailed\""));
    CHECK_THAT(answer, !Catch::Contains("bad request") && !Catch::Contains("json.exception"));
  }

  // A request it cannot read is answered LaunchFailed, GPU or not, naming what is wrong.
  nlohmann::json no_kernels = r;
  no_kernels["kernels"] = nlohmann::json::array();
  CHECK_THAT(worker_answer(no_kernels.dump()), Catch::Contains("bad request: \\\"kernels\\\" must be a non-empty array"));
  nlohmann::json zero_tiles = r;
  zero_tiles["kernels"][1]["a_tiles"] = 0;
  CHECK_THAT(worker_answer(zero_tiles.dump()), Catch::Contains("bad request: kernel 'c_kernel_1' with 0 A-tiles"));
  nlohmann::json old_form = r;
  old_form.erase("kernels");
  old_form["symbol"] = "c_kernel_0";
  old_form["a_tiles"] = 6;
  CHECK_THAT(worker_answer(old_form.dump()), Catch::Contains("in the measuring process") && Catch::Contains("kernels"));
  for (const nlohmann::json& bad : {no_kernels, zero_tiles, old_form})
    CHECK_THAT(worker_answer(bad.dump()), !Catch::Contains("\"sticky\":true") && !Catch::Contains("no GPU"));
}

TEST_CASE("measure worker: a kernel with a launch of its own (the generic family) sends its grid and block",
          "[tuner][worker]") {
  const test::TempDir dir;
  const std::filesystem::path log = dir.path / "requests.jsonl";
  static const Cubin cubin{"not a real cubin", "", "", 0.5, false};
  RealKernel k;
  k.cubin = &cubin;
  k.launches.push_back({"spmmc_generic_kernel_v4", 0});
  LaunchShape shape;
  shape.grid_x = 64, shape.grid_y = 7, shape.block_x = 16, shape.block_y = 16;
  k.shape = shape;
  TuningOptions options;
  options.n = 8;
  options.worker = {"sh", "-c", kFakeWorker, "fake", log.string()};
  const auto m = check_and_time_in_worker(std::vector<float>(24, 1.0f), std::vector<double>(16, 2.0), {k}, options);
  REQUIRE(m.size() == 1);
  CHECK(m[0].outcome == Outcome::kOk);
  const std::vector<std::string> requests = read_lines(log);
  REQUIRE(requests.size() == 1);
  const nlohmann::json r = nlohmann::json::parse(requests[0]);
  CHECK(r.at("shape") == nlohmann::json::array({64, 7, 16, 16}));
  // The real worker reads it (and, without a GPU, gets as far as needing one) ...
  CHECK_THAT(worker_answer(r.dump()), !Catch::Contains("bad request"));
  // ... and refuses a shape that is not four positive numbers of at most 1024 threads, or several kernels.
  for (const nlohmann::json& bad_shape : {nlohmann::json::array({64, 7, 16}), nlohmann::json::array({64, 0, 16, 16}),
                                          nlohmann::json::array({1, 1, 64, 32})}) {
    nlohmann::json bad = r;
    bad["shape"] = bad_shape;
    CHECK_THAT(worker_answer(bad.dump()), Catch::Contains("bad request: \\\"shape\\\" must be"));
  }
  nlohmann::json two = r;
  two["kernels"].push_back({{"symbol", "x"}, {"a_tiles", 1}});
  CHECK_THAT(worker_answer(two.dump()), Catch::Contains("of one kernel"));
}

TEST_CASE("measure worker: a kernel's device arrays travel as files the worker reads, removed after its candidate",
          "[tuner][worker]") {
  // The generic and balanced families' NVRTC form declares A's arrays without values (RealKernel::arrays).
  const test::TempDir dir;
  const std::filesystem::path log = dir.path / "requests.jsonl", copies = dir.path / "copies.bin";
  // Logs each request and appends the bytes of every array file it names to the copies, then answers Ok.
  const std::string fake = R"(
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$1"
  for f in $(printf '%s' "$line" | grep -o '"file":"[^"]*"' | sed 's/^"file":"//; s/"$//'); do cat "$f" >> "$2"; done
  echo '{"outcome":"Ok","detail":"","registers":32,"local_bytes":0,"blocks_per_sm":2,"error":1e-7,"median_ms":0.5,"p20_ms":0.4,"p80_ms":0.6,"runs":5}'
done
)";
  static const Cubin cubin{"not a real cubin", "", "", 0.5, false};
  RealKernel k;
  k.cubin = &cubin;
  k.launches.push_back({"spmmc_balanced_kernel", 0});
  LaunchShape shape;
  shape.grid_x = 3, shape.block_x = 512;
  k.shape = shape;
  k.arrays = std::make_shared<const std::vector<ArrayValues>>(std::vector<ArrayValues>{
      {"spmmc_col_idx", {1, 0, 0, 0, 2, 0, 0, 0}}, {"spmmc_piece", {'p', 'i', 'e', 'c', 'e', 's', '!', '\n'}}});
  TuningOptions options;
  options.n = 8;
  options.worker = {"sh", "-c", fake, "fake", log.string(), copies.string()};
  const auto m = check_and_time_in_worker(std::vector<float>(24, 1.0f), std::vector<double>(16, 2.0), {k, k}, options);
  REQUIRE(m.size() == 2);
  CHECK(m[0].outcome == Outcome::kOk);
  const std::vector<std::string> requests = read_lines(log);
  REQUIRE(requests.size() == 2);
  const nlohmann::json r = nlohmann::json::parse(requests[0]);
  REQUIRE(r.at("arrays").size() == 2);
  CHECK(r.at("arrays")[0].at("name") == "spmmc_col_idx");
  CHECK(r.at("arrays")[0].at("bytes") == 8);
  CHECK(r.at("arrays")[1].at("name") == "spmmc_piece");
  // The worker found each file with the candidate's bytes, and none is left after its candidate.
  std::ifstream in(copies, std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string once = std::string("\1\0\0\0\2\0\0\0", 8) + "pieces!\n";
  CHECK(got == once + once);
  for (const std::string& request : requests)
    for (const auto& array : nlohmann::json::parse(request).at("arrays"))
      CHECK_FALSE(std::filesystem::exists(array.at("file").get<std::string>()));

  // The real worker reads them (without a GPU it gets as far as needing one) and names a file it cannot use.
  nlohmann::json real = r;
  const std::filesystem::path col = dir.path / "col.bin", piece = dir.path / "piece.bin";
  std::ofstream(col, std::ios::binary) << std::string("\1\0\0\0\2\0\0\0", 8);
  std::ofstream(piece, std::ios::binary) << "pieces!\n";
  real["arrays"][0]["file"] = col.string();
  real["arrays"][1]["file"] = piece.string();
  for (const std::string key : {"b", "want", "cubin"}) real[key] = (dir.path / "absent").string();
  CHECK_THAT(worker_answer(real.dump()), Catch::Contains("LaunchFailed") && !Catch::Contains("bad request") &&
                                             !Catch::Contains("expected"));
  nlohmann::json short_file = real;
  short_file["arrays"][1]["bytes"] = 16;
  CHECK_THAT(worker_answer(short_file.dump()), Catch::Contains(piece.string()) && Catch::Contains("8 bytes, expected 16"));
  nlohmann::json unnamed = real;
  unnamed["arrays"][0]["name"] = "";
  CHECK_THAT(worker_answer(unnamed.dump()), Catch::Contains("bad request: an array without a name"));
  nlohmann::json not_a_list = real;
  not_a_list["arrays"] = "col.bin";
  CHECK_THAT(worker_answer(not_a_list.dump()), Catch::Contains("bad request: \\\"arrays\\\" must be an array"));
}

TEST_CASE("measure worker: a worker that cannot start fails every candidate, naming why", "[tuner][worker]") {
  const auto m = run_fake({{"ok"}, {"ok"}}, {"/nonexistent/spmmc-worker"});
  REQUIRE(m.size() == 2);
  for (const Measurement& x : m) {
    CHECK(x.outcome == Outcome::kLaunchFailed);
    CHECK_THAT(x.detail, Catch::Contains("/nonexistent/spmmc-worker"));
  }
}

TEST_CASE("measure worker: without a GPU the worker answers each request with why, then exits 69", "[tuner][worker]") {
  const std::string request =
      R"({"b":"/nonexistent/b.f32","b_floats":8,"want":"/nonexistent/want.f64","want_doubles":4,"n":4,)"
      R"("cubin":"/nonexistent/k0.cubin","kernels":[{"symbol":"k_kernel_0","a_tiles":1},{"symbol":"k_kernel_1","a_tiles":2}],)"
      R"("m1":8,"n1":64,"v":1,"min_blocks":1,"warmup":1,"runs":2,"flush_l2":false})";
  std::istringstream in(request + "\n" + request + "\n");
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
