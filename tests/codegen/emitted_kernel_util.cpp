#include "tests/codegen/emitted_kernel_util.h"

#include <dlfcn.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/sha256.h"
#include "runtime/reference_spmm.h"
#include "tests/test_util.h"

namespace spmmc::test {

std::string quote(const std::string& word) {
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

int run_command(const std::string& command, std::string& log) {
  TempDir dir;
  const std::filesystem::path out = dir.path / "log";
  const int status = std::system((command + " >" + quote(out.string()) + " 2>&1 </dev/null").c_str());
  log = read_file(out);
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int build_emulated(const std::vector<std::filesystem::path>& sources, const std::filesystem::path& so, std::string& log,
                   const std::vector<std::filesystem::path>& includes) {
  std::string command = quote(SPMMC_CXX) + " -std=c++17 -O1 -shared -fPIC -Wall -Wextra -Werror -I " +
                        quote(SPMMC_CUDA_EMULATION_DIR);
  for (const auto& dir : includes) command += " -I " + quote(dir.string());
  command += " -x c++";
  for (const auto& source : sources) command += " " + quote(source.string());
  command += " -o " + quote(so.string());
  return run_command(command, log);
}

std::unique_ptr<EmulatedKernel> EmulatedKernel::load(const std::filesystem::path& so, const std::string& name,
                                                     std::string& error) {
  std::unique_ptr<EmulatedKernel> k(new EmulatedKernel());
  k->handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!k->handle_) {
    error = dlerror();
    return nullptr;
  }
  // POSIX guarantees that a dlsym result converts to a function pointer.
  k->entry = reinterpret_cast<Entry>(dlsym(k->handle_, name.c_str()));
  k->info = reinterpret_cast<Info>(dlsym(k->handle_, (name + "_info").c_str()));
  if (!k->entry || !k->info) {
    error = "no symbol " + name + " or " + name + "_info in " + so.string();
    return nullptr;
  }
  return k;
}

EmulatedKernel::~EmulatedKernel() {
  if (handle_) dlclose(handle_);
}

std::vector<float> fmaf_spmm(const Csr& a, const std::vector<float>& b, int64_t n) {
  std::vector<float> c(static_cast<size_t>(a.rows) * static_cast<size_t>(n));
  for (int32_t r = 0; r < a.rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
        acc = std::fmaf(a.values[p], b[static_cast<size_t>(a.col_idx[p] * n + j)], acc);
      c[static_cast<size_t>(r * n + j)] = acc;
    }
  return c;
}

std::vector<float> seeded_b(int64_t k, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> b(static_cast<size_t>(k * n));
  for (float& v : b) v = dist(rng);
  return b;
}

void check_emulated_kernel(const EmulatedKernel& kernel, const Csr& a, const std::vector<int64_t>& ns,
                           const std::string& label) {
  constexpr int kInvalidValue = 1;  // cudaErrorInvalidValue
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const int64_t n : ns) {
    INFO(label << ", n = " << n);
    const std::vector<float> b = seeded_b(a.cols, n, static_cast<uint64_t>(n) * 7919u + static_cast<uint64_t>(a.nnz()));
    std::vector<float> c(static_cast<size_t>(a.rows) * static_cast<size_t>(n), nan);
    REQUIRE(kernel.entry(b.data(), c.data(), n, nullptr) == 0);
    size_t nans = 0, differing = 0;
    const std::vector<float> exact = fmaf_spmm(a, b, n);
    for (size_t i = 0; i < c.size(); ++i) {
      if (std::isnan(c[i])) ++nans;
      if (std::memcmp(&c[i], &exact[i], sizeof(float)) != 0) ++differing;
    }
    CHECK(nans == 0);
    CHECK(differing == 0);
    const std::vector<double> want = reference_spmm(a, b, n, 1);
    CHECK(relative_frobenius_error(c.data(), want.data(), static_cast<int64_t>(c.size())) < 1e-5);
  }
  // Refusals: no launch, C untouched.
  INFO(label);
  const std::vector<float> b = seeded_b(a.cols, 1, 1);
  std::vector<float> c(static_cast<size_t>(a.rows), nan);
  CHECK(kernel.entry(nullptr, c.data(), 1, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), nullptr, 1, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), c.data(), 0, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), c.data(), -5, nullptr) == kInvalidValue);
  CHECK(std::isnan(c[0]));
}

void check_kernel_info(const spmmc_kernel_info& info, const std::string& name, const Csr& a, int32_t m1, int32_t n1,
                       const std::string& reorder) {
  INFO(name);
  CHECK(info.abi_version == SPMMC_KERNEL_ABI_VERSION);
  CHECK(info.abi_version == 1);
  CHECK(std::string(info.name) == name);
  CHECK(info.m == a.rows);
  CHECK(info.k == a.cols);
  CHECK(info.nnz == a.nnz());
  CHECK(info.m1 == m1);
  CHECK(info.n1 == n1);
  CHECK(info.cols_per_thread == 1);
  CHECK(info.a_tiles >= (a.rows + m1 - 1) / m1);
  CHECK(info.a_tiles <= a.rows);
  CHECK(std::string(info.a_format) == "unrolled-constants");
  CHECK(std::string(info.b_layout) == "row-major");
  CHECK(std::string(info.c_layout) == "row-major");
  CHECK(std::string(info.dtype) == "float32");
  CHECK(std::string(info.arch) == "sm_90");
  CHECK(std::string(info.reorder) == reorder);
  CHECK(std::string(info.weights_sha256) == weights_sha256(a));
  CHECK(std::string(info.spmmc_version) == SPMMC_VERSION);
}

}  // namespace spmmc::test
