// spmmc-runtime-gpu-check: the GPU test of runtime/ (NVRTC -> module -> attributes, occupancy,
// launches, overlapped launches, launches captured into a CUDA graph, timing, dynamic shared
// memory, launch errors) as a plain program, so that it runs on a GPU machine that has no Catch2:
// built here, carried there beside libfmt (see tests/gpu/).
// Prints one PASS/FAIL line per check and a summary last. Exit: 0 all passed, 1 a check failed,
// 69 no GPU (with the reason; nothing was run).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"
#include "runtime/cuda_driver.h"
#include "tests/gpu/gpu_check.h"
#include "runtime/nvrtc_compile.h"
#include "runtime/time_kernel.h"

namespace spmmc {
namespace {

// x <- fma(x, a, b), k times per thread: a dependent chain whose time is linear in k.
// dynamic_shared: fills `words` floats of dynamic shared memory and sums them back in reverse.
constexpr const char* kSource = R"(
extern "C" __global__ void spmmc_fma_loop(float* out, int k, float a, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = (float)i * 1e-3f;
  for (int j = 0; j < k; ++j) x = fmaf(x, a, b);
  out[i] = x;
}

// A chain link: starts its dependents at once, spins for `ns` nanoseconds (globaltimer), then
// waits for the kernel before it (griddepcontrol, as the emitted kernels do) and records, in
// out[2 * link + 1], what that kernel stored in out[2 * link - 2] (visible only once it finished).
extern "C" __global__ void spmmc_chain_link(float* out, int link, long long ns) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" : : : "memory");
#endif
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < (unsigned long long)ns);
  if (threadIdx.x == 0 && blockIdx.x == 0) out[2 * link] = (float)(link + 1);
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" : : : "memory");
#endif
  if (threadIdx.x == 0 && blockIdx.x == 0 && link > 0) out[2 * link + 1] = *(volatile float*)&out[2 * link - 2];
}

extern "C" __global__ void spmmc_dynamic_shared(float* out, int words) {
  extern __shared__ float tile[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) tile[i] = (float)i;
  __syncthreads();
  float s = 0.0f;
  for (int i = threadIdx.x; i < words; i += blockDim.x) s += tile[words - 1 - i];
  out[threadIdx.x] = s;
}
)";

using gpu_check::check;

// Runs `body` and returns the DriverError text it throws, or "" when it throws none.
template <typename Body>
std::string driver_error_of(Body&& body) {
  try {
    body();
  } catch (const DriverError& e) {
    return e.what();
  }
  return {};
}

float fma_chain_on_host(int i, int k, float a, float b) {
  float x = static_cast<float>(i) * 1e-3f;
  for (int j = 0; j < k; ++j) x = std::fma(x, a, b);
  return x;
}

