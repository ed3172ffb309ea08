#include "compiler/formats/read_safetensors.h"

#include <cmath>
#include <sstream>

#include "compiler/formats/read_matrix.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

using test::expect_user_error;

const std::string kFile = "w.safetensors";

// tests/data/safetensors/NAME, written by tests/data/make_safetensors_fixtures.py.
std::string fixture(const std::string& name) {
  const std::string bytes = test::read_file(std::filesystem::path(SPMMC_TEST_DATA) / "safetensors" / name);
  REQUIRE(bytes.size() > 8);
  return bytes;
}

// The JSON header of a safetensors file.
std::string header_of(const std::string& bytes) {
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  REQUIRE(size <= bytes.size() - 8);
  return bytes.substr(8, static_cast<size_t>(size));
}

// A safetensors file: the 8-byte little-endian size of `header`, `header`, then `data`.
std::string safetensors_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

Csr read_bytes(const std::string& bytes, const std::string& tensor, double threshold = 0.0,
               ReadReport* report = nullptr) {
  std::istringstream in(bytes);
  ReadOptions options;
  options.tensor = tensor;
  options.threshold = threshold;
  ReadReport local;
  Csr csr = read_safetensors(in, kFile, options, report ? *report : local);
  check_csr_invariants(csr);
  return csr;
}

TEST_CASE("safetensors: F32 tensor from a file written by the safetensors library", "[safetensors]") {
  ReadReport report;
  const Csr a = read_bytes(fixture("multi.safetensors"), "w_f32", 0.0, &report);
  CHECK(a.rows == 3);
  CHECK(a.cols == 4);
  CHECK(a.row_ptr == std::vector<int32_t>{0, 2, 2, 5});
  CHECK(a.col_idx == std::vector<int32_t>{0, 2, 0, 1, 3});
  CHECK(a.values == std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f, -0.125f});
  CHECK(report.format == "safetensors");
  CHECK(report.detail == "F32 [3, 4]");
  CHECK(report.values_origin == "file");
  CHECK(report.tensor == "w_f32");
  CHECK(report.stored_entries == 12);
  CHECK(report.explicit_zeros_dropped == 7);  // -0.0 included
  CHECK(report.pruned_by_threshold == 0);
}

TEST_CASE("safetensors: --threshold prunes small magnitudes", "[safetensors]") {
  ReadReport report;
  const Csr a = read_bytes(fixture("multi.safetensors"), "w_f32", 0.2, &report);
  CHECK(a.row_ptr == std::vector<int32_t>{0, 2, 2, 4});
  CHECK(a.col_idx == std::vector<int32_t>{0, 2, 0, 1});
  CHECK(a.values == std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f});
  CHECK(report.pruned_by_threshold == 1);
  CHECK(report.explicit_zeros_dropped == 7);
}

TEST_CASE("safetensors: F16, BF16 and F64 tensors", "[safetensors]") {
  const std::string multi = fixture("multi.safetensors");
  ReadReport report;
  const Csr h = read_bytes(multi, "w_f16", 0.0, &report);
  CHECK(report.detail == "F16 [2, 3]");
  CHECK(h.row_ptr == std::vector<int32_t>{0, 2, 4});
  CHECK(h.col_idx == std::vector<int32_t>{0, 2, 0, 1});
  CHECK(h.values == std::vector<float>{0.5f, -1.25f, 65504.0f, std::ldexp(1.0f, -24)});

  const Csr b = read_bytes(multi, "w_bf16", 0.0, &report);
  CHECK(report.detail == "BF16 [2, 3]");
  CHECK(report.explicit_zeros_dropped == 2);
  CHECK(b.row_ptr == std::vector<int32_t>{0, 2, 4});
  CHECK(b.col_idx == std::vector<int32_t>{0, 2, 0, 1});
  CHECK(b.values == std::vector<float>{1.0f, -3.0f, 0.125f, 3.140625f});

  const Csr d = read_bytes(multi, "w_f64", 0.0, &report);
  CHECK(report.detail == "F64 [2, 2]");
  CHECK(d.row_ptr == std::vector<int32_t>{0, 1, 2});
  CHECK(d.col_idx == std::vector<int32_t>{0, 1});
  CHECK(d.values == std::vector<float>{static_cast<float>(1e-3), static_cast<float>(-123.456)});
}

