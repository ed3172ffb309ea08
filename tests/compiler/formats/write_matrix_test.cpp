#include "compiler/formats/write_matrix.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "compiler/common/synthesize_values.h"
#include "compiler/formats/generate_matrix.h"
#include "compiler/formats/read_matrix.h"
#include "compiler/formats/write_matrix_market.h"
#include "compiler/formats/write_npy.h"
#include "compiler/formats/write_smtx.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::expect_user_error;

std::string to_text(const Csr& csr, MatrixFormat format, const std::string& comment = "") {
  std::ostringstream out;
  write_matrix_stream(csr, out, format, comment);
  REQUIRE(out.good());
  return out.str();
}

std::vector<GeneratorOptions> one_of_each_kind(ValueKind values, uint64_t seed) {
  std::vector<GeneratorOptions> all(5);
  const GeneratorKind kinds[] = {GeneratorKind::kUniform, GeneratorKind::kMagnitude, GeneratorKind::kRmat,
                                 GeneratorKind::kPatterns, GeneratorKind::kBlocks};
  for (size_t i = 0; i < all.size(); ++i) {
    GeneratorOptions& o = all[i];
    o.kind = kinds[i];
    o.rows = o.kind == GeneratorKind::kRmat ? 0 : 97;
    o.cols = o.kind == GeneratorKind::kRmat ? 0 : 131;
    o.sparsity = o.kind == GeneratorKind::kRmat ? 0.0 : 0.85;
    o.seed = seed;
    o.values = o.kind == GeneratorKind::kMagnitude ? ValueKind::kNormal : values;
    o.scale = 7;
    o.block_cols = 5;
  }
  return all;
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("write: Matrix Market layout, comment lines and 1-based entries", "[write][mtx]") {
  const Csr a = test::csr_from_dense(3, 4, {0, 1.5f, 0, 0, 0, 0, 0, 0, -2, 0, 0, 0.1f});
  CHECK(to_text(a, MatrixFormat::kMatrixMarket, "made by a test\n\nsecond line\n") ==
        "%%MatrixMarket matrix coordinate real general\n"
        "% made by a test\n"
        "%\n"
        "% second line\n"
        "3 4 3\n"
        "1 2 1.5\n"
        "3 1 -2\n"
        "3 4 0.1\n");
  CHECK(to_text(a, MatrixFormat::kMatrixMarket) ==
        "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 2 1.5\n3 1 -2\n3 4 0.1\n");
}

TEST_CASE("write: Matrix Market values read back as exactly the same floats", "[write][mtx]") {
  // Awkward values: extremes, subnormals, values needing 9 significant digits, and a sweep of
  // random finite bit patterns over every exponent.
  std::vector<float> values = {FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, FLT_TRUE_MIN, 1e-45f, 1.0f / 3.0f, -0.1f,
                               16777217.0f, 0.30000001f, 123456.789f, 3.4028235e38f, 1.17549421e-38f};
  // The one float (with its negative) whose shortest form, 7.038531e-26, read as a double and
  // rounded to float, gives a neighbour (double rounding); found by checking all 2^31 floats.
  for (uint32_t bits : {0x15ae43fdu, 0x95ae43fdu}) {
    float v;
    std::memcpy(&v, &bits, 4);
    values.push_back(v);
  }
  uint64_t state = 99;
  while (values.size() < 100000) {
    state = splitmix64(state);
    const auto bits = static_cast<uint32_t>(state);
    float v;
    std::memcpy(&v, &bits, 4);
    if (std::isfinite(v) && v != 0.0f) values.push_back(v);
  }
  Csr a;
  a.rows = 1000;
  a.cols = 100;
  a.row_ptr.push_back(0);
  for (int32_t r = 0; r < a.rows; ++r) {
    for (int32_t c = 0; c < a.cols; ++c) a.col_idx.push_back(c);
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  a.values = values;
  check_csr_invariants(a);
  const Csr b = test::read_text(MatrixFormat::kMatrixMarket, to_text(a, MatrixFormat::kMatrixMarket));
  REQUIRE(b.values.size() == a.values.size());
  for (size_t i = 0; i < a.values.size(); ++i) {
    INFO("value " << i);
    REQUIRE(std::memcmp(&a.values[i], &b.values[i], 4) == 0);
  }
  CHECK(b == a);
}

TEST_CASE("write: gen -> write -> read gives the same matrix (.mtx values exact, .smtx by seed)", "[write]") {
  for (ValueKind values : {ValueKind::kNormal, ValueKind::kUniform, ValueKind::kOnes}) {
    for (const GeneratorOptions& o : one_of_each_kind(values, 12)) {
      INFO(generator_kind_name(o.kind) << ", values " << value_kind_name(o.values));
      const Csr a = generate_matrix(o);
      REQUIRE(a.nnz() > 0);
      CHECK(test::read_text(MatrixFormat::kMatrixMarket, to_text(a, MatrixFormat::kMatrixMarket, "c")) == a);
      ReadOptions same;
      same.values = o.values;
      same.seed = o.seed;
      CHECK(test::read_text(MatrixFormat::kSmtx, to_text(a, MatrixFormat::kSmtx), same) == a);
      ReadOptions other_seed = same;
      other_seed.seed = o.seed + 1;
      if (o.values != ValueKind::kOnes)
        CHECK(test::read_text(MatrixFormat::kSmtx, to_text(a, MatrixFormat::kSmtx), other_seed) != a);
    }
  }
}

TEST_CASE("write: through files, atomically, byte-identical for identical options", "[write]") {
  test::TempDir dir;
  for (const GeneratorOptions& o : one_of_each_kind(ValueKind::kNormal, 3)) {
    const Csr a = generate_matrix(o);
    for (MatrixFormat format : {MatrixFormat::kMatrixMarket, MatrixFormat::kSmtx}) {
      const std::string name = fmt::format("{}.{}", generator_kind_name(o.kind), format_name(format));
      const std::string path = (dir.path / name).string();
      write_matrix(a, path, format, "same comment");
      write_matrix(generate_matrix(o), (dir.path / ("again-" + name)).string(), format, "same comment");
      CHECK(test::read_file(path) == test::read_file(dir.path / ("again-" + name)));
      ReadOptions read;
      read.seed = o.seed;
      CHECK(read_matrix_file(path, read).csr == a);
    }
    write_matrix(a, (dir.path / "a.npy").string(), MatrixFormat::kNpy, "");
    write_matrix(generate_matrix(o), (dir.path / "b.npy").string(), MatrixFormat::kNpy, "");
    CHECK(test::read_file(dir.path / "a.npy") == test::read_file(dir.path / "b.npy"));
    fs::remove(dir.path / "a.npy");
    fs::remove(dir.path / "b.npy");
  }
  for (const std::string& name : listing(dir.path)) CHECK(name.find(".tmp") == std::string::npos);
  CHECK(listing(dir.path).size() == 20);
}

TEST_CASE("write: .smtx has exactly the DLMC layout", "[write][smtx]") {
  const Csr a = test::csr_from_dense(3, 4, {0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0});
  CHECK(to_text(a, MatrixFormat::kSmtx) == "3, 4, 4\n0 2 2 4 \n1 3 0 2 \n");
  const Csr empty = test::csr_from_dense(2, 2, {0, 0, 0, 0});
  CHECK(to_text(empty, MatrixFormat::kSmtx) == "2, 2, 0\n0 0 0 \n\n");
  CHECK(test::read_text(MatrixFormat::kSmtx, to_text(empty, MatrixFormat::kSmtx)).nnz() == 0);
}

TEST_CASE("write: .smtx output of every DLMC file is byte-identical to the file", "[write][smtx][data]") {
  const fs::path data = test::shared_data_dir();
  if (data.empty()) return;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(data / "dlmc")) {
    if (entry.path().extension() != ".smtx") continue;
    const std::string original = test::read_file(entry.path());
    const Csr a = test::read_text(MatrixFormat::kSmtx, original);
    INFO(entry.path());
    REQUIRE(to_text(a, MatrixFormat::kSmtx) == original);
    ++files;
  }
  CHECK(files > 0);
}

TEST_CASE("write: .npy header bytes and data (as numpy.save writes them)", "[write][npy]") {
  const Csr a = test::csr_from_dense(3, 4, {0, 1.5f, 0, 0, 0, 0, 0, 0, -2, 0, 0, 0.25f});
  const std::string bytes = to_text(a, MatrixFormat::kNpy);
  // Byte for byte what numpy 2.4 np.save writes for this float32 array.
  const std::string header = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                             "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" + std::string(58, ' ') + "\n";
  REQUIRE(header.size() == 128);
  REQUIRE(bytes.size() == 128 + 12 * 4);
  CHECK(bytes.substr(0, 128) == header);
  const unsigned char one_point_five[] = {0x00, 0x00, 0xC0, 0x3F};  // 1.5f little-endian
  const unsigned char minus_two[] = {0x00, 0x00, 0x00, 0xC0};
  const unsigned char quarter[] = {0x00, 0x00, 0x80, 0x3E};
  for (int i = 0; i < 12; ++i) {
    const auto* cell = reinterpret_cast<const unsigned char*>(bytes.data() + 128 + 4 * i);
    INFO("element " << i);
    if (i == 1) CHECK(std::memcmp(cell, one_point_five, 4) == 0);
    else if (i == 8) CHECK(std::memcmp(cell, minus_two, 4) == 0);
    else if (i == 11) CHECK(std::memcmp(cell, quarter, 4) == 0);
    else CHECK(std::memcmp(cell, "\0\0\0\0", 4) == 0);
  }
  // A longer shape still pads the data start to a multiple of 64, and the header ends in '\n'.
  Csr wide = test::csr_from_dense(1, 1, {0});
  wide.rows = 1234;
  wide.cols = 567;
  wide.row_ptr.assign(1235, 0);
  std::ostringstream out;
  write_npy(wide, out);
  const std::string big = out.str();
  const size_t header_length = static_cast<unsigned char>(big[8]) | static_cast<size_t>(static_cast<unsigned char>(big[9])) << 8;
  CHECK((10 + header_length) % 64 == 0);
  CHECK(big[10 + header_length - 1] == '\n');
  CHECK_THAT(big.substr(10, header_length), Catch::StartsWith("{'descr': '<f4', 'fortran_order': False, 'shape': (1234, 567), }"));
  CHECK(big.size() == 10 + header_length + size_t{1234} * 567 * 4);
}

TEST_CASE("write: refusals create nothing", "[write][errors]") {
  test::TempDir dir;
  Csr huge = test::csr_from_dense(1, 1, {0});
  huge.rows = 1 << 15;
  huge.cols = 1 << 14;  // 2^29 elements: 2 GiB dense
  huge.row_ptr.assign((1 << 15) + 1, 0);
  const UserError e = expect_user_error([&] { write_matrix(huge, (dir.path / "h.npy").string(), MatrixFormat::kNpy, ""); });
  CHECK(e.code() == ExitCode::kUsage);
  CHECK_THAT(e.message(), Catch::Contains("exceed the limit of 2^28"));
  const Csr small = test::csr_from_dense(1, 2, {1, 0});
  CHECK(expect_user_error([&] { write_matrix(small, (dir.path / "a.npz").string(), MatrixFormat::kNpz, ""); }).code() ==
        ExitCode::kUsage);
  const UserError missing = expect_user_error(
      [&] { write_matrix(small, (dir.path / "no" / "a.mtx").string(), MatrixFormat::kMatrixMarket, ""); });
  CHECK(missing.code() == ExitCode::kCantCreate);
  CHECK(listing(dir.path).empty());
}

}  // namespace
}  // namespace spmmc
