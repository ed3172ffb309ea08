#include "codegen/emit_unrolled_kernel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "codegen/embedded_templates.h"
#include "codegen/fill_template.h"
#include "codegen/kernel_program.h"
#include "codegen/print_tile_ptx.h"
#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// "a, b, c" of `values` formatted by `format_one`, wrapped every 16 values.
template <typename T, typename F>
std::string joined(const std::vector<T>& values, F format_one) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += i % 16 == 0 ? ",\n    " : ", ";
    out += format_one(values[i]);
  }
  return out.empty() ? std::string("0") : out;
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
  const KernelProgram program = build_kernel_program(a, tiling, tile);
  const int32_t v = program.launch.cols_per_thread;
  EmittedKernel k;
  std::string tiles, dispatch;
  for (size_t id = 0; id < program.tiles.size(); ++id) {
    print_tile_ptx(tiles, static_cast<int32_t>(id), program.tiles[id], v);
    fmt::format_to(std::back_inserter(dispatch), "      case {0}: spmmc_tile_{0}(b, c, ld); break;\n", id);
  }
  k.tiles = static_cast<int32_t>(program.tiles.size());
  k.fmas = program.fmas();
  k.loads = program.loads();
  k.stores = a.rows;
  k.kernel_symbol = options.name + "_kernel";

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
      {"M1", std::to_string(program.launch.m1)},
      {"THREADS", std::to_string(program.launch.threads)},
      {"V", std::to_string(v)},
      {"MIN_BLOCKS", std::to_string(program.launch.min_blocks_per_sm)},
      {"A_TILES", std::to_string(k.tiles)},
      {"TILE_FUNCTIONS", tiles},
      {"KERNEL", k.kernel_symbol},
      {"DISPATCH", dispatch},
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
      {"ROW_PTR", joined(a.row_ptr, [](int32_t x) { return std::to_string(x); })},
      {"COL_IDX", joined(a.col_idx, [](int32_t x) { return std::to_string(x); })},
      {"WEIGHT_BITS", joined(a.values, [](float x) {
         uint32_t bits = 0;
         std::memcpy(&bits, &x, sizeof bits);
         return fmt::format("0x{:08x}u", bits);
       })},
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