TEST_CASE("safetensors: hand-written header with whitespace and padding, tensor not at offset 0", "[safetensors]") {
  const float data[] = {9.0f, 0.0f, 2.0f, 0.0f, -4.0f};  // "skip": 1 float; "m": [2, 2]
  const std::string header =
      " \n{ \"skip\" : {\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\n"
      "  \"m\" : { \"data_offsets\" : [ 4 , 20 ], \"shape\" : [ 2 , 2 ], \"dtype\" : \"F32\" } }      ";
  const Csr a = read_bytes(safetensors_file(header, std::string(reinterpret_cast<const char*>(data), sizeof data)), "m");
  CHECK(a == test::csr_from_dense(2, 2, {0.0f, 2.0f, 0.0f, -4.0f}));
}

TEST_CASE("safetensors: the extension selects the reader", "[safetensors]") {
  CHECK(format_from_extension("model.safetensors") == MatrixFormat::kSafetensors);
  test::TempDir dir;
  test::write_file(dir.path / "m.safetensors", fixture("multi.safetensors"));
  ReadOptions options;
  options.tensor = "w_f64";
  const LoadedMatrix loaded = read_matrix_file((dir.path / "m.safetensors").string(), options);
  CHECK(loaded.csr.nnz() == 2);
  CHECK(loaded.report.tensor == "w_f64");
}

TEST_CASE("safetensors: without --tensor, a usage error lists every tensor", "[safetensors][errors]") {
  const UserError e = expect_user_error([&] { read_bytes(fixture("multi.safetensors"), ""); });
  CHECK(e.code() == ExitCode::kUsage);
  CHECK(e.where().file == kFile);
  CHECK(e.where().byte == -1);
  const std::string& m = e.message();
  CHECK_THAT(m, Catch::Contains("pick one with --tensor NAME"));
  CHECK_THAT(m, Catch::Contains("6 tensors"));
  // Sorted by name, each with dtype, shape and whether it is usable; no metadata entry.
  CHECK_THAT(m, Catch::Contains("bias    F32    [4]     no: 1-D"));
  CHECK_THAT(m, Catch::Contains("idx     I32    [2, 2]  no: dtype I32 is not supported"));
  CHECK_THAT(m, Catch::Contains("w_bf16  BF16   [2, 3]  yes"));
  CHECK_THAT(m, Catch::Contains("w_f16   F16    [2, 3]  yes"));
  CHECK_THAT(m, Catch::Contains("w_f32   F32    [3, 4]  yes"));
  CHECK_THAT(m, Catch::Contains("w_f64   F64    [2, 2]  yes"));
  CHECK(m.find("bias") < m.find("idx"));
  CHECK(m.find("idx") < m.find("w_bf16"));
  CHECK(m.find("w_f32") < m.find("w_f64"));
  CHECK(m.find("__metadata__") == std::string::npos);
  CHECK_THAT(std::string(e.what()), Catch::StartsWith(kFile + ": error: "));
}

TEST_CASE("safetensors: an unknown tensor name lists the names and a close match", "[safetensors][errors]") {
  const std::string multi = fixture("multi.safetensors");
  const UserError e = expect_user_error([&] { read_bytes(multi, "W_F32x"); });
  CHECK(e.code() == ExitCode::kDataError);
  CHECK(e.where().file == kFile);
  CHECK_THAT(e.message(), Catch::Contains("no tensor named 'W_F32x' (did you mean 'w_f32'?)"));
  CHECK_THAT(e.message(), Catch::Contains("'bias', 'idx', 'w_bf16', 'w_f16', 'w_f32', 'w_f64'"));
  const UserError far = expect_user_error([&] { read_bytes(multi, "encoder.layer.0"); });
  CHECK(far.code() == ExitCode::kDataError);
  CHECK_THAT(far.message(), !Catch::Contains("did you mean"));
}

// Byte offset of `marker` in a file whose header is `header` (as laid out by safetensors_file).
int64_t at(const std::string& header, const std::string& marker) {
  const size_t p = header.find(marker);
  REQUIRE(p != std::string::npos);
  return 8 + static_cast<int64_t>(p);
}

