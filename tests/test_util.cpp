#include "tests/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compiler/formats/read_matrix.h"

namespace spmmc::test {

Csr read_text(MatrixFormat format, const std::string& text, const ReadOptions& options, ReadReport* report) {
  std::istringstream in(text);
  ReadReport local;
  Csr csr = read_matrix_stream(in, format, "test", options, report ? *report : local);
  check_csr_invariants(csr);
  return csr;
}

Csr csr_from_dense(int32_t rows, int32_t cols, const std::vector<float>& dense) {
  Csr csr;
  csr.rows = rows;
  csr.cols = cols;
  csr.row_ptr.push_back(0);
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < cols; ++c) {
      const float v = dense[static_cast<size_t>(r) * cols + c];
      if (v != 0.0f) {
        csr.col_idx.push_back(c);
        csr.values.push_back(v);
      }
    }
    csr.row_ptr.push_back(static_cast<int32_t>(csr.col_idx.size()));
  }
  return csr;
}

std::filesystem::path shared_data_dir() {
  const char* env = std::getenv("SPMMC_SHARED_DATA");
  std::filesystem::path dir = env && *env ? env : SPMMC_DEFAULT_SHARED_DATA;
  if (!std::filesystem::exists(dir / "MANIFEST.md")) {
    WARN("skipped: shared data folder " << dir << " is absent (set SPMMC_SHARED_DATA to run these checks)");
    return {};
  }
  return dir;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path = std::filesystem::temp_directory_path() /
         ("spmmc-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

namespace {
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
}  // namespace

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

CliResult run_spmmc(const std::vector<std::string>& args, const std::string& env) {
  TempDir dir;
  std::string command = env + " " + shell_quote(SPMMC_EXE);
  for (const auto& a : args) command += " " + shell_quote(a);
  command += " >" + shell_quote((dir.path / "out").string()) + " 2>" + shell_quote((dir.path / "err").string()) + " </dev/null";
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(dir.path / "out");
  result.err = read_file(dir.path / "err");
  return result;
}

std::string spmmc_dynamic_section() {
  FILE* pipe = popen(("readelf -d " + shell_quote(SPMMC_EXE) + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  REQUIRE(pclose(pipe) == 0);
  return out;
}

std::vector<std::string> random_identifiers(size_t count, std::mt19937_64& rng) {
  static const std::string first = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static const std::string rest = "abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::vector<std::string> names;
  while (names.size() < count) {
    std::string name(1, first[rng() % first.size()]);
    const size_t length = 1 + rng() % 12;
    while (name.size() < length) name += rest[rng() % rest.size()];
    names.push_back(name);
  }
  return names;
}

}  // namespace spmmc::test
