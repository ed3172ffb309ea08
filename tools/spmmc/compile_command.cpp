// spmmc compile FILE --n N --name NAME -o DIR: the whole pipeline, one stage per call (run_compile):
// options -> read -> plan (reorder, tile space, constraints) -> tile (heuristic, model or timed
// search) -> family (and the size guard) -> small-n dispatch -> emit -> report -> write.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/arrays_on_host.h"
#include "codegen/emit_unrolled_kernel.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "codegen/generic_launch.h"
#include "codegen/kernel_program.h"
#include "compiler/common/dtype.h"
#include "compiler/common/output_set_lock.h"
#include "compiler/common/sha256.h"
#include "compiler/common/write_file_atomically.h"
#include "compiler/formats/input_limits.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/planning/choose_tile.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/small_n_dispatch.h"
#include "tools/spmmc/commands.h"
#include "tools/spmmc/compile_options.h"
#include "tools/spmmc/compile_report.h"
#include "tools/spmmc/family_stage.h"
#include "tools/spmmc/stage_progress.h"
#include "tools/spmmc/tile_stage.h"
#include "tools/spmmc/unrolled_rules.h"
#include "tools/spmmc/write_depfile.h"
#include "tuner/compare_with_heuristic.h"
#include "tuner/compare_with_sgemm.h"

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

// Below which n the file takes the generic path (the small-n variant): --generic-below, else from
// the two kernels' times where the search measured both, else where the unrolled launch fills 0.7 of
// the SMs (at most --n); the tensor-core family
// only with --generic-below.
SmallNDispatch place_generic_path(const CompileOptions& o, const TileChoice& tile, const FamilyChoice& family,
                                  const M1Plan& rows_plan) {
  SmallNDispatch small_n;
  if (family.generic) {
    small_n.why = "the generic family: the generic path at every n";
  } else if (o.generic_below) {
    small_n.generic_below_n = *o.generic_below;
    small_n.why = "--generic-below";
  } else if (family.tensor_core) {  // its grid covers n, so its time shrinks with n: not measured against the generic path
    small_n.why = "the tensor-core family: its kernel's grid follows n (not measured against the generic path)";
  } else {
    const bool measured = tile.decision && tile.decision->emitted_ms && tile.tuned && tile.tuned->generic &&
                          tile.tuned->generic->outcome == Outcome::kOk;
    // --n LIST or LO:HI: both kernels at every size where each was timed (TuningResult::batch_sizes).
    std::vector<BatchSizeTime> times;
    if (measured && tile.tuned->batch_sizes.size() + 1 == o.batch_sizes.points.size()) {
      for (const BatchSizeMeasurement& b : tile.tuned->batch_sizes)
        if (b.family.outcome == Outcome::kOk && b.generic.outcome == Outcome::kOk)
          times.push_back({b.n, b.family.time.median_ms, b.generic.time.median_ms});
      times.push_back({o.plan.n, *tile.decision->emitted_ms, tile.tuned->generic->time.median_ms});
    }
    if (times.size() == o.batch_sizes.points.size() && times.size() > 1) {
      small_n = choose_generic_below_n(times);
    } else {
      // The file's A-tiles (a tile per range of K with --k-parts), blocks of N1 columns.
      const UnrolledLaunch launch{rows_plan.tiling.num_blocks() * o.k_parts, tile.chosen->tile.n1, o.target.sm_count};
      small_n = choose_generic_below_n(o.plan.n, measured ? tile.decision->emitted_ms : std::nullopt,
                                       measured ? std::optional<double>(tile.tuned->generic->time.median_ms) : std::nullopt, launch);
      if (o.batch_sizes.several())
        small_n.why += fmt::format(" (--n {}: {})", o.batch_sizes.label(),
                                   measured ? "a size's kernel failed to measure" : "the kernels were not timed at the sizes");
    }
  }
  return small_n;
}

