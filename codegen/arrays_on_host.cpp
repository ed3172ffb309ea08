#include "codegen/arrays_on_host.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "codegen/embedded_templates.h"
#include "codegen/fill_template.h"
#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// Bytes per host string literal: MSVC refuses a literal above 64 KB (after concatenation). Must be
// the template's spmmc_host_piece_bytes.
constexpr size_t kPieceBytes = 32768;
// Bytes per line of a literal (a line of at most 4 x 64 characters: three-digit octal escapes).
constexpr size_t kLineBytes = 64;

// The array declarations the emitter prints (templates/kernel_generic.cuh, balanced_csr.cuh,
// kernel_balanced.cuh): attributes, the element type, the name, and the initialiser's opening brace.
const std::regex& array_declaration() {
  static const std::regex re(R"(((?:\[\[maybe_unused\]\] |alignas\(\d+\) )*)__device__ const (int|unsigned|int4) (spmmc_\w+)\[\] = \{)");
  return re;
}

// The integers of an initialiser's text (decimal or 0x hexadecimal, an optional sign and u suffix),
// with the element count: for int4, each element is a brace of at most four (the rest zeros, as
// C++ initialises them).
std::vector<uint32_t> integers_of(const std::string& text, bool int4, const std::string& name) {
  std::vector<uint32_t> values;
  size_t members = 0;  // of the current int4 element
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (int4 && c == '{') {
      members = 0;
      ++i;
    } else if (int4 && c == '}') {
      for (; members < 4; ++members) values.push_back(0);
      ++i;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      char* end = nullptr;
      const long long v = std::strtoll(text.c_str() + i, &end, 0);
      SPMMC_CHECK(end != text.c_str() + i, "an integer in the initialiser of " + name);
      values.push_back(static_cast<uint32_t>(v));
      ++members;
      SPMMC_CHECK(!int4 || members <= 4, "at most four members per int4 of " + name);
      i = static_cast<size_t>(end - text.c_str());
      if (i < text.size() && text[i] == 'u') ++i;
    } else {
      SPMMC_CHECK(c == ',' || c == ' ' || c == '\n', "only integers in the initialiser of " + name);
      ++i;
    }
  }
  return values;
}

// `bytes` as C string literals: pieces of kPieceBytes separated by commas, each lines of kLineBytes;
// printable characters as they are, the others (and ", \ and ?, against trigraphs) as octal escapes
// of as few digits as they need, and a digit after an escape escaped too, so that it cannot extend it.
std::string literals(const std::vector<unsigned char>& bytes) {
  // Each byte's escape, formatted once (hundreds of MB of bytes at millions of non-zeros).
  static const std::vector<std::string> octal = [] {
    std::vector<std::string> table;
    for (int b = 0; b < 256; ++b) table.push_back(fmt::format("\\{:o}", b));
    return table;
  }();
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t at = 0; at < bytes.size(); at += kLineBytes) {
    out += at == 0 ? "" : at % kPieceBytes == 0 ? ",\n" : "\n";
    out += '"';
    bool after_escape = false;
    for (size_t i = at; i < bytes.size() && i < at + kLineBytes; ++i) {
      const unsigned char b = bytes[i];
      const bool digit = b >= '0' && b <= '7';
      if (b >= 32 && b < 127 && b != '"' && b != '\\' && b != '?' && !(after_escape && digit)) {
        out += static_cast<char>(b);
        after_escape = false;
      } else {
        out += octal[b];
        after_escape = true;
      }
    }
    out += '"';
  }
  return out;
}

}  // namespace

std::vector<unsigned char> array_bytes(const std::vector<int32_t>& values) {
  std::vector<unsigned char> bytes;
  bytes.reserve(std::max<size_t>(values.size(), 1) * 4);
  for (const int32_t x : values) {
    const auto v = static_cast<uint32_t>(x);
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<unsigned char>(v >> shift));
  }
  if (values.empty()) bytes.assign(4, 0);
  return bytes;
}

std::vector<unsigned char> array_bytes(const std::vector<float>& values) {
  std::vector<int32_t> bits(values.size());
  if (!values.empty()) std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return array_bytes(bits);
}

