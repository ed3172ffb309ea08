// Shared by the CSR studies (csr_variants.cu, row_split.cu, graph_spmm.cu, slice_spmm.cu): a DLMC .smtx
// file's or a Matrix Market file's pattern with seeded weights, the kernels' vector loads and cp.async, a
// vector's copy in device memory, and the checks and timing every variant of a study gets (CsrStudy). Exits 64 on a file that cannot be read.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common.cuh"

namespace {

struct Csr {
  int m = 0, k = 0;
  std::vector<int> row_ptr, col;
  std::vector<float> w;
};

// Weights in [-1, 1) from a fixed seed (the studies time patterns; the values only need checking).
void seed_weights(Csr& a) {
  uint32_t s = 12345;
  a.w.resize(a.col.size());
  for (float& v : a.w) v = (s = s * 1664525u + 1013904223u) / 4294967296.0f * 2.0f - 1.0f;
}

Csr read_smtx(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", path.c_str());
    std::exit(mb::kExitUsage);
  }
  std::string line;
  std::getline(in, line);
  for (char& c : line)
    if (c == ',') c = ' ';
  Csr a;
  long nnz = 0;
  std::istringstream(line) >> a.m >> a.k >> nnz;
  a.row_ptr.resize(a.m + 1);
  a.col.resize(nnz);
  for (int& v : a.row_ptr) in >> v;
  for (int& v : a.col) in >> v;
  if (!in || a.row_ptr[a.m] != nnz) {
    std::fprintf(stderr, "%s: not a DLMC .smtx file\n", path.c_str());
    std::exit(mb::kExitUsage);
  }
  seed_weights(a);
  return a;
}

// A Matrix Market coordinate file's pattern (general or symmetric, both triangles then; duplicates
// kept as separate products), rows sorted by column, weights seeded as for .smtx.
Csr read_matrix_market(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.rfind("%%MatrixMarket matrix coordinate", 0) != 0) {
    std::fprintf(stderr, "%s: not a Matrix Market coordinate file\n", path.c_str());
    std::exit(mb::kExitUsage);
  }
  const bool symmetric = line.find("symmetric") != std::string::npos;
  const bool pattern = line.find("pattern") != std::string::npos;
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  Csr a;
  long entries = 0;
  std::istringstream(line) >> a.m >> a.k >> entries;
  std::vector<std::pair<int, int>> at;
  for (long e = 0; e < entries; ++e) {
    long i = 0, j = 0;
    double v = 0;
    if (!(in >> i >> j) || (!pattern && !(in >> v)) || i < 1 || j < 1 || i > a.m || j > a.k) {
      std::fprintf(stderr, "%s: entry %ld unreadable or out of range\n", path.c_str(), e + 1);
      std::exit(mb::kExitUsage);
    }
    std::getline(in, line);  // an imaginary part or trailing text
    at.push_back({int(i - 1), int(j - 1)});
    if (symmetric && i != j) at.push_back({int(j - 1), int(i - 1)});
  }
  std::sort(at.begin(), at.end());
  a.row_ptr.assign(a.m + 1, 0);
  for (const auto& [i, j] : at) ++a.row_ptr[i + 1], a.col.push_back(j);
  for (int i = 0; i < a.m; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
  seed_weights(a);
  return a;
}

// By extension: .mtx Matrix Market, anything else DLMC .smtx.
Csr read_matrix(const std::string& path) {
  const bool mtx = path.size() > 4 && path.compare(path.size() - 4, 4, ".mtx") == 0;
  return mtx ? read_matrix_market(path) : read_smtx(path);
}

// Device helpers of the CSR kernels: V adjacent floats of B (one vector load through the read-only path:
// 16 or 8 bytes aligned) and of C, and 16-byte cp.async copies into shared memory with their groups.
template <int V>
__device__ __forceinline__ void load_b(const float* p, float (&r)[V]) {
  if constexpr (V == 4) {
    const float4 t = __ldg(reinterpret_cast<const float4*>(p));
    r[0] = t.x, r[1] = t.y, r[2] = t.z, r[3] = t.w;
  } else if constexpr (V == 2) {
    const float2 t = __ldg(reinterpret_cast<const float2*>(p));
    r[0] = t.x, r[1] = t.y;
  } else {
    r[0] = __ldg(p);
  }
}

