// Compiles many sources with NVRTC on a bounded pool of worker threads. NVRTC is thread-safe,
// but one instance can take hundreds of MB, so the pool is bounded by memory as well as cores.
// Failures are data: each job gets its cubin or its error, in the order of the jobs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/nvrtc_compile.h"

namespace spmmc {

struct CompileJob {
  CudaSource source;
  NvrtcOptions options;
};

struct CompileOutcome {
  std::optional<Cubin> cubin;  // set on success
  std::string error;           // the CompileError text (with the log) on failure
  bool ok() const { return cubin.has_value(); }
};

struct PoolLimits {
  unsigned max_workers = 0;        // 0: the hardware concurrency
  int64_t memory_budget_bytes = 0; // 0: MemAvailable from /proc/meminfo (else 4 GiB)
};

// How many workers run `jobs` under `limits`: at most the cores, at most the jobs, and at most
// the memory budget divided by the estimated peak memory of the largest job (see the .cpp for
// the estimate); at least 1.
unsigned pool_workers(const std::vector<CompileJob>& jobs, const PoolLimits& limits);

// Compiles every job; `progress(done, total)` is called (from one thread at a time) after each.
std::vector<CompileOutcome> compile_in_parallel(const std::vector<CompileJob>& jobs, const PoolLimits& limits,
                                                const CubinCache* cache,
                                                const std::function<void(size_t, size_t)>& progress = {});

}  // namespace spmmc
