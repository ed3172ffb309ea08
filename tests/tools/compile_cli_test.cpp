// spmmc compile end to end: exit codes and messages of every refusal (and no files written on
// one), byte-identical output with --reproducible, the report's schema and the forced tile.
#include <filesystem>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "codegen/kernel_program.h"
#include "codegen/size_guard.h"
#include "runtime/cuda_driver.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

fs::path small_matrix(const fs::path& dir) {
  // Equal row lengths (12 each): the load-balance constraint lets the heuristic choose.
  const fs::path path = dir / "a.mtx";
  const auto r = run_spmmc({"gen", "patterns", "--rows", "64", "--cols", "48", "--patterns", "3", "--sparsity", "0.75",
                            "--seed", "2", "-q", "-o", path.string()});
  REQUIRE(r.exit_code == 0);
  return path;
}

bool empty_or_absent(const fs::path& dir) { return !fs::exists(dir) || fs::is_empty(dir); }

TEST_CASE("compile cli: missing required options are usage errors", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string(), out = (dir.path / "out").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"compile", a, "--name", "k", "-o", out}, "--n"},
      {{"compile", a, "--n", "64", "-o", out}, "--name"},
      {{"compile", a, "--n", "64", "--name", "k"}, "-o DIR"},
      {{"compile", "--n", "64", "--name", "k", "-o", out}, ""},
      {{"compile", a, "--n", "0", "--name", "k", "-o", out}, "--n"},
      {{"compile", a, "--n", "64:8", "--name", "k", "-o", out}, "--n '64:8': expected N, N1,N2,... or LO:HI"},
      {{"compile", a, "--n", "8,,64", "--name", "k", "-o", out}, "--n '8,,64': expected N, N1,N2,... or LO:HI"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--reorder", "random"}, "--reorder"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--tune", "guess"}, "--tune guess: expected auto (default), none"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--tune", "proxy", "--tile", "8x32"}, "--tile"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--tune", "proxy", "--max-candidates", "-1"}, "--max-candidates"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--tune", "rank", "--real-compile-budget", "-5"},
       "--real-compile-budget"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--arrays", "disk"}, "--arrays disk: expected auto (default), device or host"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--arrays", "host", "--family", "tensor-core", "--dtype", "fp16"},
       "--arrays host moves the CSR arrays of the unrolled, generic and balanced families"},
      {{"compile", a, "--n", "64", "--name", "k", "-o", out, "--arrays", "host", "--dtype", "fp16"},
       "--arrays host: the tensor-core family chosen here keeps its arrays constants"},
  };
  for (const auto& c : cases) {
    const auto r = run_spmmc(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.err, Catch::Contains(c.message));
    CHECK(empty_or_absent(out));
  }
}

TEST_CASE("compile cli: --json prints the report NAME.json holds instead of the summary", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string(), out = (dir.path / "out").string();
  const test::CliResult r = test::run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", out, "--tune", "none", "--json",
                                            "--reproducible"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("spmmc compile: wrote") == std::string::npos);
  const nlohmann::json printed = nlohmann::json::parse(r.out);
  CHECK(printed == nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json")));
  CHECK(printed.at("name") == "k");
  // --quiet without --json prints nothing; with it, the report still.
  const test::CliResult quiet = test::run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", out, "--tune", "none", "--quiet"});
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.out.empty());
  const test::CliResult both = test::run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", out, "--tune", "none", "--quiet",
                                               "--json", "--reproducible"});
  CHECK(nlohmann::json::parse(both.out) == printed);
}

TEST_CASE("compile cli: bad names and bad tiles are usage errors", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string(), out = (dir.path / "out").string();
  for (const char* name : {"3abc", "a-b", "__k", "_K", "a b", "int", "namespace", "spmmc_x", "layer_info"}) {
    const auto r = run_spmmc({"compile", a, "--n", "64", "--name", name, "-o", out});
    INFO(name << ": " << r.err);
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.err, Catch::Contains(std::string("--name '") + name + "'"));
  }
  // Names the emitted code cannot own (compiler/common/reserved_names.h), each naming the clash.
  for (const auto& [name, clash] : std::vector<std::pair<std::string, std::string>>{
           {"threadIdx", "a CUDA built-in variable"},
           {"printf", "a name the C library declares in <stdio.h>"},
           {"malloc", "a name the C library declares in <stdlib.h>"},
           {"fmaf", "a function the C library declares in <math.h>"},
           {"cudaMalloc", "the CUDA toolkit's names"},
           {"main", "the entry point of every C and C++ program"},
           {"open", "a function or variable the C library exports"},
           {"math", "a header of the C library"},
           {"layer_info", "the layer_info function of a kernel named 'layer'"}}) {
    const auto r = run_spmmc({"compile", a, "--n", "64", "--name", name, "-o", out});
    INFO(name << ": " << r.err);
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.err, Catch::Contains("--name '" + name + "' clashes with " + clash));
  }
  for (const char* tile : {"32", "0x32", "x32", "8x", "8x-32", "2000x32", "4x1056", "8x32x3", "8x96x4", "axb"}) {
    const auto r = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", out, "--tile", tile});
    INFO(tile << ": " << r.err);
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.err, Catch::Contains("--tile"));
  }
  for (const char* tile : {"32x48", "8x16", "1x1000"}) {
    const auto r = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", out, "--tile", tile});
    INFO(tile << ": " << r.err);
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.err, Catch::Contains("multiple of the warp size"));
  }
  CHECK(empty_or_absent(out));
}

TEST_CASE("compile cli: a matrix without non-zeros is a data error", "[cli][compile]") {
  test::TempDir dir;
  const fs::path empty = dir.path / "empty.mtx";
  test::write_file(empty, "%%MatrixMarket matrix coordinate real general\n3 4 0\n");
  const auto r = run_spmmc({"compile", empty.string(), "--n", "64", "--name", "k", "-o", (dir.path / "out").string()});
  CHECK(r.exit_code == 65);
  CHECK_THAT(r.err, Catch::Contains("no non-zeros"));
  CHECK(empty_or_absent(dir.path / "out"));
}

