#include "runtime/cubin_cache.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include "compiler/common/diagnostics.h"
#include "compiler/common/sha256.h"
#include "compiler/common/write_file_atomically.h"

namespace spmmc {
namespace {

// An entry is this magic line, the image length (uint64 little-endian), the SHA-256 of the image,
// then the image. A truncated, overwritten or foreign file fails one of the three checks and is a
// miss.
constexpr std::string_view kEntryMagic = "spmmc-cubin-cache-v1\n";
constexpr size_t kLengthBytes = 8;
constexpr size_t kDigestBytes = 32;
constexpr size_t kHeaderBytes = kEntryMagic.size() + kLengthBytes + kDigestBytes;

std::array<uint8_t, kDigestBytes> digest(std::string_view bytes) {
  Sha256 sha;
  sha.update(bytes.data(), bytes.size());
  return sha.finish();
}

void append_length(std::string& out, uint64_t length) {
  for (size_t i = 0; i < kLengthBytes; ++i) out += static_cast<char>((length >> (8 * i)) & 0xffu);
}

uint64_t read_length(const char* p) {
  uint64_t length = 0;
  for (size_t i = 0; i < kLengthBytes; ++i) length |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return length;
}

bool is_key(const std::string& key) {
  if (key.size() != 2 * kDigestBytes) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::filesystem::path entry_path(const std::filesystem::path& dir, const std::string& key) {
  SPMMC_CHECK(is_key(key), "a cubin cache key is 64 lower-case hex digits, got '" + key + "'");
  return dir / key.substr(0, 2) / (key + ".cubin");
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

CubinCache::CubinCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::string CubinCache::key(const std::string& source, const std::string& options, const std::string& nvrtc_version,
                            const std::string& arch) {
  std::string message = "spmmc-cubin-key-v1";
  for (const std::string* part : {&source, &options, &nvrtc_version, &arch}) {
    append_length(message, part->size());
    message += *part;
  }
  return sha256_hex(message);
}

std::optional<std::string> CubinCache::load(const std::string& key) const {
  std::ifstream in(entry_path(dir_, key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string entry((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad() || entry.size() < kHeaderBytes) return std::nullopt;
  if (std::string_view(entry).substr(0, kEntryMagic.size()) != kEntryMagic) return std::nullopt;
  const uint64_t length = read_length(entry.data() + kEntryMagic.size());
  if (length != entry.size() - kHeaderBytes) return std::nullopt;
  const std::array<uint8_t, kDigestBytes> want = digest(std::string_view(entry).substr(kHeaderBytes));
  if (std::memcmp(want.data(), entry.data() + kEntryMagic.size() + kLengthBytes, kDigestBytes) != 0) return std::nullopt;
  return entry.substr(kHeaderBytes);
}

void CubinCache::store(const std::string& key, const std::string& image) const {
  const std::filesystem::path path = entry_path(dir_, key);
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) return;
  std::string header(kEntryMagic);
  append_length(header, image.size());
  const std::array<uint8_t, kDigestBytes> sum = digest(image);
  header.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  try {
    write_file_atomically(path.string(), [&](std::ostream& out) {
      out.write(header.data(), static_cast<std::streamsize>(header.size()));
      out.write(image.data(), static_cast<std::streamsize>(image.size()));
    });
  } catch (const std::exception&) {
    // A cache that cannot be written (read-only, disk full) only costs a recompilation.
  }
}

std::filesystem::path default_cubin_cache_dir() {
  if (std::string dir = environment("SPMMC_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty()) return std::filesystem::path(xdg) / "spmmc" / "cubins";
  if (std::string home = environment("HOME"); !home.empty())
    return std::filesystem::path(home) / ".cache" / "spmmc" / "cubins";
  std::error_code error;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(error);
  return (error ? std::filesystem::path("/tmp") : tmp) / "spmmc-cubins";
}

}  // namespace spmmc
