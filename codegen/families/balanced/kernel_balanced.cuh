/*@HEADER_COMMENT*/// Template of the balanced family's device code (codegen/families/balanced/kernel_balanced.cuh):
// A's CSR arrays (balanced_csr.cuh), its pieces placed in blocks, and the kernel. The printer
// (print_balanced.h) fills it and the emitter pastes it into NAME.cu (kernel.cu) in place of the generic
// family's code, or beside the generic path as another family's small-n path (then without the CSR
// arrays: the generic path's serve it).
// Needs int64_t, spmmc_elem (float) and the CUDA built-ins from its includer.
/*@*/
// The balanced family (docs/design/balanced.md): rows longer than the piece length are cut, ahead of
// time and from A alone, into at most spmmc_balanced_warps pieces of equal size (longer pieces where
// a row has more products than that many pieces of the length hold), every other row is one piece;
// pieces run one per warp (or per lane group: 2 or 4 pieces per warp, for small n), longest first, a
// row's pieces in one block. A warp (group) sums its piece's products for 32 x V (lanes x V)
// adjacent columns of C (V = 4, 2 or 1 per lane, vector loads of B),
// each column's products in column order from +0, one rounding per FMA: the warp loads 32 products'
// columns and weights at a time, one per lane, and hands them to every lane by shuffles (dgSPARSE's
// coalesced row caching), eight loads of B in flight per lane. A whole row's sum is stored; a cut
// row's pieces leave theirs in shared memory and the row's last warp to finish adds them in piece
// order (a counter per row in shared memory): no workspace, no atomics on global memory, the same
// sums at every n (batch invariance; the sums of a cut row differ from one chain in column order).
/*@CSR_ARRAYS*/#include "balanced_csr.cuh"
/*@*/constexpr int spmmc_balanced_warps = /*@WARPS*/16/*@*/;  // warps per block
constexpr int spmmc_balanced_groups = /*@GROUPS*/1/*@*/;  // pieces per warp, each on 32 / groups lanes
constexpr int spmmc_balanced_lanes = 32 / spmmc_balanced_groups;
constexpr int spmmc_balanced_slots = spmmc_balanced_warps * spmmc_balanced_groups;  // pieces per block
constexpr int spmmc_balanced_blocks = /*@BLOCKS*/1/*@*/;  // grid.x
constexpr int spmmc_balanced_piece_length = /*@PIECE_LENGTH*/64/*@*/;  // products; rows longer are cut
// Loads of B in flight per lane, by the lane's columns V, and the last count % ahead products of a
// round loaded one after the other (SPMMC_BALANCED_TAIL 0) or as one predicated batch (1): study hooks
// (-D), whose alternatives ran slower (docs/benchmarks.md, *Seventh round*).
#ifndef SPMMC_BALANCED_AHEAD4
#define SPMMC_BALANCED_AHEAD4 8
#endif
#ifndef SPMMC_BALANCED_AHEAD2
#define SPMMC_BALANCED_AHEAD2 8
#endif
#ifndef SPMMC_BALANCED_AHEAD1
#define SPMMC_BALANCED_AHEAD1 8
#endif
#ifndef SPMMC_BALANCED_TAIL
#define SPMMC_BALANCED_TAIL 0
#endif
template <int V>
constexpr int spmmc_balanced_ahead = V == 4 ? SPMMC_BALANCED_AHEAD4 : V == 2 ? SPMMC_BALANCED_AHEAD2 : SPMMC_BALANCED_AHEAD1;
// The small-n path's pairs (docs/design/small-n.md): every n below this (0: none) takes
// spmmc_balanced_pairs_v1, two pieces per warp on 16 lanes each, the same slots in blocks of half the
// warps (a file of one piece per warp only).
#define SPMMC_BALANCED_PAIRS_BELOW /*@PAIRS_BELOW*/0/*@*/
static_assert(SPMMC_BALANCED_PAIRS_BELOW == 0 || (spmmc_balanced_groups == 1 && spmmc_balanced_warps % 2 == 0),
              "pairs of pieces per warp only in a file of one piece per warp and an even number of warps");
static_assert(spmmc_balanced_warps >= 1 && spmmc_balanced_warps <= 32 && spmmc_balanced_piece_length >= 1 &&
                  (spmmc_balanced_groups == 1 || spmmc_balanced_groups == 2 || spmmc_balanced_groups == 4),
              "1..32 warps per block, 1, 2 or 4 pieces per warp, pieces of at least one product");

