// A minimal ZIP reader, enough for NumPy .npz archives (PKWARE APPNOTE 6.3).
//
// Supported: one-disk archives, ZIP64 (end-of-central-directory record and extra fields, as
// Python's zipfile writes with force_zip64=True), members stored (method 0) or deflated
// (method 8). Refused with a data error naming the byte offset in the archive: encrypted
// members, other compression methods, multi-disk archives, sizes or offsets beyond the file,
// CRC-32 or size mismatches. A deflated member is never inflated past its declared size.
// The archive must fill the whole seekable stream, from position 0.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace spmmc {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;               // 0 stored, 8 deflated (others are refused by list_zip)
  uint16_t flags = 0;                // general purpose bit flags
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint64_t central_header_offset = 0;  // where the entry's central directory record starts
};

// Reads the central directory of the archive in `in`. Errors name `file` and a byte offset.
std::vector<ZipEntry> list_zip(std::istream& in, const std::string& file);

// Reads and decompresses one member listed by list_zip, verifying its local header, its size
// and its CRC-32. The declared uncompressed size must fit in this machine's memory.
std::string read_zip_member(std::istream& in, const ZipEntry& entry, const std::string& file);

}  // namespace spmmc
