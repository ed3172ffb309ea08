// NumPy .npy reader: a 2-D float16/float32/float64 array of dense weights to CSR.
//
// Format (numpy.lib.format): the magic "\x93NUMPY", a major and a minor version byte, the
// little-endian length of the header (uint16 for version 1.0, uint32 for 2.0 and 3.0), then
// the header: a Python dict literal with exactly the keys 'descr', 'fortran_order' and
// 'shape', padded with spaces and a newline. The raw array data follows.
//
// Accepted: 2-D arrays of dtype float16, float32 or float64 ('<f2' '<f4' '<f8', or big-endian
// '>'), C or Fortran order. Zeros are dropped and options.threshold prunes |w| <= T; NaN or
// Inf is a data error. The data must end exactly where the shape says: trailing bytes after
// the array are rejected (they mean the shape or the file is wrong).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/formats/read_options.h"

namespace spmmc {

// Reads a 2-D floating-point .npy array from `in` (starting at its current position, which
// is byte 0 of the .npy in diagnostics). Fills report (format "npy", detail e.g. "<f4 C-order").
Csr read_npy(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report);

// A parsed .npy header, of any dtype and rank (the .npz reader needs 1-D integer arrays and
// 0-d byte strings).
struct NpyHeader {
  int major_version = 1;
  int minor_version = 0;
  std::string descr;           // the dtype string as written, e.g. "<f4", "|S3"
  char kind = 'f';             // numpy kind: 'f' float, 'i' int, 'u' uint, 'b' bool, 'c' complex,
                               // 'S' bytes, 'U' str, 'O' object, 'V' void, 'M'/'m' datetime
  int64_t itemsize = 0;        // bytes per element
  bool little_endian = true;   // also true for byte-order-less dtypes ('|')
  bool fortran_order = false;
  std::vector<int64_t> shape;  // empty for a 0-d array
  int64_t element_count = 1;   // product of the shape
  int64_t data_bytes = 0;      // element_count * itemsize
  int64_t data_offset = 0;     // offset of the first data byte from the start of the .npy
  int64_t descr_offset = 0;    // offsets of the 'descr' and 'shape' values (for diagnostics)
  int64_t shape_offset = 0;
};

// Parses the magic, version and header dict at the current position of `in` and leaves the
// stream at the first data byte. `total_bytes` is the size of the whole .npy when known
// (-1 otherwise): a header running past it is a data error. Errors name `file` and the byte
// offset from the start of the .npy.
NpyHeader read_npy_header(std::istream& in, const std::string& file, int64_t total_bytes = -1);

// The same on a .npy held in memory (an .npz member); also requires the data to fill `bytes`
// exactly (shorter: truncated; longer: trailing bytes).
NpyHeader parse_npy_header(std::string_view bytes, const std::string& file);

// The numpy name of a header's dtype for messages: "float32", "int64", "bool", "complex128",
// "bytes (|S3)", "object", "structured" ...
std::string npy_dtype_name(const NpyHeader& header);

// "(3, 4)", "(5,)", "()": the shape as Python prints it.
std::string npy_shape_string(const std::vector<int64_t>& shape);

}  // namespace spmmc
