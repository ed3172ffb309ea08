#include "tools/spmmc/write_depfile.h"

#include <filesystem>

#include "compiler/common/diagnostics.h"
#include "compiler/common/write_file_atomically.h"

namespace spmmc::cli {
namespace {

std::string escaped_absolute(const std::string& path) {
  if (path.find('\n') != std::string::npos || path.find('\r') != std::string::npos)
    fail_usage("--depfile: the path '{}' holds a line break, which a depfile cannot express", path);
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) absolute = path;
  std::string out;
  for (const char ch : absolute.lexically_normal().string()) {
    if (ch == ' ' || ch == '#') out += '\\';
    if (ch == '$') out += '$';
    out += ch;
  }
  return out;
}

}  // namespace

void write_depfile(const std::string& depfile, const std::string& target, const std::vector<std::string>& prerequisites) {
  std::string text = escaped_absolute(target) + ":";
  for (const std::string& p : prerequisites) text += " \\\n  " + escaped_absolute(p);
  text += "\n";
  write_file_atomically(depfile, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

std::vector<std::string> compile_inputs(const std::string& weights, const Args& args, const Target& target) {
  std::vector<std::string> files = {weights};
  if (args.has("--arch")) {
    for (const std::string& name : list_targets()) files.push_back((targets_dir() / (name + ".json")).string());
  } else if (!target.file.empty()) {
    files.push_back(target.file);
  }
  return files;
}

}  // namespace spmmc::cli