// Where A's arrays travel (o.host_arrays, o.arrays_why): --arrays host or device as given (host refused
// where the family chosen is the tensor cores'), auto by its rule (codegen/arrays_on_host.h), the
// tensor-core family's always constants.
void place_arrays(CompileOptions& o, const FamilyChoice& family, const Csr& a) {
  if (o.host_arrays && family.tensor_core)
    fail_usage("--arrays host: the tensor-core family chosen here keeps its arrays constants; give --family generic, "
               "balanced or unrolled, or leave --arrays at auto or device");
  if (o.arrays != "auto") return;
  if (family.tensor_core)
    o.arrays_why = "the tensor-core family keeps its arrays constants";
  else
    o.host_arrays = host_arrays_by_rule(a.nnz(), o.arrays_why);
}

// Ahead of the generic path, in float32 (and tf32's CUDA-core) files of the unrolled and generic
// families, the balanced kernel for middle n (compiler/planning/small_n_dispatch.h): by its rule, left
// out with --batch-invariant, or up to --balanced-below N (0: left out).
SmallNDispatch place_balanced_path(const CompileOptions& o, const FamilyChoice& family, const Csr& a, SmallNDispatch d) {
  if (family.tensor_core || family.balanced || !(o.dtype == DType::kFp32 || o.dtype == DType::kTf32)) return d;
  d = choose_balanced_path(d, a, family.generic, o.batch_invariant, o.target.sm_count);
  if (o.balanced_below) {
    const bool any = *o.balanced_below > kBalancedFromN;
    d.balanced_from_n = any ? kBalancedFromN : 0;
    d.balanced_below_n = any ? *o.balanced_below : 0;
    d.balanced_pairs_below_n = any ? balanced_pairs_below_n(a, *o.balanced_below) : 0;
    d.balanced_spmv = any && kBalancedSpmv;
    d.balanced_why = fmt::format("--balanced-below {}", *o.balanced_below);
  }
  if (o.balanced_pairs_below) {
    d.balanced_pairs_below_n = d.balanced_below_n > d.balanced_from_n ? std::min(*o.balanced_pairs_below, d.balanced_below_n) : 0;
    d.balanced_why += fmt::format("{}--balanced-pairs-below {}", d.balanced_why.empty() ? "" : "; ", *o.balanced_pairs_below);
  }
  if (d.balanced_pairs_below_n <= d.balanced_from_n) d.balanced_pairs_below_n = 0;
  if (o.balanced_below || o.balanced_pairs_below)
    d.balanced_v1_below_n = d.balanced_below_n > d.balanced_from_n
                                ? balanced_v1_below_n(a, d.balanced_below_n, d.balanced_pairs_below_n)
                                : 0;
  // The path's second table for uneven rows (by its rule; --balanced-mid-below N: from the path's end up to
  // below N with the rule's pieces, 0: none).
  d = choose_balanced_mid_path(d, a, family.generic, generic_warp_wide_from_n(a, o.dtype, o.target.sm_count));
  if (o.balanced_mid_below) {
    const bool any = d.balanced_below_n > d.balanced_from_n && *o.balanced_mid_below > d.balanced_below_n;
    d.balanced_mid_from_n = any ? d.balanced_below_n : 0;
    d.balanced_mid_below_n = any ? *o.balanced_mid_below : 0;
    d.mid_piece_length = any ? balanced_mid_piece_length(a) : 0;
    d.balanced_mid_why = fmt::format("--balanced-mid-below {}{}", *o.balanced_mid_below,
                                     any || *o.balanced_mid_below == 0 ? "" : " (at or below the path's end: none)");
  }
  return d;
}

