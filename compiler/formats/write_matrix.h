// Writing a CSR matrix to a file: Matrix Market, DLMC .smtx or dense NumPy .npy. Used by
// `spmmc gen` and by anything that saves a matrix for another tool.
#pragma once

#include <ostream>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/formats/read_options.h"

namespace spmmc {

// Writes `csr` to `path` in `format`, atomically (write_file_atomically: a reader never sees a
// partial file, and a failure leaves `path` as it was). `comment` goes into the Matrix Market
// header as '%' lines (one per line of `comment`); .smtx and .npy have no place for it and
// ignore it. The output is a function of the arguments only (no timestamps), so equal
// matrices give byte-identical files.
//
// Errors: kUsage for a format spmmc cannot write (npz, safetensors) or a dense .npy that would
// be unreasonably large (see write_npy); kCantCreate / kIoError as write_file_atomically.
void write_matrix(const Csr& csr, const std::string& path, MatrixFormat format, const std::string& comment);

// The same onto an open stream (for tests and pipes); the stream's state is the caller's to check.
void write_matrix_stream(const Csr& csr, std::ostream& out, MatrixFormat format, const std::string& comment);

}  // namespace spmmc