// The piece of each slot of the grid (block b's slot s at b * spmmc_balanced_slots + s; slot s is
// lane group s % spmmc_balanced_groups of warp s / spmmc_balanced_groups): its row (-1: an idle
// slot), its products [begin, end), and first + spmmc_balanced_slots x pieces: the slot of the row's
// first piece in the block and the row's pieces.
__device__ const int4 spmmc_piece[] = {/*@PIECES*/{-1, 0, 0, 16}/*@*/};
// The small-n path's second table (docs/design/small-n.md, *Uneven rows from n = 512*; SPMMC_BALANCED_MID
// 1): the same rows cut into pieces about as long as A's mean row (spmmc_balanced_mid_piece_length), in
// blocks of the same warps, for the n where the path's pieces of 32 cost more than they gain but A's
// longest rows would hold up a warp per row; the kernel spmmc_balanced_mid_v4 reads it.
// The printer writes the table only where the file has it (A's arrays on the host are found in the text).
#define SPMMC_BALANCED_MID /*@MID*/0/*@*/
#if SPMMC_BALANCED_MID
/*@MID_TABLE*/constexpr int spmmc_balanced_mid_blocks = 1;  // its grid.x
constexpr int spmmc_balanced_mid_piece_length = 64;
__device__ const int4 spmmc_piece_mid[] = {{-1, 0, 0, 16}};
/*@*/static_assert(spmmc_balanced_groups == 1 && spmmc_balanced_mid_piece_length >= 1,
              "the second table: one piece per warp, pieces of at least one product");
#endif

// V adjacent floats of B (one vector load: 16 or 8 bytes aligned, as the launch ensures), and of C;
// four and one through the dtype's functions (templates/dtype_fp32.cuh).
template <int V>
__device__ __forceinline__ void spmmc_balanced_load(const float* p, float (&r)[V]) {
  if constexpr (V == 4) {
    spmmc_load_b4(p, r);
  } else if constexpr (V == 2) {
    const float2 t = __ldg(reinterpret_cast<const float2*>(p));
    r[0] = t.x, r[1] = t.y;
  } else {
    r[0] = spmmc_load_b1(p);
  }
}
template <int V>
__device__ __forceinline__ void spmmc_balanced_store(float* p, const float (&r)[V]) {
  if constexpr (V == 4) spmmc_store_c4(p, r);
  else if constexpr (V == 2) *reinterpret_cast<float2*>(p) = make_float2(r[0], r[1]);
  else spmmc_store_c1(p, r[0]);
}

// The sum of products [p, end) for a lane's V columns (`at`: B + its first column, n: B's row stride),
// added to acc in order. Every lane of the group (`mask`; `lane` its index in the group) calls it
// alike (lanes past C's columns read columns 0..V-1 instead, and their sums are not stored: no branch
// around the loads).
template <int V, int L>
__device__ __forceinline__ void spmmc_balanced_sum(int p, int end, const float* __restrict__ at, int64_t n, unsigned mask,
                                                   int lane, float (&acc)[V]) {
  for (; p < end; p += L) {
    const int count = end - p < L ? end - p : L;
    const int my_col = lane < count ? __ldg(&spmmc_col_idx[p + lane]) : 0;
    const float my_w = lane < count ? __uint_as_float(__ldg(&spmmc_weight_bits[p + lane])) : 0.0f;
    int j = 0;
    constexpr int A = spmmc_balanced_ahead<V>;
    for (; j + A <= count; j += A) {
      float b[A][V];
      float w[A];
      for (int u = 0; u < A; ++u) {
        const int k = __shfl_sync(mask, my_col, j + u, L);
        w[u] = __shfl_sync(mask, my_w, j + u, L);
        spmmc_balanced_load<V>(at + k * n, b[u]);
      }
      for (int u = 0; u < A; ++u)
        for (int v = 0; v < V; ++v) acc[v] = fmaf(w[u], b[u][v], acc[v]);
    }
#if SPMMC_BALANCED_TAIL
    if (j < count) {
      float b[A][V];
      float w[A];
      for (int u = 0; u < A; ++u)
        if (j + u < count) {
          const int k = __shfl_sync(mask, my_col, j + u, L);
          w[u] = __shfl_sync(mask, my_w, j + u, L);
          spmmc_balanced_load<V>(at + k * n, b[u]);
        }
      for (int u = 0; u < A; ++u)
        if (j + u < count)
          for (int v = 0; v < V; ++v) acc[v] = fmaf(w[u], b[u][v], acc[v]);
    }
#else
    for (; j < count; ++j) {
      const int k = __shfl_sync(mask, my_col, j, L);
      const float w = __shfl_sync(mask, my_w, j, L);
      float b[V];
      spmmc_balanced_load<V>(at + k * n, b);
      for (int v = 0; v < V; ++v) acc[v] = fmaf(w, b[v], acc[v]);
    }
#endif
  }
}

