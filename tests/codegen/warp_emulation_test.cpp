// The CUDA emulation's warp-synchronous execution (tests/cuda_emulation/warp_scheduler.h, through
// cuda_runtime.h, cuda_fp16.h and cuda_bf16.h), on which the CPU tests of the tensor-core family
// rely: the kernels of tests/codegen/warp_kernels/warp_kernels.cu, built as host C++ against the
// emulation like an emitted kernel (build_emulated: -Wall -Wextra -Werror), run here and are
// checked against host models. Shuffles, votes, __syncthreads with __shared__ memory (refilled
// with 0xFF bytes at each block's start), the order of threads of a kernel without collectives
// (and that it takes no context switch per thread; in a shared object without collectives, no fiber
// at all), the three MMAs (fragment layouts from
// hand-placed elements as the PTX ISA gives them, exact on small integers, within the documented
// bound on random values and bit for bit with fmaf in k order, in a loop of several iterations),
// ldmatrix and stmatrix (.x4.trans: fragments from elements placed by hand, rows anywhere in shared
// memory, a round trip) and the faults: each must-fail kernel runs in a forked child that must die of SIGABRT with the
// emulation's message on stderr.
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/codegen/emitted_kernel_util.h"
#include "tests/cuda_emulation/half_bits.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
namespace emu = spmmc_emulation;

// The entry points of warp_kernels.cu (see there) and the emulation's scheduler counts.
struct WarpKernels {
  int (*shuffle)(const int* in, double* out, unsigned blocks, unsigned threads) = nullptr;
  int (*vote)(const int* in, unsigned* out, unsigned blocks, unsigned threads) = nullptr;
  int (*block_sum)(const float* in, float* out, unsigned* first_bits, int* positive, unsigned blocks) = nullptr;
  int (*order)(int* sequence, unsigned blocks, unsigned x, unsigned y, unsigned z) = nullptr;
  int (*mma_hook)(const unsigned* frags, const float* c, float* d, int kind, const int* iterations, unsigned warps) = nullptr;
  int (*mma_direct)(const unsigned* frags, const float* c, float* d, int kind) = nullptr;
  int (*matrix)(const unsigned short* in, const int* slot, const int* back, unsigned* frags, unsigned short* out) = nullptr;
  int (*fault)(int which) = nullptr;
  unsigned (*byte_perm)(unsigned x, unsigned y, unsigned s) = nullptr;
  void (*stats)(unsigned long long* stats) = nullptr;
  std::string error;  // why the kernels are missing
};

// Built and loaded once per process (the shared object stays loaded).
const WarpKernels& kernels() {
  static const WarpKernels k = [] {
    WarpKernels w;
    static test::TempDir dir;
    const fs::path so = dir.path / "libwarp_kernels.so";
    std::string log;
    if (test::build_emulated({fs::path(SPMMC_SOURCE_DIR) / "tests/codegen/warp_kernels/warp_kernels.cu"}, so, log) != 0) {
      w.error = "host build of warp_kernels.cu failed:\n" + log;
      return w;
    }
    void* const handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      w.error = dlerror();
      return w;
    }
    const auto find = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(handle, name));
      if (f == nullptr) w.error += std::string("no symbol ") + name + "\n";
    };
    find(w.shuffle, "warp_test_shuffle");
    find(w.vote, "warp_test_vote");
    find(w.block_sum, "warp_test_block_sum");
    find(w.order, "warp_test_order");
    find(w.mma_hook, "warp_test_mma_hook");
    find(w.mma_direct, "warp_test_mma_direct");
    find(w.matrix, "warp_test_matrix");
    find(w.fault, "warp_test_fault");
    find(w.byte_perm, "warp_test_byte_perm");
    find(w.stats, "spmmc_emulation_scheduler_stats");
    return w;
  }();
  INFO(k.error);
  REQUIRE(k.error.empty());
  return k;
}

using Stats = std::array<unsigned long long, 8>;
Stats stats() {
  Stats s{};
  kernels().stats(s.data());
  return s;
}

// plain_kernels.cu, in a shared object of its own (no collective in it).
struct PlainKernels {
  int (*order)(int* sequence, unsigned* first_bits, unsigned blocks, unsigned x, unsigned y, unsigned z) = nullptr;
  void (*stats)(unsigned long long* stats) = nullptr;
  std::string error;
};

