// spmmc compile FILE --n N --name NAME -o DIR: the whole pipeline, one stage per line:
// read -> plan (reorder, tile space, constraints) -> choose a tile -> size guard -> emit -> write.
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "codegen/generic_launch.h"
#include "codegen/print_tensor_core.h"
#include "codegen/size_guard.h"
#include "compiler/common/dtype.h"
#include "compiler/common/output_set_lock.h"
#include "compiler/common/reserved_names.h"
#include "compiler/common/sha256.h"
#include "compiler/common/text_scanner.h"
#include "compiler/common/write_file_atomically.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/planning/batch_sizes.h"
#include "compiler/planning/choose_tile.h"
#include "compiler/planning/matrix_stats.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/small_n_dispatch.h"
#include "runtime/cuda_driver.h"
#include "tools/spmmc/commands.h"
#include "tools/spmmc/json_fields.h"
#include "tools/spmmc/tune_stage.h"
#include "tools/spmmc/write_depfile.h"
#include "tuner/choose_by_model.h"
#include "tuner/compare_with_heuristic.h"
#include "tuner/compare_with_sgemm.h"
#include "tuner/decide_balanced.h"
#include "tuner/generic_candidate.h"

namespace spmmc::cli {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point& start) {
  const auto now = Clock::now();
  const double s = std::chrono::duration<double>(now - start).count();
  start = now;
  return s;
}

