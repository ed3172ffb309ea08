#include "codegen/fill_template.h"

#include <set>

#include "compiler/common/diagnostics.h"

namespace spmmc {

std::string fill_template(std::string_view text, const std::map<std::string, std::string>& values,
                          std::string_view template_name) {
  static constexpr std::string_view kOpen = "/*@", kClose = "*/", kEnd = "/*@*/";
  std::string out;
  out.reserve(text.size());
  std::set<std::string> used;
  size_t pos = 0;
  for (;;) {
    const size_t open = text.find(kOpen, pos);
    if (open == std::string_view::npos) break;
    const size_t key_end = text.find(kClose, open + kOpen.size());
    SPMMC_CHECK(key_end != std::string_view::npos, fmt::format("unterminated marker in template {}", template_name));
    const std::string key(text.substr(open + kOpen.size(), key_end - open - kOpen.size()));
    SPMMC_CHECK(!key.empty(), fmt::format("stray end marker in template {}", template_name));
    const size_t end = text.find(kEnd, key_end + kClose.size());
    SPMMC_CHECK(end != std::string_view::npos, fmt::format("span {} of template {} has no end", key, template_name));
    const auto value = values.find(key);
    SPMMC_CHECK(value != values.end(), fmt::format("template {} needs a value for {}", template_name, key));
    out.append(text.substr(pos, open - pos));
    out.append(value->second);
    used.insert(key);
    pos = end + kEnd.size();
  }
  out.append(text.substr(pos));
  for (const auto& [key, value] : values)
    SPMMC_CHECK(used.count(key), fmt::format("template {} has no span {}", template_name, key));
  return out;
}

}  // namespace spmmc