const PlainKernels& plain_kernels() {
  static const PlainKernels k = [] {
    PlainKernels p;
    static test::TempDir dir;
    const fs::path so = dir.path / "libplain_kernels.so";
    std::string log;
    if (test::build_emulated({fs::path(SPMMC_SOURCE_DIR) / "tests/codegen/warp_kernels/plain_kernels.cu"}, so, log) != 0) {
      p.error = "host build of plain_kernels.cu failed:\n" + log;
      return p;
    }
    void* const handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      p.error = dlerror();
      return p;
    }
    p.order = reinterpret_cast<decltype(p.order)>(dlsym(handle, "plain_test_order"));
    p.stats = reinterpret_cast<decltype(p.stats)>(dlsym(handle, "spmmc_emulation_scheduler_stats"));
    if (p.order == nullptr || p.stats == nullptr) p.error = "no plain_test_order or spmmc_emulation_scheduler_stats";
    return p;
  }();
  INFO(k.error);
  REQUIRE(k.error.empty());
  return k;
}

// Shuffles of every width and type against their CUDA semantics; the scheduler's counts.
void check_shuffles() {
  const WarpKernels& k = kernels();
  constexpr unsigned kBlocks = 2, kThreads = 64, kTotal = kBlocks * kThreads;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(-1000, 1000);
  std::vector<int> in(kTotal);
  for (int& v : in) v = value(rng);
  std::vector<double> out(8 * kTotal, -12345.0);
  const Stats before = stats();
  REQUIRE(k.shuffle(in.data(), out.data(), kBlocks, kThreads) == 0);
  const Stats after = stats();
  for (unsigned t = 0; t < kTotal; ++t) {
    INFO("thread " << t);
    const unsigned lane = t % 32, base = t - lane;
    const auto v = [&](unsigned l) { return in[base + l]; };
    int sum = 0, scan = 0;
    for (unsigned l = 0; l < 32; ++l) sum += v(l);
    for (unsigned l = 0; l <= lane; ++l) scan += v(l);
    // Shuffle-down: each step adds lane + offset's partial where that lane exists, else its own.
    std::array<int, 32> down{};
    for (unsigned l = 0; l < 32; ++l) down[l] = v(l);
    for (unsigned offset = 16; offset > 0; offset >>= 1) {
      std::array<int, 32> next = down;
      for (unsigned l = 0; l < 32; ++l) next[l] = down[l] + (l + offset < 32 ? down[l + offset] : down[l]);
      down = next;
    }
    const double* o = &out[8 * t];
    CHECK(o[0] == sum);
    CHECK(o[1] == down[lane]);
    CHECK(o[2] == scan);
    CHECK(o[3] == v(0));
    CHECK(o[4] == 0.5 * v(31 - lane));
    CHECK(o[5] == v(lane & ~7u));
    CHECK(o[6] == v(lane ^ 1));  // |v| <= 1000: exact in a half
    // Not always exact in a bfloat16 (8 significant bits): the partner's value as it rounds.
    const float partner = static_cast<float>(v(lane + 3 < 32 ? lane + 3 : lane));
    CHECK(o[7] == emu::bfloat16_bits_to_float(emu::float_to_bfloat16_bits_rn(partner)));
  }
  // Threads of both blocks ran and waited at the shuffles, on at most a warp's worth of fibers (at
  // most 32 threads wait at once here; fibers are kept, so earlier kernels may have made more).
  CHECK(after[0] - before[0] == kBlocks);
  CHECK(after[1] - before[1] == kTotal);
  CHECK(after[2] - before[2] > 0);
  CHECK(after[4] <= std::max<unsigned long long>(before[4], 32));
}

// Ballot, any and all, and two groups of one warp with different masks at once.
void check_votes() {
  const WarpKernels& k = kernels();
  constexpr unsigned kBlocks = 2, kThreads = 64, kTotal = kBlocks * kThreads;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> value(-3, 3);
  std::vector<int> in(kTotal);
  for (unsigned t = 0; t < kTotal; ++t) {
    const unsigned warp = t / 32;
    in[t] = warp == 1 ? 1 + (value(rng) & 1) : warp == 2 ? -(value(rng) & 1) : value(rng);  // all > 0; all <= 0; mixed
  }
  std::vector<unsigned> out(4 * kTotal, 0xdeadbeefu);
  REQUIRE(k.vote(in.data(), out.data(), kBlocks, kThreads) == 0);
  for (unsigned t = 0; t < kTotal; ++t) {
    INFO("thread " << t);
    const unsigned lane = t % 32, base = t - lane;
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; ++l) ballot |= (in[base + l] > 0 ? 1u : 0u) << l;
    CHECK(out[4 * t + 0] == ballot);
    CHECK(out[4 * t + 1] == (ballot != 0 ? 1u : 0u));
    CHECK(out[4 * t + 2] == (ballot == 0xffffffffu ? 1u : 0u));
    CHECK(out[4 * t + 3] == (ballot & (lane < 16 ? 0x0000ffffu : 0xffff0000u)));
  }
}

