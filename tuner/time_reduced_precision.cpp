#include "tuner/time_reduced_precision.h"

#include <chrono>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/generic_launch.h"
#include "codegen/tensor_core_launch.h"
#include "compiler/common/diagnostics.h"
#include "runtime/nvrtc_compile.h"
#include "runtime/reference_spmm.h"
#include "tuner/check_real_kernels.h"
#include "tuner/decide_against_heuristic.h"
#include "tuner/measurement.h"

namespace spmmc {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The kernel the emitted entry point launches at n for `k` (a file of one family), as a RealKernel:
// the unrolled family's chain of kernels over its A-tiles, or one kernel with a launch of its own.
RealKernel real_kernel(const ReducedPrecisionCandidate& c, const EmittedKernel& k, const Csr& a, int64_t n, DType dtype,
                       int sm_count, const Cubin& cubin) {
  if (c.family == KernelFamily::kUnrolled) {
    RealKernel kernel;
    kernel.cubin = &cubin;
    kernel.tile = c.tile;
    kernel.launches = unrolled_launches(k);
    return kernel;
  }
  LaunchShape shape;
  if (c.family == KernelFamily::kTensorCore) {
    const TensorCoreLaunch l = tensor_core_launch(k.tensor_core, n);
    shape.grid_x = l.grid_x, shape.grid_y = l.grid_y, shape.block_x = l.block_x;
    return family_kernel(cubin, l.symbol, shape);
  }
  // The tuner's B and C come from the driver's allocator: aligned far beyond 16 bytes.
  const GenericLaunch l = generic_launch(generic_shape(a, sm_count, /*weights_ahead=*/true, dtype), n, true);
  shape.grid_x = l.grid_x, shape.grid_y = l.grid_y, shape.block_x = l.block_x, shape.block_y = l.block_y;
  return family_kernel(cubin, l.symbol, shape, {}, k.nvrtc_arrays);
}

// tf32's CUDA-core kernels are float32's code: they multiply B as given (docs/design/precision.md).
bool multiplies_b_as_given(DType dtype, const ReducedPrecisionCandidate& c) {
  return dtype == DType::kTf32 && c.family != KernelFamily::kTensorCore;
}

}  // namespace

ReducedPrecisionCandidate ReducedPrecisionCandidate::tensor_core(const RowTiling& windows) {
  ReducedPrecisionCandidate c;
  c.family = KernelFamily::kTensorCore;
  c.rows = &windows;
  return c;
}

ReducedPrecisionCandidate ReducedPrecisionCandidate::generic(const RowTiling& rows) {
  ReducedPrecisionCandidate c;
  c.family = KernelFamily::kGeneric;
  c.rows = &rows;
  return c;
}

ReducedPrecisionCandidate ReducedPrecisionCandidate::unrolled(const RowTiling& tiles, const TileCandidate& tile,
                                                              int64_t fmas_per_kernel, double compile_seconds_estimate) {
  ReducedPrecisionCandidate c;
  c.family = KernelFamily::kUnrolled;
  c.rows = &tiles;
  c.tile = tile;
  c.fmas_per_kernel = fmas_per_kernel;
  c.compile_seconds_estimate = compile_seconds_estimate;
  return c;
}

const char* ReducedPrecisionCandidate::family_name() const {
  switch (family) {
    case KernelFamily::kTensorCore: return "tensor-core";
    case KernelFamily::kGeneric: return "generic";
    case KernelFamily::kBalanced: return "balanced";
    case KernelFamily::kUnrolled: break;
  }
  return "unrolled";
}

std::string ReducedPrecisionCandidate::label() const {
  switch (family) {
    case KernelFamily::kTensorCore: return fmt::format("tensor-core, {}-row windows", rows->m1);
    case KernelFamily::kGeneric: return "generic";
    case KernelFamily::kBalanced: return "balanced";
    case KernelFamily::kUnrolled: break;
  }
  return fmt::format("unrolled, tile {}", tile.label());
}

