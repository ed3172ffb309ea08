// Times launches with CUDA events: warm-up runs, then many timed runs, one event pair each,
// optionally flushing L2 between runs (a memset of a buffer larger than L2, outside the timed
// interval). Reports the median and the 20th/80th percentiles.
#pragma once

#include <functional>
#include <string>

#include "runtime/cuda_driver.h"

namespace spmmc {

struct TimingOptions {
  int warmup = 5;
  int runs = 50;
  bool flush_l2 = false;
};

struct TimingStats {
  double median_ms = 0.0;
  double p20_ms = 0.0;
  double p80_ms = 0.0;
  int runs = 0;
};

// Times `kernel` launched with `shape` and `args`. DriverError when a launch fails.
TimingStats time_kernel(const GpuContext& context, const Kernel& kernel, const LaunchShape& shape, void** args,
                        const TimingOptions& options);

// The same for any enqueued work (e.g. a library call on the context's stream, or a chain of
// kernels: one sample is everything one call of `enqueue` puts on the stream). `label` names the
// work in DriverErrors.
TimingStats time_work(const GpuContext& context, const std::function<void()>& enqueue, const TimingOptions& options,
                      const std::string& label = "timed work");

}  // namespace spmmc
