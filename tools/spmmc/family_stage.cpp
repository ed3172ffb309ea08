#include "tools/spmmc/family_stage.h"

#include <algorithm>

#include <fmt/format.h>

#include "codegen/families/balanced/balanced_schedule.h"
#include "codegen/generic_launch.h"
#include "codegen/kernel_program.h"
#include "codegen/print_tensor_core.h"
#include "compiler/planning/choose_tile.h"
#include "tuner/decide_balanced.h"

namespace spmmc::cli {

std::string FamilyChoice::name() const {
  return tensor_core ? "tensor-core" : balanced ? "balanced" : generic ? "generic" : "unrolled";
}

namespace {

// The family before the size guard and the timed precisions: as asked, the timed search's, the
// model's or the rules'.
void choose_by_rules(const CompileOptions& o, const UnrolledRules& rules, bool family_auto, const TensorCoreRule& tensor_cores,
                     TileChoice& tile, FamilyChoice& f) {
  // The family: generic when asked; with a timed search, the kernel it decided for real; else (auto,
  // the tile not forced) --tune none's rule for the chosen tile.
  f.generic = o.family == "generic";
  f.tensor_core = o.tensor_core_asked || tensor_cores.by_rule;
  f.why = f.generic                 ? "--family generic"
          : o.family == "unrolled"  ? "--family unrolled"
          : tensor_cores.by_rule    ? fmt::format("auto: --dtype {} on the tensor cores, whose launch has {} warps "
                                                  "(at least {} per SM on the {} SMs)", dtype_name(o.dtype), tensor_cores.warps,
                                                  kTensorCoreMinWarpsPerSm, o.target.sm_count)
          : o.tensor_core_asked     ? "--family tensor-core"
                                    : "";
  // The balanced family where the search timed its kernel faster than the decided one at every size
  // (tuner/decide_balanced.h); without that measurement, its rule (choose_family_stage).
  if (tile.tuned && tile.decision && family_auto) {
    const SearchedFamily searched = family_of_search(*tile.tuned);
    f.generic = searched.generic;
    f.balanced = f.balanced_by_search = searched.balanced;
    f.why = searched.why;
    tile.decision = searched.decision;  // what versus_heuristic reports: the balanced kernel where it is emitted
    if (tile.tuned->balanced_decision && tile.tuning.contains("decision")) {
      tile.tuning["decision"]["balanced"] = {{"emitted", f.balanced}, {"why", tile.tuned->balanced_decision->why}};
      if (f.balanced) tile.tuning["decision"]["emitted"] = "balanced family";
    }
  } else if (family_auto && tile.model_balanced_groups > 0) {
    f.generic = f.balanced = true;
    f.why = fmt::format("auto: --tune model ranked the balanced family's kernel first ({} pieces per warp)",
                        tile.model_balanced_groups);
  } else if (family_auto && tile.model_generic) {
    f.generic = true;
    f.why = "auto: --tune model ranked the generic family's kernel first";
  } else if (family_auto && tile.chosen == tile.heuristic) {
    f.generic = tile.heuristic_generic;
    f.why = tile.heuristic_family_why;
  } else if (family_auto) {
    f.generic = rules.generic_by_rule(*tile.chosen, f.why);
  } else if (f.why.empty()) {
    f.why = o.tile ? "--tile" : "--k-parts";
  }
  // Below the warps the tensor cores need, the generic family where the CUDA-core rule takes it, and
  // the tensor cores rather than the unrolled family (faster there too: compiler/planning/choose_tile.h).
  if (o.tensor_core_possible && !tensor_cores.by_rule && f.generic) {
    f.why += fmt::format("; not the tensor cores: their launch would have {} warps, fewer than {} per SM on the {} SMs",
                         tensor_cores.warps, kTensorCoreMinWarpsPerSm, o.target.sm_count);
  } else if (o.tensor_core_possible && !tensor_cores.by_rule) {
    f.tensor_core = true;
    f.why = fmt::format("auto: --dtype {} on the tensor cores, rather than the unrolled family of the CUDA-core rule ({}); "
                        "their launch has {} warps, fewer than {} per SM on the {} SMs",
                        dtype_name(o.dtype), f.why, tensor_cores.warps, kTensorCoreMinWarpsPerSm, o.target.sm_count);
  }
  // tf32's CUDA-core families are float32's code: A rounded to tf32 here, B multiplied as given.
  if (o.tf32 && !f.tensor_core && family_auto)
    f.why += "; --dtype tf32 on CUDA cores (float32's code, A rounded to tf32, B multiplied as given), which took "
             "1.20-1.79x less time than the TF32 tensor cores per sparsity band over the shared DNN layers on an "
             "H100 (docs/design/precision.md)";
}

// fp16, bf16 and tf32 with a GPU (--tune exhaustive, what --tune auto does there): the kernels the
// file could hold (the tensor-core family on windows of 8 rows and, in fp16 and bf16, of 16; the
// generic family; the chosen tile's unrolled kernel where the rules pick it, and in tf32 always),
// checked and timed for real; the fastest correct one is emitted, and the report says where cuBLAS's
// dense GEMM of the dtype beat it (tuner/time_reduced_precision.h).
void choose_by_timing(const CompileOptions& o, const Csr& a, const Plan& plan, TileChoice& tile, FamilyChoice& f) {
  ReducedPrecisionRequest request;
  request.dtype = o.dtype;
  request.n = o.plan.n;
  request.arch = o.target.arch;
  request.sm_count = o.target.sm_count;
  request.max_compile_seconds = o.tuning.real_compile_budget;
  int32_t rule = -1;  // --tune none's kernel among them
  const auto add = [&](const ReducedPrecisionCandidate& c, bool is_rule) {
    if (is_rule) rule = static_cast<int32_t>(request.candidates.size());
    request.candidates.push_back(c);
  };
  RowTiling tc8, tc16;
  if (o.tensor_core_asked || o.tensor_core_possible || (o.tf32 && o.family == "auto")) {
    if (o.window_rows != "16") {
      tc8 = f.windows.m1 == 8 ? f.windows : tile_rows(a, 8, f.window_method);
      add(ReducedPrecisionCandidate::tensor_core(tc8), f.tensor_core && f.windows.m1 == 8);
    }
    if (o.window_rows != "8" && !o.tf32) {
      // Where only the direct kernel runs on them too: its registers are fixed in the source, so nvcc's
      // build of the emitted file is NVRTC's, which the timing measures (templates/kernel_tensor_core.cuh).
      tc16 = f.windows.m1 == 16 ? f.windows : tile_rows(a, 16, f.window_method);
      add(ReducedPrecisionCandidate::tensor_core(tc16), f.tensor_core && f.windows.m1 == 16);
    }
  }
  if (o.family == "auto" || o.family == "generic")
    add(ReducedPrecisionCandidate::generic(plan.for_generic(kGenericRowsPerBlock).tiling), f.generic);
  // The unrolled kernel: where the rules pick it (the size guard then judges it as emitted), and in
  // tf32 where the size guard would let it be emitted.
  const M1Plan& m1_plan = plan.for_m1(tile.chosen->tile.m1);
  if (o.family == "auto" && (f.unrolled || (o.tf32 && f.estimate.nvcc_seconds <= o.limits.max_nvcc_seconds)))
    add(ReducedPrecisionCandidate::unrolled(m1_plan.tiling, tile.chosen->tile, f.fmas_per_kernel, f.estimate.nvcc_seconds),
        f.unrolled);
  SPMMC_CHECK(rule >= 0, "the rules' kernel is among the timed candidates");
  f.reduced = run_reduced_precision_tuning(request, rule, a, *o.gpu, o.tuning, o.quiet);
  const ReducedPrecisionCandidate& pick = request.candidates[static_cast<size_t>(f.reduced->choice.chosen)];
  f.tensor_core = pick.family == KernelFamily::kTensorCore;
  f.generic = pick.family == KernelFamily::kGeneric;
  f.unrolled = pick.family == KernelFamily::kUnrolled;
  f.windows = f.tensor_core ? *pick.rows : RowTiling{};
  f.why = f.reduced->choice.chosen == rule ? f.why + "; " + f.reduced->choice.why : f.reduced->choice.why;
  tile.tuning = f.reduced->json;
}

}  // namespace

FamilyChoice choose_family_stage(const CompileOptions& o, const Csr& a, const Plan& plan, const UnrolledRules& rules,
                                 bool family_auto, const TensorCoreRule& tensor_cores, int64_t fmas_per_kernel,
                                 int32_t piece_length, TileChoice& tile) {
  FamilyChoice f;
  choose_by_rules(o, rules, family_auto, tensor_cores, tile, f);
  // fp16, bf16 and tf32 with a GPU time the kernels the file could hold (choose_by_timing), the chosen
  // tile's unrolled kernel among them where the rules pick it, and in tf32 always.
  const bool timed_choice = o.tune == "exhaustive" && o.timed_families;
  // The automatic split is made finer (more kernels, less nvcc time) where the layer would
  // otherwise exceed the compile-time limit, or have kernels beyond the loads the size guard's
  // model was fitted on.
  const M1Plan& m1_plan = plan.for_m1(tile.chosen->tile.m1);
  f.fmas_per_kernel = fmas_per_kernel;
  f.estimate = estimate_unrolled_size(a, m1_plan.after, tile.chosen->tile, f.fmas_per_kernel);
  // Neither the generic nor the tensor-core family has unrolled code (no size guard, no split).
  f.unrolled = !f.generic && !f.tensor_core;
  while ((f.unrolled || (timed_choice && o.tf32 && o.family == "auto")) && o.auto_split && f.fmas_per_kernel > kMinFmasPerKernel &&
         (f.estimate.nvcc_seconds > o.limits.max_nvcc_seconds || f.estimate.kernel_loads > kMaxLoadsPerKernel)) {
    f.fmas_per_kernel = std::max(kMinFmasPerKernel, f.fmas_per_kernel / 2);
    f.estimate = estimate_unrolled_size(a, m1_plan.after, tile.chosen->tile, f.fmas_per_kernel);
  }
  if (f.unrolled && family_auto && f.estimate.nvcc_seconds > o.limits.max_nvcc_seconds) {
    f.generic = true;
    f.why = fmt::format("auto: the unrolled code of tile {} would take about {:.0f} s of nvcc, above the limit of {:.0f} s",
                        tile.chosen->tile.label(), f.estimate.nvcc_seconds, o.limits.max_nvcc_seconds);
    f.unrolled = false;
  }
  // The tensor-core family's windows: --reorder's method, by default the one that makes the fewest
  // vectors (grow: docs/design/precision.md).
  f.window_method = o.reorder_given ? o.plan.reorder : ReorderMethod::kGrow;
  // Windows of 16 rows (fp16, bf16) where the staged kernel runs on them at the tuned n and they fill
  // its blocks' warps: each fragment of B then feeds two MMAs; the direct kernel, and the staged one
  // where its launch would leave the SMs short of blocks or its blocks short of windows, ran slower
  // on them (docs/design/precision.md).
  if (f.tensor_core && o.window_rows != "8" && !o.tf32) {
    f.windows = tile_rows(a, 16, f.window_method);
    if (o.window_rows == "auto" && !tensor_core_tall_windows(a, f.windows, o.dtype, o.target.sm_count, o.plan.n))
      f.windows = RowTiling{};
  }
  if (f.tensor_core && f.windows.m1 == 0) f.windows = tile_rows(a, 8, f.window_method);
  if (timed_choice) {
    choose_by_timing(o, a, plan, tile, f);
  } else if (o.auto_without_gpu && o.timed_families) {
    f.why += " (--tune auto without a usable GPU of the target's architecture: the rules, nothing timed)";
  }
  if (f.unrolled) check_size_guard(f.estimate, o.limits, o.path);
  if (!f.unrolled) f.fmas_per_kernel = 0;
  // The balanced family where asked, or, where the search did not time it, by its rule where the rules
  // chose the generic family in float32 (codegen/families/balanced/balanced_schedule.h).
  if (f.generic && !f.tensor_core && (o.dtype == DType::kFp32 || o.tf32)) {
    std::string rule_why;
    if (o.balanced_asked) {
      f.balanced = true;
      f.why = "--family balanced";
    } else if (family_auto && !(tile.tuned && tile.tuned->balanced_decision) && !tile.model_ranked_balanced &&
               balanced_by_rule(a, rule_why)) {
      f.balanced = true;
      f.why += "; the balanced family's kernel by its rule: " + rule_why;
    }
  } else if (o.balanced_asked) {
    fail_usage("--family balanced takes float32 or tf32 (--dtype {})", dtype_name(o.dtype));
  }
  // Its pieces per warp: as given, else the fastest timed, else the model's pick, else its rule for --n.
  const BalancedTrial* timed = tile.tuned ? tile.tuned->best_balanced() : nullptr;
  f.balanced_groups = o.balanced_groups                 ? *o.balanced_groups
                      : timed                            ? timed->groups
                      : tile.model_balanced_groups > 0   ? tile.model_balanced_groups
                                                         : default_balanced_groups(a, o.plan.n);
  // Its piece length: the faster timed (tools/spmmc/tune_stage.h; only the given one where given), else
  // the given or the rule's.
  f.piece_length = timed ? timed->piece_length : piece_length;
  return f;
}

}  // namespace spmmc::cli