// n = 1, lanes over products (docs/design/small-n.md, *n = 1 as a lane per product*): lane l of the
// group sums products p + l, p + l + L, ... < end of column 0 (`b`: B) in order from +0, and a butterfly
// of shuffles (xor L / 2, ..., 1) adds the lanes, so every lane of the group holds the piece's sum. On by
// the printer's value (spmmc compile leaves it out with --batch-invariant); `nvcc -DSPMMC_BALANCED_SPMV=0`
// leaves it out too (n = 1 then takes the path's or the family's other kernels). Not in the NVRTC form.
#ifndef SPMMC_BALANCED_SPMV
#define SPMMC_BALANCED_SPMV /*@SPMV*/0/*@*/
#endif
#if defined(__CUDACC_RTC__)
#undef SPMMC_BALANCED_SPMV
#define SPMMC_BALANCED_SPMV 0
#endif
#if SPMMC_BALANCED_SPMV
template <int L>
__device__ __forceinline__ float spmmc_balanced_spmv_sum(int p, int end, const float* __restrict__ b, unsigned mask, int lane) {
  float acc = 0.0f;
#ifdef __CUDA_ARCH__  // (not for a host build: the tests' emulation)
#pragma unroll 4
#endif
  for (p += lane; p < end; p += L)
    acc = fmaf(__uint_as_float(__ldg(&spmmc_weight_bits[p])), spmmc_load_b1(b + __ldg(&spmmc_col_idx[p])), acc);
  for (int step = L / 2; step > 0; step /= 2) acc += __shfl_xor_sync(mask, acc, step, L);
  return acc;
}
#endif

