// Issue 27: long rows at small n (docs/design/small-n.md, "What is left"). One column per thread
// walks a row's products as one chain of loads and FMAs, so a layer of few long rows (the ResNet-50
// group-4 3x3 layers: 512 rows of 460-1382 products) at n = 32 leaves the SMs with a few warps,
// each waiting on its loads. This study spreads a row's LOADS over W warps and keeps its SUM in
// column order (batch invariance: every path of a file sums each element's products in order from
// +0, one rounding per FMA), on one real layer's pattern (seeded weights and B, L2 flushed before
// every run):
//   one column   the generic family's one-column-per-thread kernel (batches of 32 loads in flight,
//                blocks of 128 threads: 128 / w rows of w threads, w = n rounded up to a power of
//                two up to 32, then to a multiple of 32)
//   split W/P    a block of W warps per row and 32 columns: each round, the W warps load P of the
//                row's products (their weights and B-values) into shared memory, lane j the
//                B-value of column j; warp 0 sums the round in order while warps 1..W-1 load the
//                next one (two buffers, one barrier per round)
//   tree W       DA-SpMM's parallel reduction: W warps per row, a lane per product with 32 sums (a
//                float4 line of B per product), a butterfly of shuffles, out of order (n % 32 == 0)
// Every in-order variant must agree bit for bit with the first (the same sums in the same order) and with a
// float64 reference of sampled rows. One Markdown table on stdout.
//
// usage: row_split FILE.smtx N [--runs R] [--warmup W]        exit 0, 1 mismatch, 64, 69, 70
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common.cuh"
#include "smtx.cuh"

namespace {

// ---- one column per thread, batches of 32 loads in flight ---------------------------------------
__global__ void __launch_bounds__(128) one_column(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                 const float* __restrict__ ws, int m, const float* __restrict__ B,
                                                 float* __restrict__ C, int n) {
  constexpr int kBatch = 32;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col >= n || row >= m) return;
  int p = row_ptr[row];
  const int end = row_ptr[row + 1];
  float acc = 0.0f;
  for (; p + kBatch <= end; p += kBatch) {
    float b[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) b[i] = __ldg(&B[int64_t(__ldg(&cols[p + i])) * n + col]);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) acc = fmaf(__ldg(&ws[p + i]), b[i], acc);
  }
  for (; p < end; ++p) acc = fmaf(__ldg(&ws[p]), __ldg(&B[int64_t(__ldg(&cols[p])) * n + col]), acc);
  C[int64_t(row) * n + col] = acc;
}

// ---- W warps per row: the loads spread, the sum in order -----------------------------------------
// Round r of a row holds its products r*P .. r*P+P-1: weight in wsh[buf][q], the B-value of column
// j in bsh[buf][q][j]. `loaders` warps starting at warp `first` fill a round, stride `loaders`.
template <int W, int P>
struct SplitShared {
  float w[2][P];
  float b[2][P][32];
};

template <int W, int P>
__device__ __forceinline__ void load_round(SplitShared<W, P>& sh, int buf, const int* __restrict__ cols,
                                           const float* __restrict__ ws, const float* __restrict__ B, int n, int col,
                                           int start, int count, int first, int loaders) {
  const int lane = threadIdx.x, warp = threadIdx.y;
  if (warp < first) return;
#pragma unroll 4
  for (int q = warp - first; q < P; q += loaders) {
    if (q < count) {
      const int k = __ldg(&cols[start + q]);
      if (lane == 0) sh.w[buf][q] = __ldg(&ws[start + q]);
      sh.b[buf][q][lane] = col < n ? __ldg(&B[int64_t(k) * n + col]) : 0.0f;
    }
  }
}