// A block's reduction through __shared__ memory and __syncthreads, in two blocks.
void check_block_sum() {
  const WarpKernels& k = kernels();
  constexpr unsigned kBlocks = 2, kThreads = 128;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> value(-8, 8);
  std::vector<float> in(kBlocks * kThreads);
  for (float& x : in) x = static_cast<float>(value(rng));
  std::vector<float> out(kBlocks, -1.0f);
  std::vector<unsigned> first_bits(kBlocks, 0);
  std::vector<int> positive(kBlocks, -1);
  REQUIRE(k.block_sum(in.data(), out.data(), first_bits.data(), positive.data(), kBlocks) == 0);
  for (unsigned b = 0; b < kBlocks; ++b) {
    INFO("block " << b);
    float sum = 0.0f;  // small integers: exact in any order
    int count = 0;
    for (unsigned t = 0; t < kThreads; ++t) sum += in[b * kThreads + t], count += in[b * kThreads + t] > 0.0f;
    CHECK(out[b] == sum);
    CHECK(positive[b] == count);
    // Shared memory not yet written in this block reads as the refill (all one bits), in the second
    // block too: not the first block's sum left behind.
    CHECK(first_bits[b] == 0xffffffffu);
  }
  // The shared object's __shared__ arrays: block_sum's, matrix_kernel's two and ldmatrix_misaligned_kernel's.
  CHECK(stats()[7] == kThreads * sizeof(float) + 2 * 32 * 16 + 33 * 16);
}

// A kernel without collectives runs its threads in order, one switch per block.
void check_order() {
  const WarpKernels& k = kernels();
  constexpr unsigned kBlocks = 3, kX = 8, kY = 2, kZ = 2;
  std::vector<int> sequence(kBlocks * kX * kY * kZ, -1);
  const Stats before = stats();
  REQUIRE(k.order(sequence.data(), kBlocks, kX, kY, kZ) == 0);
  const Stats after = stats();
  size_t i = 0;
  for (unsigned b = 0; b < kBlocks; ++b)
    for (unsigned z = 0; z < kZ; ++z)
      for (unsigned y = 0; y < kY; ++y)
        for (unsigned x = 0; x < kX; ++x, ++i) CHECK(sequence[i] == static_cast<int>(b * 10000 + z * 100 + y * 10 + x));
  CHECK(after[0] - before[0] == kBlocks);
  CHECK(after[1] - before[1] == sequence.size());
  CHECK(after[2] - before[2] == 0);            // no thread waited
  CHECK(after[3] - before[3] == 2 * kBlocks);  // into one worker and back, per block
  CHECK(after[4] - before[4] <= 1);            // at most one new fiber (none if an earlier test made one)
  INFO("deepest stack use " << after[6] << " of " << after[5] << " bytes");
  CHECK(after[6] < after[5] / 2);
}

// A shared object without collectives runs its blocks in a plain loop: the same order, no fiber
// (its scheduler counts stay 0), __shared__ memory refilled at each block's start.
void check_plain_loop() {
  const PlainKernels& k = plain_kernels();
  constexpr unsigned kBlocks = 3, kX = 8, kY = 2, kZ = 2, kThreads = kX * kY * kZ;
  std::vector<int> sequence(kBlocks * kThreads, -1);
  std::vector<unsigned> first_bits(kBlocks * kThreads, 0);
  REQUIRE(k.order(sequence.data(), first_bits.data(), kBlocks, kX, kY, kZ) == 0);
  size_t i = 0;
  for (unsigned b = 0; b < kBlocks; ++b)
    for (unsigned z = 0; z < kZ; ++z)
      for (unsigned y = 0; y < kY; ++y)
        for (unsigned x = 0; x < kX; ++x, ++i) {
          CHECK(sequence[i] == static_cast<int>(b * 10000 + z * 100 + y * 10 + x));
          CHECK(first_bits[i] == 0xffffffffu);
        }
  Stats s{};
  k.stats(s.data());
  CHECK(s == Stats{0, 0, 0, 0, 0, 0, 0, 64 * sizeof(unsigned)});
}