TEST_CASE("compile cli: a matrix too large for this machine's memory is refused before planning", "[cli][compile]") {
  // 10^6 rows and one non-zero read in a few MB; planning them needs about 72 MB.
  test::TempDir dir;
  const fs::path tall = dir.path / "tall.mtx";
  test::write_file(tall, "%%MatrixMarket matrix coordinate real general\n1000000 4 1\n1 1 1\n");
  for (const char* command : {"compile", "plan"}) {
    std::vector<std::string> args = {command, tall.string(), "--n", "64"};
    if (std::string(command) == "compile") args.insert(args.end(), {"--name", "k", "-o", (dir.path / "out").string()});
    const auto r = run_spmmc(args, "SPMMC_MEMORY_LIMIT_MB=40");
    INFO(r.err);
    CHECK(r.exit_code == 65);
    CHECK_THAT(r.err, Catch::Contains("tall.mtx: error: " + std::string(command == std::string("compile") ? "compiling" : "planning") +
                                      " this matrix would need"));
    CHECK_THAT(r.err, Catch::Contains("SPMMC_MEMORY_LIMIT_MB limit of 40 MiB"));
  }
  CHECK(empty_or_absent(dir.path / "out"));
}

TEST_CASE("compile cli: the size guard counts empty rows, and auto leaves the unrolled family where they are many",
          "[cli][compile]") {
  // An empty row is a store of zeros in its tile's code: 131 072 of them took nvcc 103 s where the
  // estimate without them said 2 s (codegen/size_guard.cpp).
  test::TempDir dir;
  const auto rows_of_one_non_zero = [&](int rows) {
    const fs::path path = dir.path / fmt::format("empty{}.mtx", rows);
    test::write_file(path, fmt::format("%%MatrixMarket matrix coordinate real general\n{} 5 1\n1 1 1\n", rows));
    return path.string();
  };
  // The estimate of the source within 15% of what is written.
  const fs::path unrolled = dir.path / "unrolled";
  const auto u = run_spmmc({"compile", rows_of_one_non_zero(20000), "--n", "64", "--name", "k", "-o", unrolled.string(),
                            "--family", "unrolled", "--quiet"});
  INFO(u.err);
  REQUIRE(u.exit_code == 0);
  const auto ju = nlohmann::json::parse(test::read_file(unrolled / "k.json"))["kernel"];
  const double ratio = ju["estimate"]["source_bytes"].get<double>() / ju["source_bytes"].get<double>();
  CHECK(ratio > 0.85);
  CHECK(ratio < 1.15);
  CHECK(ju["estimate"]["nvcc_seconds"].get<double>() > 20.0);
  // 400 000 empty rows: beyond the 600 s limit unrolled, so the generic family.
  const fs::path generic = dir.path / "generic";
  const auto g = run_spmmc({"compile", rows_of_one_non_zero(400000), "--n", "64", "--name", "k", "-o", generic.string(), "--quiet"});
  INFO(g.err);
  REQUIRE(g.exit_code == 0);
  const auto jg = nlohmann::json::parse(test::read_file(generic / "k.json"))["choice"];
  CHECK(jg["family"] == "generic");
  CHECK_THAT(jg["family_why"].get<std::string>(), Catch::Contains("above the limit of 600 s"));
}

TEST_CASE("compile cli: --arrays auto moves A's arrays to the host above 4 GB of nvcc, device says what it costs",
          "[cli][compile][arrays]") {
  // 4.6M non-zeros: about 4.05 GB at the measured 0.88 KB per non-zero; 4.0M: 3.5 GB.
  test::TempDir dir;
  const fs::path big = dir.path / "big.smtx", small = dir.path / "small.smtx", out = dir.path / "out";
  REQUIRE(run_spmmc({"gen", "uniform", "--rows", "4600", "--cols", "2000", "--sparsity", "0.5", "-q", "-o", big.string()}).exit_code == 0);
  REQUIRE(run_spmmc({"gen", "uniform", "--rows", "4000", "--cols", "2000", "--sparsity", "0.5", "-q", "-o", small.string()}).exit_code == 0);
  struct Result {
    bool note = false;
    std::string where, why;
  };
  const auto compile = [&](const fs::path& matrix, const std::string& arrays) {
    std::vector<std::string> cmd = {"compile", matrix.string(), "--n", "64", "--name", "g", "--family", "generic", "-o", out.string()};
    if (!arrays.empty()) cmd.insert(cmd.end(), {"--arrays", arrays});
    const auto r = run_spmmc(cmd);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    const auto report = nlohmann::json::parse(test::read_file(out / "g.json"))["kernel"]["arrays"];
    return Result{r.err.find("note: nvcc will need about 4 GB") != std::string::npos &&
                      r.err.find("--arrays host (or auto, the default) writes them as host bytes") != std::string::npos,
                  report["where"].get<std::string>(), report["why"].get<std::string>()};
  };
  const Result big_auto = compile(big, "");
  CHECK(big_auto.where == "host");
  CHECK_THAT(big_auto.why, Catch::Contains("4600000 non-zeros as constants would need about 4.0 GB") &&
                               Catch::Contains("above the 4 GB of --arrays auto"));
  CHECK_FALSE(big_auto.note);
  const Result big_device = compile(big, "device");
  CHECK(big_device.where == "device");
  CHECK(big_device.why == "--arrays device");
  CHECK(big_device.note);
  const Result small_auto = compile(small, "auto");
  CHECK(small_auto.where == "device");
  CHECK_THAT(small_auto.why, Catch::Contains("4000000 non-zeros") && Catch::Contains("within the 4 GB"));
  CHECK_FALSE(small_auto.note);
}

TEST_CASE("compile cli: the size guard refuses and writes nothing", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  const fs::path out = dir.path / "out";
  const auto r = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", out.string(), "--max-compile-seconds", "1",
                            "--family", "unrolled"});
  CHECK(r.exit_code == 65);
  CHECK_THAT(r.err, Catch::Contains("size guard"));
  CHECK_THAT(r.err, Catch::Contains("--max-compile-seconds"));
  CHECK_THAT(r.err, Catch::Contains("768 FMAs"));
  CHECK(!fs::exists(out));
  // The same with a limit it fits under succeeds.
  const auto ok = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", out.string(), "--max-compile-seconds", "60", "--quiet"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(out / "k.cu"));
  CHECK(nlohmann::json::parse(test::read_file(out / "k.json"))["choice"]["family"] == "unrolled");
  // With the default --family auto, a layer the guard refuses unrolled gets the generic family.
  const fs::path generic = dir.path / "generic";
  const auto g = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", generic.string(), "--max-compile-seconds", "1"});
  INFO(g.err);
  CHECK(g.exit_code == 0);
  CHECK_THAT(g.err, Catch::Contains("generic family"));
  const auto j = nlohmann::json::parse(test::read_file(generic / "k.json"));
  CHECK(j["choice"]["family"] == "generic");
  CHECK_THAT(j["choice"]["family_why"].get<std::string>(), Catch::Contains("above the limit of 1 s"));
  // The generic family (CUDA C loops) keeps ptxas's default -O3: no options.
  CHECK(test::read_file(generic / "k.nvcc-options").empty());
  CHECK(j["build"]["nvcc_options"].empty());
  CHECK_THAT(test::read_file(generic / "k.cu"), Catch::Contains("// Build: nvcc -O3 -arch=sm_90 -c k.cu\n"));
  CHECK(j["kernel"]["kernels"] == 0);
  CHECK(j["kernel"]["estimate"].is_null());
  const std::string cu = test::read_file(generic / "k.cu");
  CHECK(cu.find("#define SPMMC_GENERIC_ONLY 1") != std::string::npos);
  CHECK(cu.find("--family generic") != std::string::npos);  // the regenerate line
  CHECK(cu.find("SPMMC_TILE_ASM(\"") == std::string::npos);  // no unrolled code
}

