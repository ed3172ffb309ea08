#include "compiler/formats/write_npy.h"

#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

constexpr size_t kAlignment = 64;
constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes and the terminator

bool host_is_little_endian() {
  const uint32_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

uint32_t byte_swap(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}

// Magic, version 1.0, header length and the padded header dictionary.
std::string npy_preamble(int64_t rows, int64_t cols) {
  std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  const size_t fixed = 6 + 2 + 2;  // magic, version, header length
  const size_t unpadded = fixed + dict.size() + 1;  // + '\n'
  const size_t total = (unpadded + kAlignment - 1) / kAlignment * kAlignment;
  dict.append(total - unpadded, ' ');
  dict.push_back('\n');
  const size_t header_length = dict.size();
  SPMMC_CHECK(header_length <= 0xFFFF, "npy header too long for format 1.0");
  std::string out(kMagic, 6);
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header_length & 0xFF));
  out.push_back(static_cast<char>(header_length >> 8));
  out += dict;
  return out;
}

}  // namespace

void write_npy(const Csr& csr, std::ostream& out) {
  const int64_t elements = static_cast<int64_t>(csr.rows) * csr.cols;
  if (elements > kMaxNpyElements) {
    fail_usage("refusing to write a dense {}x{} .npy: its {} elements ({:.1f} GiB of float32) exceed the limit of "
               "2^28 (1 GiB) for dense output, and a matrix this large belongs in a sparse format (.mtx or .smtx)",
               csr.rows, csr.cols, elements, static_cast<double>(elements) * 4.0 / (1024.0 * 1024.0 * 1024.0));
  }
  const std::string preamble = npy_preamble(csr.rows, csr.cols);
  out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
  const bool swap = !host_is_little_endian();
  std::vector<float> row(static_cast<size_t>(csr.cols), 0.0f);
  for (int32_t r = 0; r < csr.rows; ++r) {
    for (int32_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; ++p) {
      float v = csr.values[p];
      if (swap) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        bits = byte_swap(bits);
        std::memcpy(&v, &bits, 4);
      }
      row[static_cast<size_t>(csr.col_idx[p])] = v;
    }
    out.write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(row.size() * sizeof(float)));
    for (int32_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; ++p) row[static_cast<size_t>(csr.col_idx[p])] = 0.0f;
  }
}

}  // namespace spmmc
