#include "codegen/emit_unrolled_kernel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "codegen/embedded_templates.h"
#include "codegen/fill_template.h"
#include "compiler/diagnostics.h"

namespace spmmc {
namespace {

struct Entry {
  int32_t col;
  int32_t slot;  // the row's accumulator within the tile
  float value;
};

// Code of one tile: rows[i] is the original index of accumulator acc<i>.
void append_tile(fmt::memory_buffer& out, int32_t id, const Csr& a, const int32_t* rows, int32_t count,
                 EmittedKernel& stats) {
  auto emit = [&](auto&&... args) { fmt::format_to(std::back_inserter(out), std::forward<decltype(args)>(args)...); };
  std::vector<Entry> entries;
  for (int32_t i = 0; i < count; ++i)
    for (int32_t p = a.row_ptr[rows[i]]; p < a.row_ptr[rows[i] + 1]; ++p) entries.push_back({a.col_idx[p], i, a.values[p]});
  // By column, then by row: each column of B is loaded once and used by every row needing it.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) { return x.col < y.col; });

  emit("__device__ __forceinline__ void tile_{}(const float* __restrict__ b, float* __restrict__ c, int64_t n) {{\n", id);
  if (!entries.empty()) {
    emit("  float");
    for (int32_t i = 0; i < count; ++i) emit("{} acc{} = 0.0f", i ? "," : "", i);
    emit(";\n");
    // x holds the current column of B, y the prefetched next one (Algorithm 2, lines 14-18);
    // a tile of one column needs no y (an unused variable is a warning).
    const bool one_column = entries.front().col == entries.back().col;
    emit("  float x = __ldg(b + {} * n){};\n", entries.front().col, one_column ? "" : ", y");
    ++stats.loads;
    for (size_t k = 0; k < entries.size();) {
      const int32_t col = entries[k].col;
      size_t end = k;
      while (end < entries.size() && entries[end].col == col) ++end;
      if (end < entries.size()) {
        emit("  y = __ldg(b + {} * n);\n", entries[end].col);
        ++stats.loads;
      }
      for (; k < end; ++k) {
        emit("  acc{0} = fmaf({1}, x, acc{0});\n", entries[k].slot, float_literal(entries[k].value));
        ++stats.fmas;
      }
      if (end < entries.size()) emit("  x = y;\n");
    }
    for (int32_t i = 0; i < count; ++i) emit("  c[{} * n] = acc{};\n", rows[i], i);
  } else {
    emit("  (void)b;\n");
    for (int32_t i = 0; i < count; ++i) emit("  c[{} * n] = 0.0f;\n", rows[i]);
  }
  stats.stores += count;
  emit("}}\n");
}

std::string comment_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out += line.empty() ? "//\n" : "// " + line + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string float_literal(float v) {
  SPMMC_CHECK(std::isfinite(v), "weights must be finite");
  return fmt::format("{:a}f", v);
}

bool is_c_identifier(const std::string& name) {
  // Keywords of C and of C++ (the .cu is C++, the header is both): not identifiers.
  static const std::set<std::string> kKeywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "restrict", "return",
      "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  if (kKeywords.count(name)) return false;
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
  if (name.rfind("__", 0) == 0) return false;
  if (name.size() >= 2 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))) return false;
  return true;
}

EmittedKernel emit_unrolled_kernel(const Csr& a, const RowTiling& tiling, const TileCandidate& tile,
                                   const EmitOptions& options) {
  SPMMC_CHECK(is_c_identifier(options.name), "the kernel name must be a C identifier");
  SPMMC_CHECK(tile.cols_per_thread == 1, "the unrolled emitter computes one column per thread");
  SPMMC_CHECK(tiling.m1 == tile.m1, "the tiling was made for another M1");
  EmittedKernel k;
  fmt::memory_buffer tiles, dispatch;
  int32_t id = 0;
  for (int32_t t = 0; t < tiling.num_tiles(); ++t, ++id) {
    append_tile(tiles, id, a, &tiling.rows[tiling.tile_ptr[t]], tiling.tile_ptr[t + 1] - tiling.tile_ptr[t], k);
    fmt::format_to(std::back_inserter(dispatch), "      case {0}: tile_{0}(B + col, C + col, n); break;\n", id);
  }
  // Rows of A without non-zeros: tiles of at most M1 rows that store zeros.
  for (size_t first = 0; first < tiling.empty_rows.size(); first += static_cast<size_t>(tile.m1), ++id) {
    const int32_t count = static_cast<int32_t>(std::min<size_t>(static_cast<size_t>(tile.m1), tiling.empty_rows.size() - first));
    append_tile(tiles, id, a, &tiling.empty_rows[first], count, k);
    fmt::format_to(std::back_inserter(dispatch), "      case {0}: tile_{0}(B + col, C + col, n); break;\n", id);
  }
  k.tiles = id;
  k.kernel_symbol = options.name + "_kernel";
  SPMMC_CHECK(k.stores == a.rows, "every row of C must be written exactly once");

  const std::string comment = comment_lines(options.provenance);
  const std::map<std::string, std::string> header_values = {
      {"HEADER_COMMENT", comment},
      // The name as it is (not upper-cased): layers whose names differ only in case get distinct guards.
      {"GUARD", "SPMMC_" + options.name + "_H"},
      {"KERNEL_INFO", std::string(embedded_template("spmmc_kernel_info.h"))},
      {"NAME", options.name},
      {"INFO_NAME", options.name + "_info"},
  };
  k.h = fill_template(embedded_template("kernel.h"), header_values, "kernel.h");
  const std::map<std::string, std::string> device_values = {
      {"HEADER_COMMENT", ""},
      {"M1", std::to_string(tile.m1)},
      {"N1", std::to_string(tile.n1)},
      {"A_TILES", std::to_string(k.tiles)},
      {"TILE_FUNCTIONS", fmt::to_string(tiles)},
      {"KERNEL", k.kernel_symbol},
      {"DISPATCH", fmt::to_string(dispatch)},
  };
  const std::string device_code = fill_template(embedded_template("kernel_device.cuh"), device_values, "kernel_device.cuh");
  const std::map<std::string, std::string> kernel_values = {
      {"HEADER_COMMENT", comment},
      {"HEADER", "\"" + options.name + ".h\""},
      {"DEVICE_CODE", device_code},
      {"KERNEL", k.kernel_symbol},
      {"NAME", options.name},
      {"INFO_NAME", options.name + "_info"},
      {"M", std::to_string(a.rows)},
      {"K", std::to_string(a.cols)},
      {"NNZ", std::to_string(a.nnz())},
      {"ARCH", options.arch},
      {"REORDER", std::string(reorder_method_name(tiling.method))},
      {"SHA256", options.weights_sha256},
      {"VERSION", SPMMC_VERSION},
  };
  if (options.nvrtc_form)
    k.nvrtc_cu = fill_template(embedded_template("kernel_nvrtc.cu"),
                               {{"HEADER_COMMENT", comment}, {"KERNEL", k.kernel_symbol}, {"DEVICE_CODE", device_code}},
                               "kernel_nvrtc.cu");
  k.cu = fill_template(embedded_template("kernel.cu"), kernel_values, "kernel.cu");
  return k;
}

}  // namespace spmmc
