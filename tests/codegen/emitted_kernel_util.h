// Helpers for the tests that build kernels emitted by `spmmc compile` and run them on the CPU
// through tests/cuda_emulation (emitted_kernel_cpu_test.cpp, emitted_kernel_nvcc_test.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "codegen/templates/spmmc_kernel_info.h"
#include "compiler/csr.h"

namespace spmmc::test {

// Runs a shell command, stdout and stderr into `log`; returns its exit status (or 128 + signal).
int run_command(const std::string& command, std::string& log);

// Quotes one word for /bin/sh.
std::string quote(const std::string& word);

// Builds `sources` (emitted .cu files) as host C++ against the CUDA emulation into the shared
// object `so` with SPMMC_CXX (-std=c++17 -O1 -shared -fPIC, -Wall -Wextra -Werror); `includes`
// are extra -I folders. Returns the compiler's exit status; its output goes to `log`.
int build_emulated(const std::vector<std::filesystem::path>& sources, const std::filesystem::path& so,
                   std::string& log, const std::vector<std::filesystem::path>& includes = {});

// An emitted kernel loaded from a shared object built by build_emulated.
class EmulatedKernel {
 public:
  // The entry point's C ABI: cudaError_t is an int-sized enum, cudaStream_t a pointer.
  using Entry = int (*)(const float* b, float* c, int64_t n, void* stream);
  using Info = const spmmc_kernel_info* (*)();

  // dlopens `so` (RTLD_NOW | RTLD_LOCAL) and finds NAME and NAME_info; `error` says why not.
  static std::unique_ptr<EmulatedKernel> load(const std::filesystem::path& so, const std::string& name, std::string& error);
  ~EmulatedKernel();
  EmulatedKernel(const EmulatedKernel&) = delete;
  EmulatedKernel& operator=(const EmulatedKernel&) = delete;

  Entry entry = nullptr;
  Info info = nullptr;

 private:
  EmulatedKernel() = default;
  void* handle_ = nullptr;
};

// C = A * B the way every emitted kernel computes each element: fmaf over the row's non-zeros
// in column order, from 0.0f. The emitted code must match it bit for bit.
std::vector<float> fmaf_spmm(const Csr& a, const std::vector<float>& b, int64_t n);

// Seeded B (K x n) with values uniform in [-1, 1].
std::vector<float> seeded_b(int64_t k, int64_t n, uint64_t seed);

// Runs `kernel` for each n in `ns` on seeded B (C filled with NaN first) and checks C against
// reference_spmm (relative Frobenius error < 1e-5), fmaf_spmm (bit for bit) and for NaN, with
// Catch2 CHECKs labelled `label`. Also checks that null B, null C and n < 1 are refused
// without touching C.
void check_emulated_kernel(const EmulatedKernel& kernel, const Csr& a, const std::vector<int64_t>& ns,
                           const std::string& label);

// Checks NAME_info(): ABI version, name, shapes, nnz, tile, layouts, dtype, reorder, weights SHA-256.
void check_kernel_info(const spmmc_kernel_info& info, const std::string& name, const Csr& a, int32_t m1, int32_t n1,
                       const std::string& reorder);

}  // namespace spmmc::test
