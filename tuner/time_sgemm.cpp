#include "tuner/time_sgemm.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "tuner/measurement.h"

namespace spmmc {
namespace {

// The few cuBLAS types and constants used, with the values of cublas_api.h (stable since CUDA
// 11): spmmc includes no cuBLAS header, so it builds where cuBLAS is absent. Enums are passed as
// int, as the C ABI passes them.
struct CublasContext;
using CublasHandle = CublasContext*;
using CublasStatus = int;
constexpr CublasStatus kCublasSuccess = 0;  // CUBLAS_STATUS_SUCCESS
constexpr int kCublasOpN = 0;               // CUBLAS_OP_N
constexpr int kCublasDefaultMath = 0;       // CUBLAS_DEFAULT_MATH: FP32 stays FP32 (no TF32)

using CublasCreate = CublasStatus (*)(CublasHandle*);
using CublasDestroy = CublasStatus (*)(CublasHandle);
using CublasSetStream = CublasStatus (*)(CublasHandle, void* /* cudaStream_t */);
using CublasSetMathMode = CublasStatus (*)(CublasHandle, int);
using CublasSgemm = CublasStatus (*)(CublasHandle, int, int, int, int, int, const float*, const float*, int, const float*,
                                     int, const float*, float*, int);
using CublasGemmEx = CublasStatus (*)(CublasHandle, int, int, int, int, int, const void*, const void*, int, int, const void*,
                                      int, int, const void*, void*, int, int, int, int);
using CublasStatusText = const char* (*)(CublasStatus);
// cudaDataType_t and cublasComputeType_t values (library_types.h, cublas_api.h) for cublasGemmEx.
constexpr int kCudaR16F = 2, kCudaR16BF = 14;
constexpr int kCudaR32F = 0;
constexpr int kCublasCompute32F = 68, kCublasCompute32FFastTf32 = 77;
constexpr int kCublasGemmDefault = -1;
// The distinct values of a dense operand (repeated beyond).
constexpr size_t kDenseValues = size_t{1} << 20;

// The entry points of one loaded cuBLAS. Never dlclose'd: cuBLAS's CUDA runtime stays
// initialised for the life of the process, as the driver does (runtime/cuda_driver.cpp).
struct Cublas {
  std::string library;
  CublasCreate create = nullptr;
  CublasDestroy destroy = nullptr;
  CublasSetStream set_stream = nullptr;
  CublasSetMathMode set_math_mode = nullptr;
  CublasSgemm sgemm = nullptr;
  CublasGemmEx gemm_ex = nullptr;            // optional (the half-precision GEMMs need it)
  CublasStatusText status_name = nullptr;    // optional (cuBLAS 11.4.2 and later)
  CublasStatusText status_string = nullptr;  // optional

