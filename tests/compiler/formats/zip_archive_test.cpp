#include "compiler/formats/zip_archive.h"

#include <sstream>

#include "tests/compiler/formats/npy_npz_test_util.h"

namespace spmmc {
namespace {

using test::expect_user_error;
using test::find_signature;
using test::fixture;
using test::get_le;
using test::make_zip;
using test::put_le;

constexpr uint32_t kCentral = 0x02014b50;
constexpr uint32_t kEnd = 0x06054b50;

std::vector<ZipEntry> list(const std::string& bytes) {
  std::istringstream in(bytes);
  return list_zip(in, "a.zip");
}

std::string member(const std::string& bytes, size_t index) {
  std::istringstream in(bytes);
  const std::vector<ZipEntry> entries = list_zip(in, "a.zip");
  REQUIRE(index < entries.size());
  return read_zip_member(in, entries[index], "a.zip");
}

TEST_CASE("zip: numpy's stored and deflated archives (local ZIP64 extras)", "[zip]") {
  const std::string stored = fixture("npz/csr_matrix_stored.npz");
  const std::string deflated = fixture("npz/csr_matrix_compressed.npz");
  const std::vector<ZipEntry> a = list(stored);
  const std::vector<ZipEntry> b = list(deflated);
  REQUIRE(a.size() == 5);
  REQUIRE(b.size() == 5);
  const std::vector<std::string> names = {"indices.npy", "indptr.npy", "format.npy", "shape.npy", "data.npy"};
  for (size_t i = 0; i < 5; ++i) {
    INFO(names[i]);
    CHECK(a[i].name == names[i]);
    CHECK(b[i].name == names[i]);
    CHECK(a[i].method == 0);
    CHECK(b[i].method == 8);
    CHECK(a[i].compressed_size == a[i].uncompressed_size);
    CHECK(b[i].compressed_size < b[i].uncompressed_size);
    const std::string x = member(stored, i);
    const std::string y = member(deflated, i);
    CHECK(x.size() == a[i].uncompressed_size);
    CHECK(x == y);
    CHECK(x.compare(0, 6, "\x93NUMPY") == 0);
    CHECK(test::crc32_ieee(x) == a[i].crc32);
  }
  CHECK(a[0].local_header_offset == 0);
  CHECK(a[1].local_header_offset == 209);  // 30 + 11-byte name + 20-byte ZIP64 extra + 148 bytes
}

TEST_CASE("zip: ZIP64 central directory fields, ZIP64 end record, comment", "[zip]") {
  const std::vector<std::pair<std::string, std::string>> members = {{"a.npy", "hello"}, {"b.npy", ""}, {"c", "xyz"}};
  for (const bool zip64_central : {false, true}) {
    for (const bool zip64_end : {false, true}) {
      for (const std::string comment : {"", "an archive comment PK\x05\x06"}) {
        test::ZipOptions options;
        options.zip64_central = zip64_central;
        options.zip64_end = zip64_end;
        options.comment = comment;
        const std::string bytes = make_zip(members, options);
        INFO("zip64_central " << zip64_central << " zip64_end " << zip64_end << " comment '" << comment << "'");
        const std::vector<ZipEntry> entries = list(bytes);
        REQUIRE(entries.size() == 3);
        for (size_t i = 0; i < 3; ++i) {
          CHECK(entries[i].name == members[i].first);
          CHECK(entries[i].uncompressed_size == members[i].second.size());
          CHECK(member(bytes, i) == members[i].second);
        }
        CHECK(entries[1].local_header_offset == 40);  // 30 + 'a.npy' + 'hello'
      }
    }
  }
  CHECK(list(make_zip({})).empty());
}

std::string patched(std::string bytes, size_t at, uint64_t value, int n) {
  put_le(bytes, at, value, n);
  return bytes;
}

TEST_CASE("zip: malformed archives are data errors naming the byte", "[zip][errors]") {
  const std::string stored = fixture("npz/csr_matrix_stored.npz");
  const std::string deflated = fixture("npz/csr_matrix_compressed.npz");
  const size_t end = find_signature(stored, kEnd, true);
  const size_t cd = find_signature(stored, kCentral);
  const size_t dcd = find_signature(deflated, kCentral);
  const uint64_t dsize = get_le(deflated, dcd + 20, 4);  // compressed size of indices.npy
  std::string zip64 = make_zip({{"a", "hello"}}, {true, true, ""});
  const size_t z_cd = find_signature(zip64, kCentral);
  const size_t z_locator = find_signature(zip64, 0x07064b50, true);
  // A ZIP64 locator at byte 0 (no room before it for a 56-byte ZIP64 end record), then an empty end record.
  std::string early_locator = patched(patched(std::string(20 + 22, '\0'), 0, 0x07064b50, 4), 20, kEnd, 4);
  early_locator = patched(early_locator, 8, 100, 8);  // the ZIP64 end record "at byte 100", beyond the file
  std::string flipped = stored;
  flipped[61 + 147] ^= 0x01;  // last data byte of indices.npy
  struct Case {
    const char* name;
    std::string bytes;
    size_t member;  // read this member after listing (SIZE_MAX: listing must fail)
    int64_t byte;
    const char* part;
  } cases[] = {
      {"empty", "", SIZE_MAX, 0, "too short"},
      {"a .npy, not a zip", fixture("npy/f4_c.npy"), SIZE_MAX, 0, "not a ZIP archive"},
      {"truncated end", stored.substr(0, stored.size() - 10), SIZE_MAX, 0, "no end-of-central-directory"},
      {"directory beyond file", patched(stored, end + 16, stored.size(), 4), SIZE_MAX, static_cast<int64_t>(end),
       "outside the archive"},
      {"multi-disk", patched(stored, end + 4, 1, 2), SIZE_MAX, static_cast<int64_t>(end), "multi-disk"},
      {"too many entries", patched(patched(stored, end + 8, 900, 2), end + 10, 900, 2), SIZE_MAX,
       static_cast<int64_t>(end), "cannot fit"},
      {"bad central signature", patched(stored, cd, 0x02014b51, 4), SIZE_MAX, static_cast<int64_t>(cd),
       "bad central directory signature"},
      {"encrypted", patched(stored, cd + 8, 1, 2), SIZE_MAX, static_cast<int64_t>(cd), "encrypted"},
      {"bzip2", patched(stored, cd + 10, 12, 2), SIZE_MAX, static_cast<int64_t>(cd), "bzip2 (supported: stored, deflate)"},
      {"member outside", patched(stored, cd + 42, 5000, 4), SIZE_MAX, static_cast<int64_t>(cd), "lies outside"},
      {"zip64 extra missing", patched(zip64, z_cd + 46 + 1, 9, 2), SIZE_MAX, static_cast<int64_t>(z_cd + 47),
       "no ZIP64 extra field"},
      {"zip64 end outside", patched(zip64, z_locator + 8, 1 << 20, 8), SIZE_MAX, static_cast<int64_t>(z_locator),
       "outside the archive"},
      {"zip64 end record cannot precede the locator", early_locator, SIZE_MAX, 0, "offset 100 lies outside the archive"},
      {"bad local signature", patched(stored, 0, 0x04034b51, 4), 0, 0, "bad local header signature"},
      {"local name differs", patched(stored, 30, 'x', 1), 0, 0, "local header names 'xndices.npy'"},
      {"CRC mismatch", flipped, 0, 61, "CRC-32 mismatch"},
      {"stored sizes differ", patched(stored, cd + 20, 147, 4), 0, static_cast<int64_t>(cd), "compressed size 147"},
      // 0xFF: a final block of the reserved type 3; zlib fails once it has consumed that byte.
      {"corrupt deflate", patched(deflated, 61, 0xFF, 1), 0, 62, "corrupt deflate data"},
      {"inflates past declared size", patched(deflated, dcd + 24, 140, 4), 0, 61, "inflates past its declared size of 140"},
      {"inflates short of declared size", patched(deflated, dcd + 24, 150, 4), 0, 0,
       "inflates to 148 bytes, but its declared size is 150"},
      {"impossible ratio", patched(deflated, dcd + 24, 0xFFFFFFF0u, 4), 0, static_cast<int64_t>(dcd),
       "more than deflate can compress"},
      {"deflate truncated", patched(deflated, dcd + 20, dsize - 5, 4), 0, 61 + static_cast<int64_t>(dsize) - 5,
       "ends before the end of the stream"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] {
        if (c.member == SIZE_MAX) list(c.bytes);
        else member(c.bytes, c.member);
      });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == "a.zip");
      CHECK(e.where().byte == c.byte);
      CHECK_THAT(e.message(), Catch::Contains(c.part));
    }
  }
}

}  // namespace
}  // namespace spmmc