// All n columns of C, in blocks of 32 / G x V: block blockIdx.z * gridDim.y + blockIdx.y (the blocks
// past the last return). Each lane group of a warp takes its slot's piece (the groups of a warp run
// apart: their shuffles name their own lanes); G pieces per warp, so a block of the grid's
// spmmc_balanced_slots slots is spmmc_balanced_slots / G warps. The body of the kernels below, one per
// V (and G); with LanesOverProducts (V = 1, n = 1: spmmc_balanced_spmv) each piece by
// spmmc_balanced_spmv_sum instead, whose total lane 0 stores as its column's. `table`: the pieces the
// kernel reads (spmmc_piece, or spmmc_piece_mid).
template <int V, int G, bool LanesOverProducts = false>
__device__ __forceinline__ void spmmc_balanced_columns(const int4* table, const float* __restrict__ B, float* __restrict__ C,
                                                       int64_t n) {
  static_assert(!LanesOverProducts || V == 1, "lanes over products: one column");
  constexpr int L = 32 / G, S = spmmc_balanced_slots;
  __shared__ float partial[S][L * V];
  __shared__ unsigned arrived[S];
  // (with one piece per warp: the whole warp, as constants; ptxas's registers follow them)
  const int lane = static_cast<int>(threadIdx.x) & (L - 1);
  const int group = G == 1 ? 0 : (static_cast<int>(threadIdx.x) & 31) / L;
  const int slot = (static_cast<int>(threadIdx.x) >> 5) * G + group;
  const unsigned mask = G == 1 ? 0xffffffffu : (0xffffffffu >> (32 - L)) << (group * L);
  if (lane == 0) arrived[slot] = 0;
  __syncthreads();
  // A plain load, not __ldg: with __ldg of the int4 ptxas gave the four-column kernel 82 registers,
  // one block of 16 warps per SM, and it ran 1.4x slower on an H200 (docs/design/balanced.md); with
  // this one it takes 64 and two blocks fit.
  const int4 piece = table[blockIdx.x * S + slot];
  const int64_t col = (static_cast<int64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * L * V + lane * V;
  if (piece.x < 0 || col - lane * V >= n) return;
  const bool active = col < n;
  float acc[V];
  for (int v = 0; v < V; ++v) acc[v] = 0.0f;
#if SPMMC_BALANCED_SPMV
  if constexpr (LanesOverProducts)
    acc[0] = spmmc_balanced_spmv_sum<L>(piece.y, piece.z, B, mask, lane);
  else
#endif
    spmmc_balanced_sum<V, L>(piece.y, piece.z, B + (active ? col : 0), n, mask, lane, acc);
  const int first = piece.w % S, pieces = piece.w / S;
  float* const out = C + static_cast<int64_t>(piece.x) * n + col;
  if (pieces == 1) {
    if (active) spmmc_balanced_store<V>(out, acc);
    return;
  }
  for (int v = 0; v < V; ++v) partial[slot][lane * V + v] = acc[v];
  __threadfence_block();
  __syncwarp(mask);
  unsigned before = 0;
  if (lane == 0) before = atomicAdd(&arrived[first], 1u);
  before = __shfl_sync(mask, before, 0, L);
  if (before + 1 != static_cast<unsigned>(pieces)) return;
  // The writers fenced before their counts; lane 0 saw them all: its fence, then the group's
  // __syncwarp, order every lane's reads after their writes (racecheck, which knows only barriers,
  // still reports this fence-and-counter pattern: docs/design/balanced.md).
  __threadfence_block();
  __syncwarp(mask);
  float sum[V];
  for (int v = 0; v < V; ++v) sum[v] = 0.0f;
  for (int q = 0; q < pieces; ++q)
    for (int v = 0; v < V; ++v) sum[v] += *static_cast<volatile float*>(&partial[first + q][lane * V + v]);
  if (active) spmmc_balanced_store<V>(out, sum);
}

// The kernels (the tuner finds them by these names in the NVRTC form: codegen/families/balanced/
// balanced_launch.h). At most 64 registers, so that two blocks of 16 warps share an SM (one block per
// SM ran 1.4x slower on an H200): with one piece per warp ptxas takes 56-64 unasked (with a minimum of
// one block asked, 72-92); with several it takes up to 91 unless two blocks are asked (then it spills
// a few bytes). The printer writes the bounds (print_balanced.h).
#define SPMMC_BALANCED_BOUNDS /*@BOUNDS*/__launch_bounds__(32 * spmmc_balanced_warps)/*@*/
__global__ void SPMMC_BALANCED_BOUNDS
    spmmc_balanced_v4(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  spmmc_balanced_columns<4, spmmc_balanced_groups>(spmmc_piece, B, C, n);
}
__global__ void SPMMC_BALANCED_BOUNDS
    spmmc_balanced_v2(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  spmmc_balanced_columns<2, spmmc_balanced_groups>(spmmc_piece, B, C, n);
}
__global__ void SPMMC_BALANCED_BOUNDS
    spmmc_balanced_v1(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  spmmc_balanced_columns<1, spmmc_balanced_groups>(spmmc_piece, B, C, n);
}

#if SPMMC_BALANCED_PAIRS_BELOW > 0
// V = 1 and two pieces per warp: blocks of half the warps, four of them per SM at 64 registers.
__global__ void __launch_bounds__(16 * spmmc_balanced_slots, 4)
    spmmc_balanced_pairs_v1(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  spmmc_balanced_columns<1, 2>(spmmc_piece, B, C, n);
}
#endif

// n = 1 (where SPMMC_BALANCED_SPMV): lanes over each piece's products (spmmc_balanced_spmv_sum),
// a cut row's pieces added in piece order as above. Launched with one block of columns (grid.y = 1).
#if SPMMC_BALANCED_SPMV
__global__ void SPMMC_BALANCED_BOUNDS
    spmmc_balanced_spmv(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  spmmc_balanced_columns<1, spmmc_balanced_groups, true>(spmmc_piece, B, C, n);
}
#endif

#if SPMMC_BALANCED_MID
// The second table's kernel (one piece per warp: the path's schedules have one), four columns per lane
// only: with one column per lane it ran 0.92x the generic path's one column per thread at n = 1023
// (docs/design/small-n.md, *Uneven rows from n = 512*), so the entry point takes it where the launch
// would take V = 4 (spmmc_balanced_columns_per_lane).
__global__ void SPMMC_BALANCED_BOUNDS
    spmmc_balanced_mid_v4(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  spmmc_balanced_columns<4, 1>(spmmc_piece_mid, B, C, n);
}
#endif

#ifndef __CUDACC_RTC__  // the NVRTC form (the tuner's) has the kernels only
// The columns per lane V of a launch over n columns: 4 where n >= 4 x spmmc_balanced_lanes is a multiple
// of 4 and B and C are aligned to 16 bytes, else 2 where n >= 2 x spmmc_balanced_lanes is even and they are
// aligned to 8, else 1 (a group's lanes x V columns no wider than n: below, lanes would idle).
int spmmc_balanced_columns_per_lane(const float* B, const float* C, int64_t n) {
  const auto aligned = [](const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; };
  constexpr int64_t lanes = spmmc_balanced_lanes;
  if (n >= 4 * lanes && n % 4 == 0 && aligned(B, 16) && aligned(C, 16)) return 4;
  return n >= 2 * lanes && n % 2 == 0 && aligned(B, 8) && aligned(C, 8) ? 2 : 1;
}
// Launches `kernel`, a kernel of V = `v` columns per lane reading one table (`blocks`: its grid.x), over
// n columns: grid.y (and grid.z where they are more than 65535) covers them in blocks of
// spmmc_balanced_lanes x V.
cudaError_t spmmc_launch_balanced_columns(const void* kernel, int v, int blocks, const float* B, float* C, int64_t n,
                                          cudaStream_t stream) {
  void* args[] = {&B, &C, &n};
  const int64_t columns_per_block = spmmc_balanced_lanes * v;
  const int64_t column_blocks = (n + columns_per_block - 1) / columns_per_block;
  const int64_t y = column_blocks < 65535 ? column_blocks : 65535, z = (column_blocks + y - 1) / y;
  if (z > 65535) return cudaErrorInvalidValue;
  return cudaLaunchKernel(kernel, dim3(blocks, static_cast<unsigned>(y), static_cast<unsigned>(z)),
                          dim3(32 * spmmc_balanced_warps), args, 0, stream);
}
// The family's (or the path's) kernels over n columns; n = 1 by spmmc_balanced_spmv where the file has
// it; below SPMMC_BALANCED_PAIRS_BELOW the pairs kernel: V = 1, blocks of 16 columns.
cudaError_t spmmc_launch_balanced(const float* B, float* C, int64_t n, cudaStream_t stream) {
#if SPMMC_BALANCED_SPMV
  if (n == 1) {
    void* args[] = {&B, &C, &n};
    return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_balanced_spmv), dim3(spmmc_balanced_blocks),
                            dim3(32 * spmmc_balanced_warps), args, 0, stream);
  }
