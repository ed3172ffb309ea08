// The files of verify/prelude/, embedded at build time (verify/CMakeLists.txt generates the
// definition, re-generated when a prelude file changes).
#pragma once

#include <string_view>

namespace spmmc {

// The text of verify/prelude/<name>: "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h", "stdint.h" or
// "spmmc_kernel_info.h".
std::string_view verify_prelude_file(std::string_view name);

}  // namespace spmmc
