// Filling a CUDA template: every span /*@KEY*/default text/*@*/ of the template is replaced by
// the value of KEY. The default text keeps the template a valid CUDA file on its own (CI
// compiles the bare templates), and the markers name every place the emitter writes.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace spmmc {

// Replaces every marked span; a span whose key has no value, or a value whose key appears in
// no span, is a bug (InternalError naming `template_name` and the key).
std::string fill_template(std::string_view text, const std::map<std::string, std::string>& values,
                          std::string_view template_name);

}  // namespace spmmc
