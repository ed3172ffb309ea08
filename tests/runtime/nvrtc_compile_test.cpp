#include "runtime/nvrtc_compile.h"

#include <regex>

#include "tests/test_util.h"

namespace spmmc {
namespace {

const CudaSource kAxpy{"axpy.cu", R"(extern "C" __global__ void spmmc_test_axpy(float* y, const float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
)"};

TEST_CASE("NVRTC compiles a tiny kernel to an sm_90 cubin", "[nvrtc]") {
  const Cubin cubin = compile_to_cubin(kAxpy, NvrtcOptions{});
  REQUIRE(cubin.image.size() > 4);
  CHECK(cubin.image.compare(0, 4, "\x7f" "ELF") == 0);
  CHECK(cubin.image.find("spmmc_test_axpy") != std::string::npos);
  CHECK_FALSE(cubin.from_cache);
  CHECK(std::regex_match(cubin.key, std::regex("[0-9a-f]{64}")));
  CHECK(cubin.seconds > 0.0);
}

TEST_CASE("NVRTC flags reach the compiler", "[nvrtc]") {
  // A macro defined only through the flags: without it the source does not compile.
  const CudaSource source{"macro.cu", "extern \"C\" __global__ void spmmc_test_macro(float* y) { y[0] = SPMMC_VALUE; }\n"};
  CHECK_THROWS_AS(compile_to_cubin(source, NvrtcOptions{}), CompileError);
  NvrtcOptions options;
  options.flags = {"-DSPMMC_VALUE=2.5f"};
  CHECK(compile_to_cubin(source, options).image.find("spmmc_test_macro") != std::string::npos);
}

TEST_CASE("NVRTC rejects a bad source with a CompileError whose log names the line", "[nvrtc]") {
  const CudaSource bad{"bad_kernel.cu", "extern \"C\" __global__ void k(float* y) {\n  y[0] = 1.0f;\n  y[1] = undefined_thing;\n}\n"};
  try {
    compile_to_cubin(bad, NvrtcOptions{});
    FAIL("no CompileError");
  } catch (const CompileError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("bad_kernel.cu: NVRTC compilation failed for sm_90:\n", 0) == 0);
    CHECK(e.source_name() == "bad_kernel.cu");
    CHECK(e.log().find("bad_kernel.cu(3)") != std::string::npos);
    CHECK(e.log().find("undefined_thing") != std::string::npos);
    CHECK(what.find(e.log()) != std::string::npos);
  }
}

TEST_CASE("NVRTC refuses an unknown option and a virtual architecture", "[nvrtc]") {
  NvrtcOptions unknown;
  unknown.flags = {"--no-such-nvrtc-option"};
  try {
    compile_to_cubin(kAxpy, unknown);
    FAIL("no CompileError");
  } catch (const CompileError& e) {
    CHECK(std::string(e.what()).find("NVRTC_ERROR_INVALID_OPTION") != std::string::npos);
  }
  NvrtcOptions virtual_arch;
  virtual_arch.arch = "compute_90";
  try {
    compile_to_cubin(kAxpy, virtual_arch);
    FAIL("no CompileError");
  } catch (const CompileError& e) {
    CHECK(std::string(e.what()).rfind("axpy.cu: NVRTC compilation failed for compute_90:", 0) == 0);
    CHECK(std::string(e.what()).find("real architecture") != std::string::npos);
  }
}

TEST_CASE("nvrtc_version is MAJOR.MINOR of a CUDA 12 or newer NVRTC", "[nvrtc]") {
  std::smatch m;
  const std::string version = nvrtc_version();
  REQUIRE(std::regex_match(version, m, std::regex("([0-9]+)\\.([0-9]+)")));
  CHECK(std::stoi(m[1]) >= 12);
}

}  // namespace
}  // namespace spmmc
