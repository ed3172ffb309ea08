// spmmc-gpu-bench: checks and times one spmmc-emitted kernel (loaded with dlopen) against a
// float64 CPU reference, cuSPARSE SpMM, Sputnik's CudaSpmm (where compiled in: SPMMC_SPUTNIK_DIR
// in CMakeLists.txt) and cuBLAS SGEMM. Usage: bench_host.cpp (usage_text).
//
// Method: every kernel runs on one stream; C is filled with NaN (0xFF bytes) before every run,
// L2 is flushed by writing a buffer of 2x the L2 size before every run, both outside the timed
// region; each timed run sits between two CUDA events; `--warmup` untimed runs come first and
// the median (p20, p80) of `--runs` timed runs is reported. Every CUDA, cuSPARSE and cuBLAS call
// is checked; a failure names the call and exits 70.
#include <dlfcn.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#if defined(SPMMC_WITH_SPUTNIK)
#include "sputnik/spmm/cuda_spmm.h"
#endif

#include "codegen/templates/spmmc_kernel_info.h"
#include "runtime/reference_spmm.h"
#include "tools/gpu_bench/bench_host.h"

namespace spmmc::gpu_bench {
namespace {

std::string where(const char* file, int line) { return std::string(file) + ":" + std::to_string(line) + ": "; }

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw BenchFailure(kExitGpuFailure, where(file, line) + call + " failed: " + cudaGetErrorName(status) + " (" +
                                          cudaGetErrorString(status) + ")");
}
void check_cusparse(cusparseStatus_t status, const char* call, const char* file, int line) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  throw BenchFailure(kExitGpuFailure, where(file, line) + call + " failed: " + cusparseGetErrorName(status) + " (" +
                                          cusparseGetErrorString(status) + ")");
}
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw BenchFailure(kExitGpuFailure, where(file, line) + call + " failed: " + cublasGetStatusName(status) + " (" +
                                          cublasGetStatusString(status) + ")");
}
#define CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)
#define CUSPARSE_CHECK(call) check_cusparse((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

// Runs `release` when the scope ends (handles and buffers; errors on release are ignored: the
// process is about to report the first failure or has already succeeded).
class OnExit {
 public:
  explicit OnExit(std::function<void()> release) : release_(std::move(release)) {}
  ~OnExit() {
    if (release_) release_();
  }
  OnExit(const OnExit&) = delete;
  OnExit& operator=(const OnExit&) = delete;

 private:
  std::function<void()> release_;
};

