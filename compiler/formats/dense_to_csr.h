// Dense weights (NumPy .npy, safetensors, Matrix Market array) to CSR: drops zeros and, with a
// threshold, prunes small magnitudes. Reads the stream twice in fixed-size chunks (count, then
// fill) so memory stays at the size of the resulting CSR, whatever the dense size.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "compiler/common/csr.h"

namespace spmmc {

enum class DenseDType { kF16, kBF16, kF32, kF64 };

// Bytes per element.
int dense_dtype_size(DenseDType dtype);

struct DenseLayout {
  DenseDType dtype = DenseDType::kF32;
  bool little_endian = true;
  bool column_major = false;  // Fortran order
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t data_offset = 0;    // absolute stream position of element (0, 0)
};

struct DenseCounts {
  int64_t zeros_dropped = 0;        // elements equal to zero (after rounding to float)
  int64_t pruned_by_threshold = 0;  // non-zero elements with |w| <= threshold
};

// Reads layout.rows * layout.cols elements starting at layout.data_offset of the seekable
// stream `in`. Data errors (truncation, NaN or Inf, values beyond float range) name `file` and
// the byte offset of the element. The shape must already have passed check_matrix_shape.
Csr dense_to_csr(std::istream& in, const DenseLayout& layout, double threshold,
                 const std::string& file, DenseCounts& counts);

// IEEE binary16 and bfloat16 bit patterns to float (exact).
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace spmmc
