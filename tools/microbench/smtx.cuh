// Shared by the CSR studies (csr_variants.cu, row_split.cu): a DLMC .smtx file's pattern with
// seeded weights, and a vector's copy in device memory. Exits 64 on a file that cannot be read.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common.cuh"

namespace {

struct Csr {
  int m = 0, k = 0;
  std::vector<int> row_ptr, col;
  std::vector<float> w;
};

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
  uint32_t s = 12345;
  auto next = [&] { return (s = s * 1664525u + 1013904223u) / 4294967296.0f * 2.0f - 1.0f; };
  a.w.resize(nnz);
  for (float& v : a.w) v = next();
  return a;
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

}  // namespace
