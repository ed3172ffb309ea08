// spmmc collect --out DIR [FILE...] [--generate K]: the tuning database the ranker trains on
// (tuner/collect_problem.h): every planning survivor's real kernel timed, one database file per
// problem, resumable and bounded by a time budget. Needs a GPU.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "compiler/common/write_file_atomically.h"
#include "compiler/formats/read_matrix.h"
#include "runtime/cubin_cache.h"
#include "tools/spmmc/commands.h"
#include "tools/spmmc/tune_stage.h"
#include "tuner/collect_problem.h"

namespace spmmc::cli {
namespace {

// The file of a problem: its id with every character but [A-Za-z0-9._-] made '_', then ".n<n>"
// (plain characters only: the files travel through tools that refuse others).
std::string problem_file_name(const std::string& id, int64_t n) {
  std::string out;
  for (char c : id) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  if (!out.empty() && out[0] == '.') out[0] = '_';  // not a hidden file (a path like ./a.smtx or .data/a.smtx)
  return fmt::format("{}.n{}.jsonl", out, n);
}

struct Problem {
  std::string id;
  int64_t n = 0;
  std::string path;                          // a matrix file, or empty for a generated one
  std::optional<GeneratedProblem> generated;
};

int run_collect(const Args& args) {
  const std::string out_dir = args.get_or("--out", "");
  if (out_dir.empty()) fail_usage("give the database folder: --out DIR (one file per problem; a rerun resumes)");
  const int generate = static_cast<int>(args.get_int("--generate", 0, 0, 1000000));
  if (args.positional.empty() && generate == 0) fail_usage("give matrix files, --generate K, or both");
  std::vector<int64_t> widths;
  for (const std::string& item : args.get_list("--n", "4096")) {
    try {
      size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v < 1 || v > (int64_t{1} << 30)) throw std::invalid_argument(item);
      widths.push_back(v);
    } catch (const std::exception&) {
      fail_usage("--n {}: expected widths in [1, 2^30], separated by commas", args.get_or("--n", ""));
    }
  }
  const double budget = args.get_double("--budget", 3600.0, 0.0, 1e9);
  const int64_t max_nnz = args.get_int("--max-nnz", 40000, 1, int64_t{1} << 31);
  const auto sample = static_cast<size_t>(args.get_int("--sample", 0, 0, 1 << 20));
  CollectFamilies families{false, false, false};
  for (const std::string& item : args.get_list("--families", "unrolled,generic,balanced")) {
    if (item == "unrolled") families.unrolled = true;
    else if (item == "generic") families.generic = true;
    else if (item == "balanced") families.balanced = true;
    else
      fail_usage("--families {}: expected some of unrolled, generic and balanced, separated by commas",
                 args.get_or("--families", ""));
  }
  const TuningSettings settings = tuning_settings_from(args);
  const Target target = target_from(args);
  std::string why;
  if (!GpuContext::available(&why))
    throw UserError(ExitCode::kUnavailable, SourceLocation{},
                    fmt::format("spmmc collect times kernels on a GPU, and none is usable here: {}", why));
  const std::unique_ptr<GpuContext> gpu = GpuContext::open();
  if (gpu->device().arch() != target.arch)
    fail_usage("the GPU here is {} ({}) but the target '{}' is {}; give --target or --arch for this GPU",
               gpu->device().name, gpu->device().arch(), target.name, target.arch);

  std::vector<Problem> problems;
  for (const std::string& path : args.positional)
    for (const int64_t n : widths) problems.push_back({path, n, path, std::nullopt});
  for (const GeneratedProblem& g : generated_problems(generate, args.get_seed("--seed"), max_nnz))
    problems.push_back({g.id, g.n, "", g});

