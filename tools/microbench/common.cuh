// Shared helpers of the budget microbenchmarks (tools/microbench/README.md): checked CUDA calls,
// the no-GPU exit, command-line options, event timing (median of N runs after warm-up), the SM
// clock under load, and the results file the budget section of scripts/budget-microbench.sh reads.
//
// Exit codes of every benchmark: 0 ran; 64 usage; 69 no CUDA GPU; 70 a CUDA call failed.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define MB_CHECK(call) ::mb::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: the launch error now, the execution error at the next synchronisation.
#define MB_CHECK_LAUNCH() MB_CHECK(cudaGetLastError())

namespace mb {

constexpr int kExitUsage = 64, kExitNoGpu = 69, kExitCuda = 70;

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, cudaGetErrorName(status),
               cudaGetErrorString(status));
  std::exit(kExitCuda);
}

// ---- options ------------------------------------------------------------------------------------
struct Options {
  int runs = 21;                  // timed runs; the median is reported
  int warmup = 3;                 // untimed runs first
  std::string results;            // "key value" lines are appended here (budget-microbench.sh reads them)
  std::vector<std::string> rest;  // options the benchmark parses itself
};

inline Options parse_options(int argc, char** argv, const char* usage_extra = "") {
  Options o;
  auto usage = [&] {
    std::fprintf(stderr, "usage: %s [--runs N (>= 1, default 21)] [--warmup N (default 3)] [--results FILE]%s\n",
                 argv[0], usage_extra);
    std::exit(kExitUsage);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--runs" && has_value)
      o.runs = std::atoi(argv[++i]);
    else if (arg == "--warmup" && has_value)
      o.warmup = std::atoi(argv[++i]);
    else if (arg == "--results" && has_value)
      o.results = argv[++i];
    else if (arg == "-h" || arg == "--help")
      usage();
    else
      o.rest.push_back(arg);
  }
  if (o.runs < 1 || o.warmup < 0) usage();
  return o;
}

// ---- device ---------------------------------------------------------------------------------
struct Device {
  cudaDeviceProp prop{};
  int sms = 0;
  int max_clock_mhz = 0;  // the driver's "peak clock"; the measured clock is what we divide by
  int l2_bytes = 0;
  int smem_per_sm = 0;
  int regs_per_sm = 0;
};