TEST_CASE("compile cli: --family auto takes the generic family where the unrolled launch is short of warps or its tiles share few columns",
          "[cli][compile]") {
  // 512 x 4608 at 0.98 at n = 1568: 32 A-tiles x 4 B-tiles of 512 threads = 128 blocks, 48% of
  // one wave of 264 (the ResNet-50 3x3 layers of group 4, measured 1.16-1.9x faster generic).
  test::TempDir dir;
  const fs::path m = dir.path / "wide.mtx";
  REQUIRE(run_spmmc({"gen", "uniform", "--rows", "512", "--cols", "4608", "--sparsity", "0.98", "--seed", "3", "-q", "-o",
                     m.string()}).exit_code == 0);
  const auto family_of = [&](std::vector<std::string> extra, const std::string& folder) {
    // The heuristic's tile (--tune none), whose wave fill the family rule reads.
    std::vector<std::string> args = {"compile", m.string(), "--n", "1568", "--name", "k", "-o", (dir.path / folder).string(),
                                     "--quiet", "--tune", "none"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_spmmc(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(test::read_file(dir.path / folder / "k.json"))["choice"];
  };
  const auto chosen = family_of({}, "auto");
  CHECK(chosen["family"] == "generic");
  CHECK_THAT(chosen["family_why"].get<std::string>(), Catch::Contains("fills 48% of one wave"));
  CHECK(family_of({"--family", "unrolled"}, "unrolled")["family"] == "unrolled");
  CHECK(family_of({"--tile", "16x512"}, "tile")["family"] == "unrolled");  // a forced tile is unrolled
  // The same layer at n = 6272 fills the GPU, but its 16-row A-tiles share few columns (0.98 uniform:
  // about 1.16 products per loaded row of B): generic by the reuse rule.
  const auto r = run_spmmc({"compile", m.string(), "--n", "6272", "--name", "k", "-o", (dir.path / "wide_n").string(),
                            "--quiet", "--tune", "none"});
  REQUIRE(r.exit_code == 0);
  const auto wide_n = nlohmann::json::parse(test::read_file(dir.path / "wide_n" / "k.json"))["choice"];
  CHECK(wide_n["family"] == "generic");
  CHECK(wide_n["products_per_b_load"].get<double>() < 1.4);
  CHECK_THAT(wide_n["family_why"].get<std::string>(), Catch::Contains("share few columns"));
  // A denser layer whose tiles share columns (0.9: about 2 products per load) fills the GPU at n = 6272: unrolled.
  const fs::path dense = dir.path / "dense.mtx";
  REQUIRE(run_spmmc({"gen", "uniform", "--rows", "512", "--cols", "1024", "--sparsity", "0.9", "--seed", "3", "-q", "-o",
                     dense.string()}).exit_code == 0);
  const auto d = run_spmmc({"compile", dense.string(), "--n", "6272", "--name", "k", "-o", (dir.path / "dense").string(),
                            "--quiet", "--tune", "none", "--fmas-per-kernel", "0", "--max-compile-seconds", "100000"});
  REQUIRE(d.exit_code == 0);
  const auto dj = nlohmann::json::parse(test::read_file(dir.path / "dense" / "k.json"))["choice"];
  CHECK(dj["family"] == "unrolled");
  CHECK(dj["products_per_b_load"].get<double>() >= 1.4);
  CHECK_THAT(dj["family_why"].get<std::string>(), Catch::Contains("(at least 75%)"));
  // Below 8192 non-zeros the rule does not apply (not measured there): unrolled (7078 non-zeros).
  const fs::path small = dir.path / "small.mtx";
  REQUIRE(run_spmmc({"gen", "uniform", "--rows", "512", "--cols", "4608", "--sparsity", "0.997", "--seed", "3", "-q", "-o",
                     small.string()}).exit_code == 0);
  const auto s = run_spmmc({"compile", small.string(), "--n", "1568", "--name", "k", "-o", (dir.path / "small").string(),
                            "--quiet"});
  REQUIRE(s.exit_code == 0);
  const auto sj = nlohmann::json::parse(test::read_file(dir.path / "small" / "k.json"))["choice"];
  CHECK(sj["family"] == "unrolled");
  CHECK_THAT(sj["family_why"].get<std::string>(), Catch::Contains("fewer than 8192 non-zeros"));
}

TEST_CASE("compile cli: --family is checked", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  const auto usage = [&](std::vector<std::string> extra, const std::string& why) {
    std::vector<std::string> args = {"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "p").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto e = run_spmmc(args);
    INFO(e.err);
    CHECK(e.exit_code == 64);
    CHECK_THAT(e.err, Catch::Contains(why));
    CHECK(!fs::exists(dir.path / "p" / "k.cu"));
  };
  usage({"--family", "csr"}, "--family csr: expected auto (default), unrolled, generic, balanced or tensor-core");
  usage({"--family", "unrolled", "--piece-length", "64"}, "--piece-length is the balanced family's");
  usage({"--family", "generic", "--balanced-groups", "2"}, "--balanced-groups is the balanced family's");
  usage({"--family", "balanced", "--balanced-groups", "3"}, "--balanced-groups 3: expected 1, 2 or 4");
  usage({"--family", "balanced", "--tune", "model"}, "--family balanced has no tile to tune");
  usage({"--family", "generic", "--tile", "16x64"}, "--family generic has no tile to fix");
  usage({"--family", "generic", "--k-parts", "2"}, "the generic family has none");
  usage({"--family", "generic", "--generic-below", "-1"}, "--generic-below");  // checked though the family has no unrolled path
  usage({"--flush-l2", "--no-flush-l2"}, "give --flush-l2 or --no-flush-l2, not both");
  usage({"--finalists", "-1"}, "--finalists must be in [0, 1048576], got -1");
}

TEST_CASE("compile cli: the automatic split keeps every kernel within the loads the guard was fitted on",
          "[cli][compile]") {
  // 512 x 4608 at sparsity 0.98 (like the ResNet-50 3x3 layers of group 4): ~47k non-zeros whose
  // 16-row tiles load ~38k rows of B in all. At n = 1568 it runs ~15 us, so the run-time rule
  // alone gives one kernel, but a kernel of that many loads took ptxas past 10 minutes (2.7x the
  // guard's fit): the split is refined until no kernel has more than kMaxLoadsPerKernel loads.
  test::TempDir dir;
  const fs::path m = dir.path / "wide.mtx";
  const auto g = run_spmmc({"gen", "uniform", "--rows", "512", "--cols", "4608", "--sparsity", "0.98", "--seed", "3", "-q",
                            "-o", m.string()});
  REQUIRE(g.exit_code == 0);
  const auto r = run_spmmc({"compile", m.string(), "--n", "1568", "--name", "k", "-o", (dir.path / "o").string(), "--tile",
                            "16x512", "--quiet"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(test::read_file(dir.path / "o" / "k.json"));
  const int64_t kernels = j["kernel"]["kernels"], loads = j["kernel"]["loads_per_thread"];
  CHECK(default_fmas_per_kernel(j["input"]["nnz"].get<int64_t>(), 1568) == j["input"]["nnz"].get<int64_t>());
  CHECK(loads > 2 * kMaxLoadsPerKernel);
  CHECK(kernels >= 3);
  CHECK(loads <= kernels * (kMaxLoadsPerKernel + kMaxLoadsPerKernel / 4));  // equal parts, up to the tile grain
  // An explicit split is the user's: one kernel stays one kernel.
  const auto one = run_spmmc({"compile", m.string(), "--n", "1568", "--name", "k", "-o", (dir.path / "p").string(), "--tile",
                              "16x512", "--fmas-per-kernel", "0", "--quiet"});
  REQUIRE(one.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(dir.path / "p" / "k.json"))["kernel"]["kernels"] == 1);
}

TEST_CASE("compile cli: --k-parts splits K and is refused where it cannot work", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();  // 64 x 48
  const auto r = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "o").string(), "--k-parts", "3",
                            "--reproducible", "--quiet"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(test::read_file(dir.path / "o" / "k.json"));
  CHECK(j["kernel"]["k_parts"] == 3);
  CHECK(j["kernel"]["k_part_begin"].size() == 4);
  CHECK(j["kernel"]["kernels"].get<int>() >= 3);
  CHECK(test::read_file(dir.path / "o" / "k.cu").find("--k-parts 3 ") != std::string::npos);  // the regenerate line
  const auto usage = [&](std::vector<std::string> extra, const std::string& why) {
    std::vector<std::string> args = {"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "p").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto e = run_spmmc(args);
    INFO(e.err);
    CHECK(e.exit_code != 0);
    CHECK_THAT(e.err, Catch::Contains(why));
    CHECK(!fs::exists(dir.path / "p" / "k.cu"));
  };
  usage({"--k-parts", "0"}, "--k-parts takes an integer in [1, 64]");
  usage({"--k-parts", "x"}, "--k-parts takes an integer in [1, 64]");
  usage({"--k-parts", "2", "--tune", "proxy"}, "needs --tune none");
  usage({"--k-parts", "2", "--target", "l4"}, "needs a target of sm_90 or later");
  usage({"--k-parts", "49"}, "more ranges of K than A has columns (48)");
}

TEST_CASE("compile cli: --dtype fp16 and bf16: the header's types, the report, the rounding and the refusals",
          "[cli][compile][dtype]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  for (const auto& [dtype, c_type, header, info] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"fp16", "__half", "cuda_fp16.h", "float16"}, {"bf16", "__nv_bfloat16", "cuda_bf16.h", "bfloat16"}}) {
    INFO(dtype);
    const fs::path out = dir.path / dtype;
    // n = 4224: 8 windows x 66 blocks of 64 columns = 528 warps, the 4 per SM of the H100's 132 SMs
    // that the tensor-core family needs to be the default.
    const auto r = run_spmmc({"compile", a, "--n", "4224", "--name", "h", "-o", out.string(), "--dtype", dtype, "--reproducible",
                              "--quiet"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string h = test::read_file(out / "h.h");
    CHECK_THAT(h, Catch::Contains("#include <" + header + ">"));
    CHECK_THAT(h, Catch::Contains("cudaError_t h(const " + c_type + "* B, " + c_type + "* C, int64_t n, cudaStream_t stream);"));
    CHECK_THAT(h, Catch::Contains("#define SPMMC_KERNEL_ABI_VERSION 2"));
    const std::string cu = test::read_file(out / "h.cu");
    CHECK_THAT(cu, Catch::Contains("\"" + info + "\","));  // NAME_info()->dtype
    CHECK_THAT(cu, Catch::Contains("--dtype " + dtype));    // the regenerate line
    // The default family of half precision: the tensor cores' MMA of the dtype (8 x 1 vectors).
    CHECK_THAT(cu, Catch::Contains(std::string("#define SPMMC_TC_MMA SPMMC_MMA_M16N8K8_") + (dtype == "fp16" ? "F16" : "BF16")));
    CHECK_THAT(cu, Catch::Contains("\"vector-blocks-constants\""));  // NAME_info()->a_format
    const auto j = nlohmann::json::parse(test::read_file(out / "h.json"));
    CHECK(j["choice"]["family"] == "tensor-core");
    CHECK(j["kernel"]["tensor_core"]["vectors"].get<int64_t>() > 0);
    // The unrolled family on request: 16-bit loads and stores in the tiles.
    const auto u = run_spmmc({"compile", a, "--n", "64", "--name", "u", "-o", out.string(), "--dtype", dtype, "--family",
                              "unrolled", "--quiet"});
    INFO(u.err);
    REQUIRE(u.exit_code == 0);
    CHECK_THAT(test::read_file(out / "u.cu"), Catch::Contains(".b16"));
    CHECK(j["options"]["dtype"] == dtype);
    // auto: the families' kernels timed where a GPU of the target is usable, the rules elsewhere.
    CHECK(j["options"]["tune"] == (GpuContext::available() ? "exhaustive" : "none"));
    CHECK(j["kernel"]["layout"]["dtype"] == info);
    CHECK(j["input"]["rounded_to_dtype"]["values_changed"].get<int64_t>() > 0);  // normal values need more than 11 bits
    CHECK(j["input"]["rounded_to_dtype"]["values_to_zero"] == 0);
  }
  // fp32 stays as it was: float pointers, no rounding report.
  const auto f = run_spmmc({"compile", a, "--n", "64", "--name", "f", "-o", (dir.path / "f").string(), "--reproducible", "--quiet"});
  REQUIRE(f.exit_code == 0);
  CHECK_THAT(test::read_file(dir.path / "f" / "f.h"), Catch::Contains("cudaError_t f(const float* B, float* C, int64_t n"));
  CHECK(!nlohmann::json::parse(test::read_file(dir.path / "f" / "f.json"))["input"].contains("rounded_to_dtype"));

  const auto refused = [&](std::vector<std::string> extra, const std::string& matrix, int code, const std::string& why) {
    std::vector<std::string> args = {"compile", matrix, "--n", "64", "--name", "k", "-o", (dir.path / "p").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto e = run_spmmc(args);
    INFO(e.err);
    CHECK(e.exit_code == code);
    CHECK_THAT(e.err, Catch::Contains(why));
    CHECK(!fs::exists(dir.path / "p" / "k.cu"));
  };
  refused({"--dtype", "fp8"}, a, 64, "--dtype fp8: expected fp32 (default), fp16, bf16 or tf32");
  refused({"--dtype", "bf16", "--target", "rtx2080ti"}, a, 64, "--dtype bf16 needs a target of sm_80 or later");
  refused({"--dtype", "fp16", "--tune", "model"}, a, 64,
          "--tune model ranks or times the unrolled family's tiles in float32; --dtype fp16 times its families' kernels with "
          "--tune exhaustive");
  refused({"--dtype", "bf16", "--tune", "exhaustive", "--family", "unrolled"}, a, 64, "not with --tile, --k-parts or --family unrolled");
  // --tune exhaustive times the families' real kernels: it needs a GPU of the target (exit 69 here, before any work).
  if (!GpuContext::available()) refused({"--dtype", "fp16", "--tune", "exhaustive"}, a, 69, "--tune exhaustive");
  refused({"--dtype", "fp16", "--k-parts", "2", "--tune", "none"}, a, 64, "which --dtype fp16 would round between the ranges");
  refused({"--family", "tensor-core"}, a, 64,
          "--family tensor-core multiplies on FP16, BF16 or TF32 tensor cores: give --dtype fp16, bf16 or tf32");
  refused({"--family", "tensor-core", "--dtype", "fp16", "--target", "rtx2080ti"}, a, 64,
          "--family tensor-core needs a target of sm_80 or later");
  refused({"--family", "tensor-core", "--dtype", "fp16", "--tile", "8x64"}, a, 64, "--family tensor-core has no tile to fix");
  // Fewer warps than that (n = 4160: 520): the tensor cores still, rather than the unrolled family the
  // CUDA-core rule gives this small layer, and the report says why.
  const auto few = run_spmmc({"compile", a, "--n", "4160", "--name", "k", "-o", (dir.path / "w").string(), "--dtype", "fp16",
                              "--quiet"});
  INFO(few.err);
  REQUIRE(few.exit_code == 0);
  const auto fj = nlohmann::json::parse(test::read_file(dir.path / "w" / "k.json"));
  CHECK(fj["choice"]["family"] == "tensor-core");
  CHECK_THAT(fj["choice"]["family_why"].get<std::string>(),
             Catch::Contains("rather than the unrolled family of the CUDA-core rule"));
  CHECK_THAT(fj["choice"]["family_why"].get<std::string>(),
             Catch::Contains("their launch has 520 warps, fewer than 4 per SM on the 132 SMs"));
  // Where the CUDA-core rule takes the generic family (a large layer whose unrolled launch fills little
  // of a wave: about 102k non-zeros at n = 32), the generic family stays.
  const fs::path wide = dir.path / "wide.mtx";
  const auto g = run_spmmc({"gen", "uniform", "--rows", "1000", "--cols", "2048", "--sparsity", "0.95", "--seed", "4", "-q", "-o",
                            wide.string()});
  REQUIRE(g.exit_code == 0);
  const auto gen_few = run_spmmc({"compile", wide.string(), "--n", "32", "--name", "k", "-o", (dir.path / "g").string(), "--dtype",
                                  "fp16", "--quiet"});
  INFO(gen_few.err);
  REQUIRE(gen_few.exit_code == 0);
  const auto gj = nlohmann::json::parse(test::read_file(dir.path / "g" / "k.json"));
  CHECK(gj["choice"]["family"] == "generic");
  CHECK_THAT(gj["choice"]["family_why"].get<std::string>(),
             Catch::Contains("not the tensor cores: their launch would have 125 warps, fewer than 4 per SM on the 132 SMs"));
  // Before sm_80 half precision keeps the CUDA-core kernels.
  const auto old_gpu = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "o").string(), "--dtype", "fp16",
                                  "--target", "rtx2080ti", "--quiet"});
  INFO(old_gpu.err);
  REQUIRE(old_gpu.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(dir.path / "o" / "k.json"))["choice"]["family"] == "unrolled");
  // A value beyond fp16's range is named by row and column (1-based); bf16 takes it.
  const fs::path big = dir.path / "big.mtx";
  test::write_file(big, "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 0.5\n2 3 70000\n3 4 -1e-9\n");
  refused({"--dtype", "fp16"}, big.string(), 65, "the value 70000 of A at row 2, column 3 is beyond the range of fp16");
  const auto b = run_spmmc({"compile", big.string(), "--n", "64", "--name", "k", "-o", (dir.path / "b").string(), "--dtype", "bf16",
                            "--quiet"});
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(dir.path / "b" / "k.json"))["input"]["rounded_to_dtype"]["values_to_zero"] == 0);
  // -1e-9 is below half of fp16's smallest subnormal (2^-25): dropped, and said so.
  const fs::path tiny = dir.path / "tiny.mtx";
  test::write_file(tiny, "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 0.5\n2 3 7\n3 4 -1e-9\n");
  const auto t = run_spmmc({"compile", tiny.string(), "--n", "64", "--name", "k", "-o", (dir.path / "t").string(), "--dtype", "fp16"});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK_THAT(t.err, Catch::Contains("1 values of A are below the smallest fp16 and were dropped"));
  const auto tj = nlohmann::json::parse(test::read_file(dir.path / "t" / "k.json"));
  CHECK(tj["input"]["rounded_to_dtype"]["values_to_zero"] == 1);
  CHECK(tj["input"]["nnz"] == 2);
}

