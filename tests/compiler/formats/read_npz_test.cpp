#include "compiler/formats/read_npz.h"

#include <limits>
#include <sstream>

#include "compiler/formats/read_matrix.h"
#include "compiler/formats/zip_archive.h"
#include "tests/compiler/formats/npy_npz_test_util.h"

namespace spmmc {
namespace {

using test::expect_user_error;
using test::fixture;
using test::make_zip;
using test::npy;
using test::raw;
using test::reference_matrix;

using Members = std::vector<std::pair<std::string, std::string>>;

Csr read_npz_bytes(const std::string& bytes, ReadReport* report = nullptr) {
  std::istringstream in(bytes);
  ReadReport local;
  Csr csr = read_npz(in, "t.npz", {}, report ? *report : local);
  check_csr_invariants(csr);
  return csr;
}

// The members of a fixture archive, decompressed.
Members members_of(const std::string& bytes) {
  std::istringstream in(bytes);
  Members out;
  for (const ZipEntry& e : list_zip(in, "f.npz")) out.emplace_back(e.name, read_zip_member(in, e, "f.npz"));
  return out;
}

Members with_member(Members members, const std::string& name, const std::string& bytes) {
  for (auto& [n, b] : members)
    if (n == name) {
      b = bytes;
      return members;
    }
  members.emplace_back(name, bytes);
  return members;
}

Members without_member(Members members, const std::string& name) {
  Members out;
  for (auto& m : members)
    if (m.first != name) out.push_back(m);
  return out;
}

TEST_CASE("npz: csr, csc and coo, stored or deflated, matrices and arrays, as scipy writes them", "[npz]") {
  for (const char* format : {"csr", "csc", "coo"}) {
    for (const char* kind : {"matrix", "array"}) {
      for (const char* storage : {"stored", "compressed"}) {
        const std::string name = fmt::format("npz/{}_{}_{}.npz", format, kind, storage);
        SECTION(name) {
          ReadReport report;
          CHECK(read_npz_bytes(fixture(name), &report) == reference_matrix());
          CHECK(report.format == "npz");
          CHECK(report.detail == fmt::format("{}_{}", format, kind));
          CHECK(report.values_origin == "file");
          CHECK(report.stored_entries == 5);
          CHECK(report.explicit_zeros_dropped == 0);
          CHECK(report.duplicates_summed == 0);
        }
      }
    }
  }
}

TEST_CASE("npz: duplicates are summed, unsorted indices sorted, explicit zeros dropped", "[npz]") {
  ReadReport report;
  CHECK(read_npz_bytes(fixture("npz/csr_noncanonical.npz"), &report) == reference_matrix());
  CHECK(report.stored_entries == 7);
  CHECK(report.duplicates_summed == 1);
  CHECK(report.explicit_zeros_dropped == 1);

  const Csr coo = read_npz_bytes(fixture("npz/coo_duplicates.npz"), &report);
  CHECK(coo == test::csr_from_dense(3, 4, {1.0f, 0, -2.25f, 0, 0, 0, 0, 0, 0.5f, 3.0f, 0, -1.0f}));
  CHECK(report.stored_entries == 7);
  CHECK(report.duplicates_summed == 1);
  CHECK(report.explicit_zeros_dropped == 1);
}

TEST_CASE("npz: other value and index dtypes, layouts and an empty matrix", "[npz]") {
  const Csr doubled = test::csr_from_dense(3, 4, {2, 0, -5, 0, 0, 0, 0, 0, 1, 6, 0, -2});
  CHECK(read_npz_bytes(fixture("npz/csr_f16.npz")) == reference_matrix());
  CHECK(read_npz_bytes(fixture("npz/csr_int64_indices.npz")) == reference_matrix());
  CHECK(read_npz_bytes(fixture("npz/csr_format_str.npz")) == reference_matrix());
  CHECK(read_npz_bytes(fixture("npz/csr_int64_data.npz")) == doubled);
  CHECK(read_npz_bytes(fixture("npz/csr_int8_data.npz")) == doubled);
  CHECK(read_npz_bytes(fixture("npz/csr_bool.npz")) == test::csr_from_dense(3, 4, {1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1}));
  ReadReport report;
  CHECK(read_npz_bytes(fixture("npz/coo_coords.npz"), &report) == reference_matrix());
  CHECK(report.detail == "coo_array");
  const Csr empty = read_npz_bytes(fixture("npz/csr_empty.npz"));
  CHECK(empty.rows == 5);
  CHECK(empty.cols == 7);
  CHECK(empty.nnz() == 0);
}

TEST_CASE("npz: coords in Fortran order and big-endian members", "[npz]") {
  // The reference matrix's entries in coo order: (0,0) (0,2) (2,0) (2,1) (2,3).
  const std::string coords_f = test::npy_with_dict("{'descr': '>i8', 'fortran_order': True, 'shape': (2, 5), }",
                                                   [] {
                                                     std::string s;
                                                     for (int64_t v : {0, 0, 0, 2, 2, 0, 2, 1, 2, 3}) {
                                                       for (int b = 7; b >= 0; --b) s += static_cast<char>((v >> (8 * b)) & 0xFF);
                                                     }
                                                     return s;
                                                   }());
  const Members members = {{"coords.npy", coords_f},
                           {"format.npy", npy("|S3", "()", "coo")},
                           {"shape.npy", npy("<i8", "(2,)", raw(std::vector<int64_t>{3, 4}))},
                           {"data.npy", npy("<f4", "(5,)", raw(std::vector<float>{1, -2.5f, 0.5f, 3, -1}))}};
  CHECK(read_npz_bytes(make_zip(members)) == reference_matrix());
}

TEST_CASE("npz: dispatch by extension through read_matrix_file", "[npz]") {
  const LoadedMatrix m = read_matrix_file(test::fixture_path("npz/csc_array_compressed.npz"), {});
  CHECK(m.csr == reference_matrix());
  CHECK(m.report.format == "npz");
  CHECK(format_from_extension("w.npz") == MatrixFormat::kNpz);
}

TEST_CASE("npz: malformed archives are data errors naming the member and byte", "[npz][errors]") {
  const Members csr = members_of(fixture("npz/csr_matrix_stored.npz"));  // int32 indices, float32 data
  const Members coo = members_of(fixture("npz/coo_matrix_stored.npz"));
  // In numpy's members the data starts at byte 128; element i of an int32 array at 128 + 4i.
  const auto i32 = [](std::vector<int32_t> v) { return raw(v); };
  struct Case {
    const char* name;
    std::string bytes;
    const char* file;  // the diagnostic's file
    int64_t byte;
    const char* part;
  } cases[] = {
      {"not a zip", fixture("npy/f4_c.npy"), "t.npz", 0, "not a ZIP archive"},
      {"plain np.savez", fixture("npz/dense_only.npz"), "t.npz", -1, "no 'format' member"},
      {"bsr", fixture("npz/bsr.npz"), "t.npz[format.npy]", 128, "unsupported sparse format 'bsr' (supported: csr, csc, coo)"},
      {"dia", fixture("npz/dia.npz"), "t.npz[format.npy]", 128, "unsupported sparse format 'dia'"},
      {"complex", fixture("npz/complex.npz"), "t.npz[data.npy]", 20, "complex data (complex64)"},
      {"missing indices", make_zip(without_member(csr, "indices.npy")), "t.npz", -1, "no 'indices' member"},
      {"missing indptr", make_zip(without_member(csr, "indptr.npy")), "t.npz", -1, "no 'indptr' member"},
      {"missing col", make_zip(without_member(coo, "col.npy")), "t.npz", -1, "no 'col' member"},
      {"missing shape", make_zip(without_member(csr, "shape.npy")), "t.npz", -1, "no 'shape' member"},
      {"data member empty", make_zip(with_member(csr, "data.npy", "")), "t.npz[data.npy]", 0, "empty file"},
      {"format not a string", make_zip(with_member(csr, "format.npy", npy("<i8", "()", raw(std::vector<int64_t>{1})))),
       "t.npz[format.npy]", 20, "0-d string"},
      {"format pickled", make_zip(with_member(csr, "format.npy", npy("|O", "()", "12345678"))), "t.npz[format.npy]", 20,
       "pickled"},
      {"shape 3-D", make_zip(with_member(csr, "shape.npy", npy("<i8", "(3,)", raw(std::vector<int64_t>{3, 4, 5})))),
       "t.npz[shape.npy]", 60, "only 2-D"},
      {"shape zero", make_zip(with_member(csr, "shape.npy", npy("<i8", "(2,)", raw(std::vector<int64_t>{0, 4})))),
       "t.npz[shape.npy]", 128, "at least 1"},
      {"shape absurd", make_zip(with_member(csr, "shape.npy", npy("<i8", "(2,)", raw(std::vector<int64_t>{3, 1LL << 40})))),
       "t.npz[shape.npy]", 128, "not supported"},
      {"data NaN",
       make_zip(with_member(csr, "data.npy",
                            npy("<f4", "(5,)", raw(std::vector<float>{1, 2, std::numeric_limits<float>::quiet_NaN(), 3, 4})))),
       "t.npz[data.npy]", 136, "data[2] is nan"},
      {"data beyond float32", make_zip(with_member(csr, "data.npy", npy("<f8", "(5,)", raw(std::vector<double>{1, 2, 3, 1e300, 4})))),
       "t.npz[data.npy]", 152, "float32 range"},
      {"data 2-D", make_zip(with_member(csr, "data.npy", npy("<f4", "(5, 1)", raw(std::vector<float>{1, 2, 3, 4, 5})))),
       "t.npz[data.npy]", 60, "1-D"},
      {"data str", make_zip(with_member(csr, "data.npy", npy("<U1", "(5,)", std::string(20, 'a')))), "t.npz[data.npy]", 20,
       "unsupported dtype '<U1'"},
      {"indices float", make_zip(with_member(csr, "indices.npy", npy("<f4", "(5,)", raw(std::vector<float>{0, 2, 0, 1, 3})))),
       "t.npz[indices.npy]", 20, "must be an integer array"},
      {"indices out of range", make_zip(with_member(csr, "indices.npy", npy("<i4", "(5,)", i32({0, 2, 0, 4, 3})))),
       "t.npz[indices.npy]", 140, "indices[3] = 4: column index out of range [0, 3]"},
      {"indices negative", make_zip(with_member(csr, "indices.npy", npy("<i8", "(5,)", raw(std::vector<int64_t>{0, -1, 0, 1, 3})))),
       "t.npz[indices.npy]", 136, "indices[1] = -1"},
      {"indices short", make_zip(with_member(csr, "indices.npy", npy("<i4", "(4,)", i32({0, 2, 0, 1})))),
       "t.npz[indices.npy]", 60, "'indices' has 4 entries, but 'data' has 5"},
      {"indices truncated", make_zip(with_member(csr, "indices.npy", npy("<i4", "(5,)", i32({0, 2, 0, 1})))),
       "t.npz[indices.npy]", 144, "data truncated"},
      {"indptr decreasing", make_zip(with_member(csr, "indptr.npy", npy("<i4", "(4,)", i32({0, 2, 1, 5})))),
       "t.npz[indptr.npy]", 136, "indptr decreases at entry 2 (1 after 2)"},
      {"indptr first", make_zip(with_member(csr, "indptr.npy", npy("<i4", "(4,)", i32({1, 2, 2, 5})))),
       "t.npz[indptr.npy]", 128, "indptr[0] is 1"},
      {"indptr last", make_zip(with_member(csr, "indptr.npy", npy("<i4", "(4,)", i32({0, 2, 2, 4})))),
       "t.npz[indptr.npy]", 140, "the last indptr entry is 4, but 'data' has 5"},
      {"indptr beyond nnz", make_zip(with_member(csr, "indptr.npy", npy("<i4", "(4,)", i32({0, 7, 7, 5})))),
       "t.npz[indptr.npy]", 132, "beyond the 5 stored entries"},
      {"indptr length", make_zip(with_member(csr, "indptr.npy", npy("<i4", "(3,)", i32({0, 2, 5})))),
       "t.npz[indptr.npy]", 60, "'indptr' has 3 entries, but 3 rows need 4"},
      {"coo row out of range", make_zip(with_member(coo, "row.npy", npy("<i4", "(5,)", i32({0, 0, 3, 2, 2})))),
       "t.npz[row.npy]", 136, "row[2] = 3: row index out of range [0, 2]"},
      {"coo col length", make_zip(with_member(coo, "col.npy", npy("<i4", "(6,)", i32({0, 2, 0, 1, 3, 3})))),
       "t.npz[col.npy]", 60, "'col' has 6 entries"},
      {"coords shape", make_zip(with_member(without_member(without_member(coo, "row.npy"), "col.npy"), "coords.npy",
                                            npy("<i4", "(3, 5)", i32(std::vector<int32_t>(15, 0))))),
       "t.npz[coords.npy]", 60, "needs (2, 5)"},
      {"coords out of range", make_zip(with_member(without_member(without_member(coo, "row.npy"), "col.npy"), "coords.npy",
                                                   npy("<i4", "(2, 5)", i32({0, 0, 2, 2, 2, 0, 2, 0, 1, 4})))),
       "t.npz[coords.npy]", 164, "coords[1, 4] = 4: column index out of range [0, 3]"},
      {"is_array not bool", make_zip(with_member(csr, "_is_array.npy", npy("<f4", "()", raw(std::vector<float>{1})))),
       "t.npz[_is_array.npy]", 20, "single bool"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { read_npz_bytes(c.bytes); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == c.file);
      CHECK(e.where().byte == c.byte);
      CHECK_THAT(e.message(), Catch::Contains(c.part));
    }
  }
}

TEST_CASE("npz: a member named twice is refused", "[npz][errors]") {
  Members csr = members_of(fixture("npz/csr_matrix_stored.npz"));
  csr.push_back(csr.front());
  const std::string bytes = make_zip(csr);
  const UserError e = expect_user_error([&] { read_npz_bytes(bytes); });
  CHECK(e.code() == ExitCode::kDataError);
  CHECK(e.where().file == "t.npz");
  CHECK(e.where().byte == static_cast<int64_t>(test::find_signature(bytes, 0x06054b50, true)) - 57);
  CHECK_THAT(e.message(), Catch::Contains("member 'indices.npy' appears twice"));
}

}  // namespace
}  // namespace spmmc
