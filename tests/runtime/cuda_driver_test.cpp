#include "runtime/cuda_driver.h"

#include "tests/test_util.h"

namespace spmmc {
namespace {

TEST_CASE("GpuContext::open throws kUnavailable naming the cause where available() is false", "[cuda_driver]") {
  std::string why;
  if (GpuContext::available(&why)) {
    WARN("a CUDA GPU is available here: checking that it opens instead");
    CHECK(why.empty());
    const std::unique_ptr<GpuContext> context = GpuContext::open();
    CHECK(context->device().sm_count > 0);
    CHECK(context->device().arch().rfind("sm_", 0) == 0);
    return;
  }
  INFO("why: " << why);
  REQUIRE_FALSE(why.empty());
  CHECK((why.rfind("no CUDA driver: libcuda.so.1 could not be loaded (", 0) == 0 ||
         why.rfind("no CUDA device: ", 0) == 0 || why.find("CUDA driver") != std::string::npos));
  const UserError e = test::expect_user_error([] { GpuContext::open(); });
  CHECK(e.code() == ExitCode::kUnavailable);
  CHECK(e.message() == why);
}

TEST_CASE("DeviceInfo::arch names the real architecture", "[cuda_driver]") {
  DeviceInfo info;
  info.cc_major = 9;
  info.cc_minor = 0;
  CHECK(info.arch() == "sm_90");
  info.cc_major = 8;
  info.cc_minor = 6;
  CHECK(info.arch() == "sm_86");
}

TEST_CASE("the spmmc executable does not link the CUDA driver", "[cuda_driver]") {
  // readelf lists the NEEDED entries; libcuda.so.1 must be dlopen'ed, never needed at load time.
  const std::string out = test::spmmc_dynamic_section();
  INFO(out);
  CHECK(out.find("(NEEDED)") != std::string::npos);
  CHECK(out.find("libcuda.so") == std::string::npos);
}

}  // namespace
}  // namespace spmmc
