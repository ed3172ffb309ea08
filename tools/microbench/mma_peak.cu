// mma_peak (issue 26): the peak throughput of warp-level tensor-core MMAs issued through inline PTX
// `mma.sync.aligned` (what the tensor-core family's kernels use), the ceiling of a FlashSparse-style
// SpMM against cuBLAS HGEMM, which on the H100 runs on `wgmma` instead.
//
// Instructions: m16n8k8 f16 and bf16 (the family's fp16/bf16 MMA), m16n8k4 tf32 (its tf32 MMA) and
// m16n8k16 f16 for reference, all with float32 accumulators. Each warp loops over `loops` x 4 x S
// MMAs on S independent accumulator sets (S = 4 or 8; the MMAs of one set form a dependent chain,
// so S sets hide S-fold latency), 4 to 32 warps per SM as one block per SM. The operands are
// loaded from global memory once (two A and two B fragments per thread, alternated across the sets)
// and every accumulator is stored at the end; the loop count is a kernel argument, so nothing can
// be folded or hoisted (`cuobjdump -sass` shows the HMMAs in the loop).
//
// Reported per instruction, S and warps per SM: TFLOP/s of the GPU (2·M·N·K flops per MMA, median
// of the runs timed with CUDA events) and MMAs per clock per SM. The clock divided by is the SM
// clock measured inside the MMA kernel itself (clock64 against %globaltimer on thread 0 of every
// block over the run, median over the blocks of the last timed run), since the clock under a
// tensor-core load may differ from the FFMA-load clock and the driver's peak (both printed too).
// Build and run alone: nvcc -O3 -arch=sm_90 -std=c++17 -o mma_peak tools/microbench/mma_peak.cu &&
// ./mma_peak [--runs N] [--warmup N] [--results FILE]; scripts/budget-microbench.sh builds and runs it.
// Exit: 0 measured; 64 usage; 69 no GPU; 70 a CUDA call failed.
#include "common.cuh"

#include <cstring>
#include <iterator>

namespace {

// ---- the instructions -------------------------------------------------------------------------
// Each: fragment sizes in 32-bit registers per thread (A, B; C/D are 4 floats for all four), the
// shape, and the inline PTX (D = A·B + D in place).
struct F16K8 {
  static constexpr int kA = 2, kB = 1, M = 16, N = 8, K = 8;
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[kA], const uint32_t (&b)[kB]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]));
  }
};
struct Bf16K8 {
  static constexpr int kA = 2, kB = 1, M = 16, N = 8, K = 8;
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[kA], const uint32_t (&b)[kB]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]));
  }
};
struct Tf32K4 {
  static constexpr int kA = 2, kB = 1, M = 16, N = 8, K = 4;
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[kA], const uint32_t (&b)[kB]) {
    asm volatile(
        "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]));
  }
};
struct F16K16 {
  static constexpr int kA = 4, kB = 2, M = 16, N = 8, K = 16;
  static __device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[kA], const uint32_t (&b)[kB]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

constexpr int kUnroll = 4;        // MMA rounds over the S sets per loop iteration
constexpr int kOperandWords = 64;  // operand words per instruction in the `operands` array

// Block timing of the run (thread 0): SM cycles, nanoseconds, and the SM the block ran on.
struct BlockClock {
  long long cycles;
  unsigned long long ns;
  unsigned sm;
  unsigned pad;
};

// `loops` x kUnroll x S MMAs per warp; operands from `operands` (kOperandWords 32-bit words of the
// instruction's type), S x 4 accumulators per thread stored to `out`.
template <class Op, int S>
__global__ void __launch_bounds__(1024, 1)
    mma_loop(const uint32_t* __restrict__ operands, int loops, float* __restrict__ out, BlockClock* clocks) {
  const unsigned lane = threadIdx.x & 31;
  uint32_t a[2][Op::kA], b[2][Op::kB];
#pragma unroll
  for (int j = 0; j < 2; ++j) {
#pragma unroll
    for (int i = 0; i < Op::kA; ++i) a[j][i] = operands[(lane + 8 * j + i) & 31];
#pragma unroll
    for (int i = 0; i < Op::kB; ++i) b[j][i] = operands[32 + ((lane + 8 * j + i) & 31)];
  }
  float acc[S][4];
#pragma unroll
  for (int s = 0; s < S; ++s)
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[s][r] = 0.0f;

  __syncthreads();
  long long c0 = 0;
  unsigned long long t0 = 0;
  if (threadIdx.x == 0) {
    c0 = clock64();
    t0 = mb::global_ns();
  }
#pragma unroll 1
  for (int l = 0; l < loops; ++l) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int s = 0; s < S; ++s) Op::mma(acc[s], a[s & 1], b[(s >> 1) & 1]);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const long long c1 = clock64();
    const unsigned long long t1 = mb::global_ns();
    clocks[blockIdx.x] = BlockClock{c1 - c0, t1 - t0, mb::smid(), 0};
  }
  // Every accumulator is observable: S float4 stores per thread.
  float4* o = reinterpret_cast<float4*>(out) + size_t(blockIdx.x * blockDim.x + threadIdx.x) * S;