template <int W, int P>
__global__ void __launch_bounds__(32 * W) split_row(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                   const float* __restrict__ ws, const float* __restrict__ B,
                                                   float* __restrict__ C, int n) {
  __shared__ SplitShared<W, P> sh;
  const int row = blockIdx.y;
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int col = blockIdx.x * 32 + lane;
  const int start = row_ptr[row], length = row_ptr[row + 1] - start;
  const int rounds = (length + P - 1) / P;
  float acc = 0.0f;
  if (rounds > 0) load_round<W, P>(sh, 0, cols, ws, B, n, col, start, min(P, length), 0, W);
  __syncthreads();
  for (int r = 0; r < rounds; ++r) {
    const int buf = r & 1;
    if (warp == 0) {
      const int count = min(P, length - r * P);
      if (count == P) {
#pragma unroll 16
        for (int q = 0; q < P; ++q) acc = fmaf(sh.w[buf][q], sh.b[buf][q][lane], acc);
      } else {
        for (int q = 0; q < count; ++q) acc = fmaf(sh.w[buf][q], sh.b[buf][q][lane], acc);
      }
    } else if (r + 1 < rounds) {
      const int next = (r + 1) * P;
      load_round<W, P>(sh, buf ^ 1, cols, ws, B, n, col, start + next, min(P, length - next), 1, W - 1);
    }
    __syncthreads();
  }
  if (warp == 0 && col < n) C[int64_t(row) * n + col] = acc;
}

// ---- a tree of partial sums (out of order) -------------------------------------------------------
// DA-SpMM's RB+RM+PR for long rows: W warps per row and 32 columns; lane l of warp w takes products
// p = start + 32 w + l, + 32 W, ... and loads its product's 32 values of B (eight float4s: 128
// bytes, a whole line), so each lane keeps 32 independent sums instead of one chain; a butterfly of
// shuffles (16 + 8 + 4 + 2 + 1) leaves column l's sum in lane l, and the W warps add theirs through
// shared memory. The sum order is a tree that depends on the warps: not batch invariant (it would
// need an opt-in such as `--sum-order any`). Needs n % 32 == 0.
// Stage M of the butterfly: a lane with bit M keeps the upper half of its 2M columns (acc[M..2M))
// and adds its partner's (lane ^ M) upper half, the other lane the lower halves; after M = 1, lane l
// holds column l's sum in acc[0].
template <int M>
__device__ __forceinline__ void butterfly(float (&acc)[32], int lane) {
  const bool up = (lane & M) != 0;
#pragma unroll
  for (int i = 0; i < M; ++i) {
    const float lo = acc[i], hi = acc[i + M];
    const float got = __shfl_xor_sync(0xffffffffu, up ? lo : hi, M);
    acc[i] = (up ? hi : lo) + got;
  }
  if constexpr (M > 1) butterfly<M / 2>(acc, lane);
}

