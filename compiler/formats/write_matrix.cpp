#include "compiler/formats/write_matrix.h"

#include "compiler/common/diagnostics.h"
#include "compiler/common/write_file_atomically.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/formats/write_matrix_market.h"
#include "compiler/formats/write_npy.h"
#include "compiler/formats/write_smtx.h"

namespace spmmc {
namespace {

void check_writable_format(MatrixFormat format) {
  switch (format) {
    case MatrixFormat::kMatrixMarket:
    case MatrixFormat::kSmtx:
    case MatrixFormat::kNpy: return;
    default: break;
  }
  fail_usage("writing the '{}' format is not supported: spmmc writes mtx, smtx and npy", format_name(format));
}

}  // namespace

void write_matrix_stream(const Csr& csr, std::ostream& out, MatrixFormat format, const std::string& comment) {
  check_writable_format(format);
  switch (format) {
    case MatrixFormat::kMatrixMarket: return write_matrix_market(csr, out, comment);
    case MatrixFormat::kSmtx: return write_smtx(csr, out);
    case MatrixFormat::kNpy: return write_npy(csr, out);
    default: break;
  }
  SPMMC_CHECK(false, "unreachable: format checked above");
}

void write_matrix(const Csr& csr, const std::string& path, MatrixFormat format, const std::string& comment) {
  check_writable_format(format);
  // A writer that refuses the matrix (write_npy's size limit) throws before writing a byte;
  // write_file_atomically then removes its temporary file and leaves `path` untouched.
  write_file_atomically(path, [&](std::ostream& out) { write_matrix_stream(csr, out, format, comment); });
}

}  // namespace spmmc