// How the file is emitted: the chosen tile and family, the small-n dispatch, and the provenance
// comment that says how to regenerate it.
EmitOptions emit_options(const CompileOptions& o, const Csr& a, const TileChoice& tile, const FamilyChoice& family,
                         const SmallNDispatch& small_n) {
  const TileCandidate& chosen = tile.chosen->tile;
  EmitOptions emit;
  emit.name = o.name;
  emit.arch = o.target.arch;
  emit.weights_sha256 = weights_sha256(a);
  emit.fmas_per_kernel = family.fmas_per_kernel;
  emit.k_parts = static_cast<int32_t>(o.k_parts);
  emit.generic_only = family.generic;
  emit.balanced = family.balanced;
  emit.piece_length = family.piece_length;
  emit.balanced_groups = family.balanced_groups;
  emit.tensor_core = family.tensor_core;
  emit.loads_ahead = o.loads_ahead;
  emit.dtype = o.dtype;
  emit.generic_below_n = small_n.generic_below_n;
  emit.balanced_from_n = small_n.balanced_from_n;
  emit.balanced_below_n = small_n.balanced_below_n;
  emit.balanced_pairs_below_n = small_n.balanced_pairs_below_n;
  emit.balanced_v1_below_n = small_n.balanced_v1_below_n;
  emit.balanced_mid_from_n = small_n.balanced_mid_from_n;
  emit.balanced_mid_below_n = small_n.balanced_mid_below_n;
  emit.mid_piece_length = small_n.mid_piece_length;
  // n = 1 a lane per product: on the path by its rule; in the balanced family unless --batch-invariant
  // (the family's other kernels give the same sums at every n).
  emit.balanced_spmv = family.balanced ? kBalancedSpmv && !o.batch_invariant : small_n.balanced_spmv;
  emit.small_n_piece_length = small_n.piece_length;
  emit.sm_count = o.target.sm_count;
  emit.tuned_n = o.plan.n;
  emit.host_arrays = o.host_arrays;
  emit.provenance = fmt::format(
      "{}.{{cu,h}}: generated by spmmc {} from {}. Do not edit; regenerate with\n"
      "  spmmc compile {} --n {} --name {} {}{}{}{}{} --reorder {} --target {}{}{}\n"
      "A: {} x {}, {} non-zeros, weights SHA-256 {}\n"
      "C = A * B; B row-major K x n, C row-major M x n, {}.",
      o.name, SPMMC_VERSION, std::filesystem::path(o.path).filename().string(), std::filesystem::path(o.path).filename().string(),
      o.batch_sizes.label(), o.name, !family.unrolled ? "--family " + family.name() : "--tile " + chosen.label(),
      !family.unrolled || chosen.min_blocks_per_sm == min_blocks_for_register_budget(chosen.threads_per_block(), o.target.registers_per_sm)
          ? std::string()
          : fmt::format(" --min-blocks-per-sm {}", chosen.min_blocks_per_sm),
      o.auto_split || !family.unrolled ? std::string() : fmt::format(" --fmas-per-kernel {}", family.fmas_per_kernel),
      o.k_parts > 1 ? fmt::format(" --k-parts {}", o.k_parts) : std::string(),
      o.loads_ahead != kDefaultLoadsAhead && family.unrolled ? fmt::format(" --loads-ahead {}", o.loads_ahead) : std::string(),
      reorder_method_name(family.tensor_core ? family.window_method : o.plan.reorder), o.target.name,
      o.dtype == DType::kFp32 ? std::string() : fmt::format(" --dtype {}", dtype_name(o.dtype)),
      // the small-n dispatch where it was given (its defaults are rules of the inputs above)
      (o.generic_below ? fmt::format(" --generic-below {}", *o.generic_below) : std::string()) +
          (o.balanced_below ? fmt::format(" --balanced-below {}", *o.balanced_below) : std::string()) +
          (o.balanced_pairs_below ? fmt::format(" --balanced-pairs-below {}", *o.balanced_pairs_below) : std::string()) +
          (o.balanced_mid_below ? fmt::format(" --balanced-mid-below {}", *o.balanced_mid_below) : std::string()) +
          (o.batch_invariant ? std::string(" --batch-invariant") : std::string()) +
          (o.host_arrays ? std::string(" --arrays host") : std::string()) +
          // the balanced family's shape, which a search may have timed
          (family.balanced ? fmt::format(" --piece-length {} --balanced-groups {}", family.piece_length, family.balanced_groups)
                           : std::string()),
      a.rows, a.cols, a.nnz(),
      emit.weights_sha256,
      o.dtype == DType::kFp32 ? std::string("float32")
      : o.tf32 && family.tensor_core ? std::string("float32 multiplied as tfloat32 (A rounded to tf32 here, B in the kernel; products "
                                          "summed in float32 on the tensor cores)")
      : o.tf32 ? std::string("float32, A rounded to tfloat32 here, B multiplied as given (products summed in float32 on CUDA cores)")
             : fmt::format("{} (A rounded to it; products summed in float32)", dtype_info_name(o.dtype)));
  return emit;
}