// A device allocation of `count` elements (at least one, so that empty matrices get a pointer).
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count) : count_(count) {
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes_allocated()));
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return ptr_; }
  size_t bytes() const { return count_ * sizeof(T); }
  void upload(const std::vector<T>& host) {
    if (!host.empty()) CUDA_CHECK(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  size_t bytes_allocated() const { return count_ > 0 ? bytes() : sizeof(T); }
  T* ptr_ = nullptr;
  size_t count_;
};

// The entry point, B and C as untyped pointers: float, __half or __nv_bfloat16 by NAME_info()->dtype
// (checked against --dtype when the kernel is loaded).
using KernelFn = cudaError_t (*)(const void*, void*, int64_t, cudaStream_t);
using InfoFn = const spmmc_kernel_info* (*)(void);

struct LoadedKernel {
  KernelFn run = nullptr;
  const spmmc_kernel_info* info = nullptr;
};

std::string text_or_null(const char* s) { return s != nullptr ? std::string(s) : std::string("(null)"); }

// dlopen + dlsym + the checks of NAME_info() against A. Needs no GPU: the library's CUDA runtime
// only talks to the driver at the first call.
LoadedKernel load_kernel(const BenchOptions& o, const Csr& a) {
  const std::string path = o.kernel.find('/') == std::string::npos ? "./" + o.kernel : o.kernel;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open for the process's life
  if (handle == nullptr) throw BenchFailure(kExitNoInput, "cannot load the kernel library: " + text_or_null(dlerror()));
  LoadedKernel k;
  auto symbol = [&](const std::string& name) {
    dlerror();
    void* s = dlsym(handle, name.c_str());
    if (s == nullptr)
      throw BenchFailure(kExitDataError, o.kernel + ": no symbol '" + name + "' (is --name right?): " +
                                             text_or_null(dlerror()));
    return s;
  };
  k.run = reinterpret_cast<KernelFn>(symbol(o.name));
  const auto info_fn = reinterpret_cast<InfoFn>(symbol(o.name + "_info"));
  k.info = info_fn();
  if (k.info == nullptr) throw BenchFailure(kExitDataError, o.kernel + ": " + o.name + "_info() returned NULL");
  const spmmc_kernel_info& i = *k.info;
  std::string mismatch;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) mismatch += "\n  " + what;
  };
  expect(i.abi_version == SPMMC_KERNEL_ABI_VERSION, "abi_version " + std::to_string(i.abi_version) +
                                                        ", this harness reads " +
                                                        std::to_string(SPMMC_KERNEL_ABI_VERSION));
  if (i.abi_version == SPMMC_KERNEL_ABI_VERSION) {
    expect(text_or_null(i.name) == o.name, "name '" + text_or_null(i.name) + "', expected '" + o.name + "'");
    expect(i.m == a.rows, "m " + std::to_string(i.m) + ", but A has " + std::to_string(a.rows) + " rows");
    expect(i.k == a.cols, "k " + std::to_string(i.k) + ", but A has " + std::to_string(a.cols) + " columns");
    expect(i.nnz == a.nnz(), "nnz " + std::to_string(i.nnz) + ", but A has " + std::to_string(a.nnz()));
    expect(text_or_null(i.dtype) == dtype_info_name(o.dtype),
           "dtype '" + text_or_null(i.dtype) + "', expected '" + dtype_info_name(o.dtype) + "' (--dtype " + dtype_name(o.dtype) + ")");
    expect(text_or_null(i.b_layout) == "row-major", "b_layout '" + text_or_null(i.b_layout) + "'");
    expect(text_or_null(i.c_layout) == "row-major", "c_layout '" + text_or_null(i.c_layout) + "'");
  }
  if (!mismatch.empty())
    throw BenchFailure(kExitDataError, o.kernel + " does not match " + o.matrix + " (were they compiled with the same "
                                           "--seed/--values?):" + mismatch);
  return k;
}

struct Device {
  cudaDeviceProp prop{};
  std::string description;
};

// The GPU, or BenchFailure(kExitNoGpu).
Device open_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear it
    throw BenchFailure(kExitNoGpu, std::string("no CUDA GPU available (cudaGetDeviceCount: ") +
                                       (status != cudaSuccess ? cudaGetErrorName(status) : "0 devices") +
                                       "): nothing to run here");
  }
  Device d;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&d.prop, device));
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  char text[512];
  std::snprintf(text, sizeof text, "%s (sm_%d%d, %d SMs, L2 %.1f MB; driver CUDA %d.%d, runtime %d.%d)", d.prop.name,
                d.prop.major, d.prop.minor, d.prop.multiProcessorCount, d.prop.l2CacheSize / 1e6, driver / 1000,
                driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  d.description = text;
  return d;
}

// Runs kernels the one way this harness measures them (see the file comment).
class Runner {
 public:
  Runner(cudaStream_t stream, void* c, size_t c_bytes, size_t flush_bytes)
      : stream_(stream), c_(c), c_bytes_(c_bytes), flush_(flush_bytes) {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~Runner() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  size_t flush_bytes() const { return flush_.bytes(); }

  // One run outside timing (then download_c or download_half).
  void run_once(const std::function<void()>& launch, int fill_byte) {
    prepare(fill_byte);
    launch();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // `warmup` untimed, then `runs` timed runs; returns the milliseconds of each.
  std::vector<float> time(const std::function<void()>& launch, int warmup, int runs, int fill_byte) {
    for (int w = 0; w < warmup; ++w) {
      prepare(fill_byte);
      launch();
    }
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<float> ms;
    ms.reserve(static_cast<size_t>(runs));
    for (int r = 0; r < runs; ++r) {
      prepare(fill_byte);
      CUDA_CHECK(cudaEventRecord(start_, stream_));
      launch();
      CUDA_CHECK(cudaEventRecord(stop_, stream_));
      CUDA_CHECK(cudaEventSynchronize(stop_));
      float t = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&t, start_, stop_));
      ms.push_back(t);
    }
    return ms;
  }

