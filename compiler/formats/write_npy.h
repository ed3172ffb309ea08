// NumPy .npy writer: the matrix as a dense float32 array.
#pragma once

#include <cstdint>
#include <ostream>

#include "compiler/common/csr.h"

namespace spmmc {

// The largest dense array write_npy produces: 2^28 elements (1 GiB of float32). Beyond it a
// dense file is the wrong tool (use .mtx or .smtx).
inline constexpr int64_t kMaxNpyElements = int64_t{1} << 28;

// Writes format version 1.0: the magic "\x93NUMPY", bytes 1 and 0, a little-endian uint16
// header length, then the header
//   {'descr': '<f4', 'fortran_order': False, 'shape': (M, K), }
// padded with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes, then
// M*K little-endian float32 in C (row-major) order, zeros where csr has no entry.
// Throws a usage error (before writing anything) when M*K > kMaxNpyElements.
void write_npy(const Csr& csr, std::ostream& out);

}  // namespace spmmc
