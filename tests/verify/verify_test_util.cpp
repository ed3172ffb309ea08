#include "tests/verify/verify_test_util.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "compiler/common/sha256.h"
#include "tests/test_util.h"

namespace spmmc::test {

EmittedFiles emit_kernel_files(const std::filesystem::path& dir, const std::string& name, const Csr& a, int32_t m1,
                               ReorderMethod method, int32_t n1, int32_t v, int64_t fmas_per_kernel, int32_t k_parts) {
  const RowTiling tiling = tile_rows(a, m1, method);
  TileCandidate tile;
  tile.m1 = m1;
  tile.n1 = n1;
  tile.cols_per_thread = v;
  EmitOptions options;
  options.name = name;
  options.provenance = "tests/verify";
  options.weights_sha256 = weights_sha256(a);
  options.fmas_per_kernel = fmas_per_kernel;
  options.k_parts = k_parts;
  EmittedFiles files;
  files.kernel = emit_unrolled_kernel(a, tiling, tile, options);
  files.cu = dir / (name + ".cu");
  files.h = dir / (name + ".h");
  write_file(files.cu, files.kernel.cu);
  write_file(files.h, files.kernel.h);
  return files;
}

Verified verify_file(const std::filesystem::path& cu, const Csr& a, size_t max_reported) {
  Verified v;
  v.code = analyze_emitted_kernel(cu.string());
  CompareOptions options;
  options.weights_name = "weights.mtx";
  options.max_reported = max_reported;
  v.result = compare_with_weights(v.code, a, options);
  for (const CodeDiagnostic& d : v.result.differences) v.messages += d.where.str() + ": " + d.message + "\n";
  return v;
}

Csr make_matrix(int32_t rows, int32_t cols, const std::function<float(int32_t, int32_t)>& value) {
  std::vector<float> dense(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c) dense[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)] = value(r, c);
  return csr_from_dense(rows, cols, dense);
}

std::string replace_first(const std::string& text, const std::string& from, const std::string& to, size_t start) {
  const size_t at = text.find(from, start);
  INFO("looking for '" << from << "'");
  REQUIRE(at != std::string::npos);
  return text.substr(0, at) + to + text.substr(at + from.size());
}

std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  INFO("looking for '" << from << "'");
  REQUIRE(text.find(from) != std::string::npos);
  std::string out = text;
  for (size_t i = out.find(from); i != std::string::npos; i = out.find(from, i + to.size())) out.replace(i, from.size(), to);
  return out;
}

int64_t line_of(const std::string& text, size_t offset) {
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(offset, text.size())), '\n');
}

int64_t column_of(const std::string& text, size_t offset) {
  if (offset == 0) return 1;
  const size_t newline = text.rfind('\n', offset - 1);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  return static_cast<int64_t>(offset - start) + 1;
}

std::string ptx_float(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return fmt::format("0f{:08X}", bits);
}

size_t kernel_start(const std::string& cu, const std::string& symbol) {
  const size_t at = cu.find("    " + symbol + "(const spmmc_elem* __restrict__ B");
  INFO("looking for the definition of " << symbol);
  REQUIRE(at != std::string::npos);
  return at;
}

}  // namespace spmmc::test
