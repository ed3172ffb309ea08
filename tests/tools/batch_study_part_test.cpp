// scripts/batch-study.sh --part K/P: a study split over several calls of a lent GPU, each part a
// consecutive slice of the case file's cases, tabled from results alone (--table-only, no GPU).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;

// Runs batch-study.sh with `args` from the source tree; its exit status, stdout and stderr in `log`.
int batch_study(const std::string& args, std::string& log) {
  return test::run_command("cd " + test::quote(SPMMC_SOURCE_DIR) + " && scripts/batch-study.sh " + args + " 2>&1", log);
}

TEST_CASE("batch-study --part: consecutive slices that together cover the case file once", "[scripts]") {
  test::TempDir dir;
  // Seven cases between comments and a blank line, and a passing result for every case at n = 8.
  std::string cases = "# a study\n";
  for (int i = 0; i < 7; ++i) {
    cases += fmt::format("case{}|m{}.mtx|64|\n", i, i);
    if (i == 3) cases += "\n# more\n";
  }
  const fs::path case_file = dir.path / "study.cases";
  test::write_file(case_file, cases);
  std::string results;
  for (int i = 0; i < 7; ++i)
    results += nlohmann::json{{"label", fmt::format("case{}@8", i)}, {"pass", true}, {"speedup_vs_best_peer", 1.0 + i / 100.0},
                              {"spmmc_ms", 0.01}, {"best_peer_ms", 0.01}}
                   .dump() +
               "\n";
  test::write_file(dir.path / "results.jsonl", results);
  const std::string common = test::quote(case_file.string()) + " --out " + test::quote(dir.path.string()) + " --run-n 8";

  // Case i of 7 is in part floor(3 i / 7) + 1: 0-2, 3-4, 5-6.
  const std::vector<std::vector<int>> parts = {{0, 1, 2}, {3, 4}, {5, 6}};
  for (size_t k = 0; k < parts.size(); ++k) {
    std::string log;
    const int status = batch_study(common + fmt::format(" --part {}/3 --table-only", k + 1), log);
    INFO(log);
    CHECK(status == 0);  // every case of the slice has its result
    for (int i = 0; i < 7; ++i) {
      const bool in = std::find(parts[k].begin(), parts[k].end(), i) != parts[k].end();
      CHECK((log.find(fmt::format("| case{} |", i)) != std::string::npos) == in);
    }
    CHECK(log.find(fmt::format("{} of {} runs correct", parts[k].size(), parts[k].size())) != std::string::npos);
  }
  // The whole file without --part: every case.
  std::string log;
  CHECK(batch_study(common + " --table-only", log) == 0);
  CHECK(log.find("7 of 7 runs correct") != std::string::npos);

  // Refused: K above P, zero, not K/P; a slice with no case (more parts than cases).
  for (const char* bad : {"4/3", "0/3", "2", "a/b"}) {
    INFO(bad);
    CHECK(batch_study(common + " --part " + bad + " --table-only", log) == 64);
    CHECK(log.find("--part") != std::string::npos);
  }
  CHECK(batch_study(common + " --part 5/9 --table-only", log) == 64);  // cases 0-6 fall in parts 1-4 and 6-8
  CHECK(log.find("no case in that slice") != std::string::npos);
}

TEST_CASE("batch-study --resume: only the cases with an n still to run are built", "[scripts]") {
  test::TempDir dir;
  const fs::path case_file = dir.path / "study.cases", work = dir.path / "work", build = dir.path / "build";
  test::write_file(case_file, "# a study\ndone|m0.mtx|64|\nhalf|m1.mtx|64|--tune none\n\nnone|m2.mtx|64|\n");
  fs::create_directories(work);
  fs::create_directories(build);
  // A bench that finds no GPU: the script stops after the builds, before running anything.
  test::write_file(build / "spmmc-gpu-bench", "#!/bin/sh\n[ \"$1\" = --device-info ] && { echo 'no GPU'; exit 69; }\nexit 1\n");
  fs::permissions(build / "spmmc-gpu-bench", fs::perms::owner_all);
  std::string results;
  for (const char* label : {"done@8", "done@16", "half@8"})
    results += nlohmann::json{{"label", label}, {"pass", true}, {"spmmc_ms", 0.01}, {"best_peer_ms", 0.01}}.dump() + "\n";
  results += nlohmann::json{{"label", "none@8"}, {"pass", false}, {"bench_exit", 70}}.dump() + "\n";  // an ERROR runs again
  test::write_file(work / "results.jsonl", results);
  const std::string common = "SPMMC_BUILD_DIR=" + test::quote(build.string()) + " scripts/batch-study.sh " +
                             test::quote(case_file.string()) + " --out " + test::quote(work.string()) + " --run-n 8,16";
  std::string log;
  // Two cases left: `half` (n = 16) and `none`; their build fails here (no spmmc in the build folder).
  test::run_command("cd " + test::quote(SPMMC_SOURCE_DIR) + " && " + common + " --resume 2>&1", log);
  INFO(log);
  CHECK(log.find("--resume: 2 case(s) with an n still to run") != std::string::npos);
  CHECK(test::read_file(work / "to-build.cases") == "half|m1.mtx|64|--tune none\nnone|m2.mtx|64|\n");
  // Every (case, n) with a result: nothing is built, and the script goes on to the GPU, which is not there.
  results += nlohmann::json{{"label", "half@16"}, {"pass", true}, {"spmmc_ms", 0.01}, {"best_peer_ms", 0.01}}.dump() + "\n";
  for (const char* label : {"none@8", "none@16"})
    results += nlohmann::json{{"label", label}, {"pass", false}, {"speedup_vs_best_peer", 0.5}}.dump() + "\n";  // wrong: a result
  test::write_file(work / "results.jsonl", results);
  const int status = test::run_command("cd " + test::quote(SPMMC_SOURCE_DIR) + " && " + common + " --resume 2>&1", log);
  INFO(log);
  CHECK(status == 69);
  CHECK(log.find("--resume: 0 case(s) with an n still to run") != std::string::npos);
  CHECK(log.find("kernel-study") == std::string::npos);
}

}  // namespace
}  // namespace spmmc