TEST_CASE("compile cli: --dtype tf32: float B and C on the TF32 tensor cores or CUDA cores, and the refusals",
          "[cli][compile][dtype]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  const auto compile = [&](const std::string& folder, std::vector<std::string> extra) {
    std::vector<std::string> args = {"compile", a, "--n", "64", "--name", "t", "-o", (dir.path / folder).string(), "--dtype", "tf32",
                                     "--reproducible", "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_spmmc(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(test::read_file(dir.path / folder / "t.json"));
  };
  // --family tensor-core: the TF32 tensor cores, B rounded in the kernel.
  {
    const nlohmann::json j = compile("tc", {"--family", "tensor-core"});
    const fs::path out = dir.path / "tc";
    const std::string h = test::read_file(out / "t.h");
    CHECK_THAT(h, Catch::Contains("cudaError_t t(const float* B, float* C, int64_t n, cudaStream_t stream);"));
    CHECK_THAT(h, !Catch::Contains("#include <>"));
    CHECK_THAT(h, Catch::Contains("#define SPMMC_KERNEL_ABI_VERSION 2"));  // the rules need no new version
    const std::string cu = test::read_file(out / "t.cu");
    CHECK_THAT(cu, Catch::Contains("\"tfloat32\","));                      // NAME_info()->dtype
    CHECK_THAT(cu, Catch::Contains("--dtype tf32"));                       // the regenerate line
    CHECK_THAT(cu, Catch::Contains("\"vector-blocks-constants\""));        // NAME_info()->a_format
    CHECK_THAT(cu, Catch::Contains("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32"));
    CHECK_THAT(cu, Catch::Contains("cvt.rna.tf32.f32"));
    CHECK_THAT(cu, !Catch::Contains("m16n8k8"));
    CHECK(j["choice"]["family"] == "tensor-core");
    CHECK(j["options"]["dtype"] == "tf32");
    CHECK(j["options"]["tune"] == (GpuContext::available() ? "exhaustive" : "none"));  // timed where a GPU is
    CHECK(j["kernel"]["layout"]["dtype"] == "tfloat32");
    CHECK(j["kernel"]["tensor_core"]["k"] == 4);  // blocks of 4 vectors: the m16n8k4 MMA's K
    CHECK(j["kernel"]["tensor_core"]["mma"] == "m16n8k4.tf32");
    // Every window's vectors in blocks of 4: blocks x 4 = vectors + padding.
    CHECK(j["kernel"]["tensor_core"]["blocks"].get<int64_t>() * 4 ==
          j["kernel"]["tensor_core"]["vectors"].get<int64_t>() + j["kernel"]["tensor_core"]["padding_vectors"].get<int64_t>());
    CHECK(j["input"]["rounded_to_dtype"]["dtype"] == "tf32");
    CHECK(j["input"]["rounded_to_dtype"]["values_changed"].get<int64_t>() > 0);
    CHECK_THAT(j["choice"]["family_why"].get<std::string>(), Catch::Contains("--family tensor-core"));
  }
  // The CUDA-core families: float32's code (no rounding of B, no MMA) with A's immediates rounded to tf32.
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--family", "unrolled"}, {"--tile", "8x64"}, {"--k-parts", "2"}, {"--family", "generic"}}) {
    INFO(extra[0] << " " << extra[1]);
    const nlohmann::json j = compile("cc", extra);
    const std::string cu = test::read_file(dir.path / "cc" / "t.cu");
    const bool generic = extra[1] == "generic";
    CHECK(j["choice"]["family"] == (generic ? "generic" : "unrolled"));
    CHECK(j["kernel"]["layout"]["dtype"] == "tfloat32");
    CHECK_THAT(cu, Catch::Contains("\"tfloat32\","));
    CHECK_THAT(cu, Catch::Contains(generic ? "\"csr-constants\"" : "\"unrolled-constants\""));
    CHECK_THAT(cu, Catch::Contains("B multiplied as given"));
    CHECK_THAT(cu, !Catch::Contains("cvt.rna.tf32.f32"));
    CHECK_THAT(cu, !Catch::Contains("mma.sync"));
    CHECK(j["kernel"]["k_parts"] == (extra[0] == "--k-parts" ? 2 : 1));
  }
  // --family auto without a GPU: the CUDA-core rule (float32's), which ran faster than the TF32 tensor
  // cores on the pruned layers measured; with one, whatever the timing found fastest.
  if (!GpuContext::available()) {
    const nlohmann::json j = compile("auto", {});
    CHECK(j["choice"]["family"] != "tensor-core");
    CHECK_THAT(j["choice"]["family_why"].get<std::string>(), Catch::Contains("--dtype tf32 on CUDA cores"));
    CHECK_THAT(j["choice"]["family_why"].get<std::string>(), Catch::Contains("nothing timed"));
  }
  // The fp16 kernel of the same layer has blocks of 8.
  const auto h = run_spmmc({"compile", a, "--n", "64", "--name", "h", "-o", (dir.path / "h").string(), "--dtype", "fp16", "--family",
                            "tensor-core", "--quiet"});
  REQUIRE(h.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(dir.path / "h" / "h.json"))["kernel"]["tensor_core"]["k"] == 8);

  const auto refused = [&](std::vector<std::string> extra, int code, const std::string& why) {
    std::vector<std::string> args = {"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "p").string(), "--dtype", "tf32"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto e = run_spmmc(args);
    INFO(e.err);
    CHECK(e.exit_code == code);
    CHECK_THAT(e.err, Catch::Contains(why));
    CHECK(!fs::exists(dir.path / "p" / "k.cu"));
  };
  refused({"--target", "rtx2080ti"}, 64, "--dtype tf32 needs a target of sm_80 or later");
  refused({"--family", "tensor-core", "--target", "rtx2080ti"}, 64, "needs a target of sm_80 or later");
  refused({"--tune", "model"}, 64,
          "--tune model ranks or times the unrolled family's tiles in float32; --dtype tf32 times its families' kernels with "
          "--tune exhaustive (what --tune auto does where a GPU of the target is usable; not with --tile, --k-parts or "
          "--family unrolled) or takes the rules");
  refused({"--dtype", "tf64"}, 64, "--dtype tf64: expected fp32 (default), fp16, bf16 or tf32");
  // A value beyond tf32's range (the midpoint above its largest, 0x7f7ff000, and up) is a data error.
  const fs::path big = dir.path / "big.mtx";
  test::write_file(big, "%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 0.5\n2 3 3.4028e38\n");
  const auto e = run_spmmc({"compile", big.string(), "--n", "64", "--name", "k", "-o", (dir.path / "b").string(), "--dtype", "tf32"});
  CHECK(e.exit_code == 65);
  CHECK_THAT(e.err, Catch::Contains("at row 2, column 3 is beyond the range of tf32 (largest finite 3.4012e38)"));
  // `spmmc compile --help` names tf32.
  const auto help = run_spmmc({"compile", "--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("tf32"));
}

TEST_CASE("compile cli: an output folder that cannot be created", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  const fs::path file = dir.path / "plain_file";
  test::write_file(file, "x");
  const auto r = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", (file / "sub").string()});
  CHECK(r.exit_code == 73);
  CHECK_THAT(r.err, Catch::Contains("cannot create the output folder"));
  CHECK(test::read_file(file) == "x");
}

TEST_CASE("compile cli: --reproducible output is byte-identical, and the report", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  for (const std::string out : {"one", "two"}) {
    const auto r = run_spmmc({"compile", a, "--n", "4096", "--name", "layer", "-o", (dir.path / out).string(), "--reproducible"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::StartsWith("spmmc compile: wrote " + (dir.path / out / "layer").string() + ".{cu,h,json,nvcc-options}: 64 x 48"));
  }
  for (const char* ext : {".cu", ".h", ".json", ".nvcc-options"}) {
    INFO(ext);
    const std::string one = test::read_file(dir.path / "one" / (std::string("layer") + ext));
    CHECK(!one.empty());
    CHECK(one == test::read_file(dir.path / "two" / (std::string("layer") + ext)));
  }
  const auto j = nlohmann::json::parse(test::read_file(dir.path / "one" / "layer.json"));
  CHECK(j["schema"] == "spmmc.compile/1");
  CHECK(j["name"] == "layer");
  CHECK(!j.contains("seconds"));
  CHECK(j["input"]["rows"] == 64);
  CHECK(j["input"]["cols"] == 48);
  CHECK(j["input"]["nnz"] == 768);
  CHECK(j["kernel"]["fmas"] == 768);
  CHECK(j["kernel"]["stores_per_thread"] == 64);
  const int m1 = j["choice"]["m1"], n1 = j["choice"]["n1"];
  CHECK(m1 >= 1);
  CHECK(n1 % 32 == 0);
  CHECK(j["choice"]["why"] != "--tile");
  // The unrolled family is built with ptxas -O1: the options file for nvcc, the JSON and the header say so.
  CHECK(test::read_file(dir.path / "one" / "layer.nvcc-options") == "-Xptxas -O1 --split-compile 0\n");
  CHECK(j["build"]["nvcc_options"] == nlohmann::json::array({"-Xptxas", "-O1", "--split-compile", "0"}));
  CHECK(j["build"]["options_file"] == "layer.nvcc-options");
  const std::string cu = test::read_file(dir.path / "one" / "layer.cu");
  CHECK_THAT(cu, Catch::Contains("// Build: nvcc -O3 -arch=sm_90 -Xptxas -O1 --split-compile 0 -c layer.cu"));
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_m1 = " + std::to_string(m1) + ";"));
  const int threads = j["choice"]["threads_per_block"], v = j["choice"]["cols_per_thread"];
  CHECK(threads * v == n1);
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_threads = " + std::to_string(threads) + ";"));
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_v = " + std::to_string(v) + ";"));
  // The register budget: min blocks per SM = 1024 / threads (64 registers per thread), at least 1.
  CHECK(j["choice"]["min_blocks_per_sm"].get<int>() == std::max(1, 1024 / threads));
  CHECK(j["kernel"]["source_bytes"] == cu.size());

  // Without --reproducible the report has the timings; the sources stay identical.
  const auto r = run_spmmc({"compile", a, "--n", "4096", "--name", "layer", "-o", (dir.path / "three").string(), "--quiet"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(nlohmann::json::parse(test::read_file(dir.path / "three" / "layer.json")).contains("seconds"));
  CHECK(test::read_file(dir.path / "three" / "layer.cu") == cu);
  CHECK(test::read_file(dir.path / "three" / "layer.h") == test::read_file(dir.path / "one" / "layer.h"));
}

TEST_CASE("compile cli: --n LO:HI is tuned for HI, lists its batch sizes and its variants", "[cli][compile][small-n]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  const auto r = run_spmmc({"compile", a, "--n", "1:4096", "--name", "layer", "-o", (dir.path / "range").string(),
                            "--tune", "none", "--reproducible"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(test::read_file(dir.path / "range" / "layer.json"));
  CHECK(j["options"]["n"] == 4096);
  CHECK(j["options"]["batch_sizes"] == nlohmann::json::array({1, 4, 16, 64, 256, 1024, 4096}));
  // Without a GPU nothing is timed at the sizes: the rule, and the report says so. Its 4 A-tiles of 512
  // columns reach 0.5 x the H100's 132 SMs only at n = 8448, so the generic path below the largest.
  CHECK(j["kernel"]["tiles"] == 4);
  CHECK(j["kernel"]["generic_below_n"] == 4096);
  CHECK_THAT(j["kernel"]["generic_below_why"].get<std::string>(),
             Catch::Contains("at or above the n it is tuned for (4096)") &&
                 Catch::Contains("(--n 1,4,16,64,256,1024,4096: the kernels were not timed at the sizes)"));
  // The variants in the order the entry point tries them (NAME_info()->variants).
  const nlohmann::json& variants = j["kernel"]["variants"];
  REQUIRE(variants.size() == 6);
  CHECK(variants[0]["kernel"] == "unrolled");
  CHECK(variants[0]["n_min"] == 4096);
  CHECK(variants[1]["kernel"] == "generic-split");
  CHECK(variants[1]["n_max"] == 16);
  CHECK(variants[2]["kernel"] == "generic-warp");
  CHECK(variants[2]["n_min"] == 512);
  CHECK(variants[2]["n_max"] == 0x7fffffff / 4);
  CHECK(variants[3]["kernel"] == "generic-warp-strided");  // the other n of the same range
  CHECK(variants[3]["n_min"] == 512);
  CHECK(variants[3]["n_max"] == 0x7fffffff / 4);
  CHECK(variants[3]["needs"] == "");
  CHECK(variants[4]["kernel"] == "generic-v4");
  CHECK(variants[4]["n_min"] == 128);  // where its launch fills the SMs (and beyond the warp per row)
  CHECK(variants[5]["kernel"] == "generic-v1");
  CHECK(variants[5]["n_min"] == 17);
  // Tuned for the largest: the same tile as --n 4096; the provenance line lists the sizes.
  const auto one = run_spmmc({"compile", a, "--n", "4096", "--name", "layer", "-o", (dir.path / "one").string(),
                              "--tune", "none", "--reproducible"});
  REQUIRE(one.exit_code == 0);
  const auto k = nlohmann::json::parse(test::read_file(dir.path / "one" / "layer.json"));
  CHECK(k["choice"]["m1"] == j["choice"]["m1"]);
  CHECK(k["choice"]["n1"] == j["choice"]["n1"]);
  CHECK(k["options"]["batch_sizes"] == nlohmann::json::array({4096}));
  CHECK_THAT(test::read_file(dir.path / "range" / "layer.cu"), Catch::Contains("--n 1,4,16,64,256,1024,4096 --name layer"));
}

TEST_CASE("compile cli: --tile 8x64 is honoured", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  const auto r = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "out").string(), "--tile", "8x64", "--quiet"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json"));
  CHECK(j["choice"]["m1"] == 8);
  CHECK(j["choice"]["n1"] == 64);
  CHECK(j["choice"]["why"] == "--tile");
  const std::string cu = test::read_file(dir.path / "out" / "k.cu");
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_m1 = 8;"));
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_threads = 64;"));
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_v = 1;"));
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_min_blocks = 16;"));  // the register budget: 1024 / 64
  CHECK_THAT(cu, Catch::Contains("--tile 8x64 --reorder"));  // the regenerate line of the header comment
  CHECK(j["choice"]["min_blocks_per_sm"] == 16);
}

TEST_CASE("compile cli: --tile M1xN1xV and --min-blocks-per-sm are honoured", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();
  const auto r = run_spmmc({"compile", a, "--n", "256", "--name", "k", "-o", (dir.path / "out").string(), "--tile", "4x256x2",
                            "--min-blocks-per-sm", "3", "--quiet"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(test::read_file(dir.path / "out" / "k.json"));
  CHECK(j["choice"]["m1"] == 4);
  CHECK(j["choice"]["n1"] == 256);
  CHECK(j["choice"]["cols_per_thread"] == 2);
  CHECK(j["choice"]["threads_per_block"] == 128);
  CHECK(j["choice"]["min_blocks_per_sm"] == 3);
  const std::string cu = test::read_file(dir.path / "out" / "k.cu");
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_threads = 128;"));
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_v = 2;"));
  CHECK_THAT(cu, Catch::Contains("constexpr int spmmc_min_blocks = 3;"));
  CHECK_THAT(cu, Catch::Contains("--tile 4x256x2 --min-blocks-per-sm 3 --reorder"));
  // --min-blocks-per-sm needs --tile; V must divide N1.
  CHECK(run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "x").string(), "--min-blocks-per-sm", "2"}).exit_code == 64);
  CHECK(run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "x").string(), "--tile", "4x96x4"}).exit_code == 64);
  // 64 rows with 8 per tile: at least 8 tiles.
  CHECK(j["kernel"]["tiles"].get<int>() >= 8);
}

