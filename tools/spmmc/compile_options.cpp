#include "tools/spmmc/compile_options.h"

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/kernel_program.h"
#include "compiler/common/csr.h"
#include "compiler/common/reserved_names.h"
#include "compiler/common/text_scanner.h"
#include "tuner/choose_by_model.h"

namespace spmmc::cli {
namespace {

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

// --family, --piece-length, --balanced-groups.
void parse_family(const Args& args, CompileOptions& o) {
  o.family_arg = args.get_or("--family", "auto");
  if (o.family_arg != "auto" && o.family_arg != "unrolled" && o.family_arg != "generic" && o.family_arg != "balanced" &&
      o.family_arg != "tensor-core")
    fail_usage("--family {}: expected auto (default), unrolled, generic, balanced or tensor-core", o.family_arg);
  o.balanced_asked = o.family_arg == "balanced";
  o.family = o.balanced_asked ? "generic" : o.family_arg;
  if (args.has("--piece-length") && !o.balanced_asked && o.family != "auto")
    fail_usage("--piece-length is the balanced family's; give --family balanced or auto");
  if (args.has("--balanced-groups") && !o.balanced_asked && o.family != "auto")
    fail_usage("--balanced-groups is the balanced family's; give --family balanced or auto");
  if (const std::optional<std::string> groups = args.get("--balanced-groups")) {
    if (*groups != "1" && *groups != "2" && *groups != "4") fail_usage("--balanced-groups {}: expected 1, 2 or 4", *groups);
    o.balanced_groups = std::stoi(*groups);
  }
  if (args.has("--piece-length")) o.piece_length = args.get_int("--piece-length", 0, 1, 1 << 30);
}

// --dtype, the tensor-core family's conditions, --window-rows.
void parse_precision(const Args& args, CompileOptions& o) {
  // B's and C's elements (docs/design/precision.md); A's values are rounded to it after reading.
  if (!parse_dtype(args.get_or("--dtype", "fp32"), o.dtype))
    fail_usage("--dtype {}: expected fp32 (default), fp16, bf16 or tf32", args.get_or("--dtype", "fp32"));
  // tf32 allows what cuBLAS does when TF32 is allowed: A rounded to tf32 here, and the kernel the
  // faster of the TF32 tensor cores (B rounded too) and float32's CUDA-core families (B as given):
  // docs/design/precision.md.
  o.tf32 = o.dtype == DType::kTf32;
  const Target& target = o.target;
  if (dtype_min_sm(o.dtype) > 0 && target_sm(target.arch) < dtype_min_sm(o.dtype))
    fail_usage("--dtype {} needs a target of sm_{} or later (its conversions); the target {} is {}", dtype_name(o.dtype),
               dtype_min_sm(o.dtype), target.name, target.arch);
  // The tensor-core family (docs/design/precision.md): half precision, MMA of sm_80 and later; what
  // --family auto may take for fp16 and bf16 where the tile is not forced (decided after reading A:
  // kTensorCoreMinWarpsPerSm).
  o.tensor_core_asked = o.family == "tensor-core";
  o.tensor_core_possible = o.family == "auto" && dtype_is_half(o.dtype) && target_sm(target.arch) >= 80 &&
                           !args.has("--tile") && !args.has("--k-parts");
  if (o.tensor_core_asked && o.dtype == DType::kFp32)
    fail_usage("--family tensor-core multiplies on FP16, BF16 or TF32 tensor cores: give --dtype fp16, bf16 or tf32");
  if (o.tensor_core_asked && target_sm(target.arch) < 80)
    fail_usage("--family tensor-core needs a target of sm_80 or later (its MMA instructions); the target {} is {}", target.name,
               target.arch);
  // The tensor-core family's window height (rows of A per warp): 8, 16 (two MMAs on each fragment of
  // B: fp16 and bf16) or auto (decided after reading A).
  o.window_rows = args.get_or("--window-rows", "auto");
  if (o.window_rows != "auto" && o.window_rows != "8" && o.window_rows != "16")
    fail_usage("--window-rows {}: expected 8, 16 or auto (default)", o.window_rows);
  if (o.window_rows == "16" && o.tf32)
    fail_usage("--window-rows 16 runs two m16n8k8 MMAs per block of 8 vectors (fp16, bf16); --dtype tf32's m16n8k4 kernel "
               "has windows of 8 rows");
  if (args.has("--window-rows") && !dtype_is_half(o.dtype) && !o.tf32)
    fail_usage("--window-rows shapes the tensor-core family's windows: give --dtype fp16, bf16 or tf32");
}

// --tune (auto resolved, the GPU opened where it tunes), --model, --top-k, --tile's conflicts.
void parse_tuning(const Args& args, CompileOptions& o) {
  const Target& target = o.target;
  // --tune auto (the default): none where --tile, --family generic or --k-parts leaves no tile to
  // choose; else rank where a GPU of the target's architecture is usable (opened here, once), and the
  // heuristic (none) elsewhere: without a GPU nothing checks a pick against the heuristic's kernel,
  // and the model's own picks lost to it on real layers (on the H100, 30 of the 124 shared layers and
  // graphs: geomean 0.98x, 5 below 0.95x, down to 0.78x; docs/benchmarks.md, issue 25), so the
  // default never takes them; --tune model does where asked.
  o.tune_auto = args.get_or("--tune", "auto") == "auto";
  o.tune = args.get_or("--tune", "auto");
  // fp16, bf16 and tf32 time their families' real kernels (tuner/time_reduced_precision.h): --tune
  // exhaustive, what --tune auto does where a GPU of the target is usable (and --tune none elsewhere).
  o.timed_families = o.dtype != DType::kFp32 && o.family != "unrolled" && !args.has("--tile") && !args.has("--k-parts");
  if (o.dtype != DType::kFp32 && !o.tune_auto && o.tune != "none" && !(o.tune == "exhaustive" && o.timed_families))
    fail_usage("--tune {} ranks or times the unrolled family's tiles in float32; --dtype {} times its families' kernels with "
               "--tune exhaustive (what --tune auto does where a GPU of the target is usable{}) or takes the rules (--tune "
               "none)", o.tune, dtype_name(o.dtype), "; not with --tile, --k-parts or --family unrolled");
  if (dtype_is_half(o.dtype) && o.k_parts > 1)
    fail_usage("--k-parts {} stores partial sums in C, which --dtype {} would round between the ranges; use --dtype fp32",
               o.k_parts, dtype_name(o.dtype));
  if (o.tune_auto) {
    if (o.timed_families && o.k_parts == 1) {
      o.gpu = usable_gpu_for(target);
      o.tune = o.gpu ? "exhaustive" : "none";
      o.auto_without_gpu = !o.gpu;
    } else if (args.has("--tile") || o.family == "generic" || o.tensor_core_asked || o.k_parts > 1 || o.dtype != DType::kFp32) {
      o.tune = "none";
    } else {
      o.gpu = usable_gpu_for(target);
      o.tune = o.gpu ? "rank" : "none";
      o.auto_without_gpu = !o.gpu;
    }
  }
  const std::string& tune = o.tune;
  if (tune != "none" && tune != "proxy" && tune != "exhaustive" && tune != "model" && tune != "rank")
    fail_usage("--tune {}: expected auto (default), none (the heuristic), model (the ranker, no GPU), rank (the "
               "ranker's first --top-k, then proxies on the GPU), proxy (time proxies on the GPU) or exhaustive (time "
               "every real kernel)",
               tune);
  o.ranked = tune == "model" || tune == "rank";
  // With --tune auto, --model is the ranker of the search where a GPU makes it rank (unused without one).
  if (args.has("--model") && !o.ranked && !o.tune_auto)
    fail_usage("--model names the ranker of --tune model or rank; give one of them");
  if (args.has("--top-k") && tune != "rank") fail_usage("--top-k is the number of candidates --tune rank times; give --tune rank");
  o.top_k = static_cast<size_t>(args.get_int("--top-k", 10, 1, 1 << 20));
  if (args.has("--tile") && tune != "none") fail_usage("--tile fixes the tile; it cannot be combined with --tune {}", tune);
  if ((o.family == "generic" || o.tensor_core_asked) && (args.has("--tile") || (tune != "none" && !o.timed_families)))
    fail_usage("--family {} has no tile to {}: it cannot be combined with {}", o.family_arg, args.has("--tile") ? "fix" : "tune",
               args.has("--tile") ? "--tile" : "--tune " + tune);
}

}  // namespace

CompileOptions parse_compile_options(const Args& args) {
  CompileOptions o;
  o.path = args.positional.at(0);
  if (!args.has("--n")) fail_usage("spmmc compile needs --n N (the number of columns of B and C it is tuned for)");
  const auto name = args.get("--name");
  if (!name) fail_usage("spmmc compile needs --name NAME (the C name of the kernel)");
  if (!is_c_identifier(*name)) fail_usage("--name '{}' is not a C identifier (letters, digits, _; not starting with a digit or __; no C or C++ keyword)", *name);
  // Names the emitted file cannot own: the CUDA toolkit's, the C library's, its own (compiler/common/reserved_names.h).
  if (const auto clash = reserved_name_clash(*name)) fail_usage("--name '{}' {}", *name, *clash);
  o.name = *name;
  const auto out_dir = args.get("--output");
  if (!out_dir) fail_usage("spmmc compile needs -o DIR (where NAME.cu, NAME.h, NAME.json and NAME.nvcc-options go)");
  o.out_dir = *out_dir;
  o.target = target_from(args);
  parse_family(args, o);
  parse_precision(args, o);
  if (auto kp = args.get("--k-parts"))
    if (!parse_int64(*kp, o.k_parts) || o.k_parts < 1 || o.k_parts > 64)
      fail_usage("--k-parts takes an integer in [1, 64]; got '{}'", *kp);
  parse_tuning(args, o);
  o.plan = planning_options_from(args);
  o.reorder_given = args.has("--reorder");
  // --n N, N1,N2,... or LO:HI: tuned for the largest; the others place the small-n dispatch.
  std::string n_error;
  const std::optional<BatchSizes> batch_sizes = parse_batch_sizes(*args.get("--n"), kMaxIndex, n_error);
  if (!batch_sizes) fail_usage("--n {}", n_error);
  o.batch_sizes = *batch_sizes;
  o.plan.n = batch_sizes->tune_n;
  o.limits.max_nvcc_seconds = args.get_double("--max-compile-seconds", o.limits.max_nvcc_seconds, 1.0, 1e7);
  o.reproducible = args.has("--reproducible");
  o.quiet = args.has("--quiet");
  o.json = args.has("--json");
  o.depfile = args.get("--depfile");
  o.tuning = tuning_settings_from(args, o.tune == "rank" ? kDefaultRankFinalists : kDefaultRealFinalists);
  if (o.k_parts > 1 && (o.family == "generic" || o.tensor_core_asked))
    fail_usage("--k-parts {} splits the unrolled code; the {} family has none", o.k_parts, o.family);
  if (o.k_parts > 1 && o.tune != "none")
    fail_usage("--k-parts {} needs --tune none: the tuners time candidates without the split along K", o.k_parts);
  if (o.k_parts > 1 && !has_dependent_launch(o.target.arch))
    fail_usage("--k-parts {} needs a target of sm_90 or later (the ranges wait for each other with griddepcontrol); the "
               "target is {}",
               o.k_parts, o.target.arch);
  o.loads_ahead = static_cast<int32_t>(args.get_int("--loads-ahead", kDefaultLoadsAhead, 0, 64));
  o.auto_split = args.get_or("--fmas-per-kernel", "auto") == "auto";
  if (!o.auto_split) o.fmas_per_kernel = args.get_int("--fmas-per-kernel", 0, 0, kMaxIndex);
  if (args.has("--generic-below")) o.generic_below = args.get_int("--generic-below", 0, 0, kMaxIndex);
  if (args.has("--balanced-below")) o.balanced_below = args.get_int("--balanced-below", 0, 0, kMaxIndex);
  if (args.has("--balanced-pairs-below"))
    o.balanced_pairs_below = args.get_int("--balanced-pairs-below", 0, 0, kMaxIndex);
  if (args.has("--balanced-mid-below")) o.balanced_mid_below = args.get_int("--balanced-mid-below", 0, 0, kMaxIndex);
  o.batch_invariant = args.has("--batch-invariant");
  o.arrays = args.get_or("--arrays", "auto");
  if (o.arrays != "auto" && o.arrays != "device" && o.arrays != "host")
    fail_usage("--arrays {}: expected auto (default), device or host", o.arrays);
  o.host_arrays = o.arrays == "host";
  o.arrays_why = "--arrays " + o.arrays;
  if (o.host_arrays && o.family == "tensor-core")
    fail_usage("--arrays host moves the CSR arrays of the unrolled, generic and balanced families; the tensor-core "
               "family's stay constants");
  for (const auto& [flag, value] : {std::pair{"--balanced-below", o.balanced_below},
                                    std::pair{"--balanced-pairs-below", o.balanced_pairs_below},
                                    std::pair{"--balanced-mid-below", o.balanced_mid_below}}) {
    if (value && !(o.dtype == DType::kFp32 || o.dtype == DType::kTf32))
      fail_usage("{} is for float32 and tf32 files (the balanced kernel takes float elements), not {}", flag,
                 dtype_name(o.dtype));
    if (o.batch_invariant && value.value_or(0) > 0)
      fail_usage("--batch-invariant leaves out the balanced small-n path that {} {} asks for", flag, *value);
  }
  if (auto tile = args.get("--tile")) o.tile = parse_tile(*tile);
  if (auto b = args.get("--min-blocks-per-sm")) {
    int64_t min_blocks = 0;
    if (!o.tile || !parse_int64(*b, min_blocks) || min_blocks < 1 || min_blocks > 32)
      fail_usage("--min-blocks-per-sm takes an integer in [1, 32] and needs --tile; got '{}'", *b);
    o.min_blocks_per_sm = static_cast<int32_t>(min_blocks);
  }
  o.read = read_options_from(args);
  // A tuning mode without a usable GPU fails here, before any work (exit 69).
  if (!o.gpu && o.tune != "none" && o.tune != "model") o.gpu = open_gpu_for_tuning(o.tune, o.target);
  // --tune model|rank: the ranker, read (and its schema checked) before any work.
  if (o.ranked) {
    o.ranker_path = args.get_or("--model", default_ranker_path(o.target).string());
    if (args.has("--model") || std::filesystem::exists(o.ranker_path)) o.ranker = RankerModel::load(o.ranker_path, ranking_schema());
  }
  return o;
}

}  // namespace spmmc::cli
