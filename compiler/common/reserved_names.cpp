#include "compiler/common/reserved_names.h"

#include <array>
#include <cctype>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// The groups of compiler/common/reserved_names.inc, as one string.
constexpr std::string_view kTable =
#include "compiler/common/reserved_names.inc"
    ;

// The variants of a math function: acos -> acosf, acosl, acosf32, ..., acosf128x.
constexpr std::array<std::string_view, 8> kMathSuffixes = {"f", "l", "f32", "f32x", "f64", "f64x", "f128", "f128x"};

struct Group {
  int order = 0;  // the group's place in the file: the first group listing a name gives the reason
  std::string_view reason;
};

struct Table {
  std::unordered_map<std::string_view, Group> exact;  // name -> its first exact group
  std::unordered_map<std::string_view, Group> math;   // base name -> its first math group
};

// Parses kTable: "= KIND REASON" lines open a group, the other lines list its names.
Table parse_table() {
  Table table;
  std::unordered_map<std::string_view, Group>* names = nullptr;
  Group group;
  size_t start = 0;
  while (start < kTable.size()) {
    size_t end = kTable.find('\n', start);
    if (end == std::string_view::npos) end = kTable.size();
    const std::string_view line = kTable.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    if (line.rfind("= ", 0) == 0) {
      const size_t space = line.find(' ', 2);
      SPMMC_CHECK(space != std::string_view::npos, "a group line of reserved_names.inc needs a kind and a reason");
      const std::string_view kind = line.substr(2, space - 2);
      SPMMC_CHECK(kind == "exact" || kind == "math", "reserved_names.inc: the kind of a group is exact or math");
      names = kind == "exact" ? &table.exact : &table.math;
      group = {group.order + 1, line.substr(space + 1)};
      continue;
    }
    SPMMC_CHECK(names != nullptr, "reserved_names.inc: names before the first group line");
    size_t word = 0;
    while (word < line.size()) {
      size_t word_end = line.find(' ', word);
      if (word_end == std::string_view::npos) word_end = line.size();
      if (word_end > word) names->emplace(line.substr(word, word_end - word), group);
      word = word_end + 1;
    }
  }
  return table;
}

const Table& table() {
  static const Table parsed = parse_table();
  return parsed;
}

// The reason `name` is in the table (itself, or as a variant of a math function), if it is:
// that of the first group in the file that lists it, as cmake/spmmc_add_spmm.cmake finds it.
std::optional<std::string_view> table_clash(const std::string& name) {
  const Table& t = table();
  const Group* first = nullptr;
  const auto consider = [&](const std::unordered_map<std::string_view, Group>& names, std::string_view key) {
    const auto it = names.find(key);
    if (it != names.end() && (!first || it->second.order < first->order)) first = &it->second;
  };
  consider(t.exact, name);
  consider(t.math, name);
  for (const std::string_view suffix : kMathSuffixes)
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      consider(t.math, std::string_view(name).substr(0, name.size() - suffix.size()));
  if (!first) return std::nullopt;
  return first->reason;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// spmmc_*, SPMMC_*: the names the emitted code defines itself (spmmc_info, SPMMC_KERNEL_ABI_VERSION).
bool is_own_name(const std::string& name) { return starts_with(name, "spmmc_") || starts_with(name, "SPMMC_"); }
constexpr const char* kOwnNames = "clashes with the names the emitted code defines itself (spmmc_*, SPMMC_*)";

// tile_0, tile_17, ...: the tile functions of the emitted code.
bool is_tile_function(const std::string& name) {
  constexpr std::string_view kPrefix = "tile_";
  if (!starts_with(name, kPrefix) || name.size() == kPrefix.size()) return false;
  for (size_t i = kPrefix.size(); i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

}  // namespace

std::optional<std::string> reserved_name_clash(const std::string& name) {
  if (starts_with(name, "_"))
    return std::string("clashes with the names C and C++ reserve at file scope (every name starting with an underscore)");
  if (is_own_name(name)) return std::string(kOwnNames);
  if (is_tile_function(name))
    return std::string("clashes with the tile functions the emitted code defines (tile_0, tile_1, ...)");
  if (ends_with(name, "_info"))
    return fmt::format("clashes with the {} function of a kernel named '{}'", name, name.substr(0, name.size() - 5));
  for (const std::string_view prefix : {"cu", "CU", "nv", "NV"})
    if (starts_with(name, prefix))
      return fmt::format("clashes with the CUDA toolkit's names: names starting with '{}' are its own "
                         "(cudaMalloc, cuInit, cublasCreate, CUresult, nvrtcCompileProgram, nv_bfloat16, NV_IF_TARGET)",
                         prefix);
  if (ends_with(name, "_t"))
    return std::string("clashes with the type names POSIX reserves (every name ending in _t: size_t, int64_t, pthread_t, ...)");
  if (const auto reason = table_clash(name)) return fmt::format("clashes with {}", *reason);
  for (const char* suffix : {"_kernel", "_info"}) {
    const std::string derived = name + suffix;
    if (is_own_name(derived)) return fmt::format("derives the name {} for the emitted code, which {}", derived, kOwnNames);
    if (const auto reason = table_clash(derived))
      return fmt::format("derives the name {} for the emitted code, which clashes with {}", derived, *reason);
  }
  return std::nullopt;
}

}  // namespace spmmc
