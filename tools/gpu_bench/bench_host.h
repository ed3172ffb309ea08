// The host side of spmmc-gpu-bench: options, the matrix and B, timing statistics, the result
// line and the JSON record. Plain C++ (no CUDA) so it builds with the project's warnings;
// gpu_bench.cu holds everything that talks to the GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"
#include "compiler/formats/read_options.h"
#include "runtime/reference_spmm.h"

namespace spmmc::gpu_bench {

// Exit codes (after <sysexits.h>, like spmmc itself).
inline constexpr int kExitOk = 0;
inline constexpr int kExitWrongResult = 1;  // a kernel (spmmc's or a baseline) computed wrong numbers
inline constexpr int kExitUsage = 64;       // bad command line
inline constexpr int kExitDataError = 65;   // bad matrix data, or the kernel does not match A
inline constexpr int kExitNoInput = 66;     // matrix or kernel library missing / not loadable
inline constexpr int kExitNoGpu = 69;       // no CUDA device
inline constexpr int kExitGpuFailure = 70;  // a CUDA, cuSPARSE or cuBLAS call failed
inline constexpr int kExitCantCreate = 73;  // the --json file cannot be opened
inline constexpr int kExitIoError = 74;     // writing the --json file failed

// Every failure of the harness: a message and the exit code it maps to.
class BenchFailure : public std::runtime_error {
 public:
  BenchFailure(int exit_code, const std::string& message) : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

struct BenchOptions {
  std::string matrix;
  ReadOptions read;  // --seed, --values: the same as for `spmmc compile`
  int64_t n = 0;
  std::string kernel;  // path of libNAME.so
  std::string name;    // NAME
  int runs = 50;
  int warmup = 10;
  bool timing = true;  // --no-timing: correctness only
  bool spmmc_only = false;  // --spmmc-only: no baselines (for profilers: only spmmc's kernel runs)
  // --dense-limit: the dense GEMM is skipped where dense A would take more MiB (a graph's dense A is
  // no layer anyone would run dense, and filling and copying 17 GB of it for a 65 536-row graph took
  // seconds of every run).
  int64_t dense_limit_mib = 4096;
  std::string json;    // append one JSON object (one line) here
  std::string label;
  std::optional<double> nvcc_seconds;
  bool device_info = false;  // --device-info: print the GPU and exit (0, or 69 without one)
  DType dtype = DType::kFp32;  // --dtype: the kernel's B and C (as given to spmmc compile)
  bool help = false;
};

// The Sputnik source tree compiled into this binary (SPMMC_SPUTNIK_DIR at configure time), or
// empty where it was built without Sputnik.
std::string sputnik_source_dir();

// Parses argv[1..]; throws BenchFailure(kExitUsage) naming the option on any error.
BenchOptions parse_bench_options(const std::vector<std::string>& args);
std::string usage_text();

// Reads A exactly as `spmmc compile` does with the same --seed/--values and --dtype (its values
// rounded to the dtype). Reader errors become BenchFailure with spmmc's exit code (65 bad data,
// 66 missing file, 64 bad options).
Csr load_matrix(const BenchOptions& options);

// B (K x n, row-major): element (i, j) is uniform(-1, 1), a function of (seed, i, j) only.
std::vector<float> make_dense_b(int64_t k, int64_t n, uint64_t seed);
// The seed of B derived from the --seed of A (so that B differs from A's values).
uint64_t b_seed_for(uint64_t a_seed);

// Sputnik's row swizzle: the row ids of A sorted by row length, longest first (ties in row
// order), which CudaSpmm takes as `row_indices` to balance its blocks.
std::vector<int32_t> rows_longest_first(const Csr& a);

// A as a dense row-major M x K float matrix (for SGEMM).
std::vector<float> dense_row_major(const Csr& a);

// ||got - want||_F / ||want||_F and the count of NaN/Inf in `got`; in half precision and tf32 also
// the largest |got - want| over its bound (error_bounds).
struct Check {
  double rel_error = 0.0;
  int64_t non_finite = 0;
  double max_bound_ratio = 0.0;  // half precision and tf32: passed needs <= 1 (and no NaN/Inf)
  bool passed = false;  // float32: non_finite == 0 && rel_error < kTolerance
};
inline constexpr double kTolerance = 1e-5;
Check check_result(const std::vector<float>& got, const std::vector<double>& want);
// C of floats against the float64 reference and the per-element bounds (tf32: B and C are float,
// the tolerance is the bound's, not kTolerance).
Check check_bounded_result(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& bound);
// C of a half-precision kernel (its 16-bit elements) against the float64 reference and the
// per-element bounds.
Check check_half_result(const std::vector<uint16_t>& got, DType dtype, const std::vector<double>& want,
                        const std::vector<double>& bound);
// Whether results of `dtype` are judged by the per-element bound (fp16, bf16, tf32) rather than by
// the relative error against kTolerance (fp32).
bool checked_by_bound(DType dtype);
// rounded_b and error_bounds: the float64 reference's B and bounds (runtime/reference_spmm.h), which
// the tuner's check of half-precision kernels shares.
using spmmc::error_bounds;
using spmmc::rounded_b;

struct TimingStats {
  int runs = 0;
  double median_ms = 0.0;
  double p20_ms = 0.0;
  double p80_ms = 0.0;
  double min_ms = 0.0;
};
// Nearest-rank percentiles of the per-run times; `ms` must not be empty.
TimingStats summarize(std::vector<float> ms);

struct BaselineAlgorithm {
  std::string name;   // "CSR_ALG2"
  std::string status; // "ok", "unsupported", "wrong-result", "reads C with beta=0"
  Check check;
  std::optional<TimingStats> timing;
};

struct BenchResult {
  std::string matrix, label, kernel_name, device;
  DType dtype = DType::kFp32;
  int64_t m = 0, k = 0, n = 0, nnz = 0;
  int32_t m1 = 0, n1 = 0;
  std::string reorder;
  Check spmmc_check, spmmc_check_after_timing;
  bool spmmc_checked_after_timing = false;
  std::optional<TimingStats> spmmc_timing;
  std::vector<BaselineAlgorithm> cusparse;  // every algorithm tried
  std::optional<size_t> cusparse_best;      // index into cusparse of the fastest correct one
  std::optional<Check> sgemm_check;
  std::optional<TimingStats> sgemm_timing;
  std::string sgemm_note;  // why SGEMM was skipped, if it was
  // Sputnik (sputnik::CudaSpmm): "ok", "reads C with beta=0", "wrong-result", "failed: ..."
  // (a CUDA error of its launch), "skipped: ..." (not built in, or --spmmc-only).
  std::string sputnik_status;
  std::optional<Check> sputnik_check;
  std::optional<TimingStats> sputnik_timing;
  bool spmmc_only = false;  // baselines not run
  std::optional<double> nvcc_seconds;
  int runs = 0, warmup = 0;
  int64_t l2_flush_bytes = 0;
  bool passed = false;
  std::string failure;  // what failed, empty when passed
};

// The faster of cuSPARSE (its best algorithm) and Sputnik, among those that computed the right
// result and were timed: {"cuSPARSE CSR_ALG2" or "Sputnik", median ms}; nullopt when neither.
struct BestPeer {
  std::string name;
  double ms = 0.0;
};
std::optional<BestPeer> best_sparse_peer(const BenchResult& result);

// Useful TFLOP/s: 2 * nnz * n / time.
double useful_tflops(int64_t nnz, int64_t n, double ms);

// Fills passed / failure from the checks.
void decide_pass(BenchResult& result);

// The dense GEMM peer's name for the dtype: "SGEMM", "HGEMM", "BF16 GEMM", "TF32 GEMM".
const char* dense_gemm_name(DType dtype);
// How the peers compute for the dtype, for the JSON record: cuSPARSE's SpMM (tf32: FP32, cuSPARSE's
// SpMM has no TF32 compute type) and the dense GEMM's cublasGemmEx.
std::string cusparse_math(DType dtype);
std::string dense_gemm_math(DType dtype);

// One line: "PASS matrix ... spmmc 0.123 ms ...".
std::string result_line(const BenchResult& result);

// Appends the result as one JSON object on one line to `path` (JSON Lines).
void append_json(const std::string& path, const BenchResult& result);

}  // namespace spmmc::gpu_bench
