#include "runtime/nvrtc_compile.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nvrtc.h>

#include "runtime/cubin_cache.h"

namespace spmmc {
namespace {

// Owns an nvrtcProgram.
class Program {
 public:
  explicit Program(nvrtcProgram program) : program_(program) {}
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_;
};

// The whole option list handed to NVRTC: the architecture, the language, then the caller's flags.
std::vector<std::string> nvrtc_arguments(const NvrtcOptions& options) {
  std::vector<std::string> arguments = {"--gpu-architecture=" + options.arch, "-std=c++17"};
  arguments.insert(arguments.end(), options.flags.begin(), options.flags.end());
  return arguments;
}

// The options as one string for the cache key. NUL cannot occur inside an option (NVRTC takes C
// strings), so joining with it is unambiguous.
std::string joined(const std::vector<std::string>& arguments) {
  std::string text;
  for (const std::string& argument : arguments) {
    text += argument;
    text += '\0';
  }
  return text;
}

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // the terminating NUL
  return log;
}

[[noreturn]] void fail_compile(const CudaSource& source, const NvrtcOptions& options, std::string log) {
  const std::string what = fmt::format("{}: NVRTC compilation failed for {}:\n{}", source.name, options.arch, log);
  throw CompileError(source.name, std::move(log), what);
}

// Adds NVRTC's own error text to `log` when the log does not already explain the failure.
std::string log_with_result(std::string log, const char* step, nvrtcResult result) {
  if (!log.empty() && log.back() != '\n') log += '\n';
  return log + fmt::format("{}: {}\n", step, nvrtcGetErrorString(result));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

CompileError::CompileError(std::string source_name, std::string log, const std::string& what)
    : std::runtime_error(what), source_name_(std::move(source_name)), log_(std::move(log)) {}

std::string nvrtc_version() {
  static const std::string version = [] {
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return std::string("unknown");
    return fmt::format("{}.{}", major, minor);
  }();
  return version;
}

std::vector<std::string> nvrtc_cuda_include_options() {
  std::vector<std::string> folders = {SPMMC_CUDA_INCLUDE_DIR};
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') folders.push_back(std::string(home) + "/include");
  folders.emplace_back("/usr/local/cuda/include");
  for (const std::string& folder : folders) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::path(folder) / "cuda_fp16.h", ec)) return {"-I" + folder};
  }
  return {};
}

Cubin compile_to_cubin(const CudaSource& source, const NvrtcOptions& options, const CubinCache* cache) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> arguments = nvrtc_arguments(options);
  Cubin cubin;
  cubin.key = CubinCache::key(source.text, joined(arguments), nvrtc_version(), options.arch);
  if (cache != nullptr) {
    if (std::optional<std::string> image = cache->load(cubin.key)) {
      cubin.image = std::move(*image);
      cubin.from_cache = true;
      cubin.seconds = seconds_since(start);
      return cubin;
    }
  }

  nvrtcProgram raw = nullptr;
  const nvrtcResult created = nvrtcCreateProgram(&raw, source.text.c_str(), source.name.c_str(), 0, nullptr, nullptr);
  if (created != NVRTC_SUCCESS) fail_compile(source, options, log_with_result({}, "nvrtcCreateProgram", created));
  const Program program(raw);

  std::vector<const char*> argv;
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  cubin.log = program_log(program.get());
  if (compiled != NVRTC_SUCCESS) fail_compile(source, options, log_with_result(cubin.log, "nvrtcCompileProgram", compiled));

  size_t size = 0;
  nvrtcResult got = nvrtcGetCUBINSize(program.get(), &size);
  if (got == NVRTC_SUCCESS && size == 0) got = NVRTC_ERROR_INVALID_INPUT;
  if (got == NVRTC_SUCCESS) {
    cubin.image.resize(size);
    got = nvrtcGetCUBIN(program.get(), cubin.image.data());
  }
  if (got != NVRTC_SUCCESS) {
    // A virtual architecture (compute_90) yields PTX only.
    fail_compile(source, options,
                 log_with_result(cubin.log, fmt::format("nvrtcGetCUBIN (is '{}' a real architecture such as sm_90?)",
                                                        options.arch).c_str(), got));
  }
  if (cache != nullptr) cache->store(cubin.key, cubin.image);
  cubin.seconds = seconds_since(start);
  return cubin;
}

}  // namespace spmmc