template <int W>
__global__ void __launch_bounds__(32 * W) tree_row(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                  const float* __restrict__ ws, const float* __restrict__ B,
                                                  float* __restrict__ C, int n) {
  __shared__ float part[W][32];
  const int row = blockIdx.y, lane = threadIdx.x, warp = threadIdx.y;
  const int64_t c0 = int64_t(blockIdx.x) * 32;
  const int end = row_ptr[row + 1];
  float acc[32] = {};
#pragma unroll 2
  for (int p = row_ptr[row] + warp * 32 + lane; p < end; p += 32 * W) {
    const float w = __ldg(&ws[p]);
    const float4* b = reinterpret_cast<const float4*>(B + int64_t(__ldg(&cols[p])) * n + c0);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float4 t = __ldg(b + j);
      acc[4 * j] = fmaf(w, t.x, acc[4 * j]);
      acc[4 * j + 1] = fmaf(w, t.y, acc[4 * j + 1]);
      acc[4 * j + 2] = fmaf(w, t.z, acc[4 * j + 2]);
      acc[4 * j + 3] = fmaf(w, t.w, acc[4 * j + 3]);
    }
  }
  butterfly<16>(acc, lane);
  float* out = C + int64_t(row) * n + c0 + lane;
  if constexpr (W == 1) {
    *out = acc[0];
  } else {
    part[warp][lane] = acc[0];
    __syncthreads();
    if (warp == 0) {
      float sum = 0.0f;
#pragma unroll
      for (int q = 0; q < W; ++q) sum += part[q][lane];
      *out = sum;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  mb::Options o = mb::parse_options(argc, argv, " FILE.smtx N");
  if (o.rest.size() != 2) {
    std::fprintf(stderr, "usage: %s FILE.smtx N [--runs R] [--warmup W]\n", argv[0]);
    return mb::kExitUsage;
  }
  const Csr a = read_smtx(o.rest[0]);
  const long long n_arg = std::atoll(o.rest[1].c_str());
  if (n_arg < 1 || n_arg > 4096) {
    std::fprintf(stderr, "N must be in 1..4096\n");
    return mb::kExitUsage;
  }
  const int n = int(n_arg);
  if (a.m > 65535) {
    std::fprintf(stderr, "%s: %d rows, more than the 65535 blocks of grid.y the split kernel launches\n", o.rest[0].c_str(), a.m);
    return mb::kExitUsage;
  }
  mb::require_gpu(argv[0]);
  const long nnz = long(a.col.size());
  int longest = 0;
  for (int i = 0; i < a.m; ++i) longest = std::max(longest, a.row_ptr[i + 1] - a.row_ptr[i]);

  CsrStudy study(a, n, o);
  const DeviceArray d_row_ptr(a.row_ptr);
  const DeviceArray d_col(a.col);
  const DeviceArray d_w(a.w);
  const DeviceArray d_b(study.b());
  float* const d_c = study.c();

  std::printf("## %s, n = %d (%d x %d, %ld non-zeros, longest row %d)\n\n", o.rest[0].c_str(), n, a.m, a.k, nnz, longest);
  std::printf("| variant | µs | TFLOP/s | × one column | bit-equal | max rel error |\n|---|--:|--:|--:|---|--:|\n");
  auto measure = [&](const std::string& name, const std::function<void()>& launch, bool in_order = true) {
    const CsrStudy::Result r = study.measure(launch, in_order);
    std::printf("| %s | %.1f | %.2f | %.2f | %s | %.1e |\n", name.c_str(), r.us, 2.0 * nnz * n / (r.us * 1e6),
                r.first_us / r.us, in_order ? (r.equal ? "yes" : "NO") : "— (out of order)", r.error);
    std::fflush(stdout);
  };

  // one column per thread, as the generic family launches it below n = 512
  {
    int width = 1;
    while (width < n && width < 32) width *= 2;
    if (n > 32) width = std::min((n + 31) / 32 * 32, 128);
    const int rows = 128 / width;
    const dim3 grid{unsigned((n + width - 1) / width), unsigned((a.m + rows - 1) / rows)}, block{unsigned(width), unsigned(rows)};
    measure("one column per thread (batches of 32)",
            [&] { one_column<<<grid, block>>>(d_row_ptr.get(), d_col.get(), d_w.get(), a.m, d_b.get(), d_c, n); });
  }
  auto split = [&](auto kernel, int warps, int products) {
    const dim3 grid{unsigned((n + 31) / 32), unsigned(a.m)}, block{32u, unsigned(warps)};
    measure(mb::format("split: %d warps per row, rounds of %d products", warps, products),
            [&] { kernel<<<grid, block>>>(d_row_ptr.get(), d_col.get(), d_w.get(), d_b.get(), d_c, n); });
  };
  split(split_row<2, 64>, 2, 64);
  split(split_row<4, 64>, 4, 64);
  split(split_row<4, 128>, 4, 128);
  split(split_row<8, 64>, 8, 64);
  split(split_row<8, 128>, 8, 128);
  split(split_row<16, 128>, 16, 128);
  auto tree = [&](auto kernel, int warps) {
    if (n % 32) return;
    const dim3 grid{unsigned(n / 32), unsigned(a.m)}, block{32u, unsigned(warps)};
    measure(mb::format("tree: %d warps per row, a lane per product, 32 sums each (out of order)", warps),
            [&] { kernel<<<grid, block>>>(d_row_ptr.get(), d_col.get(), d_w.get(), d_b.get(), d_c, n); }, false);
  };
  tree(tree_row<1>, 1);
  tree(tree_row<2>, 2);
  tree(tree_row<4>, 4);
  std::printf("\nrow_split: %s\n",
              study.failures() ? "MISMATCH (a variant differs from the first or from float64)" : "all agree");
  return study.failures() ? 1 : 0;
}
