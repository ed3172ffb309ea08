// NVRTC: CUDA source -> cubin for a real architecture (sm_90), with an on-disk cache. Needs no
// GPU: CI compiles proxies and real kernels with it. Thread-safe (NVRTC is); see
// runtime/compile_pool.h for compiling many sources at once.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace spmmc {

class CubinCache;

// One translation unit. NVRTC has no CUDA or C++ standard headers here: the source must be
// self-contained (the proxy and NVRTC kernel templates carry their own small prelude).
struct CudaSource {
  std::string name;  // shown in errors and compile logs, e.g. "proxy_m16.cu"
  std::string text;
};

struct NvrtcOptions {
  std::string arch = "sm_90";        // a real architecture: the result is a cubin, not PTX
  std::vector<std::string> flags;    // extra NVRTC options, e.g. "-maxrregcount=128"
};

struct Cubin {
  std::string image;         // the ELF cubin, loadable with cuModuleLoadData
  std::string log;           // NVRTC's log (warnings), possibly empty
  std::string key;           // the cache key: hex SHA-256 of source, options, NVRTC version, arch
  double seconds = 0.0;      // wall time of this call (a cache hit is fast)
  bool from_cache = false;
};

// A failed compilation. what() is "NAME: NVRTC compilation failed for sm_90:" followed by the
// whole compile log, so the caller can print it as it is.
class CompileError : public std::runtime_error {
 public:
  CompileError(std::string source_name, std::string log, const std::string& what);
  const std::string& source_name() const { return source_name_; }
  const std::string& log() const { return log_; }

 private:
  std::string source_name_;
  std::string log_;
};

// Compiles `source` to a cubin. With a cache, a hit returns the stored cubin without calling
// NVRTC and a miss stores the result. Throws CompileError (with the log) when NVRTC rejects
// the source or the options.
Cubin compile_to_cubin(const CudaSource& source, const NvrtcOptions& options, const CubinCache* cache = nullptr);

// "13.0": the NVRTC library version (part of every cache key).
std::string nvrtc_version();

// The options that let a source include the CUDA toolkit's headers (cuda_fp16.h, cuda_bf16.h: the
// NVRTC form of a half-precision kernel): {"-I" DIR} for the first of the toolkit spmmc was built
// with, $CUDA_HOME/include and /usr/local/cuda/include that holds cuda_fp16.h; none where none does
// (NVRTC then names the missing header in its log).
std::vector<std::string> nvrtc_cuda_include_options();

}  // namespace spmmc
