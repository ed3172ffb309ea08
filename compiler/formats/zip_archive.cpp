#include "compiler/formats/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <new>

#include "compiler/common/diagnostics.h"
#include "compiler/formats/input_limits.h"

namespace spmmc {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr int64_t kEndSize = 22;
constexpr int64_t kZip64EndSize = 56;
constexpr int64_t kZip64LocatorSize = 20;
constexpr int64_t kCentralHeaderSize = 46;
constexpr int64_t kLocalHeaderSize = 30;
constexpr int64_t kMaxCommentSize = 0xFFFF;
// Deflate cannot compress better than about 1032:1; a larger declared ratio is a lie.
constexpr uint64_t kMaxDeflateRatio = 1032;

uint64_t le(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint16_t le16(const unsigned char* p) { return static_cast<uint16_t>(le(p, 2)); }
uint32_t le32(const unsigned char* p) { return static_cast<uint32_t>(le(p, 4)); }
uint64_t le64(const unsigned char* p) { return le(p, 8); }

int64_t stream_size(std::istream& in, const std::string& file) {
  in.clear();
  in.seekg(0, std::ios::end);
  const std::streampos end = in.tellg();
  if (end == std::streampos(-1) || !in)
    fail_data(SourceLocation::whole(file), "cannot seek in the input: ZIP archives are read from seekable files");
  return static_cast<int64_t>(end);
}

// Reads exactly bytes [offset, offset + n) of the stream or fails naming `what`.
std::string read_at(std::istream& in, int64_t offset, int64_t n, const std::string& file, const char* what) {
  std::string buffer(static_cast<size_t>(n), '\0');
  in.clear();
  in.seekg(offset);
  in.read(buffer.data(), static_cast<std::streamsize>(n));
  if (!in || in.gcount() != n)
    fail_data(SourceLocation::at_byte(file, offset), "file ends inside the {} ({} bytes needed from byte {})", what, n,
              offset);
  return buffer;
}

const unsigned char* bytes(const std::string& s, size_t at = 0) {
  return reinterpret_cast<const unsigned char*>(s.data()) + at;
}

std::string method_name(uint16_t method) {
  switch (method) {
    case 1: return "shrink";
    case 6: return "implode";
    case 9: return "deflate64";
    case 12: return "bzip2";
    case 14: return "lzma";
    case 93: return "zstandard";
    case 95: return "xz";
    case 99: return "AES encryption";
    default: return "method " + std::to_string(method);
  }
}

struct DirectoryLocation {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  int64_t end_record = 0;  // where the (ZIP64) end record that gave these starts
};

DirectoryLocation find_central_directory(std::istream& in, int64_t size, const std::string& file) {
  if (size < kEndSize)
    fail_data(SourceLocation::at_byte(file, 0), "not a ZIP archive: {} bytes is too short for one (an .npz is a ZIP file)",
              size);
  const int64_t tail_size = std::min(size, kEndSize + kMaxCommentSize);
  const int64_t tail_start = size - tail_size;
  const std::string tail = read_at(in, tail_start, tail_size, file, "end of central directory");
  // Search backwards; prefer a record whose comment ends exactly at the end of the file.
  int64_t found = -1, loose = -1;
  for (int64_t p = tail_size - kEndSize; p >= 0; --p) {
    if (le32(bytes(tail, p)) != kEndSignature) continue;
    const int64_t comment = le16(bytes(tail, p + 20));
    if (p + kEndSize + comment == tail_size) {
      found = p;
      break;
    }
    if (loose < 0) loose = p;
  }
  if (found < 0) found = loose;
  if (found < 0)
    fail_data(SourceLocation::at_byte(file, 0),
              "not a ZIP archive: no end-of-central-directory record in the last {} bytes (an .npz is a ZIP file)",
              tail_size);
  const unsigned char* e = bytes(tail, found);
  const int64_t end_at = tail_start + found;
  DirectoryLocation d;
  d.end_record = end_at;
  if (le16(e + 4) != 0 || le16(e + 6) != 0 || le16(e + 8) != le16(e + 10))
    fail_data(SourceLocation::at_byte(file, end_at), "multi-disk (split) ZIP archives are not supported");
  d.entries = le16(e + 10);
  d.size = le32(e + 12);
  d.offset = le32(e + 16);

  // A ZIP64 locator sits just before the end record.
  if (end_at >= kZip64LocatorSize) {
    const std::string loc = read_at(in, end_at - kZip64LocatorSize, kZip64LocatorSize, file, "ZIP64 locator");
    if (le32(bytes(loc)) == kZip64LocatorSignature) {
      const int64_t loc_at = end_at - kZip64LocatorSize;
      const uint64_t z_at = le64(bytes(loc, 8));
      if (le32(bytes(loc, 4)) != 0 || le32(bytes(loc, 16)) > 1)
        fail_data(SourceLocation::at_byte(file, loc_at), "multi-disk (split) ZIP64 archives are not supported");
      if (loc_at < kZip64EndSize || z_at > static_cast<uint64_t>(loc_at - kZip64EndSize))
        fail_data(SourceLocation::at_byte(file, loc_at), "the ZIP64 end record offset {} lies outside the archive", z_at);
      const std::string z = read_at(in, static_cast<int64_t>(z_at), kZip64EndSize, file, "ZIP64 end record");
      if (le32(bytes(z)) != kZip64EndSignature)
        fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(z_at)), "bad ZIP64 end record signature");
      if (le32(bytes(z, 16)) != 0 || le32(bytes(z, 20)) != 0 || le64(bytes(z, 24)) != le64(bytes(z, 32)))
        fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(z_at)), "multi-disk (split) ZIP64 archives are not supported");
      d.entries = le64(bytes(z, 32));
      d.size = le64(bytes(z, 40));
      d.offset = le64(bytes(z, 48));
      d.end_record = static_cast<int64_t>(z_at);
    }
  }
  const uint64_t limit = static_cast<uint64_t>(d.end_record);
  if (d.offset > limit || d.size > limit - d.offset)
    fail_data(SourceLocation::at_byte(file, d.end_record),
              "the central directory ({} bytes at offset {}) lies outside the archive (it must end by byte {})", d.size,
              d.offset, limit);
  if (d.entries > d.size / kCentralHeaderSize)
    fail_data(SourceLocation::at_byte(file, d.end_record),
              "{} entries cannot fit in a central directory of {} bytes", d.entries, d.size);
  return d;
}

