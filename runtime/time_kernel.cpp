#include "runtime/time_kernel.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"
#include "runtime/cuda_driver_api.h"

namespace spmmc {
namespace {

// Events created on construction, destroyed (never throwing) on destruction.
class Events {
 public:
  Events(const GpuContext& context, size_t count, const std::string& label) : api_(context.api()) {
    events_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      CUevent event = nullptr;
      context.check(api_.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate", label);
      events_.push_back(event);
    }
  }
  ~Events() {
    for (CUevent event : events_) api_.cuEventDestroy(event);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  CUevent operator[](size_t i) const { return events_[i]; }

 private:
  const GpuContext::Api& api_;
  std::vector<CUevent> events_;
};

// Nearest rank: the smallest sample with at least p% of the samples at or below it.
double percentile_nearest_rank(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

// The middle sample; the mean of the two middle ones for an even count.
double median(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

TimingStats time_enqueued(const GpuContext& context, const std::function<void()>& enqueue, const TimingOptions& options,
                          const std::string& label) {
  if (options.runs < 1 || options.warmup < 0)
    fail_usage("timing {}: runs must be at least 1 and warm-up runs at least 0 (got {} and {})", label, options.runs,
               options.warmup);
  const GpuContext::Api& api = context.api();
  context.check(api.bind(), "cuCtxSetCurrent", label);
  const auto stream = static_cast<CUstream>(context.stream());

  // Twice L2, so that nothing a run left in L2 survives the memset before the next run.
  std::unique_ptr<DeviceBuffer> scratch;
  if (options.flush_l2) {
    const int64_t l2 = std::max<int64_t>(context.device().l2_bytes, int64_t{1} << 20);
    scratch = std::make_unique<DeviceBuffer>(context, static_cast<size_t>(2 * l2));
  }

  for (int i = 0; i < options.warmup; ++i) enqueue();

  const auto runs = static_cast<size_t>(options.runs);
  const Events events(context, 2 * runs, label);
  for (size_t i = 0; i < runs; ++i) {
    if (scratch) scratch->fill_zero();  // before the start event: not timed
    context.check(api.cuEventRecord(events[2 * i], stream), "cuEventRecord", label);
    enqueue();
    context.check(api.cuEventRecord(events[2 * i + 1], stream), "cuEventRecord", label);
  }
  // A fault of any run (an illegal address) surfaces here.
  context.check(api.cuEventSynchronize(events[2 * runs - 1]), "cuEventSynchronize", label);

  std::vector<double> ms(runs);
  for (size_t i = 0; i < runs; ++i) {
    float elapsed = 0.0f;
    context.check(api.cuEventElapsedTime(&elapsed, events[2 * i], events[2 * i + 1]), "cuEventElapsedTime", label);
    ms[i] = elapsed;
  }
  std::sort(ms.begin(), ms.end());
  TimingStats stats;
  stats.median_ms = median(ms);
  stats.p20_ms = percentile_nearest_rank(ms, 20);
  stats.p80_ms = percentile_nearest_rank(ms, 80);
  stats.runs = options.runs;
  return stats;
}

}  // namespace

TimingStats time_kernel(const GpuContext& context, const Kernel& kernel, const LaunchShape& shape, void** args,
                        const TimingOptions& options) {
  return time_enqueued(context, [&] { kernel.launch(shape, args); }, options, kernel.name());
}

TimingStats time_work(const GpuContext& context, const std::function<void()>& enqueue, const TimingOptions& options,
                      const std::string& label) {
  return time_enqueued(context, enqueue, options, label);
}

}  // namespace spmmc
