// Study 4 of the budget microbenchmarks: the bandwidth each memory level delivers for the access
// pattern of B in spmmc's SpMM kernels. B is a row-major K x n matrix (n = 4096 floats); the
// kernel reads rows in an irregular order (the column indices of A's non-zeros: here a fixed random
// list of rows), each thread V in {1, 2, 4} adjacent floats (float, float2, float4 loads),
// consecutive threads consecutive columns, so one warp reads 128*V contiguous bytes of a row.
//
// Levels:
//  (a) global -> registers, data resident in L1 (16 rows of one 256*V-column slice: <= 64 KiB, read
//      over and over by every block; __ldg, as the emitted kernels load B);
//  (b) global -> registers, data resident in L2 (768 rows = 12 MiB; every block sweeps all rows of
//      its slice from its own start, so an SM re-reads a line only after MBs of other lines):
//      ld.global.cg (L2 only) and __ldg;
//  (c) global -> registers from HBM (33792 rows = 528 MiB, > 10x L2, each row read once per run in a
//      fixed order, so the previous run's last lines are long evicted when they come up again);
//  (d) shared memory -> registers: 16 rows of one warp's width (32*V columns) staged once in
//      shared memory, then read over and over by the block's 8 warps (LDS.32/64/128);
//  (e) L2 -> shared memory -> registers: the block stages 16 rows of its 32*V-column slice per step
//      with ld.global + st.shared (double-buffered through registers), then each of its 8 warps reads
//      all 16 staged rows (each staged value feeds 8 warps, as in a design where the warps of a block
//      work on different rows of A that share B rows);
//  (f) as (e) with cp.async (cp.async.cg 16 B, double-buffered in shared memory).
// Reported per level and V: GB/s of the GPU and bytes per clock per SM, counting the bytes that reach
// registers ("delivered"); for (e) and (f) also the bytes fetched from L2 ("fetched" = delivered / 8).
#include <numeric>
#include <random>

#include "common.cuh"