// Writes NAME.{cu,h,json,nvcc-options} (and the depfile) atomically, under the output set's lock.
void write_outputs(const CompileOptions& o, const Args& args, const EmittedKernel& kernel, const Json& report) {
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw UserError(ExitCode::kCantCreate, SourceLocation::whole(o.out_dir), fmt::format("cannot create the output folder: {}", ec.message()));
  const std::filesystem::path base = std::filesystem::path(o.out_dir) / o.name;
  const auto text_writer = [](const std::string& text) {
    return [&text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); };
  };
  {
    // The set NAME.{cu,h,json,nvcc-options} (and the depfile) comes from one run: concurrent compiles of the
    // same NAME into this folder take turns here, and the set is written whole or not at all
    // (docs/user-guide.md, "Concurrent and interrupted runs"). Taking the lock also removes the
    // temporary files of runs that were killed while writing.
    const std::optional<std::string>& depfile = o.depfile;
    std::vector<std::string> extensions = {".cu", ".h", ".json", ".nvcc-options"};
    if (depfile && std::filesystem::path(*depfile).lexically_normal() == std::filesystem::path(base.string() + ".d").lexically_normal())
      extensions.push_back(".d");
    const OutputSetLock lock(o.out_dir, o.name, extensions);
    if (!lock.exclusive())
      print_warning(fmt::format("{}: the file system does not support locks; a concurrent compile of '{}' into {} could mix its "
                                "files with these", lock.path().string(), o.name, o.out_dir));
    const std::string report_text = report.dump(2) + "\n";
    // The options NAME.cu is meant to be built with, for nvcc --options-file (empty for the generic family).
    std::string options_text;
    for (const std::string& option : kernel.nvcc_options) options_text += (options_text.empty() ? "" : " ") + option;
    if (!options_text.empty()) options_text += "\n";
    write_files_atomically({{base.string() + ".cu", text_writer(kernel.cu)},
                            {base.string() + ".h", text_writer(kernel.h)},
                            {base.string() + ".json", text_writer(report_text)},
                            {base.string() + ".nvcc-options", text_writer(options_text)}});
    if (depfile) {
      std::vector<std::string> inputs = compile_inputs(o.path, args, o.target);
      if (o.ranker) inputs.push_back(o.ranker_path);  // --tune model|rank: a new model may choose another tile
      write_depfile(*depfile, base.string() + ".cu", inputs);
    }
  }
}