#endif
#if SPMMC_BALANCED_PAIRS_BELOW > 0
  if (n < SPMMC_BALANCED_PAIRS_BELOW) {
    void* args[] = {&B, &C, &n};
    const int64_t column_blocks = (n + 15) / 16;  // (n < 17: one)
    return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_balanced_pairs_v1),
                            dim3(spmmc_balanced_blocks, static_cast<unsigned>(column_blocks)), dim3(16 * spmmc_balanced_slots),
                            args, 0, stream);
  }
#endif
  const int v = spmmc_balanced_columns_per_lane(B, C, n);
  const void* kernel = v == 4   ? reinterpret_cast<const void*>(&spmmc_balanced_v4)
                       : v == 2 ? reinterpret_cast<const void*>(&spmmc_balanced_v2)
                                : reinterpret_cast<const void*>(&spmmc_balanced_v1);
  return spmmc_launch_balanced_columns(kernel, v, spmmc_balanced_blocks, B, C, n, stream);
}
#if SPMMC_BALANCED_MID
// The second table's launch, where the entry point takes it: n in its range and
// spmmc_balanced_columns_per_lane 4.
cudaError_t spmmc_launch_balanced_mid(const float* B, float* C, int64_t n, cudaStream_t stream) {
  return spmmc_launch_balanced_columns(reinterpret_cast<const void*>(&spmmc_balanced_mid_v4), 4, spmmc_balanced_mid_blocks, B,
                                       C, n, stream);
}
#endif
#endif  // __CUDACC_RTC__