namespace {

constexpr int kN = 4096;         // columns of B
constexpr int kThreads = 256;    // threads per block; 8 blocks per SM = full occupancy
constexpr int kBlocksPerSm = 8;  // 8 blocks of 256 threads: full occupancy, <= 32 registers
constexpr int kUnroll = 8;       // window granularity (rows)
// Accumulators, = independent global loads in flight per thread: 32 bytes per thread whatever V,
// 64 KiB per SM, several times what covers the latency at the bandwidth; more would not fit 32
// registers at V = 4.
template <int V>
constexpr int kAcc = 8 / V;
constexpr int kMaxWindow = 1024;  // row offsets a block keeps in shared memory
constexpr int kStageRows = 16;    // rows per shared-memory stage, (d) to (f)
constexpr int kWarps = kThreads / 32;

template <int V>
struct VecOf;
template <>
struct VecOf<1> {
  using T = float;
};
template <>
struct VecOf<2> {
  using T = float2;
};
template <>
struct VecOf<4> {
  using T = float4;
};

__device__ __forceinline__ void add(float& a, float b) { a += b; }
__device__ __forceinline__ void add(float2& a, float2 b) { a.x += b.x, a.y += b.y; }
__device__ __forceinline__ void add(float4& a, float4 b) { a.x += b.x, a.y += b.y, a.z += b.z, a.w += b.w; }
__device__ __forceinline__ float total(float a) { return a; }
__device__ __forceinline__ float total(float2 a) { return a.x + a.y; }
__device__ __forceinline__ float total(float4 a) { return (a.x + a.y) + (a.z + a.w); }

enum class Cache { kLdg, kCg };  // __ldg (LDG.E.CONSTANT, L1-cached) or ld.global.cg (L2 only)

template <int V, Cache C>
__device__ __forceinline__ typename VecOf<V>::T load_global(const float* p) {
  using T = typename VecOf<V>::T;
  if constexpr (C == Cache::kLdg)
    return __ldg(reinterpret_cast<const T*>(p));
  else
    return __ldcg(reinterpret_cast<const T*>(p));
}

// The block's rows, as byte offsets into B (unsigned 32-bit: one add with carry per address), in
// its shared-memory window: window entries of the
// fixed random row list starting at `start` (wrapping around K).
__device__ void load_window(unsigned* offs, const int* __restrict__ rows, int K, int start, int window) {
  for (int j = threadIdx.x; j < window; j += blockDim.x) offs[j] = unsigned(rows[(start + j) % K]) * kN * 4u;
  __syncthreads();
}

__device__ __forceinline__ const float* at_byte(const float* base, unsigned byte_offset) {
  return reinterpret_cast<const float*>(reinterpret_cast<const char*>(base) + byte_offset);
}

// ---- (a) to (c): global -> registers --------------------------------------------------------------
// Block b reads column slice b % col_slices (kThreads*V columns), rows window of the list from a
// start spread evenly over K, `reps` times.
template <int V, Cache C>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    b_global(const float* __restrict__ B, const int* __restrict__ rows, int K, int col_slices, int window, int reps,
             float* __restrict__ out) {
  using T = typename VecOf<V>::T;
  __shared__ unsigned offs[kMaxWindow];
  const int slice = blockIdx.x % col_slices, seq = blockIdx.x / col_slices, groups = gridDim.x / col_slices;
  load_window(offs, rows, K, int((long long)seq * K / groups), window);
  const float* base = B + size_t(slice) * kThreads * V + threadIdx.x * V;
  T acc[kAcc<V>] = {};
  // Not unrolled further: ptxas would hoist the loads of several iterations and spill.
#pragma unroll 1
  for (int r = 0; r < reps; ++r)
#pragma unroll 1
    for (int i = 0; i < window; i += kAcc<V>) {
#pragma unroll
      for (int u = 0; u < kAcc<V>; ++u) add(acc[u], load_global<V, C>(at_byte(base, offs[i + u])));
    }
  float s = 0;
#pragma unroll
  for (int u = 0; u < kAcc<V>; ++u) s += total(acc[u]);
  out[blockIdx.x * kThreads + threadIdx.x] = s;
}

// Each warp reads all kStageRows staged rows of `tile` (kStageRows x 32*V floats): 8 warps read
// every staged value. Rows go in groups of kAcc<V> (one per accumulator), in an irregular order
// within a group (row offsets are immediates, as in the emitted kernels); the group loop is not
// unrolled, since ptxas would otherwise hoist all 16 loads and spill at 32 registers.
template <int V>
__device__ __forceinline__ void read_stage(const float* tile, typename VecOf<V>::T* acc) {
  using T = typename VecOf<V>::T;
  constexpr int kGroup = kAcc<V>;
  const T* lane = reinterpret_cast<const T*>(tile) + (threadIdx.x & 31);
#pragma unroll 1
  for (int g = 0; g < kStageRows; g += kGroup, lane += kGroup * 32) {
#pragma unroll
    for (int j = 0; j < kGroup; ++j) add(acc[j], lane[((j * 3 + 1) % kGroup) * 32]);
  }
}

template <int V>
__device__ __forceinline__ void write_out(const typename VecOf<V>::T* acc, float* out) {
  float s = 0;
#pragma unroll
  for (int u = 0; u < kAcc<V>; ++u) s += total(acc[u]);
  out[blockIdx.x * kThreads + threadIdx.x] = s;
}

// ---- (d): shared memory -> registers ----------------------------------------------------------------
template <int V>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    b_smem_read(const float* __restrict__ B, const int* __restrict__ rows, int K, int reps, float* __restrict__ out) {
  using T = typename VecOf<V>::T;
  constexpr int kRowFloats = 32 * V, kStageFloats = kStageRows * kRowFloats;
  __shared__ __align__(16) float tile[kStageFloats];
  const int slice = blockIdx.x % (kN / kRowFloats);
#pragma unroll 1
  for (int e = threadIdx.x; e < kStageFloats; e += kThreads)
    tile[e] = B[size_t(rows[(blockIdx.x + e / kRowFloats) % K]) * kN + slice * kRowFloats + e % kRowFloats];
  __syncthreads();
  T acc[kAcc<V>] = {};
#pragma unroll 1
  for (int r = 0; r < reps; ++r) read_stage<V>(tile, acc);
  write_out<V>(acc, out);
}

// ---- (e), (f): L2 -> shared memory -> registers ---------------------------------------------------------
// One stage: kStageRows rows x 32*V columns = kStageRows*8*V float4 chunks, copied by the block's
// threads; chunk c is row c / (8*V), float4 column c % (8*V).
template <int V>
struct Stage {
  static constexpr int kRowFloats = 32 * V;
  static constexpr int kFloats = kStageRows * kRowFloats;
  static constexpr int kChunks = kFloats / 4;
  static constexpr int kPerThread = (kChunks + kThreads - 1) / kThreads;
  // Global address of chunk c of the stage whose first row is window entry `first`.
  static __device__ __forceinline__ const float* src(const float* slice_base, const unsigned* offs, int first, int c) {
    return at_byte(slice_base, offs[first + c / (kRowFloats / 4)] + unsigned(c % (kRowFloats / 4)) * 16u);
  }
};

// Block b: slice b % col_slices, its window of the row list from a spread start; `stages` stages of
// kStageRows rows, wrapping around the window.
struct StagedArgs {
  const float* B;
  const int* rows;
  int K, window, stages;
  float* out;
};

template <int V>
__device__ __forceinline__ const float* staged_setup(const StagedArgs& a, unsigned* offs) {
  constexpr int kColSlices = kN / (32 * V);
  const int slice = blockIdx.x % kColSlices, seq = blockIdx.x / kColSlices, groups = gridDim.x / kColSlices;
  load_window(offs, a.rows, a.K, int((long long)seq * a.K / groups), a.window);
  return a.B + slice * 32 * V;
}

// (e): ld.global into registers for stage s+1 while the warps read stage s from shared memory.
template <int V>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) b_staged_ldst(StagedArgs a) {
  using T = typename VecOf<V>::T;
  using S = Stage<V>;
  __shared__ __align__(16) float buf[2][S::kFloats];
  __shared__ unsigned offs[kMaxWindow];
  const float* slice_base = staged_setup<V>(a, offs);
  float4 next[S::kPerThread];
  int first = 0;  // window entry of the stage's first row
  auto fetch = [&](int at) {
#pragma unroll
    for (int k = 0; k < S::kPerThread; ++k) {
      const int c = threadIdx.x + k * kThreads;
      if (c < S::kChunks) next[k] = __ldcg(reinterpret_cast<const float4*>(S::src(slice_base, offs, at, c)));
    }
  };
  fetch(first);
  T acc[kAcc<V>] = {};
  for (int s = 0; s < a.stages; ++s) {
    float* tile = buf[s & 1];
#pragma unroll
    for (int k = 0; k < S::kPerThread; ++k) {
      const int c = threadIdx.x + k * kThreads;
      if (c < S::kChunks) reinterpret_cast<float4*>(tile)[c] = next[k];
    }
    __syncthreads();  // the stage is in shared memory; everyone has finished reading stage s-2
    first += kStageRows;
    if (first == a.window) first = 0;
    if (s + 1 < a.stages) fetch(first);
    read_stage<V>(tile, acc);
  }
  write_out<V>(acc, a.out);
}

