// A's arrays on the host (spmmc compile --arrays host, docs/emitted-code.md) on a GPU: the same matrix
// emitted twice, with its arrays as device constants (device_arrays) and as host bytes copied at the
// first call (host_arrays), both built into this program (tests/gpu/CMakeLists.txt). Checks, bit for
// bit against the constant form: the first call and later ones at several n; after cudaDeviceReset
// (the next call copies again); a first call while the caller's own stream is being captured (the
// copy stays out of the graph, the graph computes C); first calls from several threads at once; the
// other devices where there are several. PASS/FAIL lines, exit 0/1, or 69 where no GPU is usable.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device_arrays.h"
#include "host_arrays.h"

namespace {

int passes = 0, failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
  (ok ? passes : failures)++;
}

bool ok(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) check(false, what + ": " + cudaGetErrorString(status));
  return status == cudaSuccess;
}

using Entry = cudaError_t (*)(const float*, float*, int64_t, cudaStream_t);

// C = A B by `entry` on `stream` for the seeded B of n columns, copied back; empty where a call failed.
std::vector<float> run(Entry entry, int64_t n, cudaStream_t stream = nullptr) {
  const spmmc_kernel_info* info = host_arrays_info();
  std::vector<float> b(static_cast<size_t>(info->k * n)), c(static_cast<size_t>(info->m * n));
  std::mt19937 rng(static_cast<unsigned>(n));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (float& x : b) x = value(rng);
  float *db = nullptr, *dc = nullptr;
  bool fine = ok(cudaMalloc(&db, b.size() * sizeof(float)), "cudaMalloc B") &&
              ok(cudaMalloc(&dc, c.size() * sizeof(float)), "cudaMalloc C") &&
              ok(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice), "copy B") &&
              ok(cudaMemset(dc, 0xFF, c.size() * sizeof(float)), "fill C with NaN") && ok(entry(db, dc, n, stream), "the call") &&
              ok(cudaStreamSynchronize(stream), "its kernels") &&
              ok(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy C");
  cudaFree(db);
  cudaFree(dc);
  return fine ? c : std::vector<float>();
}

bool same(const std::vector<float>& x, const std::vector<float>& y) {
  return !x.empty() && x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("host-arrays-gpu-check: skipped: no CUDA GPU available\n");
    return 69;
  }
  check(std::string(host_arrays_info()->name) == "host_arrays", "the host-array file's info");
  const std::vector<int64_t> sizes = {1, 37, 128};
  std::vector<std::vector<float>> expected;
  for (const int64_t n : sizes) {
    expected.push_back(run(device_arrays, n));
    check(same(run(host_arrays, n), expected.back()), "n = " + std::to_string(n) + ": the same bits as the constant form");
  }
  // A reset device: the next call copies again.
  ok(cudaDeviceReset(), "cudaDeviceReset");
  check(same(run(host_arrays, 37), expected[1]), "after cudaDeviceReset: the same bits");
  // A first call while the caller's stream is being captured (global mode): the graph computes C.
  ok(cudaDeviceReset(), "cudaDeviceReset");
  {
    const spmmc_kernel_info* info = host_arrays_info();
    const int64_t n = 128;
    std::vector<float> b(static_cast<size_t>(info->k * n)), c(static_cast<size_t>(info->m * n));
    std::mt19937 rng(static_cast<unsigned>(n));
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& x : b) x = value(rng);
    float *db = nullptr, *dc = nullptr;
    cudaStream_t stream = nullptr;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    const bool fine = ok(cudaMalloc(&db, b.size() * sizeof(float)), "cudaMalloc B") &&
                      ok(cudaMalloc(&dc, c.size() * sizeof(float)), "cudaMalloc C") &&
                      ok(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice), "copy B") &&
                      ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "a stream") &&
                      ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "begin capture") &&
                      ok(host_arrays(db, dc, n, stream), "the first call, captured") &&
                      ok(cudaStreamEndCapture(stream, &graph), "end capture") &&
                      ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate") && ok(cudaGraphLaunch(exec, stream), "launch") &&
                      ok(cudaStreamSynchronize(stream), "the graph") &&
                      ok(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy C");
    check(fine && same(c, expected[2]), "a first call under stream capture: the graph's C has the same bits");
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (stream) cudaStreamDestroy(stream);
    cudaFree(db);
    cudaFree(dc);
  }
  // First calls from several threads at once, each on a stream of its own.
  ok(cudaDeviceReset(), "cudaDeviceReset");
  {
    constexpr int kThreads = 8;
    std::vector<std::vector<float>> results(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&results, t] {
        cudaStream_t stream = nullptr;
        if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return;
        results[static_cast<size_t>(t)] = run(host_arrays, 37, stream);
        cudaStreamDestroy(stream);
      });
    for (std::thread& t : threads) t.join();
    bool all = true;
    for (const auto& r : results) all = all && same(r, expected[1]);
    check(all, std::to_string(kThreads) + " threads' first calls at once: the same bits");
  }
  // Every other device: its own copy.
  for (int d = 1; d < devices; ++d) {
    ok(cudaSetDevice(d), "cudaSetDevice");
    check(same(run(host_arrays, 128), expected[2]), "device " + std::to_string(d) + ": the same bits");
  }
  std::printf("host-arrays-gpu-check: %s: %d passed, %d failed\n", failures == 0 ? "PASS" : "FAIL", passes, failures);
  return failures == 0 ? 0 : 1;
}