  std::vector<float> download_c() const {
    std::vector<float> host(c_bytes_ / sizeof(float));
    CUDA_CHECK(cudaMemcpy(host.data(), c_, c_bytes_, cudaMemcpyDeviceToHost));
    return host;
  }
  std::vector<uint16_t> download_half() const {  // C of 16-bit elements
    std::vector<uint16_t> host(c_bytes_ / sizeof(uint16_t));
    CUDA_CHECK(cudaMemcpy(host.data(), c_, c_bytes_, cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  // Evicts L2 (writing 2x its size) and fills C, both on the stream before the timed region.
  void prepare(int fill_byte) {
    CUDA_CHECK(cudaMemsetAsync(flush_.get(), ++flush_round_ & 0x7f, flush_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(c_, fill_byte, c_bytes_, stream_));
  }

  cudaStream_t stream_;
  void* c_;
  size_t c_bytes_;
  DeviceBuffer<unsigned char> flush_;
  int flush_round_ = 0;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

constexpr int kNanFill = 0xFF;  // 0xFFFFFFFF is a NaN, and so is 0xFFFF in fp16 and bf16
constexpr int kZeroFill = 0x00;

void progress(const std::string& text) { std::fprintf(stderr, "spmmc-gpu-bench: %s\n", text.c_str()); }

// What C holds now, checked: check_result in float32, check_half_result in half precision (with
// the bounds of the kernel's kind: a sparse kernel's or a dense GEMM's).
using CheckC = std::function<Check()>;

// A baseline's check: with C filled with NaN first; if only NaN survive, once more with C
// zeroed (a library may read C although beta = 0). Returns the status and the fill to time with.
std::pair<std::string, int> check_baseline(Runner& runner, const std::function<void()>& launch, const CheckC& check_c,
                                           Check& check) {
  runner.run_once(launch, kNanFill);
  check = check_c();
  if (check.passed) return {"ok", kNanFill};
  if (check.non_finite > 0) {
    runner.run_once(launch, kZeroFill);
    const Check zeroed = check_c();
    if (zeroed.passed) {
      check = zeroed;
      return {"reads C with beta=0", kZeroFill};
    }
  }
  return {"wrong-result", kNanFill};
}

// The CUDA data type of the dtype's elements (tf32's are floats).
cudaDataType_t cuda_type(DType dtype) {
  return dtype == DType::kFp16 ? CUDA_R_16F : dtype == DType::kBf16 ? CUDA_R_16BF : CUDA_R_32F;
}

// Values as the device holds them in the dtype: float32 bytes (fp32, tf32), or the 16-bit forms.
std::vector<unsigned char> device_bytes(const std::vector<float>& values, DType dtype) {
  std::vector<unsigned char> out(values.size() * static_cast<size_t>(dtype_bytes(dtype)));
  if (!dtype_is_half(dtype)) {
    if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t bits = to_half_bits(values[i], dtype);
    std::memcpy(out.data() + 2 * i, &bits, 2);
  }
  return out;
}

void run_cusparse(const Csr& a, const void* d_b, void* d_c, int64_t n, cudaStream_t stream, Runner& runner,
                  const BenchOptions& o, const CheckC& check_c, BenchResult& result) {
  cusparseHandle_t handle = nullptr;
  CUSPARSE_CHECK(cusparseCreate(&handle));
  OnExit destroy_handle([&] { cusparseDestroy(handle); });
  CUSPARSE_CHECK(cusparseSetStream(handle, stream));

  DeviceBuffer<int32_t> row_ptr(a.row_ptr.size()), col_idx(a.col_idx.size());
  DeviceBuffer<unsigned char> values(a.values.size() * static_cast<size_t>(dtype_bytes(o.dtype)));
  row_ptr.upload(a.row_ptr);
  col_idx.upload(a.col_idx);
  values.upload(device_bytes(a.values, o.dtype));
  const cudaDataType_t type = cuda_type(o.dtype);  // A, B and C; compute in float32

  cusparseSpMatDescr_t mat_a = nullptr;
  cusparseDnMatDescr_t mat_b = nullptr, mat_c = nullptr;
  CUSPARSE_CHECK(cusparseCreateCsr(&mat_a, a.rows, a.cols, a.nnz(), row_ptr.get(), col_idx.get(), values.get(),
                                   CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
  OnExit destroy_a([&] { cusparseDestroySpMat(mat_a); });
  CUSPARSE_CHECK(cusparseCreateDnMat(&mat_b, a.cols, n, n, const_cast<void*>(d_b), type, CUSPARSE_ORDER_ROW));
  OnExit destroy_b([&] { cusparseDestroyDnMat(mat_b); });
  CUSPARSE_CHECK(cusparseCreateDnMat(&mat_c, a.rows, n, n, d_c, type, CUSPARSE_ORDER_ROW));
  OnExit destroy_c([&] { cusparseDestroyDnMat(mat_c); });

  const float alpha = 1.0f, beta = 0.0f;
  const std::pair<cusparseSpMMAlg_t, const char*> algorithms[] = {
      {CUSPARSE_SPMM_ALG_DEFAULT, "DEFAULT"},
      {CUSPARSE_SPMM_CSR_ALG1, "CSR_ALG1"},
      {CUSPARSE_SPMM_CSR_ALG2, "CSR_ALG2"},
      {CUSPARSE_SPMM_CSR_ALG3, "CSR_ALG3"},
  };
  const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
  for (const auto& algorithm : algorithms) {
    const cusparseSpMMAlg_t alg = algorithm.first;
    const char* const alg_name = algorithm.second;
    BaselineAlgorithm record;
    record.name = alg_name;
    size_t workspace_bytes = 0;
    cusparseStatus_t status = cusparseSpMM_bufferSize(handle, op, op, &alpha, mat_a, mat_b, &beta, mat_c, CUDA_R_32F,
                                                      alg, &workspace_bytes);
    // NOT_SUPPORTED, or (seen with half-precision types) another refusal of the combination: skipped.
    if (status == CUSPARSE_STATUS_NOT_SUPPORTED || (status != CUSPARSE_STATUS_SUCCESS && dtype_is_half(o.dtype))) {
      progress(std::string("cuSPARSE ") + alg_name + ": " + cusparseGetErrorName(status) + " for CSR with row-major B and C of " +
               dtype_name(o.dtype) + " (skipped)");
      record.status = "unsupported";
      result.cusparse.push_back(record);
      continue;
    }
    check_cusparse(status, (std::string("cusparseSpMM_bufferSize(") + alg_name + ")").c_str(), __FILE__, __LINE__);
    DeviceBuffer<unsigned char> workspace(workspace_bytes);
    status = cusparseSpMM_preprocess(handle, op, op, &alpha, mat_a, mat_b, &beta, mat_c, CUDA_R_32F, alg,
                                     workspace.get());
    if (status == CUSPARSE_STATUS_NOT_SUPPORTED || (status != CUSPARSE_STATUS_SUCCESS && dtype_is_half(o.dtype))) {
      progress(std::string("cuSPARSE ") + alg_name + ": preprocessing: " + cusparseGetErrorName(status) + " (skipped)");
      record.status = "unsupported";
      result.cusparse.push_back(record);
      continue;
    }
    check_cusparse(status, (std::string("cusparseSpMM_preprocess(") + alg_name + ")").c_str(), __FILE__, __LINE__);
    const std::string call = std::string("cusparseSpMM(") + alg_name + ")";
    auto launch = [&] {
      check_cusparse(cusparseSpMM(handle, op, op, &alpha, mat_a, mat_b, &beta, mat_c, CUDA_R_32F, alg, workspace.get()),
                     call.c_str(), __FILE__, __LINE__);
    };
    const auto [status_text, fill] = check_baseline(runner, launch, check_c, record.check);
    record.status = status_text;
    if (record.status == "reads C with beta=0")
      progress(std::string("cuSPARSE ") + alg_name + ": NaN in C survived beta = 0; timed with C zeroed instead");
    if (record.status != "wrong-result" && o.timing) record.timing = summarize(runner.time(launch, o.warmup, o.runs, fill));
    result.cusparse.push_back(record);
  }
  for (size_t i = 0; i < result.cusparse.size(); ++i) {
    const auto& alg = result.cusparse[i];
    if (alg.status == "unsupported" || alg.status == "wrong-result") continue;
    if (!result.cusparse_best) {
      result.cusparse_best = i;
      continue;
    }
    const auto& best = result.cusparse[*result.cusparse_best];
    if (alg.timing && best.timing && alg.timing->median_ms < best.timing->median_ms) result.cusparse_best = i;
  }
}

// The dense GEMM of the dtype: SGEMM (strict float32), HGEMM or BF16 GEMM (tensor cores, float32
// compute), or for tf32 the TF32 GEMM (float32 A, B and C, CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor
// cores, as cuBLAS runs SGEMM when a user allows TF32), of the dense A.
void run_sgemm(const Csr& a, const void* d_b, void* d_c, int64_t n, cudaStream_t stream, Runner& runner,
               const BenchOptions& o, const CheckC& check_c, BenchResult& result) {
  const size_t dense_bytes =
      static_cast<size_t>(a.rows) * static_cast<size_t>(a.cols) * static_cast<size_t>(dtype_bytes(o.dtype));
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::string dense_mib = std::to_string(dense_bytes >> 20);
  if (dense_bytes > (static_cast<size_t>(o.dense_limit_mib) << 20))
    result.sgemm_note = "skipped: dense A (" + dense_mib + " MiB) exceeds --dense-limit " + std::to_string(o.dense_limit_mib) + " MiB";
  else if (dense_bytes > free_bytes / 2)
    result.sgemm_note = "skipped: dense A (" + dense_mib + " MiB) exceeds half the free memory";
  if (!result.sgemm_note.empty()) {
    progress(std::string(dense_gemm_name(o.dtype)) + " " + result.sgemm_note);
    return;
  }
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  OnExit destroy_handle([&] { cublasDestroy(handle); });
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  // Plain FP32: the default math mode never uses TF32 for SGEMM (only CUBLAS_TF32_TENSOR_OP_MATH
  // does); the float64 check below would catch TF32's ~1e-3 error anyway. For tf32 the compute type
  // asks for TF32 itself.
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const cublasComputeType_t compute = o.dtype == DType::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  DeviceBuffer<unsigned char> dense_a(dense_bytes);
  dense_a.upload(device_bytes(dense_row_major(a), o.dtype));
  const cudaDataType_t type = cuda_type(o.dtype);
  const float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A*B is column-major C^T = B^T * A^T: B^T is n x K (ld n), A^T is K x M (ld K).
  const int cols = static_cast<int>(n), rows = a.rows, inner = a.cols;
  auto launch = [&] {
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, cols, rows, inner, &alpha, d_b, type, cols,
                              dense_a.get(), type, inner, &beta, d_c, type, cols, compute, CUBLAS_GEMM_DEFAULT));
  };
  Check check;
  const auto [status, fill] = check_baseline(runner, launch, check_c, check);
  result.sgemm_check = check;
  if (status == "reads C with beta=0") result.sgemm_note = status;
  if (status != "wrong-result" && o.timing) result.sgemm_timing = summarize(runner.time(launch, o.warmup, o.runs, fill));
}

// Sputnik, as its README says: CSR A (32-bit), row_indices = the rows by length, longest first,
// B and C row-major. Its kernel choice depends on n (vector widths for n % 4 == 0, tiles of 64
// columns for n % 64 == 0, scalar code for odd n). A launch that Sputnik refuses (e.g. a grid
// beyond 65535 columns of blocks) or that faults is recorded as "failed: ..." and excludes it;
// it runs last so that a fault cannot cost the other measurements.
void run_sputnik(const Csr& a, const float* d_b, float* d_c, int64_t n, cudaStream_t stream, Runner& runner,
                 const BenchOptions& o, const CheckC& check_c, BenchResult& result) {
#if !defined(SPMMC_WITH_SPUTNIK)
  (void)a, (void)d_b, (void)d_c, (void)n, (void)stream, (void)runner, (void)o, (void)check_c;
  result.sputnik_status =
      "skipped: spmmc-gpu-bench was built without Sputnik (configure with -DSPMMC_SPUTNIK_DIR=<folder holding "
      "sputnik/spmm/cuda_spmm.cu.cc>)";
  progress("Sputnik " + result.sputnik_status);
#else
  DeviceBuffer<int32_t> row_ptr(a.row_ptr.size()), col_idx(a.col_idx.size()), row_order(static_cast<size_t>(a.rows));
  DeviceBuffer<float> values(a.values.size());
  row_ptr.upload(a.row_ptr);
  col_idx.upload(a.col_idx);
  values.upload(a.values);
  row_order.upload(rows_longest_first(a));
  const int m = a.rows, k = a.cols, columns = static_cast<int>(n), nnz = static_cast<int>(a.nnz());
  auto launch = [&] {
    check_cuda(sputnik::CudaSpmm(m, k, columns, nnz, row_order.get(), values.get(), row_ptr.get(), col_idx.get(), d_b,
                                 d_c, stream),
               "sputnik::CudaSpmm", __FILE__, __LINE__);
  };
  try {
    Check check;
    const auto [status, fill] = check_baseline(runner, launch, check_c, check);
    result.sputnik_check = check;
    result.sputnik_status = status;
    if (status == "reads C with beta=0") progress("Sputnik: NaN in C survived; timed with C zeroed instead");
    if (status == "wrong-result") progress("Sputnik: wrong result (excluded from the comparison)");
    if (status != "wrong-result" && o.timing) result.sputnik_timing = summarize(runner.time(launch, o.warmup, o.runs, fill));
  } catch (const BenchFailure& e) {
    result.sputnik_status = std::string("failed: ") + e.what();
    result.sputnik_timing.reset();
    progress("Sputnik " + result.sputnik_status);
    cudaGetLastError();  // clear a non-sticky launch error
  }
#endif
}

int run(const std::vector<std::string>& args) {
  const BenchOptions o = parse_bench_options(args);
  if (o.help) {
    std::fputs(usage_text().c_str(), stdout);
    return kExitOk;
  }
  if (o.device_info) {
    std::printf("%s\n", open_device().description.c_str());
    return kExitOk;
  }
  const Csr a = load_matrix(o);
  const LoadedKernel kernel = load_kernel(o, a);
  const Device device = open_device();  // exits 69 here without a GPU

  BenchResult result;
  result.matrix = o.matrix;
  result.label = o.label;
  result.kernel_name = o.name;
  result.dtype = o.dtype;
  result.device = device.description;
  result.m = a.rows;
  result.k = a.cols;
  result.n = o.n;
  result.nnz = a.nnz();
  result.m1 = kernel.info->m1;
  result.n1 = kernel.info->n1;
  result.reorder = text_or_null(kernel.info->reorder);
  result.nvcc_seconds = o.nvcc_seconds;
  result.runs = o.timing ? o.runs : 0;
  result.warmup = o.timing ? o.warmup : 0;

  const int64_t n = o.n;
  // In half precision B holds values of the dtype; the reference computes with them and A's
  // rounded values in float64 (docs/design/precision.md). In tf32 B is float: spmmc's kernel gets it
  // as drawn and rounds it itself (cvt.rna.tf32.f32); the reference, and the peers (so that they
  // multiply the same values and are held to the same bound), get it rounded to tf32 (a tf32 file of a
  // CUDA-core family multiplies B as drawn: below).
  const std::vector<float> drawn = make_dense_b(a.cols, n, b_seed_for(o.read.seed));
  const std::vector<float> b = rounded_b(drawn, o.dtype);
  const std::vector<double> reference = reference_spmm(a, b, n);
  const bool half = dtype_is_half(o.dtype), bounded = checked_by_bound(o.dtype), tf32 = o.dtype == DType::kTf32;
  std::vector<double> sparse_bound, dense_bound;  // per element of C, half precision and tf32 only
  if (bounded) {
    sparse_bound = error_bounds(a, b, n, o.dtype, reference, false);
    dense_bound = error_bounds(a, b, n, o.dtype, reference, true);
  }

  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  OnExit destroy_stream([&] { cudaStreamDestroy(stream); });
  DeviceBuffer<unsigned char> d_b(b.size() * static_cast<size_t>(dtype_bytes(o.dtype)));
  d_b.upload(device_bytes(tf32 ? drawn : b, o.dtype));
  // The peers' B: the same buffer, except in tf32 (B rounded to tf32, in a buffer of its own).
  DeviceBuffer<unsigned char> d_b_rounded(tf32 ? b.size() * sizeof(float) : 0);
  if (tf32) d_b_rounded.upload(device_bytes(b, o.dtype));
  const void* const d_b_peers = tf32 ? static_cast<const void*>(d_b_rounded.get()) : static_cast<const void*>(d_b.get());
  DeviceBuffer<unsigned char> d_c(static_cast<size_t>(a.rows) * static_cast<size_t>(n) * static_cast<size_t>(dtype_bytes(o.dtype)));
  const size_t l2 = device.prop.l2CacheSize > 0 ? static_cast<size_t>(device.prop.l2CacheSize) : size_t{64} << 20;
  Runner runner(stream, d_c.get(), d_c.bytes(), 2 * l2);
  const auto checker = [&](const std::vector<double>& bound) -> CheckC {
    if (!bounded) return [&] { return check_result(runner.download_c(), reference); };
    if (!half) return [&, bound_ptr = &bound] { return check_bounded_result(runner.download_c(), reference, *bound_ptr); };
    return [&, bound_ptr = &bound] { return check_half_result(runner.download_half(), o.dtype, reference, *bound_ptr); };
  };
  const CheckC check_sparse = checker(sparse_bound), check_dense = checker(dense_bound);
  // A tf32 file of a CUDA-core family (not the tensor cores' a_format) is float32's code: it multiplies
  // B as drawn, so it is checked against that product, within float32's per-element bound.
  const bool b_as_given = tf32 && text_or_null(kernel.info->a_format) != "vector-blocks-constants";
  std::vector<double> reference_given, bound_given;
  if (b_as_given) {
    reference_given = reference_spmm(a, drawn, n);
    bound_given = error_bounds(a, drawn, n, DType::kFp32, reference_given, false);
  }
  const CheckC check_spmmc =
      b_as_given ? CheckC([&] { return check_bounded_result(runner.download_c(), reference_given, bound_given); }) : check_sparse;
  result.l2_flush_bytes = static_cast<int64_t>(runner.flush_bytes());

  const std::string call = o.name + "(B, C, n, stream)";
  auto launch_spmmc = [&] {
    const cudaError_t status = kernel.run(d_b.get(), d_c.get(), n, stream);
    check_cuda(status, call.c_str(), __FILE__, __LINE__);
  };
  runner.run_once(launch_spmmc, kNanFill);
  result.spmmc_check = check_spmmc();
  if (o.timing) {
    result.spmmc_timing = summarize(runner.time(launch_spmmc, o.warmup, o.runs, kNanFill));
    // The last timed run started from a NaN-filled C too: check what it left.
    result.spmmc_check_after_timing = check_spmmc();
    result.spmmc_checked_after_timing = true;
  }
  result.spmmc_only = o.spmmc_only;
  if (o.spmmc_only) {
    result.sputnik_status = "skipped: --spmmc-only";
  } else {
    if (tf32) progress("cuSPARSE: FP32 (its SpMM has no TF32 compute type), on A and B rounded to tf32");
    run_cusparse(a, d_b_peers, d_c.get(), n, stream, runner, o, check_sparse, result);
    run_sgemm(a, d_b_peers, d_c.get(), n, stream, runner, o, check_dense, result);
    if (half) {
      result.sputnik_status = "skipped: float32 only here";
      progress("Sputnik " + result.sputnik_status);
    } else {  // float32 B and C (in tf32 B rounded to tf32: FP32 CUDA cores on the same values)
      run_sputnik(a, static_cast<const float*>(d_b_peers), reinterpret_cast<float*>(d_c.get()), n, stream, runner, o,
                  check_sparse, result);
    }
  }

  decide_pass(result);
  std::printf("%s\n", result_line(result).c_str());
  std::fflush(stdout);
  if (!o.json.empty()) append_json(o.json, result);
  return result.passed ? kExitOk : kExitWrongResult;
}

}  // namespace
}  // namespace spmmc::gpu_bench

int main(int argc, char** argv) {
  using namespace spmmc::gpu_bench;
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const BenchFailure& e) {
    std::fprintf(stderr, "spmmc-gpu-bench: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spmmc-gpu-bench: internal error: %s\n", e.what());
    return kExitGpuFailure;
  }
}
