#include "runtime/compile_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace spmmc {
namespace {

// Peak memory of one NVRTC compilation, estimated as an affine function of the source size:
//   kNvrtcBaseBytes + kNvrtcBytesPerSourceByte * source bytes  (300 MiB + 400 B per source byte).
// Measured (runtime/README.md) as the peak RSS (/usr/bin/time -v) of a process compiling one file
// with NVRTC 13.0 for sm_90, -std=c++17; the sources are real kernels of `spmmc compile` (uniform
// random matrices, n = 4096) with the host part cut off:
//   source bytes      70     16 111    598 483    2 369 635    5 315 451
//   peak RSS MiB      73.0     79.6      228.1        822.0       1745.4   (NVRTC 0.07 s ... 667 s)
// Slope from the smallest to the largest: 330 B per source byte (272 up to 0.6 MB). 400 B/byte and
// a base of 300 MiB (73 MiB measured, mostly NVRTC's own code, shared between threads) keep the
// estimate above every measurement: 554 MiB for the 0.6 MB source, 2.3 GiB for the 5.3 MB one.
constexpr int64_t kNvrtcBaseBytes = int64_t{300} << 20;
constexpr int64_t kNvrtcBytesPerSourceByte = 400;

constexpr int64_t kFallbackBudgetBytes = int64_t{4} << 30;

int64_t estimated_peak_bytes(const CompileJob& job) {
  return kNvrtcBaseBytes + kNvrtcBytesPerSourceByte * static_cast<int64_t>(job.source.text.size());
}

// MemAvailable of /proc/meminfo in bytes; 0 when it cannot be read.
int64_t memory_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string name, unit;
    int64_t kib = 0;
    if (fields >> name >> kib >> unit && name == "MemAvailable:" && unit == "kB" && kib > 0) return kib * 1024;
  }
  return 0;
}

}  // namespace

unsigned pool_workers(const std::vector<CompileJob>& jobs, const PoolLimits& limits) {
  const unsigned cores = limits.max_workers != 0 ? limits.max_workers : std::max(1u, std::thread::hardware_concurrency());
  int64_t budget = limits.memory_budget_bytes;
  if (budget <= 0) budget = memory_available_bytes();
  if (budget <= 0) budget = kFallbackBudgetBytes;
  int64_t largest = kNvrtcBaseBytes;
  for (const CompileJob& job : jobs) largest = std::max(largest, estimated_peak_bytes(job));
  const int64_t by_memory = budget / largest;
  const auto workers = static_cast<unsigned>(std::min<int64_t>({int64_t{cores}, static_cast<int64_t>(jobs.size()), by_memory}));
  return std::max(1u, workers);
}

std::vector<CompileOutcome> compile_in_parallel(const std::vector<CompileJob>& jobs, const PoolLimits& limits,
                                                const CubinCache* cache,
                                                const std::function<void(size_t, size_t)>& progress) {
  std::vector<CompileOutcome> outcomes(jobs.size());
  if (jobs.empty()) return outcomes;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards done, failure and the progress callback
  size_t done = 0;
  std::exception_ptr failure;  // the first error that is not a compile error (a bug, the callback's)

  const auto work = [&] {
    for (size_t i = next++; i < jobs.size() && !stop; i = next++) {
      try {
        outcomes[i].cubin = compile_to_cubin(jobs[i].source, jobs[i].options, cache);
      } catch (const CompileError& e) {
        outcomes[i].error = e.what();
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
        stop = true;
        return;
      }
      const std::lock_guard<std::mutex> lock(mutex);
      ++done;
      if (!progress) continue;
      try {
        progress(done, jobs.size());
      } catch (...) {
        if (!failure) failure = std::current_exception();
        stop = true;
        return;
      }
    }
  };

  const unsigned workers = pool_workers(jobs, limits);
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  try {
    for (unsigned t = 1; t < workers; ++t) threads.emplace_back(work);
  } catch (...) {  // no thread could be started: the ones that did, and this one, do the work
  }
  work();
  for (std::thread& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
  return outcomes;
}

}  // namespace spmmc