// The line on stderr that says what was written (and the notes: values dropped, the gain of tuning,
// a dense GEMM faster than the kernel).
void print_summary(const CompiledLayer& l) {
  const CompileOptions& o = l.options;
  const FamilyChoice& f = l.family;
  const std::string base = (std::filesystem::path(o.out_dir) / o.name).string();
  const Csr& a = l.matrix.csr;
  const EmittedKernel& kernel = l.kernel;
  const char* const arrays = o.host_arrays ? "host bytes copied at the first call" : "constants";
  if (f.tensor_core)
    std::fprintf(stderr,
                 "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, tensor-core family (%s: %d windows of "
                 "%d rows, %lld %d x 1 vectors, %.2f non-zeros each%s), %.1f MB of CUDA\n",
                 base.c_str(), a.rows, a.cols, static_cast<long long>(a.nnz()), dtype_name(o.dtype),
                 kernel.tensor_core.windows, f.windows.m1, static_cast<long long>(kernel.tensor_core.vectors), f.windows.m1,
                 static_cast<double>(a.nnz()) / static_cast<double>(kernel.tensor_core.vectors),
                 kernel.tensor_core.chunk_rows > 0 ? fmt::format("; B staged in shared memory from n = {}", kernel.tensor_core.staged_from_n).c_str() : "",
                 static_cast<double>(kernel.cu.size()) / 1e6);
  else if (f.balanced)
    std::fprintf(stderr,
                 "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, balanced family (A as CSR %s, "
                 "%d rows cut into pieces of at most %d products; %s), %.1f MB of CUDA\n",
                 base.c_str(), a.rows, a.cols, static_cast<long long>(a.nnz()), arrays, kernel.balanced_rows_cut,
                 f.piece_length, f.why.c_str(), static_cast<double>(kernel.cu.size()) / 1e6);
  else if (f.generic)
    std::fprintf(stderr,
                 "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, generic family (A as CSR %s; %s), "
                 "%.1f MB of CUDA\n",
                 base.c_str(), a.rows, a.cols, static_cast<long long>(a.nnz()), arrays, f.why.c_str(),
                 static_cast<double>(kernel.cu.size()) / 1e6);
  else
    std::fprintf(stderr,
                 "spmmc compile: wrote %s.{cu,h,json,nvcc-options}: %d x %d, %lld non-zeros, tile %s (%s), %d tiles, %.1f MB of CUDA, "
                 "nvcc about %.0f s\n",
                 base.c_str(), a.rows, a.cols, static_cast<long long>(a.nnz()), l.tile.chosen->tile.label().c_str(),
                 o.tile ? "--tile" : o.tune == "none" || (o.tune == "model" && !o.ranker) ? "heuristic" : ("--tune " + o.tune).c_str(), kernel.tiles,
                 static_cast<double>(kernel.cu.size()) / 1e6, f.estimate.nvcc_seconds);
  if (o.host_arrays && o.arrays == "auto")
    std::fprintf(stderr, "spmmc compile: A's arrays as host bytes copied to each device at its first call: %s\n", o.arrays_why.c_str());
  if (o.host_arrays && f.unrolled)
    std::fprintf(stderr, "spmmc compile: the generic path's arrays: %.1f MB of host bytes, copied to each device at its first call\n",
                 static_cast<double>(kernel.host_array_bytes) / 1e6);
  // --arrays auto moves them where its rule says; given --arrays device there, say what it costs.
  std::string rule_why;
  const double constant_bytes = constant_arrays_nvcc_bytes(a.nnz());
  if (!o.host_arrays && !f.tensor_core && host_arrays_by_rule(a.nnz(), rule_why))
    std::fprintf(stderr,
                 "spmmc compile: note: nvcc will need about %.0f GB and %.0f minutes for A's %lld non-zeros as constants of "
                 "%s.cu (--arrays device); --arrays host (or auto, the default) writes them as host bytes copied at the first "
                 "call, which builds about 8x faster in less than half the memory (docs/emitted-code.md, *A's arrays on the "
                 "host*)\n",
                 constant_bytes / 1e9, kConstantArrayNvccSecondsPerNonZero * static_cast<double>(a.nnz()) / 60.0,
                 static_cast<long long>(a.nnz()), o.name.c_str());
  if (l.small_n.balanced_below_n > l.small_n.balanced_from_n)
    std::fprintf(stderr,
                 "spmmc compile: n = %s%lld to %lld: the balanced kernel (%d rows cut into pieces of at most %d products, "
                 "summed in piece order%s%s; --batch-invariant leaves it out)\n",
                 l.small_n.balanced_spmv ? "1 (a lane per product) and " : "",
                 static_cast<long long>(l.small_n.balanced_from_n), static_cast<long long>(l.small_n.balanced_below_n - 1),
                 kernel.balanced_rows_cut, l.small_n.piece_length,
                 l.small_n.balanced_pairs_below_n > 0
                     ? fmt::format("; two pieces per warp below n = {}", l.small_n.balanced_pairs_below_n).c_str()
                     : "",
                 l.small_n.balanced_v1_below_n > 0 && l.small_n.balanced_v1_below_n < l.small_n.balanced_below_n
                     ? fmt::format("; from n = {} odd n (or B and C not aligned to 8 bytes) on the generic path",
                                   l.small_n.balanced_v1_below_n)
                           .c_str()
                     : "");
  if (l.small_n.balanced_mid_below_n > l.small_n.balanced_mid_from_n)
    std::fprintf(stderr,
                 "spmmc compile: n = %lld to %lld: the balanced kernel with pieces of at most %d products (%d rows cut; A's "
                 "rows are uneven)\n",
                 static_cast<long long>(l.small_n.balanced_mid_from_n), static_cast<long long>(l.small_n.balanced_mid_below_n - 1),
                 l.small_n.mid_piece_length, kernel.balanced_mid_rows_cut);
  if (l.rounding.to_zero > 0)
    std::fprintf(stderr, "spmmc compile: note: %lld values of A are below the smallest %s and were dropped (rounded to zero)\n",
                 static_cast<long long>(l.rounding.to_zero), dtype_name(o.dtype));
  // What tuning gained, measured (issue 25).
  if (!l.versus.summary.empty()) std::fprintf(stderr, "spmmc compile: timed: %s\n", l.versus.summary.c_str());
  // Users deserve to know when the pruned layer is not worth it (issue 10).
  if (!l.sgemm.note.empty()) std::fprintf(stderr, "spmmc compile: note: %s\n", l.sgemm.note.c_str());
  if (f.reduced && !f.reduced->choice.note.empty()) std::fprintf(stderr, "spmmc compile: note: %s\n", f.reduced->choice.note.c_str());
}

