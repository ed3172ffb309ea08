// The timed choice of a file of reduced precision (issue 26): where `spmmc compile --dtype
// fp16|bf16|tf32` has a GPU of the target's architecture, it compiles the NVRTC form of each family
// it could emit for A — in fp16 and bf16 the tensor-core family on windows of 8 rows and, where its
// staged kernel runs on them, of 16, and the generic family; in tf32 its tensor-core kernel — checks
// each against the float64 product of A and B rounded to the dtype (element by element, within the
// dtype's bound), times it as the emitted entry point launches it, and times cuBLAS's dense GEMM of
// the dtype (HGEMM, BF16 GEMM, TF32 GEMM) for the layer. The fastest correct kernel is emitted; the
// rules of --tune none decide where nothing was measured; and the report says when the dense layer is
// faster than the emitted kernel. docs/design/precision.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"
#include "compiler/planning/reorder_rows.h"
#include "runtime/cuda_driver.h"
#include "tuner/time_sgemm.h"
#include "tuner/tuning.h"

namespace spmmc {

// One kernel a file of the dtype could hold.
struct ReducedPrecisionCandidate {
  bool tensor_core = false;  // the tensor-core family on `windows`; else the generic family on `windows`' rows
  const RowTiling* windows = nullptr;  // tensor-core: windows of 8 or 16 rows; generic: its rows' tiling
  std::string label() const;           // "tensor-core, 16-row windows", "generic"
};

struct ReducedPrecisionRequest {
  DType dtype = DType::kFp16;  // fp16, bf16 or tf32
  int64_t n = 0;               // the n the file is tuned for
  std::string arch;            // the target's ("sm_90"): the GPU's
  int64_t sm_count = 0;        // the target's SMs, as the file is printed for
  std::vector<ReducedPrecisionCandidate> candidates;
};

struct ReducedPrecisionTiming {
  std::vector<Measurement> measured;  // per candidate, in the request's order
  SgemmTiming dense;                  // cuBLAS's GEMM of the dtype for the dense layer
  int32_t fastest = -1;               // the fastest Ok candidate; -1 when none
  std::vector<std::pair<std::string, double>> seconds;  // "compile", "check_and_time", "dense"
};

// Compiles (options.pool, options.cache), checks and times every candidate at request.n with
// options.timing and options.seed, in this process, then the dense GEMM; options.progress hears
// "compiling kernels", "timing kernels" and "timing cuBLAS HGEMM" (or the dtype's GEMM). A candidate's own failure
// is its outcome (CompileFailed with NVRTC's log, WrongResult, LaunchFailed; NotRun for the
// tensor-core family where n is not a multiple of 8, since the emitted file takes its generic path
// there, and for every kernel after one that left the GPU unusable). Never throws for a kernel's failure.
ReducedPrecisionTiming time_reduced_precision(const Csr& a, const ReducedPrecisionRequest& request, const GpuContext& gpu,
                                        const TuningOptions& options);

// What spmmc compile takes from the timing: the candidate to emit and why, the report's "tuning"
// candidates and "dense_gemm" objects, and the note when the dense GEMM beat the emitted kernel.
struct ReducedPrecisionChoice {
  int32_t chosen = -1;  // the candidate to emit
  bool timed = false;   // chosen by time (else `rule`, for want of a measured kernel)
  std::string why;
  nlohmann::ordered_json candidates;  // per candidate: family, window_rows, outcome, median_ms, ...
  nlohmann::ordered_json dense;       // {"name", "available", "median_ms", "emitted_ms", "faster_than_emitted", "ratio"}
  std::string note;                   // "cuBLAS HGEMM (dense, FP16 on the tensor cores) took S ms, ..."; empty
                                      // where the emitted kernel is faster or either was not measured
};

// Pure. `rule`: the candidate --tune none's rules would emit (the no-GPU default). The fastest Ok
// candidate is emitted where one was measured; a candidate replaces the rule's only where it is at
// least kBeatHeuristicBy faster than the rule's measured kernel (timing noise), and where the rule's
// kernel failed to measure, the fastest measured one is taken. With none measured, `rule`.
ReducedPrecisionChoice choose_reduced_precision(const ReducedPrecisionRequest& request, const ReducedPrecisionTiming& timing, int32_t rule);

}  // namespace spmmc