bool ReducedPrecisionRequest::beyond_budget(const ReducedPrecisionCandidate& c) const {
  return c.family == KernelFamily::kUnrolled && max_compile_seconds > 0.0 && c.compile_seconds_estimate > max_compile_seconds;
}

ReducedPrecisionTiming time_reduced_precision(const Csr& a, const ReducedPrecisionRequest& request, const GpuContext& gpu,
                                        const TuningOptions& options) {
  SPMMC_CHECK(request.dtype != DType::kFp32, "the timed choice of fp16, bf16 and tf32 files");
  SPMMC_CHECK(request.n >= 1, "n >= 1");
  ReducedPrecisionTiming out;
  out.measured.resize(request.candidates.size());
  // The NVRTC form of each candidate's file, compiled together.
  auto clock = std::chrono::steady_clock::now();
  std::vector<EmittedKernel> files(request.candidates.size());
  std::vector<CompileJob> jobs;
  std::vector<size_t> job_of(request.candidates.size(), SIZE_MAX);  // SIZE_MAX: not compiled (beyond the budget)
  for (size_t i = 0; i < request.candidates.size(); ++i) {
    const ReducedPrecisionCandidate& c = request.candidates[i];
    SPMMC_CHECK(c.rows != nullptr, "a candidate's rows");
    if (request.beyond_budget(c)) continue;
    EmitOptions emit;
    emit.name = fmt::format("{}_family", c.family == KernelFamily::kTensorCore ? "tensor_core" : c.family_name());
    emit.arch = request.arch;
    emit.nvrtc_form = true;
    emit.dtype = request.dtype;
    emit.tensor_core = c.family == KernelFamily::kTensorCore;
    emit.generic_only = c.family == KernelFamily::kGeneric;
    emit.fmas_per_kernel = c.family == KernelFamily::kUnrolled ? c.fmas_per_kernel : 0;
    emit.sm_count = request.sm_count;
    emit.tuned_n = request.n;
    files[i] = emit_unrolled_kernel(a, *c.rows, c.family == KernelFamily::kUnrolled ? c.tile : TileCandidate{}, emit);
    NvrtcOptions nvrtc{request.arch, nvrtc_cuda_include_options()};
    nvrtc.flags.insert(nvrtc.flags.end(), files[i].nvrtc_options.begin(), files[i].nvrtc_options.end());
    job_of[i] = jobs.size();
    jobs.push_back({{emit.name + ".cu", files[i].nvrtc_cu}, nvrtc});
  }
  if (options.progress) options.progress({"compiling kernels", 0, jobs.size()});
  const std::vector<CompileOutcome> compiled =
      compile_in_parallel(jobs, options.pool, options.cache, [&](size_t done, size_t total) {
        if (options.progress) options.progress({"compiling kernels", done, total});
      });
  out.seconds.emplace_back("compile", seconds_since(clock));

  // B as drawn and rounded to the dtype (the values the kernels multiply: fp16 and bf16 B holds them,
  // tf32's tensor-core kernel rounds float B as it loads it), the float64 product and each element's
  // bound; tf32's CUDA-core kernels multiply B as drawn, judged as float32 kernels are.
  clock = std::chrono::steady_clock::now();
  const std::vector<float> drawn = random_floats(static_cast<size_t>(a.cols) * static_cast<size_t>(request.n), options.seed);
  const std::vector<float> b = rounded_b(drawn, request.dtype);
  std::vector<double> want = reference_spmm(a, b, request.n);
  std::vector<double> bound = error_bounds(a, b, request.n, request.dtype, want, /*dense=*/false);
  const KernelCheckInputs inputs(gpu, request.dtype, request.dtype == DType::kTf32 ? drawn : b, std::move(want), std::move(bound),
                                 request.n);
  std::optional<KernelCheckInputs> as_given;  // made where a candidate needs them
  for (const ReducedPrecisionCandidate& c : request.candidates)
    if (multiplies_b_as_given(request.dtype, c) && !as_given) as_given.emplace(gpu, drawn, reference_spmm(a, drawn, request.n), request.n);
  std::string unusable;  // the failure that left the GPU unusable
  for (size_t i = 0; i < request.candidates.size(); ++i) {
    const ReducedPrecisionCandidate& c = request.candidates[i];
    Measurement& m = out.measured[i];
    if (job_of[i] == SIZE_MAX) {
      m.outcome = Outcome::kNotRun;
      m.detail = fmt::format("not compiled: its build would take about {:.0f} s, beyond the budget of {:.0f} s "
                             "(--real-compile-budget)", c.compile_seconds_estimate, request.max_compile_seconds);
      continue;
    }
    const CompileOutcome& built = compiled[job_of[i]];
    if (!built.ok()) {
      m.outcome = Outcome::kCompileFailed;
      m.detail = built.error;
      continue;
    }
    if (c.family == KernelFamily::kTensorCore && request.n % 8 != 0) {
      m.outcome = Outcome::kNotRun;
      m.detail = fmt::format("n = {} is not a multiple of 8: the file takes its generic path there", request.n);
      continue;
    }
    if (!unusable.empty()) {
      m.outcome = Outcome::kNotRun;
      m.detail = "not run: " + unusable;
      continue;
    }
    if (options.progress) options.progress({"timing kernels", i, request.candidates.size()});
    const RealKernel kernel = real_kernel(c, files[i], a, request.n, request.dtype, static_cast<int>(request.sm_count), *built.cubin);
    try {
      m = check_and_time_real_kernel(kernel, gpu, multiplies_b_as_given(request.dtype, c) ? *as_given : inputs, options.timing);
    } catch (const DriverError& e) {
      note_candidate(m, kernel);
      m.outcome = Outcome::kLaunchFailed;
      m.detail = e.what();
      if (is_sticky_error(e.code()))
        unusable = fmt::format("the {} kernel faulted before it ({}), which leaves the process unable to use the GPU",
                               c.label(), e.what());
    }
    if (m.outcome == Outcome::kOk && (out.fastest < 0 || m.time.median_ms < out.measured[static_cast<size_t>(out.fastest)].time.median_ms))
      out.fastest = static_cast<int32_t>(i);
  }
  out.seconds.emplace_back("check_and_time", seconds_since(clock));
  clock = std::chrono::steady_clock::now();
  if (options.time_sgemm) {
    if (options.progress) options.progress({fmt::format("timing {}", dense_gemm_name(request.dtype)), 0, 1});
    out.dense = unusable.empty() ? time_dense_gemm(gpu, a.rows, a.cols, request.n, request.dtype, options.timing)
                                 : SgemmTiming{false, "not timed: " + unusable, 0.0};
    out.seconds.emplace_back("dense", seconds_since(clock));
  }
  return out;
}