// The MMA kinds as warp_kernels.cu numbers them.
enum Kind { kF16 = 0, kBF16 = 1, kTF32 = 2 };
constexpr int kMaxIterations = 8;  // warp_kernels.cu's frags layout

int k_of(Kind kind) { return kind == kTF32 ? 4 : 8; }

// x rounded to the MMA's input type (to nearest even; tf32: 10 mantissa bits), and its bits as the
// operand register holds them (16 bits for f16 and bf16, the float's 32 for tf32).
uint32_t input_bits(Kind kind, float x) {
  if (kind == kF16) return emu::float_to_half_bits_rn(x);
  if (kind == kBF16) return emu::float_to_bfloat16_bits_rn(x);
  return emu::round_shift_rne(emu::f32_to_bits(x), 13) << 13;  // finite, small values only
}
float input_value(Kind kind, uint32_t bits) {
  if (kind == kF16) return emu::half_bits_to_float(static_cast<uint16_t>(bits));
  if (kind == kBF16) return emu::bfloat16_bits_to_float(static_cast<uint16_t>(bits));
  return emu::f32_from_bits(bits);
}

// One MMA's operands: A (16 x K), B (K x 8), row-major, already of the input type.
struct Operands {
  std::vector<float> a, b;
};

// Lane `lane`'s a0, a1, b0, as the PTX ISA lays them out (g = lane >> 2, t = lane % 4).
std::array<uint32_t, 3> fragment(Kind kind, const Operands& o, unsigned lane) {
  const unsigned g = lane >> 2, t = lane % 4;
  const int k = k_of(kind);
  const auto A = [&](unsigned r, unsigned c) { return input_bits(kind, o.a[r * k + c]); };
  const auto B = [&](unsigned r, unsigned c) { return input_bits(kind, o.b[r * 8 + c]); };
  if (kind == kTF32) return {A(g, t), A(g + 8, t), B(t, g)};
  return {A(g, 2 * t) | A(g, 2 * t + 1) << 16, A(g + 8, 2 * t) | A(g + 8, 2 * t + 1) << 16, B(2 * t, g) | B(2 * t + 1, g) << 16};
}

// C or D (16 x 8, row-major) element of lane `lane`'s register i.
size_t acc_index(unsigned lane, int i) {
  const unsigned g = lane >> 2, t = lane % 4;
  return (g + (i >= 2 ? 8 : 0)) * 8 + 2 * t + (i & 1);
}

// Random operands of the input type: integers in [-4, 4], or uniform in [-1, 1] rounded.
Operands random_operands(Kind kind, std::mt19937& rng, bool integers) {
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  const auto draw = [&] {
    const float x = integers ? static_cast<float>(small(rng)) : real(rng);
    return input_value(kind, input_bits(kind, x));
  };
  Operands o;
  o.a.resize(16 * static_cast<size_t>(k_of(kind)));
  o.b.resize(static_cast<size_t>(k_of(kind)) * 8);
  for (float& x : o.a) x = draw();
  for (float& x : o.b) x = draw();
  return o;
}