#pragma unroll
  for (int s = 0; s < S; ++s) o[s] = make_float4(acc[s][0], acc[s][1], acc[s][2], acc[s][3]);
}

using MmaKernel = void (*)(const uint32_t*, int, float*, BlockClock*);

struct Instruction {
  const char* ptx;        // the table's name
  const char* key;        // the results file's key
  int flops;              // 2·M·N·K
  int operand_set;        // which kOperandWords block of `operands`: 0 f16, 1 bf16, 2 tf32
  double guess_per_clk;   // MMAs/clk/SM assumed to size a ~2.5 ms run (a dense H100 tensor peak)
  MmaKernel kernel[2];    // S = 4, 8
};

template <class Op>
constexpr int flops_of() {
  return 2 * Op::M * Op::N * Op::K;
}

const Instruction kInstructions[] = {
    {"m16n8k8.f32.f16.f16.f32", "f16_k8", flops_of<F16K8>(), 0, 2.0, {mma_loop<F16K8, 4>, mma_loop<F16K8, 8>}},
    {"m16n8k8.f32.bf16.bf16.f32", "bf16_k8", flops_of<Bf16K8>(), 1, 2.0, {mma_loop<Bf16K8, 4>, mma_loop<Bf16K8, 8>}},
    {"m16n8k4.f32.tf32.tf32.f32", "tf32_k4", flops_of<Tf32K4>(), 2, 2.0, {mma_loop<Tf32K4, 4>, mma_loop<Tf32K4, 8>}},
    {"m16n8k16.f32.f16.f16.f32", "f16_k16", flops_of<F16K16>(), 0, 1.0, {mma_loop<F16K16, 4>, mma_loop<F16K16, 8>}},
};
const int kSets[] = {4, 8};
const int kWarpsPerSm[] = {4, 8, 16, 32};

struct Measurement {
  double tflops = 0, mma_per_clk = 0, clock_mhz = 0;
};

// One instruction at S sets and `warps` warps on every SM (one block per SM).
Measurement run_mma(const mb::Device& d, const mb::Options& o, const Instruction& ins, int set_index, int warps,
                    const uint32_t* operands, float* out, BlockClock* clocks, double clock_guess_mhz) {
  const int sets = kSets[set_index];
  const int blocks = d.sms, threads = warps * 32;
  const double target_mma_per_sm = 2.5e-3 * clock_guess_mhz * 1e6 * ins.guess_per_clk;
  const int loops = std::max(1, int(target_mma_per_sm / (double(warps) * kUnroll * sets)));
  const uint32_t* ops = operands + ins.operand_set * kOperandWords;
  MmaKernel kernel = ins.kernel[set_index];
  const double ms = mb::median_ms(o, [&] { kernel<<<blocks, threads>>>(ops, loops, out, clocks); });

  // The clock under this load, from the last timed run; and the block placement.
  std::vector<BlockClock> host(blocks);
  MB_CHECK(cudaMemcpy(host.data(), clocks, blocks * sizeof(BlockClock), cudaMemcpyDeviceToHost));
  std::vector<double> mhz;
  std::vector<int> per_sm(d.sms, 0);
  int crowded = 0;
  for (const BlockClock& c : host) {
    mhz.push_back(1e3 * double(c.cycles) / double(c.ns ? c.ns : 1));
    if (c.sm < unsigned(d.sms) && ++per_sm[c.sm] > 1) ++crowded;
  }
  if (crowded)
    std::fprintf(stderr, "mma_peak: warning: %d block(s) shared an SM with another at %d warps/SM (block placement)\n",
                 crowded, warps);
  Measurement m;
  m.clock_mhz = mb::median(mhz);
  const double mmas = double(blocks) * warps * loops * kUnroll * sets;
  m.tflops = mmas * ins.flops / (ms * 1e-3) * 1e-12;
  m.mma_per_clk = mmas / (ms * 1e-3 * m.clock_mhz * 1e6) / d.sms;
  return m;
}