ReducedPrecisionChoice choose_reduced_precision(const ReducedPrecisionRequest& request, const ReducedPrecisionTiming& timing, int32_t rule) {
  SPMMC_CHECK(rule >= 0 && static_cast<size_t>(rule) < request.candidates.size(), "the rule's candidate is one of them");
  SPMMC_CHECK(timing.measured.size() == request.candidates.size(), "a measurement per candidate");
  ReducedPrecisionChoice out;
  const auto ok = [&](int32_t i) { return i >= 0 && timing.measured[static_cast<size_t>(i)].outcome == Outcome::kOk; };
  const auto ms = [&](int32_t i) { return timing.measured[static_cast<size_t>(i)].time.median_ms; };
  const std::string rule_label = request.candidates[static_cast<size_t>(rule)].label();
  out.chosen = rule;
  const ReducedPrecisionCandidate& rule_candidate = request.candidates[static_cast<size_t>(rule)];
  if (request.beyond_budget(rule_candidate)) {
    // As the float32 search keeps the heuristic's kernel where it cannot build it in the budget.
    out.why = fmt::format("the rule's {}: its build (about {:.0f} s) is beyond the compile budget of {:.0f} s, so it was "
                          "not timed and is kept", rule_label, rule_candidate.compile_seconds_estimate, request.max_compile_seconds);
  } else if (ok(rule)) {
    out.timed = true;
    if (timing.fastest != rule && ok(timing.fastest) && ms(timing.fastest) < (1.0 - kBeatHeuristicBy) * ms(rule)) {
      out.chosen = timing.fastest;
      out.why = fmt::format("timed: {} ({:.4f} ms) is {:.2f}x the rule's {} ({:.4f} ms)",
                            request.candidates[static_cast<size_t>(out.chosen)].label(), ms(out.chosen), ms(rule) / ms(out.chosen),
                            rule_label, ms(rule));
    } else {
      out.why = fmt::format("timed: the rule's {} ({:.4f} ms) is the fastest of the {} kernels timed", rule_label, ms(rule),
                            request.candidates.size());
    }
  } else if (ok(timing.fastest)) {
    out.timed = true;
    out.chosen = timing.fastest;
    out.why = fmt::format("timed: the rule's {} did not measure ({}); {} ({:.4f} ms) is the fastest that did", rule_label,
                          outcome_name(timing.measured[static_cast<size_t>(rule)].outcome),
                          request.candidates[static_cast<size_t>(out.chosen)].label(), ms(out.chosen));
  } else {
    out.why = fmt::format("the rule's {}: no kernel could be measured (see \"tuning\" in the report)", rule_label);
  }
  out.candidates = nlohmann::ordered_json::array();
  for (size_t i = 0; i < request.candidates.size(); ++i) {
    const ReducedPrecisionCandidate& c = request.candidates[i];
    const Measurement& m = timing.measured[i];
    const bool tc = c.family == KernelFamily::kTensorCore, unrolled = c.family == KernelFamily::kUnrolled;
    nlohmann::ordered_json j = {{"family", c.family_name()},
                                {"window_rows", tc ? nlohmann::ordered_json(c.rows->m1) : nlohmann::ordered_json(nullptr)},
                                {"tile", unrolled ? nlohmann::ordered_json(c.tile.label()) : nlohmann::ordered_json(nullptr)},
                                {"rule", static_cast<int32_t>(i) == rule},
                                {"chosen", static_cast<int32_t>(i) == out.chosen},
                                {"outcome", std::string(outcome_name(m.outcome))}};
    if (m.outcome == Outcome::kOk) {
      j["median_ms"] = m.time.median_ms;
      j["registers_per_thread"] = m.registers_per_thread;
    } else {
      j["detail"] = m.detail;
    }
    j["compile_seconds"] = m.compile_seconds;
    out.candidates.push_back(std::move(j));
  }
  const char* const dense_name = dense_gemm_name(request.dtype);
  if (timing.dense.available || !timing.dense.why_unavailable.empty()) {
    out.dense = {{"name", dense_name}, {"available", timing.dense.available}};
    if (!timing.dense.available) {
      out.dense["why_unavailable"] = timing.dense.why_unavailable;
    } else {
      out.dense["median_ms"] = timing.dense.median_ms;
      if (ok(out.chosen) && out.timed) {
        const double emitted = ms(out.chosen);
        out.dense["emitted_ms"] = emitted;
        out.dense["faster_than_emitted"] = timing.dense.median_ms < emitted;
        out.dense["ratio"] = emitted / timing.dense.median_ms;
        if (timing.dense.median_ms < emitted)
          out.note = fmt::format("{} (dense, {} on the tensor cores) took {:.4f} ms, the emitted sparse kernel {:.4f} ms: at "
                                 "this sparsity the dense layer is faster ({:.2f}x)",
                                 dense_name, request.dtype == DType::kFp16 ? "FP16" : request.dtype == DType::kBf16 ? "BF16" : "TF32",
                                 timing.dense.median_ms, emitted,
                                 emitted / timing.dense.median_ms);
      }
    }
  }
  return out;
}

}  // namespace spmmc
