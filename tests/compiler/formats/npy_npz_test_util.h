// Helpers of the .npy, .npz and ZIP tests: fixtures, byte patching, and small writers of .npy
// members and stored ZIP archives written independently of the readers under test.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace spmmc::test {

inline std::string fixture(const std::string& relative) {
  return read_file(std::filesystem::path(SPMMC_TEST_DATA) / relative);
}
inline std::string fixture_path(const std::string& relative) {
  return (std::filesystem::path(SPMMC_TEST_DATA) / relative).string();
}

// The matrix every valid fixture holds (tests/data/make_npy_npz_fixtures.py: DENSE).
inline Csr reference_matrix() {
  return csr_from_dense(3, 4, {1.0f, 0.0f, -2.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.5f, 3.0f, 0.0f, -1.0f});
}

inline void put_le(std::string& bytes, size_t at, uint64_t value, int n) {
  REQUIRE(at + n <= bytes.size());
  for (int i = 0; i < n; ++i) bytes[at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
}
inline uint64_t get_le(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}
inline std::string le_bytes(uint64_t value, int n) {
  std::string s(static_cast<size_t>(n), '\0');
  put_le(s, 0, value, n);
  return s;
}

// Little-endian raw data of a vector of numbers.
template <typename T>
std::string raw(const std::vector<T>& values) {
  std::string s(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(s.data(), values.data(), s.size());
  return s;
}

// A version 1.0 .npy with the header dict `dict` (padded as numpy pads it) and `data`.
inline std::string npy_with_dict(const std::string& dict, const std::string& data) {
  std::string header = dict;
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + le_bytes(header.size(), 2) + header + data;
}
inline std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  return npy_with_dict("{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }", data);
}

// CRC-32 (IEEE), bitwise: independent of the zlib the reader uses.
inline uint32_t crc32_ieee(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

struct ZipOptions {
  bool zip64_central = false;  // sizes and offsets in ZIP64 extra fields of the central directory
  bool zip64_end = false;      // a ZIP64 end record and locator before the end record
  std::string comment;         // archive comment
};

// A ZIP archive of stored members, in order.
inline std::string make_zip(const std::vector<std::pair<std::string, std::string>>& members,
                            const ZipOptions& options = {}) {
  std::string out, central;
  for (const auto& [name, data] : members) {
    const uint64_t offset = out.size();
    const uint32_t crc = crc32_ieee(data);
    out += le_bytes(0x04034b50, 4) + le_bytes(20, 2) + le_bytes(0, 2) + le_bytes(0, 2) + le_bytes(0, 4) +
           le_bytes(crc, 4) + le_bytes(data.size(), 4) + le_bytes(data.size(), 4) + le_bytes(name.size(), 2) +
           le_bytes(0, 2) + name + data;
    const uint32_t small = options.zip64_central ? 0xFFFFFFFFu : 0u;
    std::string extra;
    if (options.zip64_central)
      extra = le_bytes(1, 2) + le_bytes(24, 2) + le_bytes(data.size(), 8) + le_bytes(data.size(), 8) +
              le_bytes(offset, 8);
    central += le_bytes(0x02014b50, 4) + le_bytes(45, 2) + le_bytes(45, 2) + le_bytes(0, 2) + le_bytes(0, 2) +
               le_bytes(0, 4) + le_bytes(crc, 4) + le_bytes(small ? small : data.size(), 4) +
               le_bytes(small ? small : data.size(), 4) + le_bytes(name.size(), 2) + le_bytes(extra.size(), 2) +
               le_bytes(0, 2) + le_bytes(0, 2) + le_bytes(0, 2) + le_bytes(0, 4) +
               le_bytes(small ? small : offset, 4) + name + extra;
  }
  const uint64_t central_at = out.size();
  out += central;
  uint64_t count = members.size(), size = central.size(), at = central_at;
  if (options.zip64_end) {
    const uint64_t z_at = out.size();
    out += le_bytes(0x06064b50, 4) + le_bytes(44, 8) + le_bytes(45, 2) + le_bytes(45, 2) + le_bytes(0, 4) +
           le_bytes(0, 4) + le_bytes(count, 8) + le_bytes(count, 8) + le_bytes(size, 8) + le_bytes(at, 8);
    out += le_bytes(0x07064b50, 4) + le_bytes(0, 4) + le_bytes(z_at, 8) + le_bytes(1, 4);
    count = 0xFFFF;
    size = 0xFFFFFFFF;
    at = 0xFFFFFFFF;
  }
  out += le_bytes(0x06054b50, 4) + le_bytes(0, 2) + le_bytes(0, 2) + le_bytes(count, 2) + le_bytes(count, 2) +
         le_bytes(size, 4) + le_bytes(at, 4) + le_bytes(options.comment.size(), 2) + options.comment;
  return out;
}

// Offset of the first / last occurrence of a 4-byte little-endian signature.
inline size_t find_signature(const std::string& bytes, uint32_t signature, bool last = false) {
  const std::string sig = le_bytes(signature, 4);
  const size_t at = last ? bytes.rfind(sig) : bytes.find(sig);
  REQUIRE(at != std::string::npos);
  return at;
}

}  // namespace spmmc::test