// Operand bit patterns: small values (0.001-0.007) so the sums stay finite and normal.
std::vector<uint32_t> make_operands() {
  std::vector<uint32_t> w(3 * kOperandWords);
  auto half_bits = [](float x) {  // round-to-nearest float -> binary16 for the small normal values used here
    uint32_t f;
    std::memcpy(&f, &x, 4);
    const int exp = int((f >> 23) & 0xff) - 127 + 15;
    const uint32_t mant = ((f & 0x7fffff) + 0x1000) >> 13;
    return uint16_t((exp << 10) + mant);
  };
  auto bf16_bits = [](float x) {
    uint32_t f;
    std::memcpy(&f, &x, 4);
    return uint16_t((f + 0x8000) >> 16);
  };
  for (int i = 0; i < kOperandWords; ++i) {
    const float x = 1e-3f * float(1 + i % 7), y = 1e-3f * float(1 + (i + 3) % 7);
    w[i] = uint32_t(half_bits(x)) | uint32_t(half_bits(y)) << 16;
    w[kOperandWords + i] = uint32_t(bf16_bits(x)) | uint32_t(bf16_bits(y)) << 16;
    std::memcpy(&w[2 * kOperandWords + i], &x, 4);
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  const mb::Options o = mb::parse_options(argc, argv);
  if (!o.rest.empty()) {
    std::fprintf(stderr, "mma_peak: unknown option %s\n", o.rest[0].c_str());
    return mb::kExitUsage;
  }
  const mb::Device d = mb::require_gpu("mma_peak");
  const double ffma_clock_mhz = mb::measure_sm_clock_mhz(d);
  std::printf("## Tensor-core MMA peak: mma.sync through inline PTX (issue 26)\n\n");
  mb::print_device(d, ffma_clock_mhz, o);

  const std::vector<uint32_t> host = make_operands();
  uint32_t* operands = nullptr;
  float* out = nullptr;
  BlockClock* clocks = nullptr;
  MB_CHECK(cudaMalloc(&operands, host.size() * sizeof(uint32_t)));
  MB_CHECK(cudaMemcpy(operands, host.data(), host.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
  const int max_sets = kSets[std::size(kSets) - 1];
  MB_CHECK(cudaMalloc(&out, size_t(d.sms) * 1024 * max_sets * 4 * sizeof(float)));
  MB_CHECK(cudaMalloc(&clocks, size_t(d.sms) * sizeof(BlockClock)));

  std::printf(
      "Row.col MMAs with float32 accumulators, S independent accumulator sets per warp, one block of W warps "
      "per SM. Cell: TFLOP/s of the GPU (2·M·N·K flops per MMA) / MMAs per clock per SM at the SM clock "
      "measured in the MMA kernel (clock64 vs globaltimer) / that clock in MHz.\n\n| instruction | flops per MMA | S |");
  for (int w : kWarpsPerSm) std::printf(" %d warps/SM |", w);
  std::printf("\n|---|---:|---:|");
  for (size_t i = 0; i < std::size(kWarpsPerSm); ++i) std::printf("---:|");
  std::printf("\n");
  Measurement best[std::size(kInstructions)];
  int best_w[std::size(kInstructions)] = {}, best_s[std::size(kInstructions)] = {};
  for (size_t k = 0; k < std::size(kInstructions); ++k) {
    const Instruction& ins = kInstructions[k];
    for (size_t si = 0; si < std::size(kSets); ++si) {
      std::printf("| %s | %d | %d |", ins.ptx, ins.flops, kSets[si]);
      for (int w : kWarpsPerSm) {
        const Measurement m = run_mma(d, o, ins, int(si), w, operands, out, clocks, ffma_clock_mhz);
        std::printf(" %.1f / %.3f / %.0f |", m.tflops, m.mma_per_clk, m.clock_mhz);
        std::fflush(stdout);
        const std::string key = mb::format("mma.%s.s%d.w%d", ins.key, kSets[si], w);
        mb::record(o, key + ".tflops", m.tflops);
        mb::record(o, key + ".per_clk", m.mma_per_clk);
        mb::record(o, key + ".clock_mhz", m.clock_mhz);
        if (m.tflops > best[k].tflops) {
          best[k] = m;
          best_w[k] = w;
          best_s[k] = kSets[si];
        }
      }
      std::printf("\n");
    }
  }
  std::printf("\n");
  for (size_t k = 0; k < std::size(kInstructions); ++k) {
    const Instruction& ins = kInstructions[k];
    std::printf(
        "- %s: best %.1f TFLOP/s (S = %d, %d warps/SM): %.3f MMAs/clk/SM = %.0f flops/clk/SM at %.0f MHz.\n",
        ins.ptx, best[k].tflops, best_s[k], best_w[k], best[k].mma_per_clk, best[k].mma_per_clk * ins.flops,
        best[k].clock_mhz);
    mb::record(o, mb::format("mma.%s.best_tflops", ins.key), best[k].tflops);
    mb::record(o, mb::format("mma.%s.best_per_clk", ins.key), best[k].mma_per_clk);
  }
  std::printf(
      "\nFor scale: the H100 SXM's nominal dense tensor peak (wgmma) is 4096 fp16/bf16 and 2048 tf32 flops/clk/SM "
      "(989 and 495 TFLOP/s at 1830 MHz). The best m16n8k8 f16 TFLOP/s above divided by cuBLAS HGEMM's measured "
      "TFLOP/s is the ratio R of `scripts/studies/tc-bound.py --mma-ratio`.\n\n");
  MB_CHECK(cudaFree(operands));
  MB_CHECK(cudaFree(out));
  MB_CHECK(cudaFree(clocks));
  return 0;
}
