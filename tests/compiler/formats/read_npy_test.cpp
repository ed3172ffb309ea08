#include "compiler/formats/read_npy.h"

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <sstream>

#include "compiler/formats/read_matrix.h"
#include "tests/compiler/formats/npy_npz_test_util.h"

namespace spmmc {
namespace {

using test::expect_user_error;
using test::fixture;
using test::npy;
using test::npy_with_dict;
using test::raw;
using test::reference_matrix;

Csr read_npy_bytes(const std::string& bytes, const ReadOptions& options = {}, ReadReport* report = nullptr) {
  std::istringstream in(bytes);
  ReadReport local;
  Csr csr = read_npy(in, "w.npy", options, report ? *report : local);
  check_csr_invariants(csr);
  return csr;
}

// The reference matrix as float32 row-major data.
std::string reference_f4() {
  return raw(std::vector<float>{1.0f, 0.0f, -2.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.5f, 3.0f, 0.0f, -1.0f});
}

TEST_CASE("npy: every float dtype, order and endianness numpy writes", "[npy]") {
  for (const char* name : {"f2_c", "f4_c", "f8_c", "f4_fortran", "f4_big_endian", "f8_big_endian_fortran", "f4_v2",
                           "f4_v3"}) {
    SECTION(name) {
      ReadReport report;
      const Csr a = read_npy_bytes(fixture(std::string("npy/") + name + ".npy"), {}, &report);
      CHECK(a == reference_matrix());
      CHECK(report.format == "npy");
      CHECK(report.values_origin == "file");
      CHECK(report.stored_entries == 12);
      CHECK(report.explicit_zeros_dropped == 7);
      CHECK(report.pruned_by_threshold == 0);
    }
  }
}

TEST_CASE("npy: report detail names dtype and order", "[npy]") {
  ReadReport report;
  read_npy_bytes(fixture("npy/f8_big_endian_fortran.npy"), {}, &report);
  CHECK(report.detail == ">f8 Fortran-order");
  read_npy_bytes(fixture("npy/f4_c.npy"), {}, &report);
  CHECK(report.detail == "<f4 C-order");
}

TEST_CASE("npy: the threshold prunes |w| <= T", "[npy]") {
  ReadOptions options;
  options.threshold = 1.0;
  ReadReport report;
  const Csr a = read_npy_bytes(fixture("npy/f4_fortran.npy"), options, &report);
  CHECK(a == test::csr_from_dense(3, 4, {0, 0, -2.5f, 0, 0, 0, 0, 0, 0, 3.0f, 0, 0}));
  CHECK(report.pruned_by_threshold == 3);
  CHECK(report.explicit_zeros_dropped == 7);
}

TEST_CASE("npy: the header dict may vary in spacing, quotes, key order and trailing comma", "[npy]") {
  for (const char* dict : {"{\"shape\":(3,4),\"fortran_order\":False,\"descr\":\"<f4\"}",
                           "{ 'fortran_order' : False , 'descr' : '<f4' , 'shape' : ( 3 , 4 , ) , }",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L)}"}) {
    SECTION(dict) { CHECK(read_npy_bytes(npy_with_dict(dict, reference_f4())) == reference_matrix()); }
  }
}

TEST_CASE("npy: dispatch by extension through read_matrix_file", "[npy]") {
  const LoadedMatrix m = read_matrix_file(test::fixture_path("npy/f2_c.npy"), {});
  CHECK(m.csr == reference_matrix());
  CHECK(m.report.format == "npy");
  CHECK(format_from_extension("layer.npy") == MatrixFormat::kNpy);
}

TEST_CASE("npy: read_npy_header on other dtypes and ranks", "[npy]") {
  std::istringstream in(fixture("npy/rank3.npy"));
  const NpyHeader h = read_npy_header(in, "x.npy");
  CHECK(h.kind == 'f');
  CHECK(h.itemsize == 4);
  CHECK(h.shape == std::vector<int64_t>{2, 2, 2});
  CHECK(h.element_count == 8);
  CHECK(h.data_bytes == 32);
  CHECK(h.data_offset == 128);
  CHECK(in.tellg() == 128);
  const NpyHeader s = parse_npy_header(npy("|S3", "()", "csr"), "x.npy");
  CHECK(s.kind == 'S');
  CHECK(s.itemsize == 3);
  CHECK(s.shape.empty());
  CHECK(npy_dtype_name(parse_npy_header(fixture("npy/c8.npy"), "x.npy")) == "complex64");
  CHECK(npy_dtype_name(parse_npy_header(npy("<U3", "()", std::string(12, 'a')), "x.npy")) == "str (<U3)");
  CHECK(npy_shape_string({5}) == "(5,)");
}

std::string with_byte(std::string bytes, size_t at, char value) {
  bytes[at] = value;
  return bytes;
}

TEST_CASE("npy: malformed input is a data error naming the byte", "[npy][errors]") {
  const std::string good = fixture("npy/f4_c.npy");  // 128-byte header, 48 bytes of data
  const std::string f4 = reference_f4();
  std::string nan_data = good;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&nan_data[128 + 4 * 5], &nan, 4);
  struct Case {
    const char* name;
    std::string bytes;
    int64_t byte;
    const char* part;
  } cases[] = {
      {"empty", "", 0, "empty file"},
      {"bad magic", with_byte(good, 1, 'X'), 0, "magic"},
      {"not npy", "%%MatrixMarket matrix", 0, "not a .npy file"},
      {"short prefix", good.substr(0, 9), 9, "header length"},
      {"version 4.0", with_byte(good, 6, 4), 6, "version 4.0"},
      {"version 1.1", with_byte(good, 7, 1), 6, "version 1.1"},
      {"header length beyond file", with_byte(good, 9, 0x7f), 8, "runs past the end"},
      {"header truncated", good.substr(0, 60), 8, "runs past the end"},
      {"not a dict", npy_with_dict("['descr', '<f4']", f4), 10, "expected '{'"},
      {"missing key", npy_with_dict("{'descr': '<f4', 'shape': (3, 4)}", f4), 10, "lacks 'fortran_order'"},
      {"unknown key", npy_with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'x': 1}", f4), 68,
       "unexpected key 'x'"},
      {"duplicate key", npy_with_dict("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}", f4),
       27, "appears twice"},
      {"bad bool", npy_with_dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 4)}", f4), 44, "True or False"},
      {"shape list", npy_with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': [3, 4]}", f4), 60,
       "a tuple for 'shape'"},
      {"missing comma", npy_with_dict("{'descr': '<f4' 'fortran_order': False, 'shape': (3, 4)}", f4), 26, "',' or '}'"},
      {"unterminated string", npy_with_dict("{'descr': '<f4}", f4), 20, "unterminated string"},
      {"misquoted key", npy_with_dict("{'descr: '<f4', 'fortran_order': False, 'shape': (3, 4)}", f4), 20, "':'"},
      {"garbage after dict", npy_with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)} x", f4), 68,
       "only spaces"},
      {"int32", fixture("npy/i4.npy"), 20, "'<i4' (int32)"},
      {"bool", fixture("npy/b1.npy"), 20, "(bool)"},
      {"complex", fixture("npy/c8.npy"), 20, "(complex64)"},
      {"object", npy("|O", "(3, 4)", std::string(96, '\0')), 20, "object"},
      {"structured", fixture("npy/structured.npy"), 20, "structured"},
      {"long double", npy("<f16", "(3, 4)", std::string(192, '\0')), 20, "supported"},
      {"unknown dtype", npy("<q4", "(3, 4)", f4), 20, "unknown dtype '<q4'"},
      {"rank 1", fixture("npy/rank1.npy"), 60, "the shape is (5,)"},
      {"rank 3", fixture("npy/rank3.npy"), 60, "the shape is (2, 2, 2)"},
      {"rank 0", npy("<f4", "()", f4.substr(0, 4)), 60, "the shape is ()"},
      {"zero rows", fixture("npy/zero_rows.npy"), 60, "at least 1"},
      {"negative dim", npy("<f4", "(-3, 4)", f4), 61, "negative"},
      {"absurd dim", npy("<f4", "(3000000000, 4)", f4), 60, "not supported"},
      {"huge literal", npy("<f4", "(99999999999999999999, 4)", f4), 61, "absurdly large"},
      {"product overflows", npy("<f4", "(4611686018427387904, 4)", f4), 60, "overflows"},
      {"bytes overflow", npy("<f4", "(2147483647, 2147483647, 2)", f4), 60, "more bytes"},
      {"truncated data", good.substr(0, good.size() - 4), 172, "needs 48 bytes of data from byte 128, only 44"},
      {"no data", good.substr(0, 128), 128, "only 0"},
      {"trailing bytes", good + "junk", 176, "4 unexpected bytes"},
      {"NaN", nan_data, 148, "element (1, 1) is nan"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { read_npy_bytes(c.bytes); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == "w.npy");
      CHECK(e.where().byte == c.byte);
      CHECK_THAT(e.message(), Catch::Contains(c.part));
    }
  }
}

