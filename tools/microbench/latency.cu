// Study 5 of the budget microbenchmarks: load-to-use latency of shared memory, L1, L2 and HBM, by
// pointer chasing: one thread follows a random cycle of pointers (each load's address is the
// previous load's value, so loads cannot overlap) and clock64 counts SM cycles per step.
//
//  shared: a random cycle over 1024 words in shared memory (ld.shared);
//  L1:     a random cycle over 64 lines (8 KiB) of global memory, warmed, ld.global.nc (__ldg);
//  L2:     a random cycle over 32768 lines (4 MiB), warmed, ld.global.cg (L1 bypassed);
//  HBM:    random lines over 512 MiB (> 10x L2; every step a line not touched before in this
//          process, each run continues where the last stopped), ld.global.cg; once with lines
//          random over the whole buffer (TLB misses included) and once random within 2 MiB pages
//          taken in order (TLB hits: the DRAM latency itself).
// Reported: median over runs of cycles per step (and ns at the measured SM clock). Each step is one
// dependent load; pointers are absolute addresses, so no address arithmetic sits in the chain.
#include <numeric>
#include <random>

#include "common.cuh"

namespace {

constexpr size_t kLine = 128;  // bytes between chased pointers: one L1/L2 line per step

enum class Space { kNc, kCg };  // ld.global.nc (__ldg: L1-cached, as B is loaded) or .cg (L2 only)

template <Space S>
__device__ __forceinline__ unsigned long long load_pointer(unsigned long long p) {
  unsigned long long q;
  if constexpr (S == Space::kNc)
    asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
  else
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
  return q;
}

struct ChaseResult {
  long long cycles;
  unsigned long long last;  // where the chase stopped: the next run starts there
};

// warm_steps untimed steps, then steps timed ones; one thread.
template <Space S>
__global__ void chase_global(unsigned long long start, int warm_steps, int steps, ChaseResult* result) {
  unsigned long long p = start;
  for (int i = 0; i < warm_steps; ++i) p = load_pointer<S>(p);
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) p = load_pointer<S>(p);
  const long long t1 = clock64();  // may not wait for the last load: 1 step in thousands
  result->cycles = t1 - t0;
  result->last = p;
}

constexpr int kSharedWords = 1024;

