#include "runtime/reference_spmm.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// Below this many multiply-adds a single thread is faster than starting more.
constexpr double kWorkPerThread = 1 << 22;

void spmm_rows(const Csr& a, const float* b, int64_t n, double* c, int32_t row_begin, int32_t row_end) {
  for (int32_t r = row_begin; r < row_end; ++r) {
    double* out = c + static_cast<int64_t>(r) * n;
    std::fill(out, out + n, 0.0);
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const double w = a.values[p];
      const float* in = b + static_cast<int64_t>(a.col_idx[p]) * n;
      for (int64_t j = 0; j < n; ++j) out[j] += w * static_cast<double>(in[j]);
    }
  }
}

}  // namespace

void reference_spmm(const Csr& a, const float* b, int64_t n, double* c, unsigned threads) {
  SPMMC_CHECK(n >= 1, "n must be at least 1");
  const double work = static_cast<double>(a.nnz()) * static_cast<double>(n);
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const unsigned useful = static_cast<unsigned>(std::clamp(work / kWorkPerThread, 1.0, static_cast<double>(threads)));
  if (useful <= 1) {
    spmm_rows(a, b, n, c, 0, a.rows);
    return;
  }
  // Split rows so that each thread gets about the same number of non-zeros.
  std::vector<std::thread> pool;
  const int64_t per_thread = (a.nnz() + useful - 1) / useful;
  int32_t begin = 0;
  for (unsigned t = 0; t < useful && begin < a.rows; ++t) {
    int32_t end = begin;
    const int64_t target = std::min<int64_t>(a.nnz(), static_cast<int64_t>(t + 1) * per_thread);
    while (end < a.rows && (a.row_ptr[end] < target || end == begin)) ++end;
    if (t + 1 == useful) end = a.rows;
    pool.emplace_back(spmm_rows, std::cref(a), b, n, c, begin, end);
    begin = end;
  }
  if (begin < a.rows) spmm_rows(a, b, n, c, begin, a.rows);
  for (auto& th : pool) th.join();
}

std::vector<double> reference_spmm(const Csr& a, const std::vector<float>& b, int64_t n, unsigned threads) {
  SPMMC_CHECK(static_cast<int64_t>(b.size()) == static_cast<int64_t>(a.cols) * n, "B must be K x n");
  std::vector<double> c(static_cast<size_t>(a.rows) * static_cast<size_t>(n));
  reference_spmm(a, b.data(), n, c.data(), threads);
  return c;
}

double relative_frobenius_error(const float* got, const double* want, int64_t count) {
  double diff = 0.0, norm = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(got[i]) - want[i];
    diff += d * d;
    norm += want[i] * want[i];
  }
  if (!std::isfinite(diff)) return INFINITY;
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

std::vector<float> rounded_b(std::vector<float> b, DType dtype) {
  for (float& x : b) x = round_to_dtype(x, dtype);
  return b;
}

std::vector<double> error_bounds(const Csr& a, const std::vector<float>& b, int64_t n, DType dtype,
                                 const std::vector<double>& want, bool dense) {
  std::vector<double> bound(static_cast<size_t>(a.rows) * static_cast<size_t>(n));
  std::vector<double> abs_sum(static_cast<size_t>(n));
  for (int32_t r = 0; r < a.rows; ++r) {
    std::fill(abs_sum.begin(), abs_sum.end(), 0.0);
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const double w = std::fabs(static_cast<double>(a.values[p]));
      const float* row = b.data() + static_cast<size_t>(a.col_idx[p]) * static_cast<size_t>(n);
      for (int64_t j = 0; j < n; ++j) abs_sum[static_cast<size_t>(j)] += w * std::fabs(static_cast<double>(row[j]));
    }
    const int64_t products = dense ? a.cols : a.row_length(r);
    for (int64_t j = 0; j < n; ++j) {
      const size_t i = static_cast<size_t>(r) * static_cast<size_t>(n) + static_cast<size_t>(j);
      bound[i] = dtype_error_bound(dtype, products, abs_sum[static_cast<size_t>(j)], want[i]);
    }
  }
  return bound;
}

}  // namespace spmmc