int run_compile(const Args& args) {
  CompileOptions o = parse_compile_options(args);
  auto clock = Clock::now();
  Json seconds = Json::object();
  StageProgress progress("spmmc compile", !o.quiet);
  progress.stage("reading " + std::filesystem::path(o.path).filename().string());

  LoadedMatrix m = read_matrix_file(o.path, o.read);
  const DTypeRounding rounding = round_values_to_dtype(m.csr, o.dtype, o.path);
  seconds["read"] = seconds_since(clock);
  if (m.csr.nnz() == 0)
    throw UserError(ExitCode::kDataError, SourceLocation::whole(o.path),
                    rounding.to_zero > 0 ? fmt::format("every value of A rounds to zero in {}: there is nothing to compile", dtype_name(o.dtype))
                                         : std::string("the matrix has no non-zeros: there is nothing to compile"));
  check_fits_in_memory(planning_memory_bytes(m.csr), "compiling this matrix", SourceLocation::whole(o.path));
  if (o.k_parts > m.csr.cols)
    throw UserError(ExitCode::kDataError, SourceLocation::whole(o.path),
                    fmt::format("--k-parts {} asks for more ranges of K than A has columns ({})", o.k_parts, m.csr.cols));
  // --family auto in half precision: the tensor cores where their launch has warps enough. fp16 and
  // bf16 below the warps, and tf32: decided with the CUDA-core rule (and by timing with a GPU).
  TensorCoreRule tensor_cores;
  tensor_cores.warps = o.tensor_core_possible ? tensor_core_warps(m.csr, o.plan.n) : 0;
  tensor_cores.by_rule = o.tensor_core_possible && tensor_cores.warps >= kTensorCoreMinWarpsPerSm * o.target.sm_count;
  // The unrolled code's split into kernels (made finer by the family stage where it would not build in time).
  const int64_t fmas_per_kernel = o.auto_split ? default_fmas_per_kernel(m.csr.nnz(), o.plan.n, o.target.arch) : o.fmas_per_kernel;
  o.plan.fmas_per_kernel = fmas_per_kernel;

  progress.stage(fmt::format("planning the tile space of {} non-zeros", m.csr.nnz()));
  const Plan plan = o.tile ? plan_forced_tile(m.csr, o.target, o.plan, *o.tile, o.min_blocks_per_sm)
                           : plan_tiles(m.csr, o.target, o.plan);
  seconds["plan"] = seconds_since(clock);

  // With the automatic split, a tile fits when its finest split does.
  const UnrolledRules rules(m.csr, plan, o.target, o.plan.n, o.auto_split ? kMinFmasPerKernel : fmas_per_kernel, o.limits);
  // The family is free (the generic and balanced families contend) unless asked, forced by --tile or
  // --k-parts, or the tensor cores' by their rule.
  const bool family_auto = o.family == "auto" && !o.tile && o.k_parts == 1 && !tensor_cores.by_rule;
  // The balanced family's piece length (codegen/families/balanced/balanced_schedule.h) as timed first; a
  // search may take a shorter one (family.piece_length).
  const int32_t piece_length = static_cast<int32_t>(o.piece_length ? *o.piece_length : default_piece_length(m.csr));
  progress.stage(o.gpu ? "tuning" : "choosing the tile");
  TileChoice tile = choose_tile_stage(o, m.csr, plan, rules, family_auto, piece_length, fmas_per_kernel);
  seconds[o.gpu ? "tune" : "choose"] = seconds_since(clock);

  progress.stage("choosing the family");
  const FamilyChoice family = choose_family_stage(o, m.csr, plan, rules, family_auto, tensor_cores, fmas_per_kernel,
                                                   piece_length, tile);
  place_arrays(o, family, m.csr);
  const SgemmComparison sgemm = tile.tuned ? compare_with_sgemm(*tile.tuned, o.tune == "exhaustive", family.generic,
                                                                family.balanced_by_search)
                                           : SgemmComparison{};
  // The generic kernel takes its rows in the order of 16-row tiles (its blocks' rows), as tuning timed it.
  const M1Plan& rows_plan = family.generic ? plan.for_generic(kGenericRowsPerBlock) : plan.for_m1(tile.chosen->tile.m1);
  const SmallNDispatch small_n = place_balanced_path(o, family, m.csr, place_generic_path(o, tile, family, rows_plan));

  const EmitOptions emit = emit_options(o, m.csr, tile, family, small_n);
  progress.stage(fmt::format("emitting the {} family's CUDA", family.name()));
  const EmittedKernel kernel =
      emit_unrolled_kernel(m.csr, family.tensor_core ? family.windows : rows_plan.tiling, tile.chosen->tile, emit);
  seconds["emit"] = seconds_since(clock);

  // What tuning gained over the heuristic (--tune none), measured where a GPU timed both.
  const HeuristicComparison versus = compare_with_heuristic(tile.decision, tile.heuristic, tile.heuristic_generic, sgemm);
  const CompiledLayer layer{o, m, rounding, plan, tile, family, rows_plan, small_n, kernel, emit.weights_sha256,
                            sgemm, versus};
  Json report = compile_report(layer);
  if (!o.reproducible) report["seconds"] = seconds;
  progress.stage(fmt::format("writing {} MB", static_cast<int64_t>(static_cast<double>(kernel.cu.size()) / 1e6)));
  write_outputs(o, args, kernel, report);
  progress.clear();
  if (o.json) {
    std::fputs((report.dump(2) + "\n").c_str(), stdout);
  } else if (!o.quiet) {
    print_summary(layer);
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
      "--options-file: -Xptxas -O1 --split-compile 0 for the unrolled family, none for the generic and tensor-core ones).\n"
      "B is row-major K x n, C row-major M x n; any n >= 1 works at run time, n is what the tile is chosen\n"
      "for, and below --generic-below (default: where the unrolled launch fills 0.7 of the SMs, 0.5 with at most 16 A-tiles, at most --n)\n"
      "the file runs its generic path, whose kernels spread small n over more threads\n"
      "(NAME_info()->generic_below_n), and from n = " + std::to_string(kBalancedFromN) +
      " to " + std::to_string(kBalancedBelowN - 1) + " (to " + std::to_string(kBalancedLongestBelowN - 1) + " where rows\n"
      "are short or few) the balanced kernel where A has rows of more than " + std::to_string(kSmallNPieceLength) +
      " products (--balanced-below,\n"
      "--batch-invariant). Files are written atomically,\n"
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
                                "saw it meet the chosen kernel, else where the unrolled launch fills 0.7 of the SMs (0.5 with at most 16 A-tiles), at "
                                "most --n; 0: only where n or alignment rules the "
                                "kernel out)"},
      {"--balanced-below", "N", "float32 (and tf32 on CUDA cores) files of the unrolled and generic families: take the "
                                 "balanced kernel (rows cut into pieces of 32 products, summed in piece order) for every n "
                                 "from 4 up to below N, ahead of every other path (default, where A has a row of more than 32 "
                                 "products: 512, up to 4096 where A's rows are short or few, no further than the generic "
                                 "path of an unrolled file; 0: never)"},
      {"--balanced-pairs-below", "N", "the balanced small-n path: below N, two pieces per warp (16 lanes each) instead of "
                                       "one (default: 17 where A cuts into at least 4224 pieces, more than a wave of "
                                       "warps, else none; 0: never)"},
      {"--balanced-mid-below", "N", "the balanced small-n path's second table: from where the path ends up to below N, for n "
                                     "% 4 == 0 (other n: the generic path), the balanced kernel with rows cut into pieces of A's "
                                     "mean row length (at least 32; summed in piece order) (default, where A's longest row holds "
                                     "at least twice the mean: 1024, no further than the generic path of an unrolled file nor "
                                     "than the generic path's blocks of 32 warps; 0: never)"},
      {"--batch-invariant", "", "sum every row in column order at every n (the same bits whatever batch a call has): "
                                "leaves out the balanced small-n path, whose cut rows sum in piece order"},
      {"--arrays", "WHERE", "where A's arrays (the CSR arrays and the balanced kernel's pieces) travel: device "
                            "(initialised constants of NAME.cu; no state), host (bytes in NAME.cu's host code, copied to "
                            "each device at the first call there and after a reset: nvcc builds a graph of 1M non-zeros in "
                            "5.4 s instead of 24 s, 9.9M in 35 s instead of 307 s; not the tensor-core family) or auto "
                            "(default: host where the constants would need more than 4 GB of nvcc's memory, some 4.5M "
                            "non-zeros; docs/emitted-code.md)"},
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
       "fills less than 75% of a wave of blocks, or its A-tiles share few columns (fewer than 1.4 products per loaded row "
       "of B), and A has at least " + std::to_string(kGenericMinNonZeros) + " non-zeros; generic where the unrolled code "
       "would exceed --max-compile-seconds; unrolled otherwise and with --tile or --k-parts) or tensor-core (--dtype "
       "fp16|bf16|tf32 only: FlashSparse's 8 x 1 vectors of A on the tensor cores, the rows grouped by --reorder, default "
       "grow; what auto takes for --dtype fp16|bf16 on sm_80 and later unless --tile is given, and for --dtype tf32 "
       "where a GPU timed it faster than the CUDA-core families; docs/design/precision.md) or balanced (float32 and tf32: "
       "the generic family's file with rows longer than --piece-length cut into pieces that warps of one block sum, "
       "summed in piece order: for graphs and other matrices of uneven rows; what auto takes instead of the generic "
       "family where the rows' coefficient of variation is at least 1.3 and the longest row holds two pieces; "
       "docs/design/balanced.md)"},
      {"--piece-length", "P", "the balanced family's: rows of more than P products are cut into pieces (at most 16 per "
       "row; default 64, 256 where a row has more than 2048 products; where --family auto times the family on a GPU, "
       "shorter ones are timed too, each only where the one before it won: 32 and 16 after 64, 128 and 64 after 256; "
       "the fastest is kept)"},
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
      {"--json", "", "print the report (what NAME.json holds) on stdout instead of the summary line"},
      {"--depfile", "FILE", "also write a Makefile-style depfile: NAME.cu and the files it was made from"},
  });
  for (auto& o : read_option_specs()) c.options.push_back(o);
  c.min_positional = c.max_positional = 1;
  c.run = run_compile;
  return c;
}

}  // namespace spmmc::cli