  // "CUBLAS_STATUS_NOT_INITIALIZED (the CUDA Runtime initialization failed)", or the number.
  std::string describe(CublasStatus status) const {
    const char* name = status_name ? status_name(status) : nullptr;
    const char* text = status_string ? status_string(status) : nullptr;
    if (name == nullptr) return fmt::format("cuBLAS status {}", status);
    return text != nullptr ? fmt::format("{} ({})", name, text) : std::string(name);
  }
};

class CublasFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check(const Cublas& cublas, CublasStatus status, const char* call, const std::string& object) {
  if (status != kCublasSuccess)
    throw CublasFailure(fmt::format("{}({}) in {} failed: {}", call, object, cublas.library, cublas.describe(status)));
}

template <typename Fn>
bool resolve(void* library, const char* symbol, Fn& slot) {
  slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  return slot != nullptr;
}

// Opens `name` and resolves the entry points; false with `why` when it cannot.
bool load(const std::string& name, Cublas& cublas, std::string& why) {
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    why = error != nullptr ? error : fmt::format("{}: cannot be loaded (no reason given)", name);
    return false;
  }
  cublas = Cublas{};
  cublas.library = name;
  for (const auto& [symbol, found] :
       {std::pair<const char*, bool>{"cublasCreate_v2", resolve(library, "cublasCreate_v2", cublas.create)},
        {"cublasDestroy_v2", resolve(library, "cublasDestroy_v2", cublas.destroy)},
        {"cublasSetStream_v2", resolve(library, "cublasSetStream_v2", cublas.set_stream)},
        {"cublasSetMathMode", resolve(library, "cublasSetMathMode", cublas.set_math_mode)},
        {"cublasSgemm_v2", resolve(library, "cublasSgemm_v2", cublas.sgemm)}}) {
    if (!found) {
      why = fmt::format("{}: loaded, but it has no {} (not cuBLAS, or too old a cuBLAS)", name, symbol);
      return false;
    }
  }
  resolve(library, "cublasGemmEx", cublas.gemm_ex);
  resolve(library, "cublasGetStatusName", cublas.status_name);
  resolve(library, "cublasGetStatusString", cublas.status_string);
  return true;
}

// "<what>: A; B; C" from the reasons of each library tried.
std::string unavailable(const char* what, const std::vector<std::string>& reasons) {
  std::string why = fmt::format("{}: ", what);
  if (reasons.empty()) return why + "no library to try";
  for (size_t i = 0; i < reasons.size(); ++i) why += (i ? "; " : "") + reasons[i];
  return why;
}

// A cuBLAS handle, destroyed (never throwing) on destruction.
class Handle {
 public:
  Handle(const Cublas& cublas, CublasHandle handle) : cublas_(cublas), handle_(handle) {}
  ~Handle() { cublas_.destroy(handle_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  CublasHandle get() const { return handle_; }

 private:
  const Cublas& cublas_;
  CublasHandle handle_;
};

SgemmTiming unavailable_because(std::string why) {
  SgemmTiming t;
  t.why_unavailable = std::move(why);
  return t;
}

}  // namespace

bool cublas_loadable(const std::vector<std::string>& libraries, std::string* why) {
  std::vector<std::string> reasons;
  for (const std::string& name : libraries) {
    Cublas cublas;
    std::string reason;
    if (load(name, cublas, reason)) {
      if (why != nullptr) why->clear();
      return true;
    }
    reasons.push_back(std::move(reason));
  }
  if (why != nullptr) *why = unavailable("cuBLAS could not be loaded", reasons);
  return false;
}

const char* dense_gemm_name(DType dtype) {
  return dtype == DType::kFp16   ? "cuBLAS HGEMM"
         : dtype == DType::kBf16 ? "cuBLAS BF16 GEMM"
         : dtype == DType::kTf32 ? "cuBLAS TF32 GEMM"
                                 : "cuBLAS SGEMM";
}

SgemmTiming time_sgemm(const GpuContext& gpu, int64_t m, int64_t k, int64_t n, const TimingOptions& timing,
                       const std::vector<std::string>& libraries) {
  return time_dense_gemm(gpu, m, k, n, DType::kFp32, timing, libraries);
}

SgemmTiming time_dense_gemm(const GpuContext& gpu, int64_t m, int64_t k, int64_t n, DType dtype, const TimingOptions& timing,
                            const std::vector<std::string>& libraries) {
  // tf32 keeps float32 operands (its GEMM rounds them on the tensor cores).
  const DType storage = dtype_storage(dtype);
  const std::string shape = fmt::format("{} x {} times {} x {}", m, k, k, n);
  const char* const what = dense_gemm_name(dtype);
  if (m < 1 || k < 1 || n < 1 || m > INT_MAX || k > INT_MAX || n > INT_MAX)
    return unavailable_because(fmt::format("{} of {}: cuBLAS takes sizes in [1, {}]", what, shape, INT_MAX));
  try {
    // Buffers first: allocating makes the context current on this thread, and cuBLAS (its CUDA
    // runtime) adopts the current primary context.
    const auto a_count = static_cast<size_t>(m) * static_cast<size_t>(k);
    const auto b_count = static_cast<size_t>(k) * static_cast<size_t>(n);
    const auto c_count = static_cast<size_t>(m) * static_cast<size_t>(n);
    const size_t bytes = storage == DType::kFp32 ? sizeof(float) : sizeof(uint16_t);
    const DeviceBuffer a(gpu, a_count * bytes), b(gpu, b_count * bytes), c(gpu, c_count * bytes);
    // At most kDenseValues deterministic values, repeated over larger operands (the dense layer of a
    // graph can be gigabytes: drawing each value on the host took a minute on a 62586-node graph).
    const auto upload = [&](const DeviceBuffer& to, size_t count, uint64_t seed) {
      const std::vector<float> values = random_floats(std::min(count, kDenseValues), seed);
      std::vector<uint16_t> bits(storage == DType::kFp32 ? 0 : values.size());
      for (size_t i = 0; i < bits.size(); ++i) bits[i] = to_half_bits(values[i], dtype);
      const void* host = storage == DType::kFp32 ? static_cast<const void*>(values.data()) : static_cast<const void*>(bits.data());
      for (size_t at = 0; at < count; at += values.size())
        to.upload(host, std::min(values.size(), count - at) * bytes, at * bytes);
    };
    upload(a, a_count, 1);
    upload(b, b_count, 2);

    // The first library that loads and creates a handle (a cuBLAS newer than the driver loads
    // but fails to create one: the next, older one may work).
    std::vector<std::string> reasons;
    for (const std::string& name : libraries) {
      Cublas cublas;
      std::string reason;
      if (!load(name, cublas, reason)) {
        reasons.push_back(std::move(reason));
        continue;
      }
      CublasHandle raw = nullptr;
      if (const CublasStatus status = cublas.create(&raw); status != kCublasSuccess || raw == nullptr) {
        reasons.push_back(fmt::format("{}: cublasCreate_v2 failed: {}", name, cublas.describe(status)));
        continue;
      }
      const Handle handle(cublas, raw);
      if (dtype != DType::kFp32 && cublas.gemm_ex == nullptr) {
        reasons.push_back(fmt::format("{}: it has no cublasGemmEx (too old a cuBLAS for {})", name, what));
        continue;
      }
      check(cublas, cublas.set_stream(handle.get(), gpu.stream()), "cublasSetStream_v2", "the tuner's stream");
      check(cublas, cublas.set_math_mode(handle.get(), kCublasDefaultMath), "cublasSetMathMode", "CUBLAS_DEFAULT_MATH");
      // Row-major C = A * B is column-major C^T = B^T * A^T: B^T is n x k (ld n), A^T is k x m
      // (ld k), C^T is n x m (ld n).
      const float alpha = 1.0f, beta = 0.0f;
      const void* b_ptr = reinterpret_cast<const void*>(static_cast<uintptr_t>(b.address()));
      const void* a_ptr = reinterpret_cast<const void*>(static_cast<uintptr_t>(a.address()));
      void* c_ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(c.address()));
      const int in = static_cast<int>(n), im = static_cast<int>(m), ik = static_cast<int>(k);
      const std::string label = fmt::format("{} {}", what, shape);
      // float32: cublasSgemm_v2, strict FP32; fp16 and bf16: cublasGemmEx with float32 sums
      // (CUBLAS_COMPUTE_32F, on the tensor cores); tf32: float32 operands, CUBLAS_COMPUTE_32F_FAST_TF32.
      // As the benchmark's peers (tools/gpu_bench).
      const int type = dtype == DType::kFp16 ? kCudaR16F : dtype == DType::kBf16 ? kCudaR16BF : kCudaR32F;
      const int compute = dtype == DType::kTf32 ? kCublasCompute32FFastTf32 : kCublasCompute32F;
      const TimingStats stats = time_work(
          gpu,
          [&] {
            if (dtype == DType::kFp32) {
              check(cublas, cublas.sgemm(handle.get(), kCublasOpN, kCublasOpN, in, im, ik, &alpha, static_cast<const float*>(b_ptr), in,
                                         static_cast<const float*>(a_ptr), ik, &beta, static_cast<float*>(c_ptr), in),
                    "cublasSgemm_v2", shape);
            } else {
              check(cublas, cublas.gemm_ex(handle.get(), kCublasOpN, kCublasOpN, in, im, ik, &alpha, b_ptr, type, in, a_ptr, type, ik,
                                           &beta, c_ptr, type, in, compute, kCublasGemmDefault),
                    "cublasGemmEx", shape);
            }
          },
          timing, label);
      SgemmTiming t;
      t.available = true;
      t.median_ms = stats.median_ms;
      return t;
    }
    return unavailable_because(unavailable("no usable cuBLAS", reasons));
  } catch (const std::exception& e) {
    // A driver call (out of memory, a context a faulting candidate left unusable), a cuBLAS call:
    // the baseline is missing, the tuning is not affected.
    return unavailable_because(fmt::format("timing {} of {} failed: {}", what, shape, e.what()));
  }
}

}  // namespace spmmc