TEST_CASE("compile cli: --fmas-per-kernel splits the code, and auto keeps a short layer whole", "[cli][compile]") {
  test::TempDir dir;
  const std::string a = small_matrix(dir.path).string();  // 768 non-zeros
  const auto compile = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"compile", a, "--name", name, "-o", (dir.path / "out").string(), "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_spmmc(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return std::make_pair(nlohmann::json::parse(test::read_file(dir.path / "out" / (name + ".json"))),
                          test::read_file(dir.path / "out" / (name + ".cu")));
  };
  // Given: kernels of at most 100 FMAs (768 / 100: at least 8), recorded in the report and the
  // provenance; 0: one kernel.
  const auto [split, split_cu] = compile("split", {"--n", "64", "--tile", "4x64", "--fmas-per-kernel", "100"});
  CHECK(split["kernel"]["fmas_per_kernel"] == 100);
  CHECK(split["kernel"]["kernels"].get<int>() >= 8);
  CHECK_THAT(split_cu, Catch::Contains("--tile 4x64 --fmas-per-kernel 100 --reorder"));
  CHECK_THAT(split_cu, Catch::Contains(fmt::format("constexpr int spmmc_kernel_count = {};", split["kernel"]["kernels"].get<int>())));
  const auto [one, one_cu] = compile("one", {"--n", "64", "--tile", "4x64", "--fmas-per-kernel", "0"});
  CHECK(one["kernel"]["kernels"] == 1);
  CHECK_THAT(one_cu, Catch::Contains("constexpr int spmmc_kernel_count = 1;"));
  // auto (the default): this short layer runs far below the time two launches cost, so one kernel
  // (F = the minimum, 4096 FMAs); auto is not recorded in the provenance.
  const auto [small_n, small_cu] = compile("auto_small", {"--n", "64"});
  CHECK(small_n["kernel"]["kernels"] == 1);
  CHECK(small_n["kernel"]["fmas_per_kernel"] == 4096);
  CHECK_THAT(small_cu, !Catch::Contains("--fmas-per-kernel"));
  // Bad values are usage errors, naming the option.
  for (const char* bad : {"-1", "many", "1.5"}) {
    const auto r = run_spmmc({"compile", a, "--n", "64", "--name", "k", "-o", (dir.path / "x").string(), "--fmas-per-kernel", bad});
    CHECK(r.exit_code == 64);
    CHECK_THAT(r.err, Catch::Contains("--fmas-per-kernel"));
  }
  CHECK(empty_or_absent(dir.path / "x"));
}

}  // namespace
}  // namespace spmmc

namespace spmmc {

TEST_CASE("compile cli: tuning modes that need a GPU fail at once without one", "[cli][compile][tune]") {
  std::string why;
  if (GpuContext::available(&why)) {
    WARN("a GPU is usable here; the no-GPU refusal is not exercised");
    return;
  }
  test::TempDir dir;
  const std::string out = (dir.path / "out").string();
  // The matrix does not exist: the GPU check comes before reading it.
  for (const char* mode : {"proxy", "exhaustive"}) {
    const auto r = run_spmmc({"compile", (dir.path / "absent.mtx").string(), "--n", "64", "--name", "k", "-o", out,
                              "--tune", mode});
    INFO(r.err);
    CHECK(r.exit_code == 69);
    CHECK_THAT(r.err, Catch::Contains(std::string("--tune ") + mode) && Catch::Contains("--tune none"));
    CHECK(empty_or_absent(out));
  }
}

}  // namespace spmmc
