#include "runtime/compile_pool.h"

#include <mutex>

#include <fmt/format.h>

#include "runtime/cubin_cache.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

CompileJob kernel_job(int i) {
  return {{fmt::format("job{}.cu", i),
           fmt::format("extern \"C\" __global__ void spmmc_pool_kernel_{}(float* y) {{ y[threadIdx.x] += {}.0f; }}\n", i, i)},
          NvrtcOptions{}};
}

std::vector<CompileJob> tiny_jobs(int count) {
  std::vector<CompileJob> jobs;
  for (int i = 0; i < count; ++i) jobs.push_back(kernel_job(i));
  return jobs;
}

TEST_CASE("compile_in_parallel returns outcomes in job order with the bad job failed", "[compile_pool]") {
  std::vector<CompileJob> jobs = tiny_jobs(6);
  jobs[3].source.text = "extern \"C\" __global__ void broken(float* y) {\n  y[0] = not_declared;\n}\n";
  std::vector<size_t> seen;
  std::mutex seen_mutex;
  const auto progress = [&](size_t done, size_t total) {
    const std::lock_guard<std::mutex> lock(seen_mutex);
    CHECK(total == 6);
    seen.push_back(done);
  };
  PoolLimits limits;
  limits.max_workers = 3;
  const std::vector<CompileOutcome> outcomes = compile_in_parallel(jobs, limits, nullptr, progress);
  REQUIRE(outcomes.size() == 6);
  for (int i = 0; i < 6; ++i) {
    INFO("job " << i);
    if (i == 3) {
      CHECK_FALSE(outcomes[3].ok());
      CHECK(outcomes[3].error.rfind("job3.cu: NVRTC compilation failed for sm_90:", 0) == 0);
      CHECK(outcomes[3].error.find("job3.cu(2)") != std::string::npos);
    } else {
      REQUIRE(outcomes[i].ok());
      CHECK(outcomes[i].error.empty());
      CHECK(outcomes[i].cubin->image.find(fmt::format("spmmc_pool_kernel_{}", i)) != std::string::npos);
    }
  }
  CHECK(seen == std::vector<size_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("compile_in_parallel fills and then uses the cubin cache", "[compile_pool]") {
  test::TempDir tmp;
  const CubinCache cache(tmp.path);
  const std::vector<CompileJob> jobs = tiny_jobs(4);
  PoolLimits limits;
  limits.max_workers = 2;
  for (const CompileOutcome& outcome : compile_in_parallel(jobs, limits, &cache)) {
    REQUIRE(outcome.ok());
    CHECK_FALSE(outcome.cubin->from_cache);
  }
  for (const CompileOutcome& outcome : compile_in_parallel(jobs, limits, &cache)) {
    REQUIRE(outcome.ok());
    CHECK(outcome.cubin->from_cache);
  }
  CHECK(compile_in_parallel({}, limits, &cache).empty());
}

TEST_CASE("pool_workers respects max_workers and the job count and the memory budget", "[compile_pool]") {
  const std::vector<CompileJob> six = tiny_jobs(6);
  const int64_t plenty = int64_t{1} << 40;
  CHECK(pool_workers(six, {3, plenty}) == 3);
  CHECK(pool_workers(six, {16, plenty}) == 6);
  CHECK(pool_workers(tiny_jobs(1), {16, plenty}) == 1);
  CHECK(pool_workers({}, {16, plenty}) == 1);
  CHECK(pool_workers(six, {16, 1 << 20}) == 1);  // a tiny budget still runs one
  const unsigned automatic = pool_workers(six, {0, plenty});
  CHECK(automatic >= 1);
  CHECK(automatic <= 6);
  CHECK(pool_workers(six, {16, 0}) >= 1);  // the budget from /proc/meminfo

  // One big source lowers the count under the same budget: the largest job sets the estimate.
  const int64_t budget = int64_t{8} << 30;
  std::vector<CompileJob> with_big = tiny_jobs(16);
  const unsigned small_only = pool_workers(with_big, {16, budget});
  with_big[5].source.text.append(size_t{20} << 20, ' ');
  const unsigned big = pool_workers(with_big, {16, budget});
  CHECK(big >= 1);
  CHECK(big < small_only);
}

}  // namespace
}  // namespace spmmc