TEST_CASE("safetensors: malformed headers are data errors naming the byte", "[safetensors][errors]") {
  const std::string four_floats(16, '\0');
  struct Case {
    const char* name;
    std::string header;
    std::string data;
    std::string marker;  // the error is at its first occurrence in the header
    const char* part;
  } cases[] = {
      {"invalid JSON", R"({"m": {"dtype": "F32",, "shape": [2, 2], "data_offsets": [0, 16]}})", four_floats, ", \"shape",
       "invalid JSON in the header"},
      {"JSON cut short", R"({"m": {"dtype": "F32")", four_floats, "", "invalid JSON"},
      {"invalid UTF-8", "{\"m\xff\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]}}", four_floats,
       "\xff", "UTF-8"},
      {"number beyond the double range", R"({"m": {"dtype": "F32", "shape": [2, -1E+999], "data_offsets": [0, 16]}})",
       four_floats, "-1E+999", "the number -1E+999 is beyond the range of a double"},
      {"header is an array", R"(  [1, 2])", four_floats, "[1", "must be a JSON object"},
      {"no tensors", R"({"__metadata__": {"a": "b"}})", "", "{", "lists no tensors"},
      {"entry not an object", R"({"m": 5})", four_floats, "5}", "expected an object"},
      {"missing dtype", R"({"m": {"shape": [2, 2], "data_offsets": [0, 16]}})", four_floats, "{\"shape",
       "no \"dtype\" field"},
      {"missing shape", R"({"m": {"dtype": "F32", "data_offsets": [0, 16]}})", four_floats, "{\"dtype",
       "no \"shape\" field"},
      {"missing data_offsets", R"({"m": {"dtype": "F32", "shape": [2, 2]}})", four_floats, "{\"dtype",
       "no \"data_offsets\" field"},
      {"dtype not a string", R"({"m": {"dtype": 32, "shape": [2, 2], "data_offsets": [0, 16]}})", four_floats, "32",
       "\"dtype\" must be a string"},
      {"unknown dtype", R"({"m": {"dtype": "F17", "shape": [2, 2], "data_offsets": [0, 16]}})", four_floats,
       "\"F17\"", "unknown dtype 'F17'"},
      {"shape not an array", R"({"m": {"dtype": "F32", "shape": 4, "data_offsets": [0, 16]}})", four_floats, "4,",
       "must be an array"},
      {"negative dimension", R"({"m": {"dtype": "F32", "shape": [2, -2], "data_offsets": [0, 16]}})", four_floats,
       "[2, -2]", "dimension 1 of \"shape\" is negative (-2)"},
      {"fractional dimension", R"({"m": {"dtype": "F32", "shape": [2.5, 2], "data_offsets": [0, 16]}})", four_floats,
       "[2.5", "must be a non-negative integer, found 2.5"},
      {"dimension beyond int64", R"({"m": {"dtype": "F32", "shape": [18446744073709551615], "data_offsets": [0, 16]}})",
       four_floats, "[1844", "too large"},
      {"element count overflows",
       R"({"m": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]}})", four_floats, "[4294",
       "overflows"},
      {"sub-byte dtype", R"({"m": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}})", four_floats, "[3]",
       "do not fill whole bytes"},
      {"offsets not a pair", R"({"m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 8, 16]}})", four_floats,
       "[0, 8", "must be a pair [begin, end], found an array of 3"},
      {"offsets a string", R"({"m": {"dtype": "F32", "shape": [2, 2], "data_offsets": "0-16"}})", four_floats,
       "\"0-16", "must be a pair"},
      {"negative offset", R"({"m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [-4, 16]}})", four_floats,
       "[-4", "begin of \"data_offsets\" is negative"},
      {"begin after end", R"({"m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [16, 0]}})", four_floats,
       "[16, 0]", "begins after it ends"},
      {"end beyond the file", R"({"m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})",
       std::string(12, '\0'), "[0, 16]", "ends beyond the file"},
      {"size mismatch", R"({"m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 12]}})", four_floats,
       "[0, 12]", "span 12 bytes, but F32 [2, 2] needs 16"},
      {"metadata not an object", R"({"__metadata__": [1], "m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})",
       four_floats, "[1]", "\"__metadata__\" must be an object"},
      {"metadata value not a string",
       R"({"__metadata__": {"k": 1}, "m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})", four_floats,
       "1}", "'k' maps to number"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { read_bytes(safetensors_file(c.header, c.data), "m"); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == kFile);
      CHECK(e.where().byte == (c.marker.empty() ? 8 + static_cast<int64_t>(c.header.size()) : at(c.header, c.marker)));
      CHECK_THAT(e.message(), Catch::Contains(c.part));
      CHECK_THAT(std::string(e.what()), Catch::StartsWith(kFile + ":byte "));
    }
  }
}

