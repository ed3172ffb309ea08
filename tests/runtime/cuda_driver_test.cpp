#include "runtime/cuda_driver.h"

#include <type_traits>

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
    // Every driver open() accepts (12.0 or newer, for cuGetProcAddress_v2) has the graph entry
    // points at the ABI versions cuda_driver_api.h asks for: false means a wrong name or version.
    CHECK(context->graphs());
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

TEST_CASE("KernelGraph owns its graph: it moves and never copies", "[cuda_driver]") {
  // A copy would destroy the graph twice; std::optional<KernelGraph> (the tuner) needs the move.
  STATIC_REQUIRE_FALSE(std::is_copy_constructible_v<KernelGraph>);
  STATIC_REQUIRE_FALSE(std::is_copy_assignable_v<KernelGraph>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<KernelGraph>);
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

TEST_CASE("LaunchShape: {grid x, y, z, block x, shared} keeps its meaning, block y defaults to 1", "[runtime]") {
  constexpr LaunchShape s{1056, 2, 3, 256, 48};
  static_assert(s.grid_x == 1056 && s.grid_y == 2 && s.grid_z == 3 && s.block_x == 256 && s.dynamic_shared_bytes == 48 &&
                s.block_y == 1);
  CHECK(s.block_y == 1);
}

}  // namespace
}  // namespace spmmc