// `order` is a random cycle over kSharedWords words: order[i] is the word after word i.
__global__ void chase_shared(const unsigned* __restrict__ order, int steps, ChaseResult* result) {
  __shared__ unsigned words[kSharedWords];
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(words));
  for (int i = 0; i < kSharedWords; ++i) words[i] = base + 4 * order[i];  // shared addresses
  __syncthreads();
  unsigned p = base;
  for (int i = 0; i < kSharedWords; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
  const long long t0 = clock64();
  for (int i = 0; i < steps; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
  const long long t1 = clock64();
  result->cycles = t1 - t0;
  result->last = p;
}

// A random cyclic permutation (Sattolo): next[i] is the element after i, one cycle through all.
std::vector<uint32_t> random_cycle(size_t n, uint64_t seed) {
  std::vector<uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::mt19937_64 rng(seed);
  for (size_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  std::vector<uint32_t> next(n);  // perm as a cycle: perm[k] -> perm[k+1]
  for (size_t k = 0; k < n; ++k) next[perm[k]] = perm[(k + 1) % n];
  return next;
}

// A cycle through n lines that takes the lines of each group of `group` lines in a random order
// and the groups in address order (group = n: fully random).
std::vector<uint32_t> grouped_cycle(size_t n, size_t group, uint64_t seed) {
  if (group >= n) return random_cycle(n, seed);
  std::vector<uint32_t> order(n);
  std::mt19937_64 rng(seed);
  for (size_t g = 0; g < n; g += group) {
    std::iota(order.begin() + g, order.begin() + g + group, uint32_t(g));
    std::shuffle(order.begin() + g, order.begin() + g + group, rng);
  }
  std::vector<uint32_t> next(n);
  for (size_t k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
  return next;
}

// Writes line i of `buffer` := the address of line next[i] (a kernel scatters them on the device).
__global__ void link_lines(char* buffer, const uint32_t* next, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    *reinterpret_cast<unsigned long long*>(buffer + i * kLine) =
        reinterpret_cast<unsigned long long>(buffer + size_t(next[i]) * kLine);
}

void link(char* buffer, const std::vector<uint32_t>& next) {
  uint32_t* d_next = nullptr;
  MB_CHECK(cudaMalloc(&d_next, next.size() * sizeof(uint32_t)));
  MB_CHECK(cudaMemcpy(d_next, next.data(), next.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
  link_lines<<<1024, 256>>>(buffer, d_next, next.size());
  MB_CHECK_LAUNCH();
  MB_CHECK(cudaDeviceSynchronize());
  MB_CHECK(cudaFree(d_next));
}

// Evicts the chased lines from L2 (link_lines just wrote the last tens of MiB of them): reads a
// scratch buffer of twice the L2 size (clean lines, nothing to write back later).
__global__ void read_all(const float4* p, size_t n, float* sink) {
  float4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float4 v = __ldcg(p + i);
    acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
  }
  if (acc.x + acc.y + acc.z + acc.w == 1234.5f) *sink = acc.x;  // observable, never true in practice
}

void flush_l2(const mb::Device& d) {
  const size_t bytes = size_t(2) * d.l2_bytes;
  float4* scratch = nullptr;
  float* sink = nullptr;
  MB_CHECK(cudaMalloc(&scratch, bytes));
  MB_CHECK(cudaMalloc(&sink, sizeof(float)));
  MB_CHECK(cudaMemset(scratch, 0, bytes));
  for (int pass = 0; pass < 2; ++pass) {  // the second pass reads clean lines: the memset's are written back
    read_all<<<d.sms * 8, 256>>>(scratch, bytes / sizeof(float4), sink);
    MB_CHECK_LAUNCH();
  }
  MB_CHECK(cudaDeviceSynchronize());
  MB_CHECK(cudaFree(scratch));
  MB_CHECK(cudaFree(sink));
}

struct Latency {
  double cycles;
};

// Median cycles per step over o.runs runs after o.warmup; each run continues the chase where the
// previous one stopped (so HBM runs always meet lines not yet touched).
template <class Launch>
Latency median_cycles(const mb::Options& o, ChaseResult* d_result, unsigned long long start, int steps,
                      Launch&& launch) {
  std::vector<double> per_step;
  unsigned long long p = start;
  for (int i = 0; i < o.warmup + o.runs; ++i) {
    launch(p);
    MB_CHECK_LAUNCH();
    ChaseResult r{};
    MB_CHECK(cudaMemcpy(&r, d_result, sizeof r, cudaMemcpyDeviceToHost));
    p = r.last;
    if (i >= o.warmup) per_step.push_back(double(r.cycles) / steps);
  }
  return {mb::median(per_step)};
}

void print_latency(const mb::Options& o, const char* label, const char* key, Latency l, double clock_mhz) {
  std::printf("| %s | %.0f | %.0f |\n", label, l.cycles, l.cycles / clock_mhz * 1e3);
  std::fflush(stdout);
  mb::record(o, mb::format("lat.%s.cycles", key), l.cycles);
}

}  // namespace

int main(int argc, char** argv) {
  const mb::Options o = mb::parse_options(argc, argv);
  if (!o.rest.empty()) {
    std::fprintf(stderr, "latency: unknown option %s\n", o.rest[0].c_str());
    return mb::kExitUsage;
  }
  const mb::Device d = mb::require_gpu("latency");
  const double clock_mhz = mb::measure_sm_clock_mhz(d);
  std::printf("## Study 5: load-to-use latency (pointer chase, one thread)\n\n");
  mb::print_device(d, clock_mhz, o);

  const size_t hbm_bytes = size_t(512) << 20, hbm_lines = hbm_bytes / kLine;
  char* buffer = nullptr;
  ChaseResult* d_result = nullptr;
  MB_CHECK(cudaMalloc(&buffer, hbm_bytes));
  MB_CHECK(cudaMalloc(&d_result, sizeof(ChaseResult)));
  const auto start = reinterpret_cast<unsigned long long>(buffer);

  std::printf("| level | cycles | ns |\n|---|---:|---:|\n");
  {  // shared memory
    const std::vector<uint32_t> order = random_cycle(kSharedWords, 11);
    unsigned* d_order = nullptr;
    MB_CHECK(cudaMalloc(&d_order, kSharedWords * sizeof(unsigned)));
    MB_CHECK(cudaMemcpy(d_order, order.data(), kSharedWords * sizeof(unsigned), cudaMemcpyHostToDevice));
    const int steps = 4096;
    print_latency(o, "shared memory (ld.shared)", "smem",
                  median_cycles(o, d_result, 0, steps,
                                [&](unsigned long long) { chase_shared<<<1, 1>>>(d_order, steps, d_result); }),
                  clock_mhz);
    MB_CHECK(cudaFree(d_order));
  }
  {  // L1: 64 lines, warmed by two laps
    link(buffer, random_cycle(64, 12));
    const int steps = 4096;
    print_latency(
        o, "L1 hit (8 KiB, ld.global.nc = __ldg)", "l1",
        median_cycles(o, d_result, start, steps,
                      [&](unsigned long long p) { chase_global<Space::kNc><<<1, 1>>>(p, 128, steps, d_result); }),
        clock_mhz);
  }
  {  // L2: 4 MiB, warmed by one lap
    const int lines = 32768, steps = 8192;
    link(buffer, random_cycle(lines, 13));
    print_latency(
        o, "L2 hit (4 MiB, ld.global.cg)", "l2",
        median_cycles(o, d_result, start, steps,
                      [&](unsigned long long p) { chase_global<Space::kCg><<<1, 1>>>(p, lines, steps, d_result); }),
        clock_mhz);
  }
  const int hbm_steps = 4096;  // ~3 ms per run; runs x steps lines << 512 MiB, all new
  link(buffer, grouped_cycle(hbm_lines, (size_t(2) << 20) / kLine, 14));
  flush_l2(d);
  print_latency(
      o, "HBM, random lines within 2 MiB pages (TLB hits)", "hbm",
      median_cycles(o, d_result, start, hbm_steps,
                    [&](unsigned long long p) { chase_global<Space::kCg><<<1, 1>>>(p, 0, hbm_steps, d_result); }),
      clock_mhz);
  link(buffer, random_cycle(hbm_lines, 15));
  flush_l2(d);
  print_latency(
      o, "HBM, random lines over 512 MiB (TLB misses too)", "hbm_tlb",
      median_cycles(o, d_result, start, hbm_steps,
                    [&](unsigned long long p) { chase_global<Space::kCg><<<1, 1>>>(p, 0, hbm_steps, d_result); }),
      clock_mhz);
  std::printf("\n");
  MB_CHECK(cudaFree(buffer));
  MB_CHECK(cudaFree(d_result));
  return 0;
}
