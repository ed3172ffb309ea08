// Helpers shared by the unit tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/common/diagnostics.h"
#include "compiler/formats/read_options.h"

namespace spmmc::test {

// Reads `text` as a matrix of `format` through the stream interface.
Csr read_text(MatrixFormat format, const std::string& text, const ReadOptions& options = {},
              ReadReport* report = nullptr);

// Runs `body` and returns the UserError it throws; fails the test if it throws none.
template <typename Body>
UserError expect_user_error(Body&& body);

// Builds a CSR from dense row-major data (zeros skipped).
Csr csr_from_dense(int32_t rows, int32_t cols, const std::vector<float>& dense);

// The folder of ../shared/data, or an empty path (with a WARN naming why) when absent.
// SPMMC_SHARED_DATA in the environment overrides the default location.
std::filesystem::path shared_data_dir();

// A fresh, empty temporary folder removed at exit of the test.
struct TempDir {
  TempDir();
  ~TempDir();
  std::filesystem::path path;
};

// Runs the spmmc executable with `args` (shell-quoted here); captures exit code and output.
struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
// How many times `what` occurs in `text` (occurrences that do not overlap).
size_t occurrences(const std::string& text, const std::string& what);

CliResult run_spmmc(const std::vector<std::string>& args, const std::string& env = "");

// `readelf -d` of the spmmc executable: its dynamic section, whose (NEEDED) entries are the
// libraries it loads at start (those it must not need, e.g. libcuda or libcublas, are dlopen'ed).
// Fails the calling test when readelf cannot run.
std::string spmmc_dynamic_section();

// `count` random C identifiers of the shapes people give layers: a letter, then 0-11 letters,
// digits or underscores.
std::vector<std::string> random_identifiers(size_t count, std::mt19937_64& rng);

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace spmmc::test

#include <catch2/catch.hpp>

namespace spmmc::test {
template <typename Body>
UserError expect_user_error(Body&& body) {
  try {
    body();
  } catch (const UserError& e) {
    return e;
  }
  FAIL("expected a UserError, none was thrown");
  throw;  // unreachable
}
}  // namespace spmmc::test
