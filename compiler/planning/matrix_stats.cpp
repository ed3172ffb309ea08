#include "compiler/planning/matrix_stats.h"

#include <algorithm>
#include <cmath>

namespace spmmc {
namespace {

// Nearest-rank percentile of sorted data.
int64_t percentile(const std::vector<int32_t>& sorted, double p) {
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

LengthSummary summarise(std::vector<int32_t> lengths) {
  LengthSummary s;
  if (lengths.empty()) return s;
  double sum = 0.0, sum_sq = 0.0;
  for (int32_t v : lengths) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
    if (v == 0) ++s.empty;
  }
  const double n = static_cast<double>(lengths.size());
  s.mean = sum / n;
  s.std = std::sqrt(std::max(0.0, sum_sq / n - s.mean * s.mean));
  s.cov = s.mean > 0 ? s.std / s.mean : 0.0;
  std::sort(lengths.begin(), lengths.end());
  s.min = lengths.front();
  s.max = lengths.back();
  s.p50 = percentile(lengths, 50);
  s.p90 = percentile(lengths, 90);
  s.p99 = percentile(lengths, 99);
  return s;
}

}  // namespace

MatrixStats compute_matrix_stats(const Csr& csr) {
  MatrixStats s;
  s.rows = csr.rows;
  s.cols = csr.cols;
  s.nnz = csr.nnz();
  s.density = static_cast<double>(s.nnz) / (static_cast<double>(s.rows) * static_cast<double>(s.cols));
  s.sparsity = 1.0 - s.density;

  std::vector<int32_t> row_len(static_cast<size_t>(csr.rows));
  std::vector<int32_t> col_len(static_cast<size_t>(csr.cols), 0);
  for (int32_t r = 0; r < csr.rows; ++r) {
    row_len[r] = csr.row_length(r);
    size_t bucket = 0;
    while ((int64_t{1} << bucket) <= row_len[r]) ++bucket;
    if (s.row_length_histogram.size() <= bucket) s.row_length_histogram.resize(bucket + 1, 0);
    ++s.row_length_histogram[bucket];
  }
  for (int32_t c : csr.col_idx) ++col_len[c];
  s.row_lengths = summarise(std::move(row_len));
  s.col_lengths = summarise(std::move(col_len));

  if (!csr.values.empty()) {
    s.min_abs_value = std::fabs(csr.values[0]);
    for (float v : csr.values) {
      s.min_abs_value = std::min(s.min_abs_value, std::fabs(v));
      s.max_abs_value = std::max(s.max_abs_value, std::fabs(v));
    }
  }
  return s;
}

}  // namespace spmmc
