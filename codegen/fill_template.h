// Filling a CUDA template: every span /*@KEY*/default text/*@*/ of the template is replaced by
// the value of KEY. The default text keeps the template a valid CUDA file on its own (CI
// compiles the bare templates), and the markers name every place the emitter writes.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace spmmc {

// Replaces every marked span; a span whose key has no value, or a value whose key appears in
// no span, is a bug (InternalError naming `template_name` and the key).
std::string fill_template(std::string_view text, const std::map<std::string, std::string>& values,
                          std::string_view template_name);

// The items one(0) .. one(count - 1) as a template value: "a, b, c", a new line every `per_line`
// items (the initialisers of the arrays the emitter fills in).
template <typename F>
std::string joined_items(size_t count, size_t per_line, F one) {
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    if (i) out += i % per_line == 0 ? ",\n    " : ", ";
    out += one(i);
  }
  return out;
}

}  // namespace spmmc
