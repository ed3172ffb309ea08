// The CPU reference every kernel is checked against: C = A * B with float64 accumulation.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"

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

// The yardstick of the other dtypes (docs/design/precision.md): a kernel of `dtype` multiplies A's
// values rounded to it (compile time) by B's, and is judged element by element against its bound.
// The values of B the kernels of `dtype` multiply, as the float64 reference takes them: `b` rounded
// to the dtype (fp32: as it is; tf32: ties away from zero, as the kernel's cvt.rna.tf32.f32).
std::vector<float> rounded_b(std::vector<float> b, DType dtype);
// dtype_error_bound (compiler/common/dtype.h) for every element of C = A B (`want` the float64
// product): the row's non-zeros as its products, or with `dense` all K (a dense GEMM sums K
// products, zeros included).
std::vector<double> error_bounds(const Csr& a, const std::vector<float>& b, int64_t n, DType dtype,
                                 const std::vector<double>& want, bool dense);

}  // namespace spmmc