// The MMAs' fragment layouts, from elements placed by hand.
void check_mma_layouts() {
  const WarpKernels& k = kernels();
  // Per kind: a few operand words set in single lanes (all others 0), C one element, and the lanes
  // and registers of D that must hold the products, worked out from the PTX ISA's tables
  // (groupID g = lane >> 2, threadID_in_group t = lane % 4).
  struct Probe {
    Kind kind;
    std::vector<std::array<uint32_t, 4>> words;  // lane, register (0: a0, 1: a1, 2: b0), value bits
    std::vector<std::array<float, 3>> expect;    // lane, d register, value (besides C's element)
  };
  const uint32_t h1 = 0x3c00, h2 = 0x4000, h3 = 0x4200;  // 1, 2, 3 as halves
  const uint32_t b1 = 0x3f80, b2 = 0x4000, b3 = 0x4040;  // as bfloat16
  const auto f = [](float x) { return emu::f32_to_bits(x); };
  const std::vector<Probe> probes = {
      // m16n8k8: lane 5 (g 1, t 1) a0 low = A[1][2] = 1; lane 13 (g 3, t 1) b0 low = B[2][3] = 1:
      // D[1][3] = 1 in lane 5 (g 1, t 1), d1. Lane 30 (g 7, t 2) a1 high = A[15][5] = 2; lane 26
      // (g 6, t 2) b0 high = B[5][6] = 3: D[15][6] = 6 in lane 31 (g 7, t 3), d2.
      {kF16, {{5, 0, h1, 0}, {13, 2, h1, 0}, {30, 1, h2 << 16, 0}, {26, 2, h3 << 16, 0}}, {{5, 1, 1.0f}, {31, 2, 6.0f}}},
      {kBF16, {{5, 0, b1, 0}, {13, 2, b1, 0}, {30, 1, b2 << 16, 0}, {26, 2, b3 << 16, 0}}, {{5, 1, 1.0f}, {31, 2, 6.0f}}},
      // m16n8k4: lane 9 (g 2, t 1) a0 = A[2][1] = 1.5; lane 29 (g 7, t 1) b0 = B[1][7] = 2: D[2][7] =
      // 3 in lane 11 (g 2, t 3), d1. Lane 2 (g 0, t 2) a1 = A[8][2] = -1 and b0 = B[2][0] = 4:
      // D[8][0] = -4 in lane 0, d2. The 13 low bits of a tf32 operand are ignored.
      {kTF32, {{9, 0, f(1.5f) | 0x1fffu, 0}, {29, 2, f(2.0f) | 0x1000u, 0}, {2, 1, f(-1.0f), 0}, {2, 2, f(4.0f) | 0x0fffu, 0}},
       {{11, 1, 3.0f}, {0, 2, -4.0f}}},
  };
  for (const Probe& p : probes) {
    INFO("kind " << p.kind);
    std::vector<unsigned> frags(32 * 3, 0);
    for (const auto& w : p.words) frags[w[0] * 3 + w[1]] |= w[2];
    std::vector<float> c(32 * 4, 0.0f);
    c[17 * 4 + 3] = 0.5f;  // C[12][3]: lane 17 (g 4, t 1), c3; D's element in the same place
    std::vector<float> expect(32 * 4, 0.0f);
    expect[17 * 4 + 3] = 0.5f;
    for (const auto& e : p.expect) expect[static_cast<size_t>(e[0]) * 4 + static_cast<size_t>(e[1])] += e[2];
    std::vector<float> d(3 * 32 * 4, -7.0f);
    REQUIRE(k.mma_direct(frags.data(), c.data(), d.data(), p.kind) == 0);
    for (size_t i = 0; i < expect.size(); ++i) {
      INFO("lane " << i / 4 << ", d" << i % 4);
      CHECK(d[i] == expect[i]);        // spmmc_emulation::mma_*, C and D apart
      CHECK(d[128 + i] == expect[i]);  // SPMMC_MMA_* into acc[1]
      CHECK(d[256 + i] == 0.0f);       // acc[0] untouched
    }
  }
}

