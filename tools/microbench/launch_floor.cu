// launch_floor: the smallest time spmmc-gpu-bench can report for any kernel (issue 27's launch-latency
// floor), measured the way it measures: L2 flushed by a memset of 2x its size and C filled before every
// run, outside the timed region; each run between two CUDA events on one stream; median of RUNS after
// 10 warm-up runs. Times an empty kernel of 1 block and of one block per SM (32 and 128 threads), the
// same empty kernel launched as a one-node CUDA graph, and a kernel whose blocks each read one float
// (the first loads after the flush come from memory). One Markdown table on stdout.
// Build and run: nvcc -O3 -arch=sm_90 -o lf tools/microbench/launch_floor.cu && ./lf [RUNS]
// Exit: 0 measured; 69 no GPU; 70 a CUDA call failed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK_CUDA(call)                                                                       \
  do {                                                                                         \
    const cudaError_t e = (call);                                                              \
    if (e != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "launch_floor: %s: %s\n", #call, cudaGetErrorString(e));            \
      std::exit(70);                                                                           \
    }                                                                                          \
  } while (0)

__global__ void empty_kernel() {}

__global__ void one_load(const float* __restrict__ in, float* __restrict__ out) {
  if (threadIdx.x == 0) out[blockIdx.x] = __ldg(&in[blockIdx.x * 1024]);
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 101;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "launch_floor: no GPU\n");
    return 69;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const size_t flush_bytes = 2 * static_cast<size_t>(prop.l2CacheSize);
  void *flush = nullptr, *c = nullptr;
  float *in = nullptr, *out = nullptr;
  CHECK_CUDA(cudaMalloc(&flush, flush_bytes));
  CHECK_CUDA(cudaMalloc(&c, 1 << 20));
  CHECK_CUDA(cudaMalloc(&in, sizeof(float) * 1024 * prop.multiProcessorCount));
  CHECK_CUDA(cudaMalloc(&out, sizeof(float) * prop.multiProcessorCount));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  int round = 0;
  const auto median_us = [&](const std::function<void()>& launch) {
    std::vector<float> ms;
    for (int r = -10; r < runs; ++r) {
      CHECK_CUDA(cudaMemsetAsync(flush, ++round & 0x7f, flush_bytes, stream));
      CHECK_CUDA(cudaMemsetAsync(c, 0xff, 1 << 20, stream));
      CHECK_CUDA(cudaEventRecord(start, stream));
      launch();
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float t = 0;
      CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
      if (r >= 0) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return 1000.0 * ms[ms.size() / 2];
  };
  const int sms = prop.multiProcessorCount;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  empty_kernel<<<sms, 128, 0, stream>>>();
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  std::printf("### launch floor (%s, %d SMs; median of %d runs, L2 flushed before each)\n\n", prop.name, sms, runs);
  std::printf("| what is timed | us |\n|---|--:|\n");
  std::printf("| nothing (two events) | %.2f |\n", median_us([] {}));
  std::printf("| empty kernel, 1 block of 32 threads | %.2f |\n", median_us([&] { empty_kernel<<<1, 32, 0, stream>>>(); }));
  std::printf("| empty kernel, %d blocks of 128 threads | %.2f |\n", sms,
              median_us([&] { empty_kernel<<<sms, 128, 0, stream>>>(); }));
  std::printf("| the same as a one-node CUDA graph | %.2f |\n", median_us([&] { CHECK_CUDA(cudaGraphLaunch(exec, stream)); }));
  std::printf("| %d blocks, one load from memory each | %.2f |\n", sms,
              median_us([&] { one_load<<<sms, 128, 0, stream>>>(in, out); }));
  CHECK_CUDA(cudaGetLastError());
  return 0;
}
