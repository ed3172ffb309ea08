// Launch-chain microbenchmark (tools/microbench/README.md, study 6): what it costs to split one
// layer's work into K kernels launched back to back on one stream, the way an emitted file with
// several kernels runs (codegen/templates/kernel.cu). Every kernel has `blocks` blocks of 1024
// threads that each spin for `work_us` microseconds; the K kernels together are one wave or less,
// so with perfect overlap the whole chain takes one kernel's time.
//
// Launch modes:
//   single     one kernel with all K x blocks blocks (the reference)
//   serial     K plain launches (cudaLaunchKernel): each waits for the previous one
//   pdl-wait   K launches, all after the first with programmatic stream serialization; each kernel
//              triggers its dependents at once and waits for its predecessor before it ends
//              (griddepcontrol), as the emitted kernels do
//   pdl        the same without the trailing wait (not safe for what the stream runs next: only
//              to see what the wait costs)
//   streams    K plain launches spread over 8 streams forked from and joined to the main one by
//              events
//   graph      the pdl-wait chain captured once into a CUDA graph (stream capture keeps the
//              programmatic edges), then one cudaGraphLaunch per run: what an entry point that
//              builds the graph once would pay per call
//   graph-set  the same, plus cudaGraphExecKernelNodeSetParams on every kernel node before each
//              launch (an entry point called with new B and C pointers must update them)
//   graph-serial  the serial chain captured into a graph (plain edges: each kernel waits for the
//              previous one to end)
//   graph-parallel  K kernel nodes without edges between them (built with cudaGraphAddKernelNode):
//              kernels that write disjoint outputs need no order, and the graph's completion
//              still orders whatever the stream runs next behind all of them
// Reported per mode and K: the median time between events around the whole chain (GPU), and the
// host time the launch calls took (CPU) divided by K, over `runs` runs after warm-up (a graph is
// captured and instantiated during the warm-up runs).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    const cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