// Exits 69 with a message when there is no usable CUDA GPU (no driver, no device).
inline Device require_gpu(const char* program) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::fprintf(stderr, "%s: no CUDA GPU (%s); nothing was measured\n", program,
                 status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    std::exit(kExitNoGpu);
  }
  Device d;
  MB_CHECK(cudaSetDevice(0));
  MB_CHECK(cudaGetDeviceProperties(&d.prop, 0));
  d.sms = d.prop.multiProcessorCount;
  int khz = 0;
  MB_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  d.max_clock_mhz = khz / 1000;
  MB_CHECK(cudaDeviceGetAttribute(&d.l2_bytes, cudaDevAttrL2CacheSize, 0));
  MB_CHECK(cudaDeviceGetAttribute(&d.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  MB_CHECK(cudaDeviceGetAttribute(&d.regs_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor, 0));
  if (d.prop.major != 9)
    std::fprintf(stderr, "%s: note: built for sm_90, running on sm_%d%d (%s)\n", program, d.prop.major, d.prop.minor,
                 d.prop.name);
  return d;
}

// ---- timing ---------------------------------------------------------------------------------
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Median milliseconds of `launch()` over o.runs runs, each between two CUDA events on the
// default stream, after o.warmup untimed runs. `launch` enqueues kernels only (no host sync);
// `before_run(i)` enqueues what must precede timed run i outside its events (an L2 flush).
template <class Launch, class BeforeRun>
double median_ms(const Options& o, Launch&& launch, BeforeRun&& before_run) {
  for (int i = 0; i < o.warmup; ++i) {
    launch();
    MB_CHECK_LAUNCH();
  }
  MB_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  MB_CHECK(cudaEventCreate(&start));
  MB_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int i = 0; i < o.runs; ++i) {
    before_run(i);
    MB_CHECK(cudaEventRecord(start));
    launch();
    MB_CHECK_LAUNCH();
    MB_CHECK(cudaEventRecord(stop));
    MB_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    MB_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  MB_CHECK(cudaEventDestroy(start));
  MB_CHECK(cudaEventDestroy(stop));
  return median(ms);
}

template <class Launch>
double median_ms(const Options& o, Launch&& launch) {
  return median_ms(o, launch, [](int) {});
}

// ---- SM clock under load ------------------------------------------------------------------------
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// Every block keeps its SM busy with dependent-free FFMAs for ~20 ms and thread 0 records the
// SM cycles (clock64) and nanoseconds (globaltimer) it took: their ratio is the SM clock while
// the chip is under a full FFMA load (which may sit below the driver's peak clock).
__global__ void __launch_bounds__(1024, 2)
    clock_probe_kernel(int iterations, float seed, float* sink, double* cycles_per_ns) {
  const long long c0 = clock64();
  const unsigned long long t0 = global_ns();
  float a[8];
  for (int k = 0; k < 8; ++k) a[k] = seed + threadIdx.x + k;
  for (int i = 0; i < iterations; ++i)
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = fmaf(a[k], 0.999f, 0.5f);
  float s = 0;
  for (int k = 0; k < 8; ++k) s += a[k];
  if (s == 1234.5f) *sink = s;  // observable, never true in practice
  __syncthreads();
  const long long c1 = clock64();
  const unsigned long long t1 = global_ns();
  if (threadIdx.x == 0) cycles_per_ns[blockIdx.x] = double(c1 - c0) / double(t1 - t0 ? t1 - t0 : 1);
}

// The SM clock in MHz under a full FFMA load: median over blocks of the 3rd of three runs.
inline double measure_sm_clock_mhz(const Device& d) {
  const int blocks = d.sms * 2, threads = 1024;  // full occupancy on sm_90: 2048 threads per SM
  float* sink = nullptr;
  double* ratio = nullptr;
  MB_CHECK(cudaMalloc(&sink, sizeof(float)));
  MB_CHECK(cudaMalloc(&ratio, blocks * sizeof(double)));
  // 8 FFMAs per iteration per thread, 128 FFMA lanes per clock per SM: ~2^18 iterations ~ 20 ms.
  for (int run = 0; run < 3; ++run) {
    clock_probe_kernel<<<blocks, threads>>>(1 << 18, 1.0f, sink, ratio);
    MB_CHECK_LAUNCH();
    MB_CHECK(cudaDeviceSynchronize());
  }
  std::vector<double> host(blocks);
  MB_CHECK(cudaMemcpy(host.data(), ratio, blocks * sizeof(double), cudaMemcpyDeviceToHost));
  MB_CHECK(cudaFree(sink));
  MB_CHECK(cudaFree(ratio));
  return median(host) * 1000.0;
}

// ---- output ---------------------------------------------------------------------------------
// Appends "key value" to the results file (when one was given): the budget section's input.
inline void record(const Options& o, const std::string& key, double value) {
  if (o.results.empty()) return;
  FILE* f = std::fopen(o.results.c_str(), "a");
  if (!f) {
    std::fprintf(stderr, "cannot append to %s\n", o.results.c_str());
    std::exit(73);
  }
  std::fprintf(f, "%s %.6g\n", key.c_str(), value);
  std::fclose(f);
}

inline std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return buffer;
}

inline void print_device(const Device& d, double clock_mhz, const Options& o) {
  std::printf(
      "_%s: %d SMs, %d KiB L2, %d KiB shared memory per SM; SM clock %.0f MHz measured under "
      "FFMA load (driver peak %d MHz); median of %d runs after %d warm-up runs._\n\n",
      d.prop.name, d.sms, d.l2_bytes / 1024, d.smem_per_sm / 1024, clock_mhz, d.max_clock_mhz, o.runs, o.warmup);
  record(o, "device.sms", d.sms);
  record(o, "device.clock_mhz", clock_mhz);
  record(o, "device.regs_per_sm", d.regs_per_sm);
  record(o, "device.smem_per_sm", d.smem_per_sm);
}

}  // namespace mb