template <int V>
__device__ __forceinline__ void store_c(float* p, const float (&r)[V]) {
  if constexpr (V == 4) *reinterpret_cast<float4*>(p) = make_float4(r[0], r[1], r[2], r[3]);
  else if constexpr (V == 2) *reinterpret_cast<float2*>(p) = make_float2(r[0], r[1]);
  else p[0] = r[0];
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// A vector's copy in device memory, freed with it.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& v) {
    MB_CHECK(cudaMalloc(&data_, std::max<size_t>(1, v.size()) * sizeof(T)));
    if (!v.empty()) MB_CHECK(cudaMemcpy(data_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
};

// What a study runs every variant with: B seeded (K x n, row-major), C on the device, a float64
// reference of every 7th row with the scale of its error, and a buffer flushed before every timed
// run (L2 cold). measure() times a launch, then runs it once more and checks C: bit for bit against
// the first variant measured with `same_order` (same sums in the same order; a variant that sums in
// another order passes false and is not compared) and within 1e-5 of float64; a variant failing
// either counts in failures().
class CsrStudy {
 public:
  struct Result {
    double us = 0;         // median of the timed runs
    double first_us = 0;   // the first variant's
    bool equal = true;     // bit for bit with the first variant
    double error = 0;      // max relative error against float64 on the sampled rows
  };

  CsrStudy(const Csr& a, int64_t n, const mb::Options& o) : a_(a), n_(n), o_(o), b_(size_t(a.k) * n) {
    uint32_t s = 777;
    for (float& v : b_) v = (s = s * 1664525u + 1013904223u) / 4294967296.0f * 2.0f - 1.0f;
    MB_CHECK(cudaMalloc(&d_c_, std::max<size_t>(1, size_t(a.m) * n) * sizeof(float)));
    MB_CHECK(cudaMalloc(&d_flush_, kFlushBytes));
    ref_.assign(size_t(a.m) * n, 0.0);
    scale_.assign(size_t(a.m) * n, 0.0);
    for (int i = 0; i < a.m; i += 7)
      for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        for (int64_t j = 0; j < n; ++j) {
          const double t = double(a.w[p]) * b_[size_t(a.col[p]) * n + j];
          ref_[size_t(i) * n + j] += t, scale_[size_t(i) * n + j] += std::fabs(t);
        }
  }
  ~CsrStudy() {
    cudaFree(d_c_);
    cudaFree(d_flush_);
  }
  CsrStudy(const CsrStudy&) = delete;
  CsrStudy& operator=(const CsrStudy&) = delete;

  const std::vector<float>& b() const { return b_; }
  float* c() const { return d_c_; }
  int failures() const { return failures_; }

  Result measure(const std::function<void()>& launch, bool same_order = true) {
    Result r;
    r.us = 1000.0 * mb::median_ms(o_, launch, [&](int i) { MB_CHECK(cudaMemsetAsync(d_flush_, i & 0x7f, kFlushBytes)); });
    std::vector<float> hc(size_t(a_.m) * n_);
    MB_CHECK(cudaMemset(d_c_, 0, std::max<size_t>(1, hc.size()) * sizeof(float)));
    launch();
    MB_CHECK_LAUNCH();
    MB_CHECK(cudaMemcpy(hc.data(), d_c_, hc.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < a_.m; i += 7)
      for (int64_t j = 0; j < n_; ++j) {
        const size_t at = size_t(i) * n_ + j;
        r.error = std::max(r.error, std::fabs(hc[at] - ref_[at]) / std::max(scale_[at], 1e-30));
      }
    if (!same_order) r.equal = false;
    else if (first_.empty()) first_ = hc, first_us_ = r.us;
    else r.equal = std::memcmp(first_.data(), hc.data(), hc.size() * sizeof(float)) == 0;
    r.first_us = first_us_;
    if ((same_order && !r.equal) || r.error > 1e-5) ++failures_;
    return r;
  }

 private:
  static constexpr size_t kFlushBytes = size_t(128) << 20;
  const Csr& a_;
  int64_t n_;
  const mb::Options& o_;
  std::vector<float> b_;
  std::vector<double> ref_, scale_;
  std::vector<float> first_;
  double first_us_ = 0;
  int failures_ = 0;
  float* d_c_ = nullptr;
  unsigned char* d_flush_ = nullptr;
};

}  // namespace