// "32x128" -> (32, 128, V = 1); "32x1024x4" -> (32, 1024, V = 4); a usage error otherwise.
TileCandidate parse_tile(const std::string& text) {
  std::vector<int64_t> parts;
  size_t start = 0;
  bool ok = true;
  while (ok) {
    const size_t x = text.find('x', start);
    int64_t value = 0;
    ok = parse_int64(text.substr(start, x == std::string::npos ? std::string::npos : x - start), value);
    parts.push_back(value);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (!ok || parts.size() < 2 || parts.size() > 3 || parts[0] < 1 || parts[0] > 1024 || parts[1] < 1 || parts[1] > 4096 ||
      (parts.size() == 3 && parts[2] != 1 && parts[2] != 2 && parts[2] != 4) ||
      (parts.size() == 3 && parts[1] % parts[2] != 0))
    fail_usage("--tile expects M1xN1 or M1xN1xV (M1 in [1, 1024], N1 in [1, 4096], V in {{1, 2, 4}} dividing N1), e.g. "
               "32x128 or 32x1024x4; got '{}'", text);
  TileCandidate t;
  t.m1 = static_cast<int32_t>(parts[0]);
  t.n1 = static_cast<int32_t>(parts[1]);
  if (parts.size() == 3) t.cols_per_thread = static_cast<int32_t>(parts[2]);
  return t;
}

// The planned candidate for a tile the user forced: planned alone, so any M1 works. A tile that
// cannot launch (hardware rules) is a usage error; other rejections are warnings.
// `min_blocks_per_sm`: --min-blocks-per-sm, or 0 for the register budget's (tile_space.h).
Plan plan_forced_tile(const Csr& a, const Target& target, PlanOptions options, const TileCandidate& tile,
                      int32_t min_blocks_per_sm) {
  options.axes.m1 = {tile.m1};
  options.axes.n1 = {tile.n1};
  options.axes.cols_per_thread = {tile.cols_per_thread};
  options.axes.min_blocks_per_sm = min_blocks_per_sm;
  Plan plan = plan_tiles(a, target, options);
  const Verdict& v = plan.candidates.front().verdict;
  if (tile.threads_per_block() % target.warp_size != 0 || tile.threads_per_block() > target.max_threads_per_block)
    fail_usage("--tile {}: N1 / V (threads per block) must be a multiple of the warp size {} and at most {}", tile.label(),
               target.warp_size, target.max_threads_per_block);
  if (!v.accepted()) print_warning(fmt::format("--tile {} fails the {} constraint ({}); emitting it anyway", tile.label(),
                                               constraint_name(v.rejected_by), v.reason));
  return plan;
}

int run_compile(const Args& args) {
  const std::string& path = args.positional.at(0);
  if (!args.has("--n")) fail_usage("spmmc compile needs --n N (the number of columns of B and C it is tuned for)");
  const auto name = args.get("--name");
  if (!name) fail_usage("spmmc compile needs --name NAME (the C name of the kernel)");
  if (!is_c_identifier(*name)) fail_usage("--name '{}' is not a C identifier (letters, digits, _; not starting with a digit or __; no C or C++ keyword)", *name);
  // Names the emitted file cannot own: the CUDA toolkit's, the C library's, its own (compiler/common/reserved_names.h).
  if (const auto clash = reserved_name_clash(*name)) fail_usage("--name '{}' {}", *name, *clash);
  const auto out_dir = args.get("--output");
  if (!out_dir) fail_usage("spmmc compile needs -o DIR (where NAME.cu, NAME.h, NAME.json and NAME.nvcc-options go)");
  const Target target = target_from(args);
  // --family balanced is the generic family's file with the balanced kernel (codegen/families/balanced): every
  // rule of --family generic applies to it.
  const std::string family_arg = args.get_or("--family", "auto");
  if (family_arg != "auto" && family_arg != "unrolled" && family_arg != "generic" && family_arg != "balanced" &&
      family_arg != "tensor-core")
    fail_usage("--family {}: expected auto (default), unrolled, generic, balanced or tensor-core", family_arg);
  const bool balanced_asked = family_arg == "balanced";
  const std::string family = balanced_asked ? "generic" : family_arg;
  if (args.has("--piece-length") && !balanced_asked && family != "auto")
    fail_usage("--piece-length is the balanced family's; give --family balanced or auto");
  if (args.has("--balanced-groups") && !balanced_asked && family != "auto")
    fail_usage("--balanced-groups is the balanced family's; give --family balanced or auto");
  const std::optional<std::string> groups_arg = args.get("--balanced-groups");
  if (groups_arg && *groups_arg != "1" && *groups_arg != "2" && *groups_arg != "4")
    fail_usage("--balanced-groups {}: expected 1, 2 or 4", *groups_arg);
  // B's and C's elements (docs/design/precision.md); A's values are rounded to it after reading.
  DType dtype = DType::kFp32;
  if (!parse_dtype(args.get_or("--dtype", "fp32"), dtype))
    fail_usage("--dtype {}: expected fp32 (default), fp16, bf16 or tf32", args.get_or("--dtype", "fp32"));
  // tf32 allows what cuBLAS does when TF32 is allowed: A rounded to tf32 here, and the kernel the
  // faster of the TF32 tensor cores (B rounded too) and float32's CUDA-core families (B as given):
  // docs/design/precision.md.
  const bool tf32 = dtype == DType::kTf32;
  if (dtype_min_sm(dtype) > 0 && target_sm(target.arch) < dtype_min_sm(dtype))
    fail_usage("--dtype {} needs a target of sm_{} or later (its conversions); the target {} is {}", dtype_name(dtype),
               dtype_min_sm(dtype), target.name, target.arch);
  // The tensor-core family (docs/design/precision.md): half precision, MMA of sm_80 and later; what
  // --family auto may take for fp16 and bf16 where the tile is not forced (decided after reading A:
  // kTensorCoreMinWarpsPerSm).
  const bool tensor_core_asked = family == "tensor-core";
  const bool tensor_core_possible = family == "auto" && dtype_is_half(dtype) && target_sm(target.arch) >= 80 &&
                                    !args.has("--tile") && !args.has("--k-parts");
  if (tensor_core_asked && dtype == DType::kFp32)
    fail_usage("--family tensor-core multiplies on FP16, BF16 or TF32 tensor cores: give --dtype fp16, bf16 or tf32");
  if (tensor_core_asked && target_sm(target.arch) < 80)
    fail_usage("--family tensor-core needs a target of sm_80 or later (its MMA instructions); the target {} is {}", target.name,
               target.arch);
  // The tensor-core family's window height (rows of A per warp): 8, 16 (two MMAs on each fragment of
  // B: fp16 and bf16) or auto (decided after reading A).
  const std::string window_rows_arg = args.get_or("--window-rows", "auto");
  if (window_rows_arg != "auto" && window_rows_arg != "8" && window_rows_arg != "16")
    fail_usage("--window-rows {}: expected 8, 16 or auto (default)", window_rows_arg);
  if (window_rows_arg == "16" && tf32)
    fail_usage("--window-rows 16 runs two m16n8k8 MMAs per block of 8 vectors (fp16, bf16); --dtype tf32's m16n8k4 kernel "
               "has windows of 8 rows");
  if (args.has("--window-rows") && !dtype_is_half(dtype) && !tf32)
    fail_usage("--window-rows shapes the tensor-core family's windows: give --dtype fp16, bf16 or tf32");
  int64_t k_parts = 1;  // the split along K
  if (auto kp = args.get("--k-parts"))
    if (!parse_int64(*kp, k_parts) || k_parts < 1 || k_parts > 64)
      fail_usage("--k-parts takes an integer in [1, 64]; got '{}'", *kp);
  // --tune auto (the default): none where --tile, --family generic or --k-parts leaves no tile to
  // choose; else rank where a GPU of the target's architecture is usable (opened here, once), and the
  // heuristic (none) elsewhere: without a GPU nothing checks a pick against the heuristic's kernel,
  // and the model's own picks lost to it on real layers (on the H100, 30 of the 124 shared layers and
  // graphs: geomean 0.98x, 5 below 0.95x, down to 0.78x; docs/benchmarks.md, issue 25), so the
  // default never takes them; --tune model does where asked.
  const bool tune_auto = args.get_or("--tune", "auto") == "auto";
  bool auto_without_gpu = false;  // --tune auto took the heuristic for want of a usable GPU
  std::unique_ptr<GpuContext> gpu;
  std::string tune = args.get_or("--tune", "auto");
  // fp16, bf16 and tf32 time their families' real kernels (tuner/time_reduced_precision.h): --tune
  // exhaustive, what --tune auto does where a GPU of the target is usable (and --tune none elsewhere).
  const bool timed_families = dtype != DType::kFp32 && family != "unrolled" && !args.has("--tile") && !args.has("--k-parts");
  if (dtype != DType::kFp32 && !tune_auto && tune != "none" && !(tune == "exhaustive" && timed_families))
    fail_usage("--tune {} ranks or times the unrolled family's tiles in float32; --dtype {} times its families' kernels with "
               "--tune exhaustive (what --tune auto does where a GPU of the target is usable{}) or takes the rules (--tune "
               "none)", tune, dtype_name(dtype), "; not with --tile, --k-parts or --family unrolled");
  if (dtype_is_half(dtype) && k_parts > 1)
    fail_usage("--k-parts {} stores partial sums in C, which --dtype {} would round between the ranges; use --dtype fp32",
               k_parts, dtype_name(dtype));
  if (tune_auto) {
    if (timed_families && k_parts == 1) {
      gpu = usable_gpu_for(target);
      tune = gpu ? "exhaustive" : "none";
      auto_without_gpu = !gpu;
    } else if (args.has("--tile") || family == "generic" || tensor_core_asked || k_parts > 1 || dtype != DType::kFp32) {
      tune = "none";
    } else {
      gpu = usable_gpu_for(target);
      tune = gpu ? "rank" : "none";
      auto_without_gpu = !gpu;
    }
  }
  if (tune != "none" && tune != "proxy" && tune != "exhaustive" && tune != "model" && tune != "rank")
    fail_usage("--tune {}: expected auto (default), none (the heuristic), model (the ranker, no GPU), rank (the "
               "ranker's first --top-k, then proxies on the GPU), proxy (time proxies on the GPU) or exhaustive (time "
               "every real kernel)",
               tune);
  const bool ranked = tune == "model" || tune == "rank";
  // With --tune auto, --model is the ranker of the search where a GPU makes it rank (unused without one).
  if (args.has("--model") && !ranked && !tune_auto)
    fail_usage("--model names the ranker of --tune model or rank; give one of them");
  if (args.has("--top-k") && tune != "rank") fail_usage("--top-k is the number of candidates --tune rank times; give --tune rank");
  const auto top_k = static_cast<size_t>(args.get_int("--top-k", 10, 1, 1 << 20));
  if (args.has("--tile") && tune != "none") fail_usage("--tile fixes the tile; it cannot be combined with --tune {}", tune);
  if ((family == "generic" || tensor_core_asked) && (args.has("--tile") || (tune != "none" && !timed_families)))
    fail_usage("--family {} has no tile to {}: it cannot be combined with {}", family_arg, args.has("--tile") ? "fix" : "tune",
               args.has("--tile") ? "--tile" : "--tune " + tune);
  PlanOptions plan_options = planning_options_from(args);
  // --n N, N1,N2,... or LO:HI: tuned for the largest; the others place the small-n dispatch.
  std::string n_error;
  const std::optional<BatchSizes> batch_sizes = parse_batch_sizes(*args.get("--n"), kMaxIndex, n_error);
  if (!batch_sizes) fail_usage("--n {}", n_error);
  plan_options.n = batch_sizes->tune_n;
  SizeLimits limits;
  limits.max_nvcc_seconds = args.get_double("--max-compile-seconds", limits.max_nvcc_seconds, 1.0, 1e7);
  const bool reproducible = args.has("--reproducible");
  const TuningSettings tuning_settings =
      tuning_settings_from(args, tune == "rank" ? kDefaultRankFinalists : kDefaultRealFinalists);
  if (k_parts > 1 && (family == "generic" || tensor_core_asked))
    fail_usage("--k-parts {} splits the unrolled code; the {} family has none", k_parts, family);
  if (k_parts > 1 && tune != "none")
    fail_usage("--k-parts {} needs --tune none: the tuners time candidates without the split along K", k_parts);
  if (k_parts > 1 && !has_dependent_launch(target.arch))
    fail_usage("--k-parts {} needs a target of sm_90 or later (the ranges wait for each other with griddepcontrol); the "
               "target is {}",
               k_parts, target.arch);
  const auto loads_ahead = static_cast<int32_t>(args.get_int("--loads-ahead", kDefaultLoadsAhead, 0, 64));
  // A tuning mode without a usable GPU fails here, before any work (exit 69).
  if (!gpu && tune != "none" && tune != "model") gpu = open_gpu_for_tuning(tune, target);
  // --tune model|rank: the ranker, read (and its schema checked) before any work.
  std::optional<RankerModel> ranker;
  std::string ranker_path;
  if (ranked) {
    ranker_path = args.get_or("--model", default_ranker_path(target).string());
    if (args.has("--model") || std::filesystem::exists(ranker_path)) ranker = RankerModel::load(ranker_path, ranking_schema());
  }

  auto clock = Clock::now();
  Json seconds = Json::object();
  LoadedMatrix m = read_matrix_file(path, read_options_from(args));
  const DTypeRounding rounding = round_values_to_dtype(m.csr, dtype, path);
  seconds["read"] = seconds_since(clock);
  if (m.csr.nnz() == 0)
    throw UserError(ExitCode::kDataError, SourceLocation::whole(path),
                    rounding.to_zero > 0 ? fmt::format("every value of A rounds to zero in {}: there is nothing to compile", dtype_name(dtype))
                                         : std::string("the matrix has no non-zeros: there is nothing to compile"));
  // --family auto in half precision: the tensor cores where their launch has warps enough.
  const int64_t tc_warps = tensor_core_possible ? tensor_core_warps(m.csr, plan_options.n) : 0;
  const bool tensor_core_by_rule = tensor_core_possible && tc_warps >= kTensorCoreMinWarpsPerSm * target.sm_count;
  // fp16 and bf16 below the warps, and tf32: decided with the CUDA-core rule (and by timing with a GPU).
  bool tensor_core = tensor_core_asked || tensor_core_by_rule;
  const bool auto_split = args.get_or("--fmas-per-kernel", "auto") == "auto";
  int64_t fmas_per_kernel =
      auto_split ? default_fmas_per_kernel(m.csr.nnz(), plan_options.n, target.arch) : args.get_int("--fmas-per-kernel", 0, 0, kMaxIndex);
  plan_options.fmas_per_kernel = fmas_per_kernel;
  if (k_parts > m.csr.cols)
    throw UserError(ExitCode::kDataError, SourceLocation::whole(path),
                    fmt::format("--k-parts {} asks for more ranges of K than A has columns ({})", k_parts, m.csr.cols));
  int64_t min_blocks = 0;  // the register budget's
  if (auto b = args.get("--min-blocks-per-sm"))
    if (!args.has("--tile") || !parse_int64(*b, min_blocks) || min_blocks < 1 || min_blocks > 32)
      fail_usage("--min-blocks-per-sm takes an integer in [1, 32] and needs --tile; got '{}'", *b);
  const Plan plan = args.has("--tile") ? plan_forced_tile(m.csr, target, plan_options, parse_tile(*args.get("--tile")),
                                                          static_cast<int32_t>(min_blocks))
                                       : plan_tiles(m.csr, target, plan_options);
  seconds["plan"] = seconds_since(clock);
  std::string why = "--tile";
  const PlannedCandidate* chosen = nullptr;
  // With the automatic split, a tile fits when its finest split does (see below).
  const auto fits_size_guard = [&](const PlannedCandidate& c) {
    return estimate_unrolled_size(m.csr, plan.for_m1(c.tile.m1).after, c.tile, auto_split ? kMinFmasPerKernel : fmas_per_kernel)
               .nvcc_seconds <= limits.max_nvcc_seconds;
  };
  // The family rule of --tune none for a tile (auto): generic where the unrolled launch leaves the GPU
  // short of warps and A is large, or where the unrolled code would exceed the compile-time limit.
  const bool family_auto = family == "auto" && !args.has("--tile") && k_parts == 1 && !tensor_core_by_rule;
  const auto family_by_rule = [&](const PlannedCandidate& c, std::string& rule_why) {
    const double fill = unrolled_wave_fill(plan.for_m1(c.tile.m1).tiling.num_blocks(), plan_options.n, c.tile, target);
    const bool by_fill = fill < kGenericBelowWaveFill && m.csr.nnz() >= kGenericMinNonZeros;
    rule_why = fmt::format("auto: the unrolled launch of tile {} fills {:.0f}% of one wave of blocks on the {} SMs{}",
                           c.tile.label(), 100.0 * fill, target.sm_count,
                           fill >= kGenericBelowWaveFill ? fmt::format(" (at least {:.0f}%)", 100.0 * kGenericBelowWaveFill)
                           : by_fill ? fmt::format(" (below {:.0f}%)", 100.0 * kGenericBelowWaveFill)
                                     : fmt::format(", but A has fewer than {} non-zeros", kGenericMinNonZeros));
    if (by_fill) return true;
    const double finest = estimate_unrolled_size(m.csr, plan.for_m1(c.tile.m1).after, c.tile,
                                                 auto_split ? kMinFmasPerKernel : fmas_per_kernel).nvcc_seconds;
    if (finest > limits.max_nvcc_seconds) {  // fits_size_guard's test, with the number for the message
      rule_why = fmt::format("auto: the unrolled code of tile {} would take about {:.0f} s of nvcc, above the limit of {:.0f} s",
                             c.tile.label(), finest, limits.max_nvcc_seconds);
      return true;
    }
    return false;
  };
  // The heuristic's pick (--tune none's tile and family): what --tune none emits, and what every
  // other mode is measured against and falls back to (docs/design/tuning.md).
  std::string heuristic_why, heuristic_family_why;
  const PlannedCandidate* heuristic = args.has("--tile") ? nullptr : choose_tile_by_heuristic(plan, target, fits_size_guard, heuristic_why);
  const bool heuristic_generic = heuristic && family_auto && family_by_rule(*heuristic, heuristic_family_why);
  // The balanced family's piece length (codegen/families/balanced/balanced_schedule.h).
  const int32_t piece_length = static_cast<int32_t>(args.get_int("--piece-length", default_piece_length(m.csr), 1, 1 << 30));
  // and its pieces per warp: as given, else (below) the fastest timed, else its rule for --n
  const std::optional<int32_t> groups_given =
      groups_arg ? std::optional<int32_t>(std::stoi(*groups_arg)) : std::nullopt;
  Json tuning;
  std::optional<TuningResult> tuned;  // with --tune rank|proxy|exhaustive
  std::optional<Decision> decision;   // what the timed search or the model decided against the heuristic
  bool model_generic = false;         // --tune model ranked the generic family first
  if (args.has("--tile")) {
    chosen = &plan.candidates.front();
  } else if (gpu && dtype == DType::kFp32) {
    std::vector<const PlannedCandidate*> candidates;
    if (tune == "rank" && !ranker)  // said even under --tune auto: the fallback times every survivor's proxy
      print_warning(fmt::format("--tune rank: no ranker for the target '{}' ({} does not exist; train one with spmmc "
                                "train-ranker, docs/design/ranker.md): timing proxies over every survivor",
                                target.name, ranker_path));
    TuneRequest request;
    request.mode = tune;
    request.n = plan_options.n;
    request.fmas_per_kernel = fmas_per_kernel;
    request.time_generic = family == "auto";  // the generic family's kernel is a contender
    request.balanced_piece_length = family_auto ? piece_length : 0;  // and the balanced family's, after the decision
    if (groups_given) request.balanced_groups = {*groups_given};
    request.quiet = args.has("--quiet");
    request.ranker = ranker ? &*ranker : nullptr;
    request.top_k = top_k;
    request.heuristic = heuristic;
    request.heuristic_generic = heuristic_generic;
    request.emittable = fits_size_guard;
    request.batch_sizes.assign(batch_sizes->points.begin(), batch_sizes->points.end() - 1);
    if (heuristic) tuned = run_tuning(request, m.csr, plan, target, *gpu, tuning_settings, candidates);
    if (tuned) {
      tuning = tuning_json(tune, *tuned, *gpu);
      if (tune == "rank") tuning["ranker"] = ranker ? Json{{"model", ranker_path}, {"top_k", top_k}} : Json(nullptr);
    }
    if (tuned && tuned->decision) {
      decision = tuned->decision;
      chosen = candidates[static_cast<size_t>(decision->chosen)];
      const std::string search =
          tune == "exhaustive" ? fmt::format("every real kernel of {} candidates", candidates.size())
          : tune == "rank" && ranker ? fmt::format("the proxies of the {} candidates the model ranked first ({})", candidates.size(), ranker_path)
                                     : fmt::format("the proxies of {} candidates", candidates.size());
      why = decision->heuristic_kept ? fmt::format("{} (kept after timing {})", heuristic_why, search)
            : decision->generic      ? fmt::format("the generic family, faster than the heuristic's kernel (timed beside {})", search)
                                     : fmt::format("the fastest of {}, faster than the heuristic's kernel for real", search);
      if (!decision->emitted_ms)
        print_warning(fmt::format("--tune {}: no kernel could be measured (see \"tuning\" in the report); using the heuristic", tune));
    }
  } else if (tune == "model" && ranker) {
    // The generic family is a candidate of the model beside the tiles where the family is free.
    const PlannedCandidate generic_pick = generic_candidate(m.csr, plan, target);
    const ModelChoice by_model =
        choose_tile_by_model(plan, target, *ranker, heuristic, family_auto ? &generic_pick : nullptr, heuristic_generic);
    chosen = by_model.chosen;
    model_generic = by_model.generic;
    why = by_model.why + " (model " + ranker_path + ")";
    // The model scored the pick's unrolled kernel: where the family rule would emit that tile
    // generic, what it scored is not what would be emitted.
    std::string pick_family_why;
    if (heuristic && chosen != heuristic && family_auto && family_by_rule(*chosen, pick_family_why)) {
      why = fmt::format("{}; the model's pick (tile {}) was not taken: the family rule makes it the generic family ({}), "
                        "not the unrolled kernel the model scored", heuristic_why, chosen->tile.label(), pick_family_why);
      chosen = heuristic;
    }
    Decision d;
    d.heuristic_kept = chosen == heuristic && model_generic == heuristic_generic;
    d.generic = model_generic;
    d.why = why;
    decision = d;
  }
  if (!chosen) {
    chosen = heuristic;
    why = heuristic_why;
    if (auto_without_gpu)
      why += " (--tune auto without a usable GPU of the target's architecture takes the heuristic: nothing could check "
             "another pick against its kernel; --tune model takes the ranker's)";
    if (tune == "model") {
      if (!tune_auto)
        print_warning(fmt::format("--tune model: no ranker for the target '{}' ({} does not exist; train one with "
                                  "spmmc train-ranker, docs/design/ranker.md): using the heuristic",
                                  target.name, ranker_path));
      why = "heuristic (no ranker model for the target): " + why;
    }
  }
  if (!chosen)
    throw UserError(ExitCode::kDataError, SourceLocation::whole(path),
                    "every tile candidate exceeds the register limits of the target (see 'spmmc plan'); give --tile");
  seconds[gpu ? "tune" : "choose"] = seconds_since(clock);
  const M1Plan& m1_plan = plan.for_m1(chosen->tile.m1);
  // The family: generic when asked; with a timed search, the kernel it decided for real; else (auto,
  // the tile not forced) --tune none's rule for the chosen tile.
  bool generic = family == "generic";
  std::string family_why = generic                ? "--family generic"
                           : family == "unrolled"  ? "--family unrolled"
                           : tensor_core_by_rule   ? fmt::format("auto: --dtype {} on the tensor cores, whose launch has {} warps "
                                                                 "(at least {} per SM on the {} SMs)", dtype_name(dtype), tc_warps,
                                                                 kTensorCoreMinWarpsPerSm, target.sm_count)
                           : tensor_core_asked     ? "--family tensor-core"
                                                   : "";
  // The balanced family where the search timed its kernel faster than the decided one at every size
  // (tuner/decide_balanced.h); without that measurement, its rule below.
  bool balanced = false;
  const std::optional<BalancedDecision> balanced_timed = tuned ? tuned->balanced_decision : std::nullopt;
  if (tuned && decision && family_auto) {
    const SearchedFamily searched = family_of_search(*tuned);
    generic = searched.generic;
    balanced = searched.balanced;
    family_why = searched.why;
    decision = searched.decision;  // what versus_heuristic reports: the balanced kernel where it is emitted
    if (balanced_timed && tuning.contains("decision")) {
      tuning["decision"]["balanced"] = {{"emitted", balanced}, {"why", balanced_timed->why}};
      if (balanced) tuning["decision"]["emitted"] = "balanced family";
    }
  } else if (family_auto && model_generic) {
    generic = true;
    family_why = "auto: --tune model ranked the generic family's kernel first";
  } else if (family_auto && chosen == heuristic) {
    generic = heuristic_generic;
    family_why = heuristic_family_why;
  } else if (family_auto) {
    generic = family_by_rule(*chosen, family_why);
  } else if (family_why.empty()) {
    family_why = args.has("--tile") ? "--tile" : "--k-parts";
  }
  // Below the warps the tensor cores need, the generic family where the CUDA-core rule takes it, and
  // the tensor cores rather than the unrolled family (faster there too: compiler/planning/choose_tile.h).
  if (tensor_core_possible && !tensor_core_by_rule && generic) {
    family_why += fmt::format("; not the tensor cores: their launch would have {} warps, fewer than {} per SM on the {} SMs",
                              tc_warps, kTensorCoreMinWarpsPerSm, target.sm_count);
  } else if (tensor_core_possible && !tensor_core_by_rule) {
    tensor_core = true;
    family_why = fmt::format("auto: --dtype {} on the tensor cores, rather than the unrolled family of the CUDA-core rule ({}); "
                             "their launch has {} warps, fewer than {} per SM on the {} SMs",
                             dtype_name(dtype), family_why, tc_warps, kTensorCoreMinWarpsPerSm, target.sm_count);
  }
  // tf32's CUDA-core families are float32's code: A rounded to tf32 here, B multiplied as given.
  if (tf32 && !tensor_core && family_auto)
    family_why += "; --dtype tf32 on CUDA cores (float32's code, A rounded to tf32, B multiplied as given), which took "
                  "1.20-1.79x less time than the TF32 tensor cores per sparsity band over the shared DNN layers on an "
                  "H100 (docs/design/precision.md)";
  // fp16, bf16 and tf32 with a GPU time the kernels the file could hold (below), the chosen tile's
  // unrolled kernel among them where the rules pick it, and in tf32 always.
  const bool timed_choice = tune == "exhaustive" && timed_families;
  // The automatic split is made finer (more kernels, less nvcc time) where the layer would
  // otherwise exceed the compile-time limit, or have kernels beyond the loads the size guard's
  // model was fitted on.
  SizeEstimate estimate = estimate_unrolled_size(m.csr, m1_plan.after, chosen->tile, fmas_per_kernel);
  // Neither the generic nor the tensor-core family has unrolled code (no size guard, no split).
  bool unrolled = !generic && !tensor_core;
  while ((unrolled || (timed_choice && tf32 && family == "auto")) && auto_split && fmas_per_kernel > kMinFmasPerKernel &&
         (estimate.nvcc_seconds > limits.max_nvcc_seconds || estimate.kernel_loads > kMaxLoadsPerKernel)) {
    fmas_per_kernel = std::max(kMinFmasPerKernel, fmas_per_kernel / 2);
    estimate = estimate_unrolled_size(m.csr, m1_plan.after, chosen->tile, fmas_per_kernel);
  }
  if (unrolled && family_auto && estimate.nvcc_seconds > limits.max_nvcc_seconds) {
    generic = true;
    family_why = fmt::format("auto: the unrolled code of tile {} would take about {:.0f} s of nvcc, above the limit of {:.0f} s",
                             chosen->tile.label(), estimate.nvcc_seconds, limits.max_nvcc_seconds);
    unrolled = false;
  }
  const SgemmComparison sgemm = tuned ? compare_with_sgemm(*tuned, tune == "exhaustive", generic, balanced) : SgemmComparison{};
  // The tensor-core family's windows: --reorder's method, by default the one that makes the fewest
  // vectors (grow: docs/design/precision.md).
  const ReorderMethod window_method = args.has("--reorder") ? plan_options.reorder : ReorderMethod::kGrow;
  // Windows of 16 rows (fp16, bf16) where the staged kernel runs on them at the tuned n and they fill
  // its blocks' warps: each fragment of B then feeds two MMAs; the direct kernel, and the staged one
  // where its launch would leave the SMs short of blocks or its blocks short of windows, ran slower
  // on them (docs/design/precision.md).
  RowTiling windows;
  if (tensor_core && window_rows_arg != "8" && !tf32) {
    windows = tile_rows(m.csr, 16, window_method);
    if (window_rows_arg == "auto" && !tensor_core_tall_windows(m.csr, windows, dtype, target.sm_count, plan_options.n))
      windows = RowTiling{};
  }
  if (tensor_core && windows.m1 == 0) windows = tile_rows(m.csr, 8, window_method);
  // fp16, bf16 and tf32 with a GPU (--tune exhaustive, what --tune auto does there): the kernels the
  // file could hold (the tensor-core family on windows of 8 rows and, in fp16 and bf16, of 16; the
  // generic family; the chosen tile's unrolled kernel where the rules
  // pick it, and in tf32 always), checked and timed for real; the fastest correct one is emitted, and
  // the report says where cuBLAS's dense GEMM of the dtype beat it (tuner/time_reduced_precision.h).
  std::optional<ReducedPrecisionTuning> reduced;
  RowTiling tc8, tc16;
  if (timed_choice) {
    ReducedPrecisionRequest request;
    request.dtype = dtype;
    request.n = plan_options.n;
    request.arch = target.arch;
    request.sm_count = target.sm_count;
    request.max_compile_seconds = tuning_settings.real_compile_budget;
    int32_t rule = -1;  // --tune none's kernel among them
    const auto add = [&](const ReducedPrecisionCandidate& c, bool is_rule) {
      if (is_rule) rule = static_cast<int32_t>(request.candidates.size());
      request.candidates.push_back(c);
    };
    if (tensor_core_asked || tensor_core_possible || (tf32 && family == "auto")) {
      if (window_rows_arg != "16") {
        tc8 = windows.m1 == 8 ? windows : tile_rows(m.csr, 8, window_method);
        add(ReducedPrecisionCandidate::tensor_core(tc8), tensor_core && windows.m1 == 8);
      }
      if (window_rows_arg != "8" && !tf32) {
        // Where only the direct kernel runs on them too: its registers are fixed in the source, so nvcc's
        // build of the emitted file is NVRTC's, which the timing measures (templates/kernel_tensor_core.cuh).
        tc16 = windows.m1 == 16 ? windows : tile_rows(m.csr, 16, window_method);
        add(ReducedPrecisionCandidate::tensor_core(tc16), tensor_core && windows.m1 == 16);
      }
    }
    if (family == "auto" || family == "generic")
      add(ReducedPrecisionCandidate::generic(plan.for_generic(kGenericRowsPerBlock).tiling), generic);
    // The unrolled kernel: where the rules pick it (the size guard then judges it as emitted), and in
    // tf32 where the size guard would let it be emitted.
    if (family == "auto" && (unrolled || (tf32 && estimate.nvcc_seconds <= limits.max_nvcc_seconds)))
      add(ReducedPrecisionCandidate::unrolled(m1_plan.tiling, chosen->tile, fmas_per_kernel, estimate.nvcc_seconds), unrolled);
    SPMMC_CHECK(rule >= 0, "the rules' kernel is among the timed candidates");
    reduced = run_reduced_precision_tuning(request, rule, m.csr, *gpu, tuning_settings, args.has("--quiet"));
    const ReducedPrecisionCandidate& pick = request.candidates[static_cast<size_t>(reduced->choice.chosen)];
    tensor_core = pick.family == KernelFamily::kTensorCore;
    generic = pick.family == KernelFamily::kGeneric;
    unrolled = pick.family == KernelFamily::kUnrolled;
    windows = tensor_core ? *pick.rows : RowTiling{};
    family_why = reduced->choice.chosen == rule ? family_why + "; " + reduced->choice.why : reduced->choice.why;
    tuning = reduced->json;
  } else if (auto_without_gpu && timed_families) {
    family_why += " (--tune auto without a usable GPU of the target's architecture: the rules, nothing timed)";
  }
  if (unrolled) check_size_guard(estimate, limits, path);
  if (!unrolled) fmas_per_kernel = 0;
  const int32_t window_rows = windows.m1;
  // The generic kernel takes its rows in the order of 16-row tiles (its blocks' rows), as tuning timed it.
  const M1Plan& rows_plan = generic ? plan.for_generic(kGenericRowsPerBlock) : m1_plan;
  // The balanced family where asked, or, where the search did not time it, by its rule where the rules
  // chose the generic family in float32 (codegen/families/balanced/balanced_schedule.h).
  if (generic && !tensor_core && (dtype == DType::kFp32 || tf32)) {
    std::string rule_why;
    if (balanced_asked) {
      balanced = true;
      family_why = "--family balanced";
    } else if (family_auto && !balanced_timed && balanced_by_rule(m.csr, rule_why)) {
      balanced = true;
      family_why += "; the balanced family's kernel by its rule: " + rule_why;
    }
  } else if (balanced_asked) {
    fail_usage("--family balanced takes float32 or tf32 (--dtype {})", dtype_name(dtype));
  }
  const int32_t balanced_groups = groups_given                     ? *groups_given
                                  : tuned && tuned->best_balanced() ? tuned->best_balanced()->first
                                                                    : default_balanced_groups(m.csr, plan_options.n);
  const std::string family_name = tensor_core ? "tensor-core" : balanced ? "balanced" : generic ? "generic" : "unrolled";
  // Below which n the file takes the generic path (the small-n variant): --generic-below, else from
  // the two kernels' times where the search measured both, else half of --n; the tensor-core family
  // only with --generic-below.
  SmallNDispatch small_n;
  if (generic) {
    small_n.why = "the generic family: the generic path at every n";
  } else if (args.has("--generic-below")) {
    small_n.generic_below_n = args.get_int("--generic-below", 0, 0, kMaxIndex);
    small_n.why = "--generic-below";
  } else if (tensor_core) {  // its grid covers n, so its time shrinks with n: not measured against the generic path
    small_n.why = "the tensor-core family: its kernel's grid follows n (not measured against the generic path)";
  } else {
    const bool measured = decision && decision->emitted_ms && tuned && tuned->generic &&
                          tuned->generic->outcome == Outcome::kOk;
    // --n LIST or LO:HI: both kernels at every size where each was timed (TuningResult::batch_sizes).
    std::vector<BatchSizeTime> times;
    if (measured && tuned->batch_sizes.size() + 1 == batch_sizes->points.size()) {
      for (const BatchSizeMeasurement& b : tuned->batch_sizes)
        if (b.family.outcome == Outcome::kOk && b.generic.outcome == Outcome::kOk)
          times.push_back({b.n, b.family.time.median_ms, b.generic.time.median_ms});
      times.push_back({plan_options.n, *decision->emitted_ms, tuned->generic->time.median_ms});
    }
    if (times.size() == batch_sizes->points.size() && times.size() > 1) {
      small_n = choose_generic_below_n(times);
    } else {
      // The file's A-tiles (a tile per range of K with --k-parts), blocks of N1 columns.
      const UnrolledLaunch launch{rows_plan.tiling.num_blocks() * k_parts, chosen->tile.n1, target.sm_count};
      small_n = choose_generic_below_n(plan_options.n, measured ? decision->emitted_ms : std::nullopt,
                                       measured ? std::optional<double>(tuned->generic->time.median_ms) : std::nullopt, launch);
      if (batch_sizes->several())
        small_n.why += fmt::format(" (--n {}: {})", batch_sizes->label(),
                                   measured ? "a size's kernel failed to measure" : "the kernels were not timed at the sizes");
    }
  }

  EmitOptions emit;
  emit.name = *name;
  emit.arch = target.arch;
  emit.weights_sha256 = weights_sha256(m.csr);
  emit.fmas_per_kernel = fmas_per_kernel;
  emit.k_parts = static_cast<int32_t>(k_parts);
  emit.generic_only = generic;
  emit.balanced = balanced;
  emit.piece_length = piece_length;
  emit.balanced_groups = balanced_groups;
  emit.tensor_core = tensor_core;
  emit.loads_ahead = loads_ahead;
  emit.dtype = dtype;
  emit.generic_below_n = small_n.generic_below_n;
  emit.sm_count = target.sm_count;
  emit.tuned_n = plan_options.n;
  emit.provenance = fmt::format(
      "{}.{{cu,h}}: generated by spmmc {} from {}. Do not edit; regenerate with\n"
      "  spmmc compile {} --n {} --name {} {}{}{}{}{} --reorder {} --target {}{}\n"
      "A: {} x {}, {} non-zeros, weights SHA-256 {}\n"
      "C = A * B; B row-major K x n, C row-major M x n, {}.",
      *name, SPMMC_VERSION, std::filesystem::path(path).filename().string(), std::filesystem::path(path).filename().string(),
      batch_sizes->label(), *name, !unrolled ? "--family " + family_name : "--tile " + chosen->tile.label(),
      !unrolled || chosen->tile.min_blocks_per_sm == min_blocks_for_register_budget(chosen->tile.threads_per_block(), target.registers_per_sm)
          ? std::string()
          : fmt::format(" --min-blocks-per-sm {}", chosen->tile.min_blocks_per_sm),
      auto_split || !unrolled ? std::string() : fmt::format(" --fmas-per-kernel {}", fmas_per_kernel),
      k_parts > 1 ? fmt::format(" --k-parts {}", k_parts) : std::string(),
      loads_ahead != kDefaultLoadsAhead && unrolled ? fmt::format(" --loads-ahead {}", loads_ahead) : std::string(),
      reorder_method_name(tensor_core ? window_method : plan_options.reorder), target.name,
      dtype == DType::kFp32 ? std::string() : fmt::format(" --dtype {}", dtype_name(dtype)), m.csr.rows, m.csr.cols, m.csr.nnz(),
      emit.weights_sha256,
      dtype == DType::kFp32 ? std::string("float32")
      : tf32 && tensor_core ? std::string("float32 multiplied as tfloat32 (A rounded to tf32 here, B in the kernel; products "
                                          "summed in float32 on the tensor cores)")
      : tf32 ? std::string("float32, A rounded to tfloat32 here, B multiplied as given (products summed in float32 on CUDA cores)")
             : fmt::format("{} (A rounded to it; products summed in float32)", dtype_info_name(dtype)));
  const EmittedKernel kernel = emit_unrolled_kernel(m.csr, tensor_core ? windows : rows_plan.tiling, chosen->tile, emit);
  seconds["emit"] = seconds_since(clock);

  const MatrixStats stats = compute_matrix_stats(m.csr);
  Json variants = Json::array();  // as NAME_info()->variants lists them
  for (const EmittedKernel::Variant& v : kernel.variants)
    variants.push_back({{"kernel", v.kernel}, {"n_min", v.n_min}, {"n_max", v.n_max}, {"needs", v.needs}});
  Json report = {
      {"schema", "spmmc.compile/1"},
      {"name", *name},
      {"spmmc_version", SPMMC_VERSION},
      {"input",
       {{"file", std::filesystem::path(path).filename().string()},
        {"format", m.report.format},
        {"values", m.report.values_origin},
        {"rows", m.csr.rows},
        {"cols", m.csr.cols},
        {"nnz", m.csr.nnz()},
        {"sparsity", stats.sparsity},
        {"empty_rows", stats.row_lengths.empty},
        {"empty_cols", stats.col_lengths.empty},
        {"row_length_mean", stats.row_lengths.mean},
        {"row_length_cov", stats.row_lengths.cov},
        {"weights_sha256", emit.weights_sha256}}},
      {"options",
       {{"n", plan_options.n},
        {"batch_sizes", batch_sizes->points},
        {"target", target.name},
        {"arch", target.arch},
        {"reorder", std::string(reorder_method_name(plan_options.reorder))},
        {"th_row", plan_options.constraints.max_row_cov},
        {"th_col", plan_options.constraints.max_col_waste},
        {"tune", tune},
        {"tune_auto", tune_auto},
        {"dtype", dtype_name(dtype)}}},
      {"plan",
       {{"all", plan.remaining[0]},
        {"after_register", plan.remaining[1]},
        {"after_hardware", plan.remaining[2]},
        {"after_balance", plan.remaining[3]}}},
      {"choice",
       {{"m1", chosen->tile.m1},
        {"n1", chosen->tile.n1},
        {"cols_per_thread", chosen->tile.cols_per_thread},
        {"threads_per_block", chosen->tile.threads_per_block()},
        {"min_blocks_per_sm", chosen->tile.min_blocks_per_sm},
        {"family", family_name},
        {"family_why", family_why},
        {"why", why},
        {"constraints", chosen->verdict.accepted() ? "all passed" : chosen->verdict.reason},
        {"registers_per_thread_estimate", estimate_registers_per_thread(chosen->tile, plan_options.constraints)},
        {"reordering", {{"before", tiling_json(rows_plan.before)}, {"after", tiling_json(rows_plan.after)}}}}},
      {"kernel",
       {{"layout", {{"b", "row-major K x n"}, {"c", "row-major M x n"}, {"dtype", dtype_info_name(dtype)}}},
        {"tiles", kernel.tiles},
        {"kernels", kernel.kernel_symbols.size()},
        {"fmas_per_kernel", fmas_per_kernel},
        {"k_parts", k_parts},
        {"loads_ahead", unrolled ? loads_ahead : 0},
        {"k_part_begin", kernel.k_part_begin},
        {"generic_below_n", small_n.generic_below_n},
        {"generic_below_why", small_n.why},
        {"variants", variants},
        {"fmas", kernel.fmas},
        {"loads_per_thread", kernel.loads},
        {"stores_per_thread", kernel.stores},
        {"source_bytes", kernel.cu.size()},
        {"estimate", !unrolled ? Json(nullptr) : Json{{"source_bytes", estimate.source_bytes}, {"nvcc_seconds", estimate.nvcc_seconds}}},
        {"size_limit", {{"max_nvcc_seconds", limits.max_nvcc_seconds}}}}},
      {"build", {{"nvcc_options", kernel.nvcc_options}, {"options_file", *name + ".nvcc-options"}}},
  };
  if (balanced)
    report["kernel"]["balanced"] = {{"piece_length", piece_length},
                                    {"warps_per_block", kBalancedWarps},
                                    {"pieces_per_warp", balanced_groups},
                                    {"blocks", kernel.balanced_blocks},
                                    {"rows_cut", kernel.balanced_rows_cut}};
  if (tensor_core)  // the 8 x 1 vectors of the windows (FlashSparse's format; docs/design/precision.md)
    report["kernel"]["tensor_core"] = {{"mma", tf32 ? "m16n8k4.tf32" : dtype == DType::kFp16 ? "m16n8k8.f16" : "m16n8k8.bf16"},
                                       {"k", kernel.tensor_core.k},
                                       {"windows", kernel.tensor_core.windows},
                                       {"window_rows", window_rows},
                                       {"reorder", std::string(reorder_method_name(window_method))},
                                       {"vectors", kernel.tensor_core.vectors},
                                       {"padding_vectors", kernel.tensor_core.padded},
                                       {"blocks", kernel.tensor_core.blocks},
                                       {"kernel", kernel.tensor_core.chunk_rows > 0 ? "staged" : "direct"},
                                       {"chunk_rows", kernel.tensor_core.chunk_rows > 0 ? Json(kernel.tensor_core.chunk_rows) : Json(nullptr)},
                                       {"staged_from_n", kernel.tensor_core.chunk_rows > 0 ? Json(kernel.tensor_core.staged_from_n) : Json(nullptr)},
                                       {"nnz_per_vector", static_cast<double>(m.csr.nnz()) / static_cast<double>(kernel.tensor_core.vectors)}};
  if (dtype != DType::kFp32)  // what rounding A to the dtype did (docs/design/precision.md)
    report["input"]["rounded_to_dtype"] = {{"dtype", dtype_name(dtype)},
                                           {"values_changed", rounding.changed},
                                           {"values_to_zero", rounding.to_zero},
                                           {"max_relative_change", rounding.max_relative_change}};
  if (!tuning.is_null()) {
    if (reproducible) tuning.erase("seconds");
    report["tuning"] = tuning;
  }
  if (!sgemm.json.is_null()) report["sgemm"] = sgemm.json;
  if (reduced && !reduced->choice.dense.is_null()) report["dense_gemm"] = reduced->choice.dense;
  // What tuning gained over the heuristic (--tune none), measured where a GPU timed both.
  const HeuristicComparison versus = compare_with_heuristic(decision, heuristic, heuristic_generic, sgemm);
  if (!versus.json.is_null()) report["versus_heuristic"] = versus.json;

  std::error_code ec;
  std::filesystem::create_directories(*out_dir, ec);
  if (ec) throw UserError(ExitCode::kCantCreate, SourceLocation::whole(*out_dir), fmt::format("cannot create the output folder: {}", ec.message()));
  const std::filesystem::path base = std::filesystem::path(*out_dir) / *name;
  const auto text_writer = [](const std::string& text) {
    return [&text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); };
  };
  {
    // The set NAME.{cu,h,json,nvcc-options} (and the depfile) comes from one run: concurrent compiles of the
    // same NAME into this folder take turns here, and the set is written whole or not at all
    // (docs/user-guide.md, "Concurrent and interrupted runs"). Taking the lock also removes the
    // temporary files of runs that were killed while writing.
    const auto depfile = args.get("--depfile");
    std::vector<std::string> extensions = {".cu", ".h", ".json", ".nvcc-options"};
    if (depfile && std::filesystem::path(*depfile).lexically_normal() == std::filesystem::path(base.string() + ".d").lexically_normal())
      extensions.push_back(".d");
    const OutputSetLock lock(*out_dir, *name, extensions);
    if (!lock.exclusive())
      print_warning(fmt::format("{}: the file system does not support locks; a concurrent compile of '{}' into {} could mix its "
                                "files with these", lock.path().string(), *name, *out_dir));
    if (!reproducible) report["seconds"] = seconds;
    const std::string report_text = report.dump(2) + "\n";
    // The options NAME.cu is meant to be built with, for nvcc --options-file (empty for the generic family).
    std::string options_text;
    for (const std::string& o : kernel.nvcc_options) options_text += (options_text.empty() ? "" : " ") + o;
    if (!options_text.empty()) options_text += "\n";
    write_files_atomically({{base.string() + ".cu", text_writer(kernel.cu)},
                            {base.string() + ".h", text_writer(kernel.h)},
                            {base.string() + ".json", text_writer(report_text)},
                            {base.string() + ".nvcc-options", text_writer(options_text)}});
    if (depfile) {
      std::vector<std::string> inputs = compile_inputs(path, args, target);
      if (ranker) inputs.push_back(ranker_path);  // --tune model|rank: a new model may choose another tile
      write_depfile(*depfile, base.string() + ".cu", inputs);
    }
  }
  if (!args.has("--quiet")) {
    if (tensor_core)
      std::fprintf(stderr,
                   "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, tensor-core family (%s: %d windows of "
                   "%d rows, %lld %d x 1 vectors, %.2f non-zeros each%s), %.1f MB of CUDA\n",
                   base.string().c_str(), m.csr.rows, m.csr.cols, static_cast<long long>(m.csr.nnz()), dtype_name(dtype),
                   kernel.tensor_core.windows, window_rows, static_cast<long long>(kernel.tensor_core.vectors), window_rows,
                   static_cast<double>(m.csr.nnz()) / static_cast<double>(kernel.tensor_core.vectors),
                   kernel.tensor_core.chunk_rows > 0 ? fmt::format("; B staged in shared memory from n = {}", kernel.tensor_core.staged_from_n).c_str() : "",
                   static_cast<double>(kernel.cu.size()) / 1e6);
    else if (balanced)
      std::fprintf(stderr,
                   "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, balanced family (A as CSR constants, "
                   "%d rows cut into pieces of at most %d products; %s), %.1f MB of CUDA\n",
                   base.string().c_str(), m.csr.rows, m.csr.cols, static_cast<long long>(m.csr.nnz()), kernel.balanced_rows_cut,
                   piece_length, family_why.c_str(), static_cast<double>(kernel.cu.size()) / 1e6);
    else if (generic)
      std::fprintf(stderr,
                   "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, generic family (A as CSR constants; %s), "
                   "%.1f MB of CUDA\n",
                   base.string().c_str(), m.csr.rows, m.csr.cols, static_cast<long long>(m.csr.nnz()), family_why.c_str(),
                   static_cast<double>(kernel.cu.size()) / 1e6);
    else
      std::fprintf(stderr,
                   "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, tile %s (%s), %d tiles, %.1f MB of CUDA, "
                   "nvcc about %.0f s\n",
                   base.string().c_str(), m.csr.rows, m.csr.cols, static_cast<long long>(m.csr.nnz()), chosen->tile.label().c_str(),
                   args.has("--tile") ? "--tile" : tune == "none" || (tune == "model" && !ranker) ? "heuristic" : ("--tune " + tune).c_str(), kernel.tiles,
                   static_cast<double>(kernel.cu.size()) / 1e6, estimate.nvcc_seconds);
    if (rounding.to_zero > 0)
      std::fprintf(stderr, "spmmc compile: note: %lld values of A are below the smallest %s and were dropped (rounded to zero)\n",
                   static_cast<long long>(rounding.to_zero), dtype_name(dtype));
    // What tuning gained, measured (issue 25).
    if (!versus.summary.empty()) std::fprintf(stderr, "spmmc compile: timed: %s\n", versus.summary.c_str());
    // Users deserve to know when the pruned layer is not worth it (issue 10).
    if (!sgemm.note.empty()) std::fprintf(stderr, "spmmc compile: note: %s\n", sgemm.note.c_str());
    if (reduced && !reduced->choice.note.empty()) std::fprintf(stderr, "spmmc compile: note: %s\n", reduced->choice.note.c_str());
  }
  return 0;
}

}  // namespace

