// Statistics of a sparse matrix: what `spmmc inspect` prints and what the tuner's features
// start from.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"

namespace spmmc {

// Summary of a distribution of lengths (non-zeros per row or per column).
struct LengthSummary {
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0.0;
  double std = 0.0;  // population standard deviation
  double cov = 0.0;  // std / mean (0 when mean is 0)
  int64_t p50 = 0;   // percentiles by the nearest-rank method
  int64_t p90 = 0;
  int64_t p99 = 0;
  int64_t empty = 0; // how many have length 0
};

struct MatrixStats {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  double density = 0.0;   // nnz / (rows * cols)
  double sparsity = 0.0;  // 1 - density
  LengthSummary row_lengths;
  LengthSummary col_lengths;
  // Row-length histogram in power-of-two buckets: bucket 0 counts empty rows, bucket k >= 1
  // rows with length in [2^(k-1), 2^k).
  std::vector<int64_t> row_length_histogram;
  float min_abs_value = 0.0f;
  float max_abs_value = 0.0f;
};

MatrixStats compute_matrix_stats(const Csr& csr);

}  // namespace spmmc
