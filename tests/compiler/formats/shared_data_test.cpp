// Every matrix of the shared data set (../shared/data, or $SPMMC_SHARED_DATA) reads with the
// shape and non-zero count that an independent source gives: dlmc_subset.csv for the DLMC
// files, a naive parser for the graphs. The .npy weights are checked in read_npy_test.cpp.
// Skips with a message when the folder is absent.
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/formats/read_matrix.h"
#include "compiler/planning/matrix_stats.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, ',')) fields.push_back(field);
  return fields;
}

TEST_CASE("shared data: every DLMC file matches dlmc_subset.csv", "[shared-data]") {
  const auto data = test::shared_data_dir();
  if (data.empty()) return;
  std::ifstream csv(data / "dlmc" / "dlmc_subset.csv");
  REQUIRE(csv);
  std::string line;
  std::getline(csv, line);
  const auto header = split_csv(line);
  REQUIRE(header.size() >= 12);
  REQUIRE(header[2] == "path");
  REQUIRE(header[4] == "nrows");
  REQUIRE(header[6] == "nnz");
  REQUIRE(header[7] == "mean_nnz_per_row");
  REQUIRE(header[8] == "std_nnz_per_row");
  int files = 0;
  while (std::getline(csv, line)) {
    if (line.empty()) continue;
    const auto f = split_csv(line);
    INFO(f[2]);
    const LoadedMatrix m = read_matrix_file((data / f[2]).string(), {});
    CHECK(m.csr.rows == std::stol(f[4]));
    CHECK(m.csr.cols == std::stol(f[5]));
    CHECK(m.csr.nnz() == static_cast<int64_t>(std::stod(f[6])));
    const MatrixStats s = compute_matrix_stats(m.csr);
    CHECK(s.row_lengths.mean == Approx(std::stod(f[7])).epsilon(1e-6));
    CHECK(s.row_lengths.std == Approx(std::stod(f[8])).epsilon(1e-5));
    ++files;
  }
  CHECK(files == 102);
}

// Expected shape and nnz of a Matrix Market file by a deliberately naive route: the size line
// as written, and a set of positions.
struct NaiveMtx {
  long rows = 0, cols = 0;
  int64_t nnz = 0;
};

NaiveMtx naive_mtx(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const bool symmetric = line.find("symmetric") != std::string::npos;
  const bool pattern = line.find("pattern") != std::string::npos;
  while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
  }
  NaiveMtx result;
  std::istringstream(line) >> result.rows >> result.cols;
  std::set<std::pair<long, long>> positions;
  long r, c;
  double v;
  while (in >> r >> c) {
    if (!pattern) in >> v;
    if (!pattern && v == 0.0) continue;
    positions.insert({r, c});
    if (symmetric) positions.insert({c, r});
  }
  result.nnz = static_cast<int64_t>(positions.size());
  return result;
}

// Graphs need not be square (mk11-b4 is 10395 x 17325): the shape is the size line's.
TEST_CASE("shared data: every graph reads with the naive parser's shape and nnz", "[shared-data]") {
  const auto data = test::shared_data_dir();
  if (data.empty()) return;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data / "graphs")) {
    if (entry.path().extension() != ".mtx") continue;
    INFO(entry.path());
    const LoadedMatrix m = read_matrix_file(entry.path().string(), {});
    const NaiveMtx expected = naive_mtx(entry.path());
    CHECK(m.csr.nnz() == expected.nnz);
    CHECK(m.csr.rows == expected.rows);
    CHECK(m.csr.cols == expected.cols);
    ++files;
  }
  CHECK(files >= 6);
}

}  // namespace
}  // namespace spmmc
