// The CPU reference every kernel is checked against: C = A * B with float64 accumulation.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"

namespace spmmc {

// C = A * B for the M x K matrix A, B row-major K x n, C row-major M x n (all of C is written;
// rows of A with no non-zero give zero rows). Products and sums are in double. Runs on up to
// `threads` threads (0: the hardware concurrency) when the work is large enough to pay off.
void reference_spmm(const Csr& a, const float* b, int64_t n, double* c, unsigned threads = 0);

// Convenience form returning C.
std::vector<double> reference_spmm(const Csr& a, const std::vector<float>& b, int64_t n, unsigned threads = 0);

// ||got - want||_F / ||want||_F (||got - want||_F when want is all zero). The measure of
// every numerical test of spmmc.
double relative_frobenius_error(const float* got, const double* want, int64_t count);

}  // namespace spmmc