// Runs, for `kind`, two warps (3 and 5 iterations of the MMA in a loop, each on its own operands)
// through the SPMMC_MMA_* hook and checks D against the float64 reference, exactly or within the
// bound, and bit for bit against fmaf in the documented order.
void check_mma_loop(Kind kind, bool integers, uint32_t seed) {
  const WarpKernels& k = kernels();
  std::mt19937 rng(seed);
  const int iterations[2] = {3, 5};
  std::vector<unsigned> frags(2 * kMaxIterations * 32 * 3, 0);
  std::vector<float> c(2 * 32 * 4), d(2 * 32 * 4, -7.0f);
  std::vector<std::vector<Operands>> operands(2);
  std::vector<std::array<float, 128>> cm(2);  // C of each warp, 16 x 8
  std::uniform_int_distribution<int> small(-4, 4);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  for (unsigned w = 0; w < 2; ++w) {
    for (float& x : cm[w]) x = integers ? static_cast<float>(small(rng)) : real(rng);
    for (unsigned lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) c[(32 * w + lane) * 4 + static_cast<unsigned>(i)] = cm[w][acc_index(lane, i)];
    for (int it = 0; it < iterations[w]; ++it) {
      operands[w].push_back(random_operands(kind, rng, integers));
      for (unsigned lane = 0; lane < 32; ++lane) {
        const auto words = fragment(kind, operands[w].back(), lane);
        for (unsigned r = 0; r < 3; ++r) frags[((w * kMaxIterations + static_cast<unsigned>(it)) * 32 + lane) * 3 + r] = words[r];
      }
    }
  }
  REQUIRE(k.mma_hook(frags.data(), c.data(), d.data(), kind, iterations, 2) == 0);
  const int kk = k_of(kind);
  for (unsigned w = 0; w < 2; ++w)
    for (unsigned lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        const size_t e = acc_index(lane, i), row = e / 8, col = e % 8;
        double reference = cm[w][e], magnitude = std::fabs(cm[w][e]);
        float chain = cm[w][e];  // fmaf over the iterations, then k, in order
        for (const Operands& o : operands[w])
          for (int kx = 0; kx < kk; ++kx) {
            const double product = static_cast<double>(o.a[row * kk + kx]) * o.b[kx * 8 + col];
            reference += product, magnitude += std::fabs(product);
            chain = std::fmaf(o.a[row * kk + kx], o.b[kx * 8 + col], chain);
          }
        const float got = d[(32 * w + lane) * 4 + static_cast<unsigned>(i)];
        INFO("warp " << w << ", lane " << lane << ", d" << i << " = D[" << row << "][" << col << "]");
        CHECK(got == chain);
        if (integers) {
          CHECK(got == reference);
        } else {
          // Recursive summation of n = K x iterations exact products onto C, each step rounded:
          // |error| <= gamma_n (|C| + sum |products|), gamma_n = n u / (1 - n u), u = 2^-24.
          const double n = static_cast<double>(kk * iterations[w]), u = std::ldexp(1.0, -24);
          CHECK(std::fabs(got - reference) <= n * u / (1.0 - n * u) * magnitude);
        }
      }
}

// __byte_perm: byte n of the result is byte s<4n+2:4n> of y:x (the selector's fourth bits unused, as
// CUDA documents it).
void check_byte_perm() {
  const WarpKernels& k = kernels();
  const unsigned x = 0x33221100u, y = 0x77665544u;  // byte i of y:x is 0x11 * i
  CHECK(k.byte_perm(x, y, 0x5410) == 0x55441100u);  // the low halves of x and y
  CHECK(k.byte_perm(x, y, 0x7632) == 0x77663322u);  // the high halves
  CHECK(k.byte_perm(x, y, 0x0123) == 0x00112233u);  // x reversed
  CHECK(k.byte_perm(x, y, 0xcdef) == 0x44556677u);  // the selector's fourth bit ignored: y reversed
}

// ldmatrix.x4.trans and stmatrix.x4.trans: lane 4g + t's register j holds elements g of rows 2t
// (low half) and 2t + 1 of matrix j (the PTX ISA's fragment of ldmatrix, transposed), whichever
// shared-memory piece each row lies at; stmatrix.trans of those registers puts the rows back.
void check_matrices() {
  const WarpKernels& k = kernels();
  std::vector<unsigned short> in(256), out(256, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned short>(0x100 * (i / 64) + i % 64);  // matrix j, element e: 0x100 j + e
  std::vector<int> slot(32), back(32);
  for (int l = 0; l < 32; ++l) slot[static_cast<size_t>(l)] = (l * 7 + 3) % 32, back[static_cast<size_t>(l)] = 31 - l;
  std::vector<unsigned> frags(128, 0);
  REQUIRE(k.matrix(in.data(), slot.data(), back.data(), frags.data(), out.data()) == 0);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned j = 0; j < 4; ++j) {
      const unsigned g = lane / 4, t = lane % 4;
      const unsigned lo = 0x100 * j + 8 * (2 * t) + g, hi = 0x100 * j + 8 * (2 * t + 1) + g;
      INFO("lane " << lane << ", matrix " << j);
      CHECK(frags[4 * lane + j] == (lo | hi << 16));
    }
  CHECK(out == in);
}

struct ChildResult {
  bool aborted = false;  // died of SIGABRT
  int status = 0;
  std::string err;       // its stderr
};

