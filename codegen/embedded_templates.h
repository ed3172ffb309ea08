// The CUDA templates of codegen/templates/ and proxy/templates/, embedded into the library at build time (the
// generated embedded_templates.cpp; see CMakeLists.txt), so spmmc needs no files at run time.
#pragma once

#include <string_view>

namespace spmmc {

// The text of the template file NAME ("kernel.cu", "kernel_device.cuh", "kernel_nvrtc.cu",
// "kernel.h", "spmmc_kernel_info.h", "proxy.cu"). An unknown name is a bug (InternalError).
std::string_view embedded_template(std::string_view name);

}  // namespace spmmc
