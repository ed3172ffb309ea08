// tuner/time_sgemm.h without a GPU: loading cuBLAS at run time fails softly, naming each library
// tried and why, and spmmc never links cuBLAS. Where a GPU is usable here, the timing itself too
// (tests/gpu/tuner_gpu_check.cpp checks it on the GPU machine).
#include "tuner/time_sgemm.h"

#include <memory>

#include "tests/test_util.h"

namespace spmmc {
namespace {

constexpr const char* kNoSuchLibrary = "libspmmc-no-such-cublas.so.99";

TEST_CASE("time_sgemm: a cuBLAS library that does not exist is unavailable, naming it", "[tuner][sgemm]") {
  std::string why;
  CHECK_FALSE(cublas_loadable({kNoSuchLibrary}, &why));
  INFO(why);
  CHECK(why.rfind("cuBLAS could not be loaded: ", 0) == 0);
  CHECK(why.find(kNoSuchLibrary) != std::string::npos);
  CHECK(why.find("cannot open shared object file") != std::string::npos);
  CHECK_FALSE(cublas_loadable({kNoSuchLibrary}));  // `why` is optional
}

TEST_CASE("time_sgemm: a library without the cuBLAS entry points is unavailable, naming the first missing",
          "[tuner][sgemm]") {
  std::string why;
  CHECK_FALSE(cublas_loadable({"libm.so.6"}, &why));
  INFO(why);
  CHECK(why == "cuBLAS could not be loaded: libm.so.6: loaded, but it has no cublasCreate_v2 (not cuBLAS, or too "
               "old a cuBLAS)");
}

TEST_CASE("time_sgemm: every library tried is named, in order, and an empty list says so", "[tuner][sgemm]") {
  std::string why;
  CHECK_FALSE(cublas_loadable({kNoSuchLibrary, "libm.so.6"}, &why));
  INFO(why);
  const size_t first = why.find(kNoSuchLibrary), second = why.find("; libm.so.6: loaded, but it has no cublasCreate_v2");
  CHECK(first != std::string::npos);
  CHECK(second != std::string::npos);
  CHECK(first < second);
  CHECK_FALSE(cublas_loadable({}, &why));
  CHECK(why == "cuBLAS could not be loaded: no library to try");
}

TEST_CASE("time_sgemm: the spmmc executable does not link cuBLAS", "[tuner][sgemm]") {
  // readelf lists the NEEDED entries; libcublas must be dlopen'ed, never needed at load time.
  const std::string out = test::spmmc_dynamic_section();
  INFO(out);
  CHECK(out.find("(NEEDED)") != std::string::npos);
  CHECK(out.find("libcublas") == std::string::npos);
}

TEST_CASE("time_sgemm: on a GPU, a missing cuBLAS or a bad shape is unavailable and cuBLAS is timed", "[tuner][sgemm]") {
  std::string no_gpu;
  if (!GpuContext::available(&no_gpu)) {
    WARN("no GPU here (" << no_gpu << "): only the loading is checked (tests/gpu/tuner_gpu_check.cpp times SGEMM)");
    return;
  }
  const std::unique_ptr<GpuContext> gpu = GpuContext::open();
  const TimingOptions timing{2, 5, false};
  const SgemmTiming missing = time_sgemm(*gpu, 64, 48, 32, timing, {kNoSuchLibrary});
  CHECK_FALSE(missing.available);
  CHECK(missing.why_unavailable.find(kNoSuchLibrary) != std::string::npos);
  const SgemmTiming bad = time_sgemm(*gpu, 64, 48, 0, timing);
  CHECK_FALSE(bad.available);
  CHECK(bad.why_unavailable.find("cuBLAS takes sizes in [1, ") != std::string::npos);
  std::string no_cublas;
  if (!cublas_loadable(kCublasLibraries, &no_cublas)) {
    WARN("no cuBLAS here: " << no_cublas);
    return;
  }
  const SgemmTiming timed = time_sgemm(*gpu, 64, 48, 32, timing);
  INFO(timed.why_unavailable);
  CHECK(timed.available);
  CHECK(timed.median_ms > 0.0);
}

}  // namespace
}  // namespace spmmc