__device__ __forceinline__ void cp_async16(float* dst, const float* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// (f): cp.async of stage s+1 into the other buffer while the warps read stage s.
template <int V>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm) b_staged_cpasync(StagedArgs a) {
  using T = typename VecOf<V>::T;
  using S = Stage<V>;
  __shared__ __align__(16) float buf[2][S::kFloats];
  __shared__ unsigned offs[kMaxWindow];
  const float* slice_base = staged_setup<V>(a, offs);
  int first = 0;
  auto issue = [&](float* tile) {
#pragma unroll
    for (int k = 0; k < S::kPerThread; ++k) {
      const int c = threadIdx.x + k * kThreads;
      if (c < S::kChunks) cp_async16(tile + c * 4, S::src(slice_base, offs, first, c));
    }
    cp_async_commit();
    first += kStageRows;
    if (first == a.window) first = 0;
  };
  issue(buf[0]);
  T acc[kAcc<V>] = {};
  for (int s = 0; s < a.stages; ++s) {
    if (s + 1 < a.stages) {
      issue(buf[(s + 1) & 1]);
      cp_async_wait<1>();  // stage s has landed (this thread's copies)
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();  // ... and everyone's
    read_stage<V>(buf[s & 1], acc);
    __syncthreads();  // stage s is read before stage s+2 overwrites its buffer
  }
  write_out<V>(acc, a.out);
}

// ---- host -----------------------------------------------------------------------------------
struct Bench {
  const mb::Device& d;
  const mb::Options& o;
  double clock_mhz;
  const float* B;
  const int* rows_l2;   // random list of the L2 matrix's 768 rows
  const int* rows_hbm;  // random list of the HBM matrix's rows
  float* out;
};

constexpr int kRowsL1 = 16, kRowsL2 = 768, kRowsHbm = 33792;  // 33792 = 66*512 = 132*256 = 264*128

struct Measured {
  double gbs, bytes_per_clk_sm;
};
Measured measured(const Bench& b, double bytes, double ms) {
  const double gbs = bytes / (ms * 1e-3) / 1e9;
  return {gbs, gbs * 1e9 / (b.d.sms * b.clock_mhz * 1e6)};
}

int blocks_full(const mb::Device& d) { return d.sms * 8; }  // 8 blocks of 256 threads per SM

template <int V, Cache C>
Measured run_global(const Bench& b, const int* rows, int K, bool one_slice, int window, double target_bytes) {
  const int col_slices = one_slice ? 1 : kN / (kThreads * V);
  const int blocks = blocks_full(b.d) / col_slices * col_slices;
  const double bytes_per_rep = double(blocks) * kThreads * V * 4 * window;
  const int reps = std::max(1, int(target_bytes / bytes_per_rep));
  const double ms =
      mb::median_ms(b.o, [&] { b_global<V, C><<<blocks, kThreads>>>(b.B, rows, K, col_slices, window, reps, b.out); });
  return measured(b, bytes_per_rep * reps, ms);
}

template <int V>
Measured run_hbm(const Bench& b) {
  // One wave of blocks covers the matrix exactly once: groups * window = K.
  const int col_slices = kN / (kThreads * V), blocks = blocks_full(b.d) / col_slices * col_slices;
  const int groups = blocks / col_slices, window = kRowsHbm / groups;
  if (window * groups != kRowsHbm || window % kUnroll != 0 || window > kMaxWindow) {
    // Another GPU size: fall back to the largest whole number of rows per block.
    const int w = std::min(kMaxWindow, kRowsHbm / groups / kUnroll * kUnroll);
    const double ms = mb::median_ms(b.o, [&] {
      b_global<V, Cache::kCg><<<blocks, kThreads>>>(b.B, b.rows_hbm, kRowsHbm, col_slices, w, 1, b.out);
    });
    return measured(b, double(blocks) * kThreads * V * 4 * w, ms);
  }
  const double ms = mb::median_ms(b.o, [&] {
    b_global<V, Cache::kCg><<<blocks, kThreads>>>(b.B, b.rows_hbm, kRowsHbm, col_slices, window, 1, b.out);
  });
  return measured(b, double(kRowsHbm) * kN * 4, ms);
}

template <int V>
Measured run_smem(const Bench& b, double target_bytes) {
  const int blocks = blocks_full(b.d);
  const double bytes_per_rep = double(blocks) * kThreads * V * 4 * kStageRows;
  const int reps = std::max(1, int(target_bytes / bytes_per_rep));
  const double ms =
      mb::median_ms(b.o, [&] { b_smem_read<V><<<blocks, kThreads>>>(b.B, b.rows_l2, kRowsL2, reps, b.out); });
  return measured(b, bytes_per_rep * reps, ms);
}

// Returns {fetched, delivered}.
template <int V, bool kCpAsync>
std::pair<Measured, Measured> run_staged(const Bench& b, double target_fetched) {
  constexpr int kColSlices = kN / (32 * V);
  const int blocks = blocks_full(b.d) / kColSlices * kColSlices;
  const double stage_bytes = double(Stage<V>::kFloats) * 4;
  const int stages = std::max(2, int(target_fetched / (blocks * stage_bytes)));
  const StagedArgs args{b.B, b.rows_l2, kRowsL2, kRowsL2, stages, b.out};
  const double ms = mb::median_ms(b.o, [&] {
    if constexpr (kCpAsync)
      b_staged_cpasync<V><<<blocks, kThreads>>>(args);
    else
      b_staged_ldst<V><<<blocks, kThreads>>>(args);
  });
  const double fetched = double(blocks) * stages * stage_bytes;
  return {measured(b, fetched, ms), measured(b, fetched * kWarps, ms)};
}

struct Row {
  std::string label, key;
  Measured v[3];  // V = 1, 2, 4
};

void print_row(const mb::Options& o, const Row& r) {
  std::printf("| %s |", r.label.c_str());
  const int vs[3] = {1, 2, 4};
  for (int i = 0; i < 3; ++i) {
    std::printf(" %.0f | %.1f |", r.v[i].gbs, r.v[i].bytes_per_clk_sm);
    mb::record(o, mb::format("bw.%s.v%d.gbs", r.key.c_str(), vs[i]), r.v[i].gbs);
    mb::record(o, mb::format("bw.%s.v%d.bpc", r.key.c_str(), vs[i]), r.v[i].bytes_per_clk_sm);
  }
  std::printf("\n");
  std::fflush(stdout);
}

// Fills B (device) with small values, and two random row lists.
std::vector<int> random_rows(int K, unsigned seed) {
  std::vector<int> rows(K);
  std::iota(rows.begin(), rows.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(rows.begin(), rows.end(), rng);
  return rows;
}

__global__ void fill(float* p, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    p[i] = 1e-3f * float(i % 13);
}

int* upload(const std::vector<int>& v) {
  int* p = nullptr;
  MB_CHECK(cudaMalloc(&p, v.size() * sizeof(int)));
  MB_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(int), cudaMemcpyHostToDevice));
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const mb::Options o = mb::parse_options(argc, argv);
  if (!o.rest.empty()) {
    std::fprintf(stderr, "b_access: unknown option %s\n", o.rest[0].c_str());
    return mb::kExitUsage;
  }
  const mb::Device d = mb::require_gpu("b_access");
  const double clock_mhz = mb::measure_sm_clock_mhz(d);
  std::printf(
      "## Study 4: bandwidth of B's access pattern (row-major K x %d floats, irregular rows, V adjacent "
      "floats per thread)\n\n",
      kN);
  mb::print_device(d, clock_mhz, o);

  const size_t elements = size_t(kRowsHbm) * kN;  // the largest matrix; smaller ones use its first rows
  float* B = nullptr;
  float* out = nullptr;
  MB_CHECK(cudaMalloc(&B, elements * sizeof(float)));
  MB_CHECK(cudaMalloc(&out, size_t(blocks_full(d)) * kThreads * sizeof(float)));
  fill<<<d.sms * 8, 256>>>(B, elements);
  MB_CHECK_LAUNCH();
  int* rows_l1 = upload(random_rows(kRowsL1, 1));
  int* rows_l2 = upload(random_rows(kRowsL2, 2));
  int* rows_hbm = upload(random_rows(kRowsHbm, 3));
  MB_CHECK(cudaDeviceSynchronize());
  const Bench b{d, o, clock_mhz, B, rows_l2, rows_hbm, out};

  std::printf(
      "Delivered bytes (reaching registers) unless marked fetched; GB/s of the GPU and B/clk/SM at the "
      "measured SM clock. L1 %d rows (<= 64 KiB), L2 %d rows (%d MiB), HBM %d rows (%d MiB).\n\n",
      kRowsL1, kRowsL2, kRowsL2 * kN * 4 >> 20, kRowsHbm, int((size_t(kRowsHbm) * kN * 4) >> 20));
  std::printf(
      "| level | V=1 GB/s | V=1 B/clk/SM | V=2 GB/s | V=2 B/clk/SM | V=4 GB/s | V=4 B/clk/SM |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  const double big = 16e9, medium = 6e9;  // target bytes per run: ~1 ms at the expected bandwidth
  print_row(o, {"(a) L1-resident, __ldg",
                "l1",
                {run_global<1, Cache::kLdg>(b, rows_l1, kRowsL1, true, kRowsL1, big),
                 run_global<2, Cache::kLdg>(b, rows_l1, kRowsL1, true, kRowsL1, big),
                 run_global<4, Cache::kLdg>(b, rows_l1, kRowsL1, true, kRowsL1, big)}});
  print_row(o, {"(b) L2-resident, ld.global.cg",
                "l2",
                {run_global<1, Cache::kCg>(b, rows_l2, kRowsL2, false, kRowsL2, medium),
                 run_global<2, Cache::kCg>(b, rows_l2, kRowsL2, false, kRowsL2, medium),
                 run_global<4, Cache::kCg>(b, rows_l2, kRowsL2, false, kRowsL2, medium)}});
  print_row(o, {"(b') L2-resident, __ldg",
                "l2ldg",
                {run_global<1, Cache::kLdg>(b, rows_l2, kRowsL2, false, kRowsL2, medium),
                 run_global<2, Cache::kLdg>(b, rows_l2, kRowsL2, false, kRowsL2, medium),
                 run_global<4, Cache::kLdg>(b, rows_l2, kRowsL2, false, kRowsL2, medium)}});
  print_row(o, {"(c) HBM (cold), ld.global.cg", "hbm", {run_hbm<1>(b), run_hbm<2>(b), run_hbm<4>(b)}});
  print_row(o, {"(d) shared -> registers", "smem", {run_smem<1>(b, big), run_smem<2>(b, big), run_smem<4>(b, big)}});
  const auto e1 = run_staged<1, false>(b, medium / kWarps), e2 = run_staged<2, false>(b, medium / kWarps),
             e4 = run_staged<4, false>(b, medium / kWarps);
  print_row(o, {"(e) L2 -> shared (ld+st) -> 8 warps: fetched", "stage_ldst", {e1.first, e2.first, e4.first}});
  print_row(o, {"(e) ... delivered to registers", "stage_ldst_delivered", {e1.second, e2.second, e4.second}});
  const auto f1 = run_staged<1, true>(b, medium / kWarps), f2 = run_staged<2, true>(b, medium / kWarps),
             f4 = run_staged<4, true>(b, medium / kWarps);
  print_row(o, {"(f) L2 -> shared (cp.async) -> 8 warps: fetched", "stage_cpasync", {f1.first, f2.first, f4.first}});
  print_row(o, {"(f) ... delivered to registers", "stage_cpasync_delivered", {f1.second, f2.second, f4.second}});
  std::printf("\nBytes per FMA a level can feed at the FFMA peak = its B/clk/SM / 128 (see the budget section).\n\n");

  MB_CHECK(cudaFree(B));
  MB_CHECK(cudaFree(out));
  MB_CHECK(cudaFree(rows_l1));
  MB_CHECK(cudaFree(rows_l2));
  MB_CHECK(cudaFree(rows_hbm));
  return 0;
}