HostArrays move_arrays_to_host(const std::string& code, HostBytes form, const ArraysAside& aside) {
  HostArrays result;
  result.code.reserve(code.size() + code.size() / 4);
  size_t copied = 0;  // code before this is in result.code
  // Each candidate: a line whose start, up to the first brace, is a declaration (std::regex over the
  // whole file would be slow on a file of hundreds of MB).
  for (size_t at = code.find("__device__ const "); at != std::string::npos; at = code.find("__device__ const ", at + 1)) {
    const size_t newline = code.rfind('\n', at), line = newline == std::string::npos ? 0 : newline + 1;
    const size_t brace = code.find('{', at);
    if (line < copied || brace == std::string::npos) continue;
    std::smatch m;
    const std::string head = code.substr(line, brace + 1 - line);
    if (!std::regex_match(head, m, array_declaration())) continue;
    const size_t open = brace + 1;
    const std::string type = m[2].str(), name = m[3].str();
    // The initialiser ends at the brace that closes it, followed by ';'.
    size_t close = open;
    for (int depth = 1; depth > 0; ++close) {
      SPMMC_CHECK(close < code.size(), "the initialiser of " + name + " is closed");
      depth += code[close] == '{' ? 1 : code[close] == '}' ? -1 : 0;
    }
    SPMMC_CHECK(close < code.size() && code[close] == ';', "a ';' after the initialiser of " + name);
    const auto given = std::find_if(aside.begin(), aside.end(), [&](const ArrayValues& x) { return x.name == name; });
    std::vector<unsigned char> bytes;
    if (given != aside.end()) {
      SPMMC_CHECK(code.compare(open, close - 1 - open, "0") == 0, "the placeholder {0} as the initialiser of " + name);
      bytes = given->bytes;
    } else {
      const std::vector<uint32_t> values = integers_of(code.substr(open, close - 1 - open), type == "int4", name);
      bytes.reserve(values.size() * 4);
      for (const uint32_t v : values)
        for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<unsigned char>(v >> shift));
    }
    const size_t element = type == "int4" ? 16 : 4;
    SPMMC_CHECK(!bytes.empty() && bytes.size() % element == 0, "the array " + name + " has whole elements");
    const size_t count = bytes.size() / element;
    result.code.append(code, copied, line - copied);
    result.code += fmt::format("{}__device__ {} {}[{}];", m[1].str(), type, name, count);
    // What followed the declaration on its line (a comment), then the bytes on lines of their own.
    const size_t line_end = std::min(code.find('\n', close), code.size());
    result.code.append(code, close + 1, line_end - close - 1);
    if (form == HostBytes::kLiterals)
      result.code += fmt::format("\n#if !defined(__CUDA_ARCH__) || defined(SPMMC_VERIFY)  // {}'s {} bytes, copied at the first call on each device\n"
                                 "const char* const {}_host[] = {{\n{}}};\n#endif",
                                 name, bytes.size(), name, literals(bytes));
    copied = line_end;
    at = line_end;
    result.arrays.push_back(name);
    result.bytes += static_cast<int64_t>(bytes.size());
    if (form == HostBytes::kValues) result.values.push_back({name, std::move(bytes)});
  }
  result.code.append(code, copied, std::string::npos);
  return result;
}

std::string print_host_array_upload(const std::vector<std::string>& arrays) {
  std::string table = "const spmmc_host_array spmmc_host_arrays[] = {\n";
  for (const std::string& name : arrays)
    table += fmt::format("    {{&{0}, {0}_host, sizeof({0})}},\n", name);
  table += "};";
  return fill_template(embedded_template("host_arrays.cuh"), {{"HEADER_COMMENT", ""}, {"HOST_ARRAY_TABLE", table}},
                       "host_arrays.cuh");
}

double constant_arrays_nvcc_bytes(int64_t nnz) { return kConstantArrayNvccBytesPerNonZero * static_cast<double>(nnz); }

bool host_arrays_by_rule(int64_t nnz, std::string& why) {
  const double bytes = constant_arrays_nvcc_bytes(nnz);
  const bool host = bytes > kHostArraysAboveNvccBytes;
  why = fmt::format("{} non-zeros as constants would need about {:.1f} GB and {:.1f} minutes of nvcc ({} the {:.0f} GB of "
                    "--arrays auto)",
                    nnz, bytes / 1e9, kConstantArrayNvccSecondsPerNonZero * static_cast<double>(nnz) / 60.0,
                    host ? "above" : "within", kHostArraysAboveNvccBytes / 1e9);
  return host;
}

}  // namespace spmmc