TEST_CASE("npy: parse_npy_header checks the in-memory size too", "[npy][errors]") {
  const std::string good = fixture("npy/i4.npy");
  CHECK(parse_npy_header(good, "m").kind == 'i');
  const UserError shorter = expect_user_error([&] { parse_npy_header(good.substr(0, good.size() - 1), "m"); });
  CHECK(shorter.where().byte == static_cast<int64_t>(good.size()) - 1);
  CHECK_THAT(shorter.message(), Catch::Contains("truncated"));
  const UserError longer = expect_user_error([&] { parse_npy_header(good + "x", "m"); });
  CHECK(longer.where().byte == static_cast<int64_t>(good.size()));
  CHECK_THAT(longer.message(), Catch::Contains("1 unexpected bytes"));
}

TEST_CASE("npy: MobileNet weights match numpy's non-zero count and values", "[npy][shared]") {
  const std::filesystem::path dir = test::shared_data_dir();
  if (dir.empty()) return;
  // np.count_nonzero of each contraction_1x1_<i>.npy, computed once with numpy 2.4.6.
  const std::map<int, int64_t> numpy_nnz = {{0, 205},    {1, 819},    {2, 1638},   {3, 3277},
                                            {4, 6554},   {5, 13107},  {6, 26214},  {7, 26214},
                                            {8, 26214},  {9, 26214},  {10, 26214}, {11, 52429}};
  int files = 0;
  const std::regex pattern("contraction_1x1_([0-9]+)\\.npy");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    std::smatch match;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, match, pattern)) continue;
    ++files;
    INFO(entry.path());
    const LoadedMatrix m = read_matrix_file(entry.path().string(), {});
    const auto known = numpy_nnz.find(std::stoi(match[1].str()));
    if (known != numpy_nnz.end()) CHECK(m.csr.nnz() == known->second);
    // Independently: the files are version 1.0, '<f4', C order; compare every element.
    const std::string bytes = test::read_file(entry.path());
    const size_t data_at = 10 + test::get_le(bytes, 8, 2);
    const std::string header = bytes.substr(10, data_at - 10);
    REQUIRE(header.find("'<f4'") != std::string::npos);
    REQUIRE(header.find("False") != std::string::npos);
    REQUIRE((bytes.size() - data_at) == static_cast<size_t>(m.csr.rows) * m.csr.cols * 4);
    std::vector<float> dense(static_cast<size_t>(m.csr.rows) * m.csr.cols);
    std::memcpy(dense.data(), bytes.data() + data_at, dense.size() * 4);
    CHECK(m.csr == test::csr_from_dense(m.csr.rows, m.csr.cols, dense));
  }
  CHECK(files >= 12);
}

}  // namespace
}  // namespace spmmc