// Applies the ZIP64 extended-information extra field (id 1) to the fields set to 0xFFFFFFFF.
void apply_zip64_extra(const unsigned char* extra, int64_t length, int64_t extra_at, ZipEntry& e, uint32_t raw_usize,
                       uint32_t raw_csize, uint32_t raw_offset, const std::string& file) {
  bool need_u = raw_usize == 0xFFFFFFFFu, need_c = raw_csize == 0xFFFFFFFFu, need_o = raw_offset == 0xFFFFFFFFu;
  int64_t p = 0;
  while (p + 4 <= length) {
    const uint16_t id = le16(extra + p);
    const int64_t n = le16(extra + p + 2);
    if (p + 4 + n > length)
      fail_data(SourceLocation::at_byte(file, extra_at + p), "extra field of {} bytes runs past the extra area", n);
    if (id == 1) {
      int64_t q = p + 4;
      const int64_t end = q + n;
      auto take = [&](uint64_t& field, bool& need) {
        if (!need) return;
        if (q + 8 > end)
          fail_data(SourceLocation::at_byte(file, extra_at + p), "ZIP64 extra field is too short for the sizes it must hold");
        field = le64(extra + q);
        q += 8;
        need = false;
      };
      take(e.uncompressed_size, need_u);
      take(e.compressed_size, need_c);
      take(e.local_header_offset, need_o);
    }
    p += 4 + n;
  }
  if (need_u || need_c || need_o)
    fail_data(SourceLocation::at_byte(file, extra_at), "member '{}' has 32-bit sizes set to 0xFFFFFFFF but no ZIP64 extra field",
              e.name);
}

}  // namespace

