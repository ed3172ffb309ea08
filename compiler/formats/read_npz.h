// SciPy sparse .npz reader (the files scipy.sparse.save_npz writes, compressed or not).
//
// An .npz is a ZIP archive of .npy members. save_npz stores 'format' (a 0-d bytes array:
// b'csr', b'csc' or b'coo'), 'shape' (two integers), 'data', and either 'indices' + 'indptr'
// (csr, csc) or 'row' + 'col' (coo; an N-D coo_array stores 'coords' instead, of which the
// 2-D case is accepted too), plus '_is_array' for sparse arrays (as opposed to matrices).
//
// Index members must be 1-D integer arrays; 'data' a 1-D float16/32/64, integer or bool
// array (converted to float32; complex is refused, NaN and Inf too). Everything is checked:
// indptr runs from 0 to nnz without decreasing, indices lie inside the shape, the lengths
// agree. As SciPy does, duplicate entries are summed and unsorted indices sorted; explicit
// zeros are dropped. Diagnostics name the member, e.g. "w.npz[indices.npy]:byte 136".
// options.threshold does not apply (it prunes dense inputs only).
#pragma once

#include <istream>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/formats/read_options.h"

namespace spmmc {

// Reads the sparse matrix of the .npz archive filling the seekable stream `in`. Fills report
// (format "npz", detail e.g. "csr_matrix" or "coo_array").
Csr read_npz(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report);

}  // namespace spmmc