TEST_CASE("safetensors: a broken size field is a data error at byte 0", "[safetensors][errors]") {
  const std::string valid = fixture("multi.safetensors");
  auto with_size = [&](uint64_t size) {
    std::string bytes = valid;
    for (size_t i = 0; i < 8; ++i) bytes[i] = static_cast<char>((size >> (8 * i)) & 0xFF);
    return bytes;
  };
  struct Case {
    const char* name;
    std::string bytes;
    const char* part;
  } cases[] = {
      {"empty file", "", "0 bytes long"},
      {"shorter than 8 bytes", valid.substr(0, 7), "7 bytes long"},
      {"header size past the end", with_size(valid.size() - 7), "runs past the end of the file"},
      {"header size above 100 MB", with_size(100'000'001), "above the limit of 100000000"},
      {"header size 2^64 - 1", with_size(~uint64_t{0}), "above the limit"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { read_bytes(c.bytes, "w_f32"); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == kFile);
      CHECK(e.where().byte == 0);
      CHECK_THAT(e.message(), Catch::Contains(c.part));
    }
  }
}

TEST_CASE("safetensors: a truncated copy of a valid file names the tensor that runs past the end",
          "[safetensors][errors]") {
  const std::string valid = fixture("multi.safetensors");
  // The library stores w_f16 last in the data buffer (fixture layout).
  const std::string header = header_of(valid);
  const UserError e = expect_user_error([&] { read_bytes(valid.substr(0, valid.size() - 1), "w_f32"); });
  CHECK(e.code() == ExitCode::kDataError);
  CHECK(e.where().byte == at(header, "[124,136]"));
  CHECK_THAT(e.message(), Catch::Contains("tensor 'w_f16'"));
  CHECK_THAT(e.message(), Catch::Contains("ends beyond the file"));
}

TEST_CASE("safetensors: the chosen tensor must be a non-empty 2-D float matrix", "[safetensors][errors]") {
  const std::string multi = fixture("multi.safetensors");
  const std::string odd = fixture("odd_shapes.safetensors");
  const std::string multi_header = header_of(multi);
  const std::string odd_header = header_of(odd);
  struct Case {
    const char* name;
    const std::string* bytes;
    const char* tensor;
    int64_t byte;
    const char* part;
  } cases[] = {
      {"1-D", &multi, "bias", at(multi_header, "[4]"), "tensor 'bias' (F32 [4]) cannot be read as a sparse matrix: 1-D"},
      {"3-D", &odd, "conv", at(odd_header, "[2,2,2]"), "(F32 [2, 2, 2]) cannot be read as a sparse matrix: 3-D"},
      {"0-D", &odd, "scalar", at(odd_header, "[],"), "a scalar (0-D)"},
      {"zero rows", &odd, "empty", at(odd_header, "[0,3]"), "(F32 [0, 3]) cannot be read as a sparse matrix: empty"},
      {"I32", &multi, "idx", at(multi_header, "\"I32\""), "dtype I32 is not supported (spmmc reads F32, F16, BF16 and F64)"},
      {"U8", &odd, "mask", at(odd_header, "\"U8\""), "dtype U8 is not supported"},
      {"NaN value", &odd, "has_nan", 8 + static_cast<int64_t>(odd_header.size()) + 32 + 4, "element (0, 1) is nan"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { read_bytes(*c.bytes, c.tensor); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().file == kFile);
      CHECK(e.where().byte == c.byte);
      CHECK_THAT(e.message(), Catch::Contains(c.part));
    }
  }
}

TEST_CASE("safetensors: other unsupported dtypes and non-finite halves", "[safetensors][errors]") {
  for (const char* dtype : {"BOOL", "I8", "I64", "F8_E4M3", "F8_E5M2", "C64"}) {
    SECTION(dtype) {
      const std::string d(dtype);
      const int64_t bytes = d == "I64" || d == "C64" ? 32 : 4;
      const std::string header = R"({"m": {"dtype": ")" + d + R"(", "shape": [2, 2], "data_offsets": [0, )" +
                                 std::to_string(bytes) + "]}}";
      const UserError e =
          expect_user_error([&] { read_bytes(safetensors_file(header, std::string(bytes, '\0')), "m"); });
      CHECK(e.code() == ExitCode::kDataError);
      CHECK(e.where().byte == at(header, "\"" + d + "\""));
      CHECK_THAT(e.message(), Catch::Contains("dtype " + d + " is not supported"));
    }
  }
  SECTION("F16 infinity") {
    const std::string header = R"({"m": {"dtype": "F16", "shape": [1, 2], "data_offsets": [0, 4]}})";
    const std::string data("\x00\x3c\x00\x7c", 4);  // 1.0, +inf
    const UserError e = expect_user_error([&] { read_bytes(safetensors_file(header, data), "m"); });
    CHECK(e.code() == ExitCode::kDataError);
    CHECK(e.where().byte == 8 + static_cast<int64_t>(header.size()) + 2);
    CHECK_THAT(e.message(), Catch::Contains("element (0, 1) is inf"));
  }
}

}  // namespace
}  // namespace spmmc