__global__ void __launch_bounds__(1024, 1) spin(long long cycles, int wait_for_previous, float* sink) {
  asm volatile("griddepcontrol.launch_dependents;" : : : "memory");
  const long long start = clock64();
  float x = threadIdx.x;
  while (clock64() - start < cycles) x = x * 0.999f + 1.0f;
  if (x == -1.0f) sink[threadIdx.x] = x;  // never true: keeps the loop
  if (wait_for_previous) asm volatile("griddepcontrol.wait;" : : : "memory");
}

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 4;
  const double work_us = argc > 2 ? std::atof(argv[2]) : 20.0;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 21;
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const long long cycles = static_cast<long long>(work_us * clock_khz / 1000.0);
  float* sink = nullptr;
  CHECK(cudaMalloc(&sink, 4096));
  cudaStream_t main_stream;
  CHECK(cudaStreamCreateWithFlags(&main_stream, cudaStreamNonBlocking));
  std::vector<cudaStream_t> side(8);
  for (auto& s : side) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> joins(8);
  for (auto& e : joins) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaEvent_t fork, t0, t1;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));

  const auto launch_ex = [&](int grid, cudaStream_t s, bool overlap, int wait) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(1024);
    config.stream = s;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = overlap ? 1 : 0;
    CHECK(cudaLaunchKernelEx(&config, spin, cycles, wait, sink));
  };
  // The graphs of the graph modes, one per (mode, K), captured on a side stream at first use.
  struct Captured {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    std::vector<cudaGraphNode_t> kernels;
  };
  std::vector<std::pair<std::string, Captured>> graphs;
  cudaStream_t capture_stream;
  CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
  const auto graph_for = [&](const std::string& mode, int k) -> Captured& {
    const std::string key = mode + "/" + std::to_string(k);
    for (auto& g : graphs)
      if (g.first == key) return g.second;
    Captured c;
    if (mode == "graph-parallel") {
      CHECK(cudaGraphCreate(&c.graph, 0));
      int wait = 0;
      void* args[] = {const_cast<long long*>(&cycles), &wait, &sink};
      cudaKernelNodeParams params = {};
      params.func = reinterpret_cast<void*>(spin);
      params.gridDim = dim3(blocks);
      params.blockDim = dim3(1024);
      params.kernelParams = args;
      for (int j = 0; j < k; ++j) {
        cudaGraphNode_t node;
        CHECK(cudaGraphAddKernelNode(&node, c.graph, nullptr, 0, &params));
        c.kernels.push_back(node);
      }
      CHECK(cudaGraphInstantiate(&c.exec, c.graph, 0));
      graphs.emplace_back(key, c);
      return graphs.back().second;
    }
    CHECK(cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < k; ++j) launch_ex(blocks, capture_stream, mode != "graph-serial" && j > 0, mode != "graph-serial");
    CHECK(cudaStreamEndCapture(capture_stream, &c.graph));
    CHECK(cudaGraphInstantiate(&c.exec, c.graph, 0));
    size_t count = 0;
    CHECK(cudaGraphGetNodes(c.graph, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CHECK(cudaGraphGetNodes(c.graph, nodes.data(), &count));
    for (const cudaGraphNode_t node : nodes) {
      cudaGraphNodeType type;
      CHECK(cudaGraphNodeGetType(node, &type));
      if (type == cudaGraphNodeTypeKernel) c.kernels.push_back(node);
    }
    graphs.emplace_back(key, c);
    return graphs.back().second;
  };
  const auto chain = [&](const std::string& mode, int k) {
    if (mode.rfind("graph", 0) == 0) {
      Captured& g = graph_for(mode == "graph-set" ? "graph" : mode, k);
      if (mode == "graph-set")
        for (const cudaGraphNode_t node : g.kernels) {
          cudaKernelNodeParams params;
          CHECK(cudaGraphKernelNodeGetParams(node, &params));
          CHECK(cudaGraphExecKernelNodeSetParams(g.exec, node, &params));
        }
      CHECK(cudaGraphLaunch(g.exec, main_stream));
    } else if (mode == "single") {
      launch_ex(k * blocks, main_stream, false, 0);
    } else if (mode == "serial") {
      for (int j = 0; j < k; ++j) launch_ex(blocks, main_stream, false, 0);
    } else if (mode == "pdl-wait" || mode == "pdl") {
      for (int j = 0; j < k; ++j) launch_ex(blocks, main_stream, j > 0, mode == "pdl-wait" ? 1 : 0);
    } else {  // streams
      CHECK(cudaEventRecord(fork, main_stream));
      const int used = std::min<int>(k, static_cast<int>(side.size()));
      for (int i = 0; i < used; ++i) CHECK(cudaStreamWaitEvent(side[i], fork, 0));
      for (int j = 0; j < k; ++j) launch_ex(blocks, side[j % used], false, 0);
      for (int i = 0; i < used; ++i) {
        CHECK(cudaEventRecord(joins[i], side[i]));
        CHECK(cudaStreamWaitEvent(main_stream, joins[i], 0));
      }
    }
  };

  std::printf("### launch chain: K kernels of %d blocks x 1024 threads, %.0f us of work each (median of %d)\n\n", blocks,
              work_us, runs);
  std::printf("| mode | K | GPU us | x single | host us per launch |\n|---|--:|--:|--:|--:|\n");
  for (const int k : {1, 2, 4, 8, 16, 32}) {
    double single_us = 0;
    for (const std::string mode : {"single", "serial", "pdl-wait", "pdl", "streams", "graph", "graph-set", "graph-serial", "graph-parallel"}) {
      std::vector<double> gpu, host;
      for (int r = 0; r < runs + 3; ++r) {
        CHECK(cudaEventRecord(t0, main_stream));
        const auto h0 = std::chrono::steady_clock::now();
        chain(mode, k);
        const auto h1 = std::chrono::steady_clock::now();
        CHECK(cudaEventRecord(t1, main_stream));
        CHECK(cudaEventSynchronize(t1));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, t0, t1));
        if (r < 3) continue;
        gpu.push_back(ms * 1000.0);
        host.push_back(std::chrono::duration<double, std::micro>(h1 - h0).count() / (mode == "single" ? 1 : k));
      }
      std::sort(gpu.begin(), gpu.end());
      std::sort(host.begin(), host.end());
      const double g = gpu[gpu.size() / 2];
      if (mode == "single") single_us = g;
      std::printf("| %s | %d | %.1f | %.2f | %.2f |\n", mode.c_str(), k, g, g / single_us, host[host.size() / 2]);
    }
  }
  for (auto& g : graphs) {
    CHECK(cudaGraphExecDestroy(g.second.exec));
    CHECK(cudaGraphDestroy(g.second.graph));
  }
  CHECK(cudaGetLastError());
  return 0;
}