  TuningOptions options;
  options.timing.runs = settings.timing_runs;
  options.timing.flush_l2 = settings.flush_l2;
  options.pool.max_workers = settings.jobs;
  options.max_real_compile_seconds = settings.real_compile_budget;
  options.worker = {"/proc/self/exe", "__measure-worker"};
  std::unique_ptr<CubinCache> cache;
  if (settings.use_cache) {
    cache = std::make_unique<CubinCache>(settings.cache_dir.empty() ? default_cubin_cache_dir()
                                                                     : std::filesystem::path(settings.cache_dir));
    options.cache = cache.get();
  }
  std::filesystem::create_directories(out_dir);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int done = 0, resumed = 0, skipped = 0, beyond = 0, left = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    const Problem& p = problems[i];
    const std::string file = (std::filesystem::path(out_dir) / problem_file_name(p.id, p.n)).string();
    if (std::filesystem::exists(file)) {
      ++resumed;
      continue;
    }
    if (elapsed() > budget) {
      left = static_cast<int>(problems.size() - i);
      break;
    }
    const auto problem_start = elapsed();
    Csr a;
    if (p.generated) {
      a = generate_matrix(p.generated->matrix);
    } else {
      a = read_matrix_file(p.path, read_options_from(args)).csr;
    }
    if (a.nnz() > max_nnz) {
      std::fprintf(stderr, "spmmc collect: [%zu/%zu] %s: %lld non-zeros, above --max-nnz %lld: skipped\n", i + 1,
                   problems.size(), p.id.c_str(), static_cast<long long>(a.nnz()), static_cast<long long>(max_nnz));
      ++skipped;
      continue;
    }
    const CollectedProblem collected = collect_problem(a, p.id, p.n, target, *gpu, options, sample, families);
    if (collected.heuristic_beyond_budget) {
      std::fprintf(stderr,
                   "spmmc collect: [%zu/%zu] %s at n = %lld: the heuristic's real kernel is beyond the compile budget "
                   "of %.0f s (--real-compile-budget): skipped, as a search keeps it unmeasured (%.1f s)\n",
                   i + 1, problems.size(), p.id.c_str(), static_cast<long long>(p.n), options.max_real_compile_seconds,
                   elapsed() - problem_start);
      ++beyond;
      continue;
    }
    int ok = 0;
    for (const std::string& l : collected.lines) ok += l.find("\"outcome\":\"Ok\"") != std::string::npos ? 1 : 0;
    write_file_atomically(file, [&](std::ostream& os) {
      for (const std::string& l : collected.lines) os << l << '\n';
    });
    ++done;
    std::fprintf(stderr, "spmmc collect: [%zu/%zu] %s at n = %lld: %zu candidates, %d Ok, %zu beyond the compile budget, %.1f s\n",
                 i + 1, problems.size(), p.id.c_str(), static_cast<long long>(p.n), collected.lines.size(), ok,
                 collected.beyond_budget, elapsed() - problem_start);
  }
  std::printf("spmmc collect: %d problems collected into %s, %d already there, %d skipped (--max-nnz), %d skipped (the "
              "heuristic beyond the compile budget), %d left by the budget of %.0f s (%.0f s)\n",
              done, out_dir.c_str(), resumed, skipped, beyond, left, budget, elapsed());
  return 0;
}

}  // namespace

Command collect_command() {
  Command c;
  c.name = "collect";
  c.summary = "time every planning survivor's real kernel on the GPU into a tuning database (for train-ranker)";
  c.usage = "spmmc collect --out DIR [FILE ...] [--generate K] [options]";
  c.description =
      "For each problem - every FILE at every width of --n, and K generated matrices (--generate: M and K\n"
      "in 2^6..2^12, sparsity 0.5-0.99, n in 2^8..2^13, four generators, from --seed) - plans the tile\n"
      "space, compiles the real kernel of every survivor (the tiles the ranker ranks; --sample K of them)\n"
      "whose compile is within --real-compile-budget (the budget a search spends on one real kernel: a\n"
      "problem whose heuristic kernel is beyond it is skipped, since a search keeps that kernel unmeasured)\n"
      "and of the heuristic's pick (marked \"heuristic\": true) with NVRTC in parallel, the generic\n"
      "family's kernel (tile \"generic\") and the balanced family's with 1, 2 and 4 pieces per warp (tiles\n"
      "\"balanced-g1\", \"-g2\", \"-g4\"), checks each against float64 and times it (L2 flushed, median of\n"
      "--timing-runs), and writes DIR/<problem>.n<n>.jsonl, one line per candidate (format spmmc.collect/1,\n"
      "docs/design/ranker.md), atomically. --families generic (or balanced) adds those kernels to a database\n"
      "collected before (into another DIR: train-ranker joins a problem's lines across files). Problems whose file\n"
      "exists are skipped, so a rerun resumes; no problem is started after --budget seconds. Needs a GPU\n"
      "(exit 69 without one).";
  c.options = {
      {"--out", "DIR", "the database folder (required)"},
      {"--n", "N[,N...]", "widths for the FILEs (default 4096)"},
      {"--generate", "K", "also K generated problems (default 0)"},
      {"--seed", "S", "seed of the generated problems (default 0)"},
      {"--budget", "S", "start no problem after S seconds (default 3600)"},
      {"--max-nnz", "Z", "skip matrices of more than Z non-zeros (default 40000: every survivor is compiled)"},
      {"--families", "LIST", "the families measured: some of unrolled, generic and balanced (default all three)"},
      {"--sample", "K", "measure at most K candidates per problem, evenly spaced in plan order, besides the "
       "heuristic's pick, which is always measured (default 0: all)"},
      {"--target", "T", "GPU description: a name in models/targets (default h100) or a .json path"},
      {"--arch", "SM", "pick the target by architecture, e.g. sm_90"},
  };
  for (auto& o : tuning_option_specs())
    if (o.name != "--tune-budget" && o.name != "--finalists" && o.name != "--max-candidates")
      c.options.push_back(o);
  for (auto& o : read_option_specs())
    if (o.name != "--seed") c.options.push_back(o);
  c.min_positional = 0;
  c.max_positional = 1 << 20;
  c.run = run_collect;
  return c;
}

}  // namespace spmmc::cli
