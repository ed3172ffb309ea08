#include "compiler/planning/target.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

using Json = nlohmann::json;

int64_t positive_field(const Json& j, const char* key, const std::string& file) {
  const auto it = j.find(key);
  if (it == j.end()) fail_data(SourceLocation::whole(file), "target field '{}' is missing", key);
  if (!it->is_number_integer() || it->get<int64_t>() <= 0)
    fail_data(SourceLocation::whole(file), "target field '{}' must be a positive integer, not {}", key, it->dump());
  return it->get<int64_t>();
}

std::string string_field(const Json& j, const char* key, const std::string& file) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
    fail_data(SourceLocation::whole(file), "target field '{}' must be a non-empty string", key);
  return it->get<std::string>();
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(ExitCode::kNoInput, SourceLocation::whole(path.string()), "cannot open the target description");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || (s.size() > 5 && s.compare(s.size() - 5, 5, ".json") == 0);
}

}  // namespace

std::filesystem::path targets_dir() {
  if (const char* env = std::getenv("SPMMC_MODELS_DIR"); env && *env) return std::filesystem::path(env) / "targets";
  // SPMMC_MODELS_DIR_FROM_BINDIR is the models folder relative to the folder of the installed
  // executable ("../share/spmmc/models"). A build-tree binary has no such folder beside it.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path() / SPMMC_MODELS_DIR_FROM_BINDIR / "targets";
    if (std::filesystem::is_directory(installed, ec)) return installed.lexically_normal();
  }
  const std::filesystem::path source = SPMMC_SOURCE_MODELS_DIR;
  if (std::filesystem::is_directory(source / "targets")) return source / "targets";
  return std::filesystem::path(SPMMC_INSTALL_MODELS_DIR) / "targets";
}

std::vector<std::string> list_targets() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(targets_dir(), ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Target parse_target(const std::string& json_text, const std::string& file) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const Json::parse_error& e) {
    fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(e.byte) - 1), "invalid JSON in the target description");
  }
  if (!j.is_object()) fail_data(SourceLocation::whole(file), "a target description must be a JSON object");
  Target t;
  t.name = string_field(j, "name", file);
  t.description = j.value("description", "");
  t.arch = string_field(j, "arch", file);
  t.sm_count = positive_field(j, "sm_count", file);
  t.warp_size = positive_field(j, "warp_size", file);
  t.registers_per_sm = positive_field(j, "registers_per_sm", file);
  t.max_registers_per_block = positive_field(j, "max_registers_per_block", file);
  t.max_registers_per_thread = positive_field(j, "max_registers_per_thread", file);
  t.register_allocation_granularity = positive_field(j, "register_allocation_granularity", file);
  t.max_threads_per_sm = positive_field(j, "max_threads_per_sm", file);
  t.max_threads_per_block = positive_field(j, "max_threads_per_block", file);
  t.max_blocks_per_sm = positive_field(j, "max_blocks_per_sm", file);
  t.shared_memory_per_sm = positive_field(j, "shared_memory_per_sm", file);
  t.max_shared_memory_per_block = positive_field(j, "max_shared_memory_per_block", file);
  t.reserved_shared_memory_per_block = j.value("reserved_shared_memory_per_block", int64_t{0});
  t.l2_bytes = positive_field(j, "l2_bytes", file);
  if (t.max_registers_per_block > t.registers_per_sm)
    fail_data(SourceLocation::whole(file), "max_registers_per_block ({}) exceeds registers_per_sm ({})",
              t.max_registers_per_block, t.registers_per_sm);
  if (t.max_threads_per_block > t.max_threads_per_sm)
    fail_data(SourceLocation::whole(file), "max_threads_per_block ({}) exceeds max_threads_per_sm ({})",
              t.max_threads_per_block, t.max_threads_per_sm);
  return t;
}

Target load_target(const std::string& name_or_path) {
  std::filesystem::path path;
  if (looks_like_path(name_or_path)) {
    path = name_or_path;
  } else {
    path = targets_dir() / (name_or_path + ".json");
    if (!std::filesystem::exists(path)) {
      std::string known;
      for (const auto& n : list_targets()) known += (known.empty() ? "" : ", ") + n;
      fail_usage("unknown target '{}' (known: {}; or give the path of a target .json)", name_or_path,
                 known.empty() ? "none found in " + targets_dir().string() : known);
    }
  }
  Target t = parse_target(read_text(path), path.string());
  t.file = path.string();
  return t;
}

Target target_for_arch(const std::string& arch) {
  std::string known;
  for (const auto& name : list_targets()) {
    Target t = load_target(name);
    if (t.arch == arch) return t;
    known += (known.empty() ? "" : ", ") + t.arch + " (" + t.name + ")";
  }
  fail_usage("no target description for arch '{}' (known: {}); pass --target FILE.json", arch, known);
}

int target_sm(const std::string& arch) {
  int sm = 0;
  return std::sscanf(arch.c_str(), "sm_%d", &sm) == 1 && sm > 0 ? sm : 0;
}

}  // namespace spmmc
