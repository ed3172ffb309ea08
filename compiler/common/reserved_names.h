// Which C identifiers a kernel may be named: the emitted NAME.cu and NAME.h define NAME and
// NAME_info at global scope with C linkage (and NAME_kernel inside the file), next to whatever
// the CUDA toolkit and the C library declare, and users include NAME.h beside their own code.
#pragma once

#include <optional>
#include <string>

namespace spmmc {

// Why `name` cannot be a kernel's name, as the end of "--name 'NAME' clashes with ...", or
// nullopt when it can. `name` is expected to be a C identifier (is_c_identifier checks the
// syntax); the rules, in the order they are checked:
//  1. a leading underscore: C and C++ reserve such names at file scope;
//  2. spmmc_ and SPMMC_ (the emitted code's own names, e.g. spmmc_kernel_info), tile_<digits>
//     (its tile functions), and a name ending in _info (NAME_info of the kernel named by the
//     rest);
//  3. the CUDA toolkit's prefixes, case-sensitive: cu and CU (cudaMalloc, cuInit, cublasCreate,
//     cub::, CUresult, CUDA_VERSION, CUBLAS_...), nv and NV (nvrtcCompileProgram, nvcuda::,
//     nv_bfloat16, NV_IF_TARGET). Other spellings (Cuda, cU, Nv) are not the toolkit's;
//  4. a name ending in _t: POSIX reserves those for types (size_t, int64_t, pthread_t, ...);
//  5. the table of compiler/common/reserved_names.inc: keywords of C and C++, main, the CUDA built-in
//     variables, device functions, math functions, types and macros, the C library's names by
//     header (as glibc declares them for g++), std and the toolkit's C++ namespaces;
//  6. NAME_kernel and NAME_info, the names the emitted file derives from NAME, go through rule 2's
//     spmmc_/SPMMC_ prefixes (`spmmc` would define spmmc_info twice) and the table.
// cmake/spmmc_add_spmm.cmake applies the same rules at configure time.
std::optional<std::string> reserved_name_clash(const std::string& name);

}  // namespace spmmc