std::vector<ZipEntry> list_zip(std::istream& in, const std::string& file) {
  const int64_t size = stream_size(in, file);
  const DirectoryLocation d = find_central_directory(in, size, file);
  const std::string dir = read_at(in, static_cast<int64_t>(d.offset), static_cast<int64_t>(d.size), file, "central directory");
  std::vector<ZipEntry> entries;
  entries.reserve(static_cast<size_t>(d.entries));
  int64_t p = 0;
  const int64_t dir_size = static_cast<int64_t>(d.size);
  for (uint64_t i = 0; i < d.entries; ++i) {
    const int64_t at = static_cast<int64_t>(d.offset) + p;
    if (p + kCentralHeaderSize > dir_size)
      fail_data(SourceLocation::at_byte(file, at), "central directory ends after {} of its {} entries", i, d.entries);
    const unsigned char* h = bytes(dir, static_cast<size_t>(p));
    if (le32(h) != kCentralHeaderSignature)
      fail_data(SourceLocation::at_byte(file, at), "bad central directory signature for entry {} (expected PK\\x01\\x02)", i);
    ZipEntry e;
    e.flags = le16(h + 8);
    e.method = le16(h + 10);
    e.crc32 = le32(h + 16);
    const uint32_t raw_csize = le32(h + 20), raw_usize = le32(h + 24), raw_offset = le32(h + 42);
    e.compressed_size = raw_csize;
    e.uncompressed_size = raw_usize;
    e.local_header_offset = raw_offset;
    e.central_header_offset = static_cast<uint64_t>(at);
    const int64_t name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    if (p + kCentralHeaderSize + name_len + extra_len + comment_len > dir_size)
      fail_data(SourceLocation::at_byte(file, at), "central directory entry {} runs past the directory", i);
    e.name = dir.substr(static_cast<size_t>(p + kCentralHeaderSize), static_cast<size_t>(name_len));
    apply_zip64_extra(h + kCentralHeaderSize + name_len, extra_len, at + kCentralHeaderSize + name_len, e, raw_usize,
                      raw_csize, raw_offset, file);
    if (e.flags & 0x41u)
      fail_data(SourceLocation::at_byte(file, at), "member '{}' is encrypted: encrypted archives are not supported", e.name);
    if (e.method != 0 && e.method != 8)
      fail_data(SourceLocation::at_byte(file, at), "member '{}' uses compression {} (supported: stored, deflate)", e.name,
                method_name(e.method));
    if (e.local_header_offset >= d.offset || e.compressed_size > d.offset - e.local_header_offset)
      fail_data(SourceLocation::at_byte(file, at),
                "member '{}' ({} bytes at offset {}) lies outside the archive's data area (which ends at byte {})", e.name,
                e.compressed_size, e.local_header_offset, d.offset);
    entries.push_back(std::move(e));
    p += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
  return entries;
}

std::string read_zip_member(std::istream& in, const ZipEntry& entry, const std::string& file) {
  const int64_t local_at = static_cast<int64_t>(entry.local_header_offset);
  const SourceLocation local_where = SourceLocation::at_byte(file, local_at);
  const std::string local = read_at(in, local_at, kLocalHeaderSize, file, "local file header");
  if (le32(bytes(local)) != kLocalHeaderSignature)
    fail_data(local_where, "bad local header signature for member '{}' (expected PK\\x03\\x04)", entry.name);
  const int64_t name_len = le16(bytes(local, 26)), extra_len = le16(bytes(local, 28));
  const std::string name = read_at(in, local_at + kLocalHeaderSize, name_len, file, "local file header");
  if (name != entry.name)
    fail_data(local_where, "the local header names '{}' but the central directory '{}'", name, entry.name);
  const int64_t data_at = local_at + kLocalHeaderSize + name_len + extra_len;
  const int64_t size = stream_size(in, file);
  if (data_at > size || entry.compressed_size > static_cast<uint64_t>(size - data_at))
    fail_data(local_where, "member '{}' data ({} bytes from byte {}) runs past the end of the archive ({} bytes)",
              entry.name, entry.compressed_size, data_at, size);
  if (entry.method == 0 && entry.compressed_size != entry.uncompressed_size)
    fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(entry.central_header_offset)),
              "stored member '{}' has compressed size {} but uncompressed size {}", entry.name, entry.compressed_size,
              entry.uncompressed_size);
  if (entry.method == 8 && entry.uncompressed_size > entry.compressed_size * kMaxDeflateRatio + 1024)
    fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(entry.central_header_offset)),
              "member '{}' claims to inflate {} bytes to {}: more than deflate can compress", entry.name,
              entry.compressed_size, entry.uncompressed_size);
  check_fits_in_memory(static_cast<double>(entry.uncompressed_size), "member '" + entry.name + "'",
                       SourceLocation::at_byte(file, static_cast<int64_t>(entry.central_header_offset)));

  std::string out;
  if (entry.method == 0) {
    out = read_at(in, data_at, static_cast<int64_t>(entry.compressed_size), file, "member data");
  } else {
    // One spare byte: if inflate fills it, the member inflates past its declared size.
    out.assign(static_cast<size_t>(entry.uncompressed_size) + 1, '\0');
    z_stream z{};
    if (inflateInit2(&z, -15) != Z_OK) throw std::bad_alloc();
    struct Guard {
      z_stream* z;
      ~Guard() { inflateEnd(z); }
    } guard{&z};
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = 0;
    std::string chunk(size_t{1} << 16, '\0');
    uint64_t consumed = 0;
    uint64_t produced = 0;
    in.clear();
    in.seekg(data_at);
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (z.avail_in == 0) {
        const uint64_t left = entry.compressed_size - consumed;
        if (left == 0)
          fail_data(SourceLocation::at_byte(file, data_at + static_cast<int64_t>(consumed)),
                    "member '{}': deflate data ends before the end of the stream (truncated or corrupt)", entry.name);
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
        in.read(chunk.data(), static_cast<std::streamsize>(n));
        if (static_cast<size_t>(in.gcount()) != n)
          fail_data(SourceLocation::at_byte(file, data_at + static_cast<int64_t>(consumed)),
                    "file ends inside member '{}'", entry.name);
        z.next_in = reinterpret_cast<Bytef*>(chunk.data());
        z.avail_in = static_cast<uInt>(n);
        consumed += n;
      }
      // Feed the output in pieces that fit a uInt.
      const uint64_t room = out.size() - produced;
      z.next_out = reinterpret_cast<Bytef*>(out.data()) + produced;
      z.avail_out = static_cast<uInt>(std::min<uint64_t>(room, std::numeric_limits<uInt>::max()));
      const uInt before_out = z.avail_out;
      const uInt before_in = z.avail_in;
      rc = inflate(&z, Z_NO_FLUSH);
      produced += before_out - z.avail_out;
      const uint64_t in_pos = consumed - z.avail_in;
      if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        fail_data(SourceLocation::at_byte(file, data_at + static_cast<int64_t>(in_pos)), "member '{}': corrupt deflate data ({})",
                  entry.name, z.msg ? z.msg : "invalid stream");
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      if (produced > entry.uncompressed_size)
        fail_data(SourceLocation::at_byte(file, data_at),
                  "member '{}' inflates past its declared size of {} bytes (corrupt archive or zip bomb)", entry.name,
                  entry.uncompressed_size);
      if (rc == Z_BUF_ERROR && before_in == z.avail_in && before_out == z.avail_out && z.avail_in != 0)
        fail_data(SourceLocation::at_byte(file, data_at + static_cast<int64_t>(in_pos)), "member '{}': inflate made no progress",
                  entry.name);
    }
    if (produced != entry.uncompressed_size)
      fail_data(SourceLocation::at_byte(file, local_at), "member '{}' inflates to {} bytes, but its declared size is {}",
                entry.name, produced, entry.uncompressed_size);
    if (z.avail_in != 0 || consumed != entry.compressed_size)
      fail_data(SourceLocation::at_byte(file, data_at + static_cast<int64_t>(consumed - z.avail_in)),
                "member '{}': the deflate stream ends {} bytes before the member's declared compressed size", entry.name,
                entry.compressed_size - (consumed - z.avail_in));
    out.resize(static_cast<size_t>(entry.uncompressed_size));
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t done = 0; done < out.size();) {
    const size_t n = std::min<size_t>(out.size() - done, size_t{1} << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + done), static_cast<uInt>(n));
    done += n;
  }
  if (static_cast<uint32_t>(crc) != entry.crc32)
    fail_data(SourceLocation::at_byte(file, data_at), "member '{}': CRC-32 mismatch (stored {:08x}, computed {:08x})",
              entry.name, entry.crc32, static_cast<uint32_t>(crc));
  return out;
}

}  // namespace spmmc