// Runs fault case `which` of warp_kernels.cu in a forked child with stderr captured.
ChildResult run_fault(int which) {
  const WarpKernels& k = kernels();
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    signal(SIGABRT, SIG_DFL);  // not the test framework's handler: die as a plain abort() does
    close(fds[0]);
    dup2(fds[1], 2);
    k.fault(which);
    _exit(0);
  }
  close(fds[1]);
  ChildResult r;
  char buffer[4096];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;) r.err.append(buffer, static_cast<size_t>(got));
  close(fds[0]);
  REQUIRE(waitpid(pid, &r.status, 0) == pid);
  r.aborted = WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT;
  return r;
}

// Collectives not reached by all, divergence and deadlock abort with a message.
void check_faults() {
  const std::vector<std::pair<int, std::string>> cases = {
      {0, "spmmc_emulation: __shfl_sync (width 32, 4-byte value) (mask 0xffffffff) reached by lanes 0-15 of warp 0 of "
          "block (0,0,0), but lane 16 returned without reaching it"},
      {1, "spmmc_emulation: thread (40,0,0) of block (0,0,0) returned while 40 of the 64 threads wait at __syncthreads"},
      {2, "__shfl_xor_sync (mask 0xffffffff) reached by lane 1 of warp 0 of block (0,0,0) after lane(s) 0 of its mask had "
          "returned"},
      {3, "warp 0 of block (0,0,0) diverged: lanes 0-15 wait at __shfl_sync (width 32, 4-byte value) (mask 0xffffffff), "
          "lane 16 reached __ballot_sync with the same mask"},
      {4, "deadlock in block (0,0,0) of 32 threads: 32 threads wait and none can go on. 16 wait at __syncthreads (the first: "
          "thread (16,0,0)). Warp 0: lanes 0-15 wait at __shfl_sync (width 32, 4-byte value) (mask 0xffffffff) for lanes "
          "16-31, which wait at __syncthreads (lanes 16-31)."},
      {5, "executed mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 in a warp of only 16 threads: mma.sync.aligned needs a "
          "full warp of 32"},
      {6, "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 (mask 0xffffffff) reached by lanes 0-15 of warp 0 of block "
          "(0,0,0), but lane 16 returned without reaching it"},
      {7, "thread (16,0,0) (warp 0, lane 16) of block (0,0,0) called __shfl_sync with mask 0x0000ffff, which does not name "
          "its own lane"},
      {8, "__syncwarp called outside an emulated kernel launch"},
      {9, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16: lane 5's row address"},
  };
  for (const auto& [which, message] : cases) {
    INFO("fault case " << which);
    const ChildResult r = run_fault(which);
    INFO("stderr: " << r.err);
    CHECK(r.aborted);
    CHECK(r.err.find(message) != std::string::npos);
  }
}

// Two test cases rather than one per check: each process (CTest runs one per test case) builds the
// kernels' shared object once, a compile of about 2 s.
TEST_CASE("warp emulation: shuffles, votes, __syncthreads and __shared__, thread order, faults", "[codegen][warp]") {
  SECTION("shuffles of every width and type") { check_shuffles(); }
  SECTION("ballot, any and all, two masks at once") { check_votes(); }
  SECTION("__syncthreads and __shared__ memory, per block") { check_block_sum(); }
  SECTION("a kernel without collectives runs its threads in order, one switch per block") { check_order(); }
  SECTION("a shared object without collectives runs its blocks in a plain loop") { check_plain_loop(); }
  SECTION("__byte_perm selects bytes of y:x") { check_byte_perm(); }
  SECTION("collectives not reached by all, divergence and deadlock abort with a message") { check_faults(); }
}

TEST_CASE("warp emulation: the tensor-core MMAs", "[codegen][warp]") {
  SECTION("ldmatrix and stmatrix (.x4.trans), rows anywhere in shared memory") { check_matrices(); }
  SECTION("fragment layouts, from elements placed by hand") { check_mma_layouts(); }
  SECTION("in a loop, exact on small integers") {
    check_mma_loop(kF16, true, 1);
    check_mma_loop(kBF16, true, 2);
    check_mma_loop(kTF32, true, 3);
  }
  SECTION("in a loop on random values, within the bound and bit for bit with fmaf in k order") {
    check_mma_loop(kF16, false, 4);
    check_mma_loop(kBF16, false, 5);
    check_mma_loop(kTF32, false, 6);
  }
}

}  // namespace
}  // namespace spmmc
