// The timed choice of a file of reduced precision (issue 26): where `spmmc compile --dtype
// fp16|bf16|tf32` has a GPU of the target's architecture, it compiles the NVRTC form of each kernel
// the file could hold for A — the tensor-core family on windows of 8 rows and, in fp16 and bf16, of
// 16; the generic family; the unrolled family on the heuristic's
// tile (in tf32 always, its CUDA-core kernels being float32's; in fp16 and bf16 where the rules pick
// it) — checks each against the float64 product of the operands it multiplies (element by element,
// within the dtype's bound; tf32's CUDA-core kernels, which multiply B as given, within float32's),
// times it as the emitted entry point launches it, and times cuBLAS's dense GEMM of the dtype (HGEMM,
// BF16 GEMM, TF32 GEMM) for the layer. The fastest correct kernel is emitted; the rules of --tune none
// decide where nothing was measured; and the report says when the dense layer is faster than the
// emitted kernel. docs/design/precision.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"
#include "compiler/planning/reorder_rows.h"
#include "compiler/planning/tile_space.h"
#include "runtime/cuda_driver.h"
#include "tuner/time_sgemm.h"
#include "tuner/tuning.h"

namespace spmmc {

// One kernel a file of the dtype could hold.
struct ReducedPrecisionCandidate {
  KernelFamily family = KernelFamily::kTensorCore;
  // tensor-core: its windows of 8 or 16 rows; generic: the order of its rows; unrolled: the tile's A-tiles.
  const RowTiling* rows = nullptr;
  TileCandidate tile;                     // unrolled: the tile
  int64_t fmas_per_kernel = 0;            // unrolled: its split into kernels, as spmmc compile emits it
  double compile_seconds_estimate = 0.0;  // unrolled: the size guard's estimate of its build

  static ReducedPrecisionCandidate tensor_core(const RowTiling& windows);
  static ReducedPrecisionCandidate generic(const RowTiling& rows);
  static ReducedPrecisionCandidate unrolled(const RowTiling& tiles, const TileCandidate& tile, int64_t fmas_per_kernel,
                                            double compile_seconds_estimate);
  std::string label() const;  // "tensor-core, 16-row windows", "generic", "unrolled, tile 16x1024"
  const char* family_name() const;  // "tensor-core", "generic", "unrolled"
};

struct ReducedPrecisionRequest {
  DType dtype = DType::kFp16;  // fp16, bf16 or tf32
  int64_t n = 0;               // the n the file is tuned for
  std::string arch;            // the target's ("sm_90"): the GPU's
  int64_t sm_count = 0;        // the target's SMs, as the file is printed for
  // An unrolled candidate whose estimated build is beyond this many seconds is not compiled (NotRun),
  // as the float32 search leaves the heuristic's kernel unmeasured there (0: no limit).
  double max_compile_seconds = kMaxRealCompileSeconds;
  std::vector<ReducedPrecisionCandidate> candidates;
  bool beyond_budget(const ReducedPrecisionCandidate& c) const;
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
// there, for an unrolled kernel beyond the compile budget, and for every kernel after one that left
// the GPU unusable). Never throws for a kernel's failure.
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
// least kBeatHeuristicBy faster than the rule's measured kernel (timing noise); where the rule's
// kernel is beyond the compile budget (unmeasured, as in the float32 search) it is kept; where it
// failed to measure, the fastest measured one is taken. With none measured, `rule`.
ReducedPrecisionChoice choose_reduced_precision(const ReducedPrecisionRequest& request, const ReducedPrecisionTiming& timing, int32_t rule);

}  // namespace spmmc