Command compile_command() {
  Command c;
  c.name = "compile";
  c.summary = "emit the CUDA kernel (NAME.cu, NAME.h, NAME.json, NAME.nvcc-options) for C = A*B: unrolled, generic or tensor-core family";
  c.usage = "spmmc compile FILE --n N --name NAME -o DIR [options]";
  c.description =
      "Reads FILE, plans its tile space (see 'spmmc plan'), picks a tile (--tile, or a documented heuristic),\n"
      "checks the size guard, and writes DIR/NAME.cu (the kernel, needing only the CUDA toolkit), DIR/NAME.h (its\n"
      "C ABI: cudaError_t NAME(const T* B, T* C, int64_t n, cudaStream_t s) and NAME_info(), T of --dtype),\n"
      "DIR/NAME.json (the report) and DIR/NAME.nvcc-options (the options to build NAME.cu with, for nvcc\n"
      "--options-file: -Xptxas -O1 for the unrolled family, none for the generic and tensor-core ones).\n"
      "B is row-major K x n, C row-major M x n; any n >= 1 works at run time, n is what the tile is chosen\n"
      "for, and below --generic-below (default about --n / 2) the file runs its generic path, whose kernels\n"
      "spread small n over more threads (NAME_info()->generic_below_n). Files are written atomically,\n"
      "and the four always come from one run: concurrent compiles of the same NAME into DIR take turns\n"
      "through the lock file DIR/.NAME.lock. NAME.cu and NAME.h are byte-identical for the same inputs\n"
      "and options (NAME.json too with --reproducible).\n"
      "NAME must be a C identifier that the emitted code can own: not a name of the CUDA toolkit (cu*, CU*,\n"
      "nv*, NV*, threadIdx, atomicAdd, ...) or the C library (printf, sinf, ...), not main, not spmmc_*,\n"
      "*_info or *_t. See docs/emitted-code.md and docs/user-guide.md.";
  c.options = {
      {"--n", "N|N1,N2,...|LO:HI", "columns of B and C to tune for (required): one n; or several, tuned for the largest, "
                                   "with the others (a range: HI, HI/4, ... and LO) timed to place the generic path's "
                                   "threshold (with a GPU; else the rule)"},
      {"--generic-below", "N", "take the generic path (A as CSR data) for every n below N (default: where the timed search "
                                "saw it meet the chosen kernel, else --n / 2; 0: only where n or alignment rules the "
                                "kernel out)"},
      {"--name", "NAME", "the C name of the kernel (required)"},
      {"--output|-o", "DIR", "output folder (created if missing; required)"},
      {"--tile", "M1xN1[xV]", "force the tile: M1 rows, N1 columns per block, V columns per thread (N1 / V threads), e.g. "
       "32x128 or 32x1024x4 (default: heuristic over the planning survivors)"},
      {"--min-blocks-per-sm", "B", "with --tile: __launch_bounds__ minimum blocks per SM (caps registers; default: "
       "1024 / threads, i.e. 64 registers per thread)"},
      {"--fmas-per-kernel", "F", "split the unrolled code into kernels of at most F FMAs each, launched in order and "
       "overlapped: nvcc's time grows faster than linearly with one kernel's code, but each kernel costs a launch; 0: one "
       "kernel; default auto: launches within 10% of the estimated run time at --n, kernels of at least 4096 FMAs"},
      {"--family", "F", "the kernel family: unrolled (LO-SpMM's: every weight an immediate in straight-line code), "
       "generic (A as CSR constants in the file, one thread per element of C: builds in seconds, faster where the "
       "unrolled launch leaves the GPU short of warps) or auto (default: with --tune proxy|exhaustive the faster one, "
       "the generic kernel timed beside the candidates; with --tune none generic where the unrolled tile's launch "
       "fills less than 75% of a wave of blocks and A has at least 32768 non-zeros; generic where the unrolled code "
       "would exceed --max-compile-seconds; unrolled otherwise and with --tile or --k-parts) or tensor-core (--dtype "
       "fp16|bf16|tf32 only: FlashSparse's 8 x 1 vectors of A on the tensor cores, the rows grouped by --reorder, default "
       "grow; what auto takes for --dtype fp16|bf16 on sm_80 and later unless --tile is given, and for --dtype tf32 "
       "where a GPU timed it faster than the CUDA-core families; docs/design/precision.md) or balanced (float32 and tf32: "
       "the generic family's file with rows longer than --piece-length cut into pieces that warps of one block sum, "
       "summed in piece order: for graphs and other matrices of uneven rows; what auto takes instead of the generic "
       "family where the rows' coefficient of variation is at least 1.3 and the longest row holds two pieces; "
       "docs/design/balanced.md)"},
      {"--piece-length", "P", "the balanced family's: rows of more than P products are cut into pieces (at most 16 per "
       "row; default 64, 256 where a row has more than 2048 products)"},
      {"--balanced-groups", "G", "the balanced family's pieces per warp, each on 32 / G lanes: 1, 2 or 4 (default: where "
       "--family auto times the family on a GPU, the fastest of the three at --n; else 4 below n = 128 for short even "
       "rows, 2 for 60 000 rows or more, 1 otherwise; docs/design/balanced.md)"},
      {"--window-rows", "R", "the tensor-core family's rows of A per warp: 8, 16 (fp16, bf16: each fragment of B feeds "
       "two MMAs, fewer blocks of 8 vectors per row) or auto (default: 16 where the staged kernel, B in shared memory, "
       "runs on them at --n and they fill 3/4 of its warps; else 8, and for tf32; with a GPU, both timed and the faster "
       "taken)"},
      {"--dtype", "T", "B's and C's elements: fp32 (default), fp16 or bf16 (half precision: A's values rounded to it, the "
       "products summed in float32; the family timed on a GPU, else by rule: --tune), or tf32 (B and C float, what cuBLAS "
       "may do when TF32 is allowed: A's values rounded to tf32 here, then the TF32 tensor cores, which round B too, or "
       "float32's CUDA-core families, which multiply B as given, whichever a GPU timed faster; by rule the CUDA-core "
       "families; products summed in float32; sm_80 and later): docs/design/precision.md"},
      {"--k-parts", "S", "split K into S ranges of about equal non-zeros: each tile becomes one per range, and the tiles "
       "of every range after the first add their sums to C after waiting for the kernels before them (more blocks where "
       "A-tiles x B-tiles are few, e.g. large K at small n; targets of sm_90 and later overlap the ranges; needs --tune "
       "none; default 1)"},
      {"--loads-ahead", "D", "print each load of B D columns ahead of its FMAs in the unrolled code (a software "
       "prefetch that holds at ptxas -O1, which the unrolled family is built with; 0: each load just before its FMAs; "
       "default 4)"},
      {"--model", "FILE", "--tune model|rank: the ranker model (default: <models>/<target>.ranker.json)"},
      {"--top-k", "K", "--tune rank: time the proxies of the K candidates the ranker puts first (default 10)"},
      {"--tune", "MODE",
       "how to choose the tile: auto (default: rank where a GPU of the target's architecture is usable, the "
       "heuristic elsewhere), none (a heuristic; no GPU), model (the LambdaMART ranker's first candidate; no GPU; the heuristic "
       "where the target has no model), rank (the ranker's first --top-k, the fastest of their proxies on the GPU), "
       "proxy (time LO-SpMM proxies on the GPU, then the real kernels of the fastest few: --finalists) or exhaustive "
       "(compile and time every candidate's real kernel; slow). The GPU modes also time cuBLAS SGEMM on the dense "
       "layer (\"sgemm\" in NAME.json) and note when it is faster than the chosen kernel. --dtype fp16|bf16: auto is "
       "exhaustive where a GPU of the target is usable (the tensor-core family on 8- and 16-row windows and the generic "
       "family timed for real, the fastest emitted; cuBLAS HGEMM or BF16 GEMM timed too: \"dense_gemm\" in NAME.json, "
       "and a note when it is faster), none elsewhere"},
  };
  for (auto& o : tuning_option_specs()) c.options.push_back(o);
  for (auto& o : planning_option_specs()) c.options.push_back(o);
  c.options.insert(c.options.end(), {
      {"--max-compile-seconds", "S", "size guard: refuse kernels whose estimated nvcc time exceeds S (default 600)"},
      {"--reproducible", "", "leave stage timings out of NAME.json so that it is byte-identical too"},
      {"--quiet", "", "print nothing on success"},
      {"--depfile", "FILE", "also write a Makefile-style depfile: NAME.cu and the files it was made from"},
  });
  for (auto& o : read_option_specs()) c.options.push_back(o);
  c.min_positional = c.max_positional = 1;
  c.run = run_compile;
  return c;
}

}  // namespace spmmc::cli