void run_checks() {
  const std::unique_ptr<GpuContext> context = GpuContext::open();
  const DeviceInfo& d = context->device();
  std::printf("device: %s, %s, %d SMs, L2 %lld B, shared %lld B/SM, opt-in %lld B/block, driver %d\n", d.name.c_str(),
              d.arch().c_str(), d.sm_count, static_cast<long long>(d.l2_bytes),
              static_cast<long long>(d.shared_memory_per_sm), static_cast<long long>(d.shared_memory_per_block_optin),
              d.driver_version);
  check(d.sm_count > 0 && d.warp_size == 32 && d.max_threads_per_block >= 1024 && d.max_blocks_per_sm > 0 &&
            d.registers_per_sm > 0 && d.registers_per_block > 0 && d.max_threads_per_sm >= d.max_threads_per_block,
        "device limits are plausible");
  check(d.l2_bytes > 0 && d.shared_memory_per_block_optin > 48 * 1024 &&
            d.shared_memory_per_sm >= d.shared_memory_per_block_optin && d.reserved_shared_memory_per_block >= 0,
        "memory sizes are plausible");

  NvrtcOptions options;
  options.arch = d.arch();
  const Cubin cubin = compile_to_cubin({"runtime_gpu_check.cu", kSource}, options);
  const Module module(*context, cubin.image, "runtime_gpu_check.cu");
  const Kernel fma = module.kernel("spmmc_fma_loop");
  const Kernel shared = module.kernel("spmmc_dynamic_shared");

  const KernelAttributes attributes = fma.attributes();
  check(attributes.registers_per_thread > 0 && attributes.registers_per_thread <= 255 &&
            attributes.static_shared_bytes == 0 && attributes.local_bytes_per_thread == 0 &&
            attributes.max_threads_per_block >= 256,
        fmt::format("attributes of spmmc_fma_loop: {} registers, {} B static shared, {} B local, at most {} threads",
                    attributes.registers_per_thread, attributes.static_shared_bytes,
                    attributes.local_bytes_per_thread, attributes.max_threads_per_block));
  const int fma_blocks = fma.active_blocks_per_sm(256, 0);
  check(fma_blocks >= 1 && fma_blocks <= d.max_blocks_per_sm && fma_blocks * 256 <= d.max_threads_per_sm,
        fmt::format("occupancy of spmmc_fma_loop at 256 threads: {} blocks per SM", fma_blocks));

  // Correctness of a launch: arguments in, results out.
  const unsigned block = 256;
  const unsigned grid = static_cast<unsigned>(d.sm_count) * static_cast<unsigned>(std::max(fma_blocks, 1));
  const size_t threads = size_t{grid} * block;
  const DeviceBuffer out(*context, threads * sizeof(float));
  out.fill_zero();
  float a = 0.999f, b = 0.001f;
  int k = 1000;
  uint64_t out_address = out.address();
  void* args[] = {&out_address, &k, &a, &b};
  fma.launch({grid, 1, 1, block, 0}, args);
  std::vector<float> got(threads);
  out.download(got.data(), got.size() * sizeof(float));
  size_t wrong = 0;
  for (size_t i = 0; i < threads; ++i)
    if (got[i] != fma_chain_on_host(static_cast<int>(i), k, a, b)) ++wrong;
  check(wrong == 0, fmt::format("spmmc_fma_loop with k={} over {} threads equals the host's fmaf chain ({} wrong)", k,
                                threads, wrong));

  // Timing: twice the FMAs take about twice as long.
  TimingOptions timing;
  timing.warmup = 3;
  timing.runs = 20;
  k = 1 << 16;
  const TimingStats once = time_kernel(*context, fma, {grid, 1, 1, block, 0}, args, timing);
  k = 1 << 17;
  timing.flush_l2 = true;
  const TimingStats twice = time_kernel(*context, fma, {grid, 1, 1, block, 0}, args, timing);
  check(once.runs == 20 && once.p20_ms <= once.median_ms && once.median_ms <= once.p80_ms && once.p20_ms > 0.0,
        fmt::format("k=65536: median {:.4f} ms, p20 {:.4f}, p80 {:.4f}", once.median_ms, once.p20_ms, once.p80_ms));
  check(twice.median_ms > 1.5 * once.median_ms,
        fmt::format("k=131072 (flushing L2): median {:.4f} ms, {:.2f}x k=65536 (> 1.5x wanted)", twice.median_ms,
                    twice.median_ms / once.median_ms));
  const TimingStats work = time_work(*context, [&] { out.fill_zero(); }, TimingOptions{2, 7, false});
  check(work.runs == 7 && work.median_ms > 0.0, fmt::format("time_work of a memset: median {:.4f} ms", work.median_ms));

  // Overlapped launches (programmatic dependent launch, Kernel::launch with overlap_previous): a
  // chain of kernels that each spin and wait for their predecessor only at the end runs in about
  // one kernel's time where the device overlaps them; everywhere each sees its predecessor done.
  {
    check(context->dependent_launch() == (d.cc_major >= 9),
          fmt::format("dependent launch {} on compute capability {}.{}", context->dependent_launch() ? "used" : "not used",
                      d.cc_major, d.cc_minor));
    const Kernel link = module.kernel("spmmc_chain_link");
    constexpr int kLinks = 4;
    long long ns = 200000;  // 200 us per kernel
    int index = 0;
    void* link_args[] = {&out_address, &index, &ns};
    const auto chain = [&](bool overlap) {
      for (index = 0; index < kLinks; ++index) link.launch({2, 1, 1, 128, 0}, link_args, overlap && index > 0);
    };
    // Whether every link ran and saw its predecessor's result (what the last run left in `out`).
    const auto ran_in_order = [&] {
      std::vector<float> seen(2 * kLinks);
      out.download(seen.data(), seen.size() * sizeof(float));
      bool ordered = true;
      for (int j = 0; j < kLinks; ++j)
        ordered = ordered && seen[2 * j] == static_cast<float>(j + 1) &&
                  (j == 0 || seen[2 * j + 1] == static_cast<float>(j));
      return ordered;
    };
    out.fill_zero();
    chain(true);
    context->synchronize();
    check(ran_in_order(),
          "an overlapped chain of 4 kernels ran, each seeing its predecessor's result after griddepcontrol.wait");
    const TimingOptions chain_timing{2, 9, false};
    const TimingStats serial = time_work(*context, [&] { chain(false); }, chain_timing, "serial chain");
    const TimingStats overlapped = time_work(*context, [&] { chain(true); }, chain_timing, "overlapped chain");
    if (context->dependent_launch()) {
      check(overlapped.median_ms < 0.6 * serial.median_ms && serial.median_ms > 0.7,
            fmt::format("4 x 200 us kernels: overlapped {:.3f} ms, serial {:.3f} ms ({:.2f}x; < 0.6x wanted)",
                        overlapped.median_ms, serial.median_ms, overlapped.median_ms / serial.median_ms));
    } else {
      check(overlapped.median_ms > 0.7 && serial.median_ms > 0.7,
            fmt::format("without dependent launch both chains are plain: {:.3f} ms and {:.3f} ms", overlapped.median_ms,
                        serial.median_ms));
    }

    // The same chain captured once into a CUDA graph (KernelGraph) and replayed: the link index
    // each kernel got was copied at capture (`index` is kLinks by the time of the replays), the
    // overlaps are programmatic edges (the replay takes about one kernel's time, like the
    // overlapped chain) and each replay computes the whole result again.
    check(context->graphs(), "the driver has stream capture and graph launch (GpuContext::graphs)");
    const KernelGraph graph = KernelGraph::capture(*context, [&] { chain(true); }, "chain of 4 links");
    for (int replay = 1; replay <= 2; ++replay) {
      out.fill_zero();
      graph.launch();
      context->synchronize();
      check(ran_in_order(), fmt::format("replay {} of the captured chain of 4 kernels ran, each seeing its predecessor's "
                                        "result after griddepcontrol.wait",
                                        replay));
    }
    const TimingStats replayed = time_work(*context, [&] { graph.launch(); }, chain_timing, "graph of the chain");
    if (context->dependent_launch()) {
      check(replayed.median_ms < 0.6 * serial.median_ms,
            fmt::format("4 x 200 us kernels replayed as a graph: {:.3f} ms, serial {:.3f} ms ({:.2f}x; < 0.6x wanted: "
                        "the overlaps were captured as programmatic edges)",
                        replayed.median_ms, serial.median_ms, replayed.median_ms / serial.median_ms));
    } else {
      check(replayed.median_ms > 0.7,
            fmt::format("without dependent launch the graph is serial: {:.3f} ms", replayed.median_ms));
    }

    // A capture whose enqueue throws ends the capture and rethrows; the stream then works again.
    std::string thrown;
    try {
      KernelGraph::capture(*context, [&] {
        index = 0;
        link.launch({2, 1, 1, 128, 0}, link_args);
        throw std::runtime_error("planted failure after one launch");
      }, "chain that throws");
    } catch (const std::runtime_error& e) {
      thrown = e.what();
    }
    check(thrown == "planted failure after one launch",
          "a capture whose enqueue throws rethrows its exception: " + thrown);
    const std::string after_capture = driver_error_of([&] {
      out.fill_zero();
      chain(true);
      context->synchronize();
    });
    check(after_capture.empty() && ran_in_order(),
          "after the failed capture the stream is out of capture mode: the chain runs on it again" +
              (after_capture.empty() ? std::string() : ": " + after_capture));

    const std::string overlapped_too_big = driver_error_of([&] { fma.launch({1, 1, 1, 2048, 0}, args, true); });
    const std::string call = context->dependent_launch() ? "cuLaunchKernelEx(spmmc_fma_loop" : "cuLaunchKernel(spmmc_fma_loop";
    check(overlapped_too_big.find(call) != std::string::npos && overlapped_too_big.find("block 2048") != std::string::npos &&
              overlapped_too_big.find("CUDA_ERROR_") != std::string::npos &&
              (overlapped_too_big.find("overlapping the previous kernel") != std::string::npos) == context->dependent_launch(),
          "an overlapped launch of 2048 threads per block raises DriverError naming the kernel: " + overlapped_too_big);
  }

  // Dynamic shared memory above 48 KiB: refused until allowed, then works; occupancy falls with it.
  const int64_t big = 64 * 1024;
  int words = static_cast<int>(big / 4);
  void* shared_args[] = {&out_address, &words};
  const std::string refused =
      driver_error_of([&] { shared.launch({1, 1, 1, block, static_cast<unsigned>(big)}, shared_args); });
  check(refused.find("spmmc_dynamic_shared") != std::string::npos,
        "64 KiB of dynamic shared memory is refused before allow_dynamic_shared: " + refused);
  const int64_t most = d.shared_memory_per_block_optin - shared.attributes().static_shared_bytes;
  shared.allow_dynamic_shared(most);
  shared.launch({1, 1, 1, block, static_cast<unsigned>(big)}, shared_args);
  out.download(got.data(), block * sizeof(float));
  wrong = 0;
  for (unsigned t = 0; t < block; ++t) {
    float s = 0.0f;
    for (int i = static_cast<int>(t); i < words; i += static_cast<int>(block)) s += static_cast<float>(words - 1 - i);
    if (got[t] != s) ++wrong;
  }
  check(wrong == 0, fmt::format("spmmc_dynamic_shared with 64 KiB after allow_dynamic_shared({}) is right", most));
  std::vector<int> occupancy;
  std::string trail;
  for (int64_t bytes : {int64_t{0}, int64_t{16} << 10, int64_t{48} << 10, big, most}) {
    occupancy.push_back(shared.active_blocks_per_sm(static_cast<int>(block), bytes));
    trail += fmt::format(" {}B:{}", bytes, occupancy.back());
  }
  bool non_increasing = true;
  for (size_t i = 1; i < occupancy.size(); ++i) non_increasing = non_increasing && occupancy[i] <= occupancy[i - 1];
  check(non_increasing && occupancy.back() >= 1 && occupancy.back() < occupancy.front() && occupancy[3] < occupancy[1],
        "active blocks per SM fall as dynamic shared memory grows:" + trail);

  // Errors name the kernel, the module and the shape.
  const std::string too_big = driver_error_of([&] { fma.launch({1, 1, 1, 2048, 0}, args); });
  check(too_big.find("cuLaunchKernel(spmmc_fma_loop") != std::string::npos &&
            too_big.find("block 2048") != std::string::npos && too_big.find("CUDA_ERROR_") != std::string::npos,
        "a launch of 2048 threads per block raises DriverError: " + too_big);
  const std::string missing = driver_error_of([&] { module.kernel("no_such_kernel"); });
  check(missing.find("no_such_kernel") != std::string::npos && missing.find("runtime_gpu_check.cu") != std::string::npos,
        "an absent kernel raises DriverError: " + missing);
  const std::string garbage = driver_error_of([&] { Module bad(*context, std::string(4096, 'x'), "garbage.cubin"); });
  check(garbage.find("cuModuleLoadData(garbage.cubin)") != std::string::npos,
        "a garbage image raises DriverError: " + garbage);
  context->synchronize();
  check(true, "the context is still usable after the refused launches");
}

}  // namespace
}  // namespace spmmc

int main() { return spmmc::gpu_check::run("spmmc-runtime-gpu-check", spmmc::run_checks); }
