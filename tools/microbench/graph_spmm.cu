// Issue 28: kernels for irregular matrices and graphs, before any of them is emitted. DA-SpMM's
// design space (row balance or element balance, sequential or parallel reduction; B and C are
// row-major in spmmc's ABI, so its column-major axis is not studied) and dgSPARSE's coalesced row
// caching, on one matrix's pattern (seeded weights and B, L2 flushed before every run), against
// cuSPARSE's SpMM algorithms in the same process (their preprocessing untimed):
//   rb-sr         a warp per row and 32*V columns (V = 4, 2 or 1 floats per lane, vector loads of
//                 B): the row's column indices and weights loaded 32 at a time by the warp, one per
//                 lane, and handed to every lane by shuffles (coalesced row caching), eight loads
//                 of B in flight; the sum in column order. Rows in their order, or (`lpt`) longest
//                 first, as an ahead-of-time schedule can order them.
//   rb-pr G       a warp per row and 32*V/G columns, G groups of lanes taking every G-th product,
//                 the G partial sums added by shuffles (DA-SpMM's RB+RM+PR)
//   eb-sr P       a warp per P products (element balance, DA-SpMM's EB+RM+SR): each run of a row
//                 inside the warp's products summed in order and added to C with atomicAdd (C
//                 zeroed in the timed launch)
//   eb-pr         element balance with parallel reduction: a warp per 32 products, a lane per product,
//                 V columns of B at a time by vector loads, a segmented sum by shuffles over the lanes
//                 (DA-SpMM's EB+RM+PR with its conditional reduction; dgSPARSE's VSR with VDL); rows
//                 crossing a warp boundary added with atomicAdd (C zeroed in the timed launch)
//   split L       rows longer than L products cut into pieces of L (ahead of time, from A only),
//                 a warp per piece, longest first; a row's pieces written to a workspace and summed
//                 in piece order by the warp that finishes last (a counter per row and column
//                 block): deterministic, the same sums at every n
//   split L atomic the same pieces added to C with atomicAdd (C zeroed in the timed launch)
//   block W L     the pieces of a row (at most W, longer pieces where a row has more than W * L
//                 products) placed in one block of W warps and summed in piece order from shared
//                 memory by the row's last warp to finish: no workspace, deterministic
//   block ..., length classes in row order  the same pieces of 64 with rows placed by class of
//                 length (2^(i-1), 2^i], longest first, in row order within a class (CELL's order)
//   block ..., R rows per warp  the same pieces with the rows of one piece R to a warp, one after
//                 the other (a warp's start amortised over several short rows, as CELL's blocks do)
//   grouped G x L the same with G pieces per warp, each taken by L = 32 / G lanes of V columns
//                 (16 warps, pieces of 64, at most 16 per row): for small n (dgSPARSE's VDL)
//   cluster X W L the block design, and rows of more than W pieces of L cut into up to X * W pieces
//                 over the X blocks of a thread-block cluster (Hopper): each block adds its pieces in
//                 piece order in shared memory, and the cluster's first block adds the blocks' sums in
//                 block order through distributed shared memory (no workspace, no atomics,
//                 deterministic; every block of the grid in clusters of X)
//   cell P        LiteForm's CELL format: P column partitions, rows in buckets of ELL width 2^i,
//                 long rows folded at each partition's largest width (its cost model's choice, or
//                 fixed), blocks of 256 products, atomicAdd where partitions or folds share rows
// Variants that sum in column order must agree bit for bit with rb-sr; every variant within 1e-5
// of a float64 reference of sampled rows. One Markdown table on stdout, each time also against the
// best cuSPARSE algorithm.
//
// usage: graph_spmm FILE.{smtx,mtx} N [--runs R] [--warmup W] [--only S[|S...]]     N a multiple of 32
//        (--only: the variants whose names contain one of the strings, beside rb-sr and cuSPARSE)
//        exit 0, 1 mismatch, 64, 69, 70
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "common.cuh"
#include "cusparse_peer.cuh"
#include "smtx.cuh"

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarpsPerBlock = 4;
constexpr int kAhead = 8;  // loads of B in flight per lane

// Products [p, end) of one row for a lane's V columns (`at`: B + its first column), added to acc in
// order: every G-th product from the group's first (G = 1: all). The warp loads 32 products' column
// and weight at a time, lane j product j, and shuffles them to every lane; kAhead loads of B are in
// flight per lane. Every lane of the warp must call it with the same p and end.
template <int V, int G>
__device__ __forceinline__ void sum_products(const int* __restrict__ cols, const float* __restrict__ ws, int p, int end,
                                             const float* __restrict__ at, int64_t n, int group, float (&acc)[V]) {
  const int lane = threadIdx.x & 31;
  for (; p < end; p += 32) {
    const int count = min(32, end - p);
    const int my_col = lane < count ? __ldg(&cols[p + lane]) : 0;
    const float my_w = lane < count ? __ldg(&ws[p + lane]) : 0.0f;
    // Whole rounds of G * kAhead products (the same trip count in every lane: shuffles need the
    // whole warp), each group its kAhead of them; then the rest, G at a time.
    int j = 0;
    for (; j + G * kAhead <= count; j += G * kAhead) {
      float b[kAhead][V], w[kAhead];
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const int k = __shfl_sync(kFull, my_col, j + G * u + group);
        w[u] = __shfl_sync(kFull, my_w, j + G * u + group);
        load_b<V>(at + int64_t(k) * n, b[u]);
      }
#pragma unroll
      for (int u = 0; u < kAhead; ++u)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = fmaf(w[u], b[u][v], acc[v]);
    }
    for (; j < count; j += G) {
      const int q = min(j + group, 31);
      const int k = __shfl_sync(kFull, my_col, q);
      const float w = __shfl_sync(kFull, my_w, q);
      if (j + group < count) {
        float b[V];
        load_b<V>(at + int64_t(k) * n, b);
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = fmaf(w, b[v], acc[v]);
      }
    }
  }
}

// ---- row balance ---------------------------------------------------------------------------------
// A warp per row (rows[warp], or warp itself without `rows`) and 32*V/G columns (blockIdx.y).
template <int V, int G>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) row_balance(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                               const float* __restrict__ ws, const int* __restrict__ rows, int m,
                                                               const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  constexpr int kLanes = 32 / G;  // lanes of a group: they cover the warp's columns
  const int warp = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (warp >= m) return;
  const int row = rows ? rows[warp] : warp;
  const int lane = threadIdx.x & 31, group = lane / kLanes;
  const int64_t col = int64_t(blockIdx.y) * kLanes * V + (lane % kLanes) * V;
  float acc[V] = {};
  sum_products<V, G>(cols, ws, row_ptr[row], row_ptr[row + 1], B + col, n, group, acc);
#pragma unroll
  for (int off = kLanes; off < 32; off *= 2)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] += __shfl_xor_sync(kFull, acc[v], off);
  if (group == 0) store_c<V>(C + int64_t(row) * n + col, acc);
}

// ---- element balance ------------------------------------------------------------------------------
// A warp per `chunk` products from warp * chunk (its first row: first_row[warp]), 32*V columns; each
// run of a row added to C with atomicAdd.
template <int V>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) element_balance(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                                   const float* __restrict__ ws, const int* __restrict__ first_row,
                                                                   int warps, int chunk, int nnz, const float* __restrict__ B,
                                                                   float* __restrict__ C, int64_t n) {
  const int warp = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (warp >= warps) return;
  const int lane = threadIdx.x & 31;
  const int64_t col = int64_t(blockIdx.y) * 32 * V + lane * V;
  const int begin = warp * chunk, end = min(nnz, begin + chunk);
  for (int row = first_row[warp], p = begin; p < end; ++row) {
    const int stop = min(end, row_ptr[row + 1]);
    if (stop <= p) continue;
    float acc[V] = {};
    sum_products<V, 1>(cols, ws, p, stop, B + col, n, 0, acc);
#pragma unroll
    for (int v = 0; v < V; ++v) atomicAdd(&C[int64_t(row) * n + col + v], acc[v]);
    p = stop;
  }
}

// ---- element balance with parallel reduction -----------------------------------------------------
// DA-SpMM's EB+RM+PR with its conditional reduction (Technique 4), which is dgSPARSE's vectorized
// segment reduction (VSR) with vector-type dense-row loading (VDL): a warp per 32 products, lane j
// product warp * 32 + j (its row from product_row, the COO rows an ahead-of-time compiler holds as a
// constant), kept in registers while the warp walks its 32*V columns of C V at a time: each lane loads
// V floats of its product's row of B (float4/float2), and a segmented suffix sum over the lanes (five
// shuffle steps, each adding the partial of lane + 2^s where it belongs to the same row) leaves each
// row's sum in its first lane. A row wholly inside the warp's products is stored, one that crosses a
// warp boundary added with atomicAdd (C zeroed in the timed launch: empty rows and crossing rows need it).
template <int V>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) element_parallel(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                                    const float* __restrict__ ws, const int* __restrict__ product_row,
                                                                    int nnz, const float* __restrict__ B, float* __restrict__ C,
                                                                    int64_t n) {
  const int warp = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  const int first = warp * 32;
  if (first >= nnz) return;
  const int lane = threadIdx.x & 31, p = first + lane;
  const bool live = p < nnz;
  const int row = live ? __ldg(&product_row[p]) : -1 - lane;  // padding lanes: rows of their own
  const int k = live ? __ldg(&cols[p]) : 0;
  const float w = live ? __ldg(&ws[p]) : 0.0f;
  const int left = __shfl_up_sync(kFull, row, 1);
  const bool head = live && (lane == 0 || left != row);
  bool same[5];
#pragma unroll
  for (int s = 0; s < 5; ++s) {
    const int right = __shfl_down_sync(kFull, row, 1 << s);
    same[s] = lane + (1 << s) < 32 && right == row;
  }
  const bool whole = head && __ldg(&row_ptr[row]) >= first && __ldg(&row_ptr[row + 1]) <= first + 32;
  const float* b = B + int64_t(k) * n + int64_t(blockIdx.y) * 32 * V;
  float* c = C + int64_t(live ? row : 0) * n + int64_t(blockIdx.y) * 32 * V;
#pragma unroll 4
  for (int it = 0; it < 32; ++it) {
    float v[V];
    load_b<V>(b + it * V, v);
#pragma unroll
    for (int u = 0; u < V; ++u) v[u] *= w;
#pragma unroll
    for (int s = 0; s < 5; ++s)
#pragma unroll
      for (int u = 0; u < V; ++u) {
        const float t = __shfl_down_sync(kFull, v[u], 1 << s);
        if (same[s]) v[u] += t;
      }
    if (whole) {
      store_c<V>(c + it * V, v);
    } else if (head) {
#pragma unroll
      for (int u = 0; u < V; ++u) atomicAdd(c + it * V + u, v[u]);
    }
  }
}

// ---- rows split into pieces ahead of time ----------------------------------------------------------
struct Piece {
  int row, begin, end;
  int split;       // -1: the whole row; else the row's index among the split rows
  int first_slot;  // the workspace row of the row's first piece (its pieces: consecutive slots)
  int index;       // this piece's index among the row's
  int pieces;      // the row's pieces
};

// A warp per piece (longest first) and 32*V columns; kAtomic: pieces of split rows added to C with
// atomicAdd; else written to the workspace, and the last of a row's pieces to finish (per column
// block) sums them in piece order into C and resets the row's counter for the next launch.
template <int V, bool kAtomic>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) split_rows(const int* __restrict__ cols, const float* __restrict__ ws,
                                                              const Piece* __restrict__ pieces, int count,
                                                              float* __restrict__ work, unsigned* __restrict__ arrived,
                                                              const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  const int warp = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (warp >= count) return;
  const Piece piece = pieces[warp];
  const int lane = threadIdx.x & 31;
  const int64_t col = int64_t(blockIdx.y) * 32 * V + lane * V;
  float acc[V] = {};
  sum_products<V, 1>(cols, ws, piece.begin, piece.end, B + col, n, 0, acc);
  if (piece.split < 0) {
    store_c<V>(C + int64_t(piece.row) * n + col, acc);
    return;
  }
  if constexpr (kAtomic) {
#pragma unroll
    for (int v = 0; v < V; ++v) atomicAdd(&C[int64_t(piece.row) * n + col + v], acc[v]);
  } else {
    store_c<V>(work + int64_t(piece.first_slot + piece.index) * n + col, acc);
    __threadfence();
    __syncwarp();
    unsigned before = 0;
    unsigned* counter = &arrived[int64_t(piece.split) * gridDim.y + blockIdx.y];
    if (lane == 0) before = atomicAdd(counter, 1u);
    before = __shfl_sync(kFull, before, 0);
    if (before + 1 != unsigned(piece.pieces)) return;
    __threadfence();
    float sum[V] = {};
    for (int q = 0; q < piece.pieces; ++q) {
      const float* at = work + int64_t(piece.first_slot + q) * n + col;
#pragma unroll
      for (int v = 0; v < V; ++v) sum[v] += __ldcg(at + v);
    }
    store_c<V>(C + int64_t(piece.row) * n + col, sum);
    if (lane == 0) *counter = 0;
  }
}

// The pieces of rows cut at `length` products, longest first (ties by row); `slots` gets the
// workspace rows needed, `split` the rows cut.
std::vector<Piece> cut_rows(const Csr& a, int length, int& slots, int& split) {
  std::vector<Piece> out;
  slots = split = 0;
  for (int r = 0; r < a.m; ++r) {
    const int begin = a.row_ptr[r], end = a.row_ptr[r + 1];
    if (end - begin <= length) {
      out.push_back({r, begin, end, -1, 0, 0, 1});
      continue;
    }
    const int pieces = (end - begin + length - 1) / length;
    for (int q = 0; q < pieces; ++q) out.push_back({r, begin + q * length, std::min(end, begin + (q + 1) * length), split, slots, q, pieces});
    slots += pieces, ++split;
  }
  std::stable_sort(out.begin(), out.end(), [](const Piece& x, const Piece& y) { return x.end - x.begin > y.end - y.begin; });
  return out;
}

// ---- LiteForm's CELL format --------------------------------------------------------------------
// The columns of A cut into P equal partitions; in each, the rows' products in that partition put in
// buckets of ELL rows of width 2^i (rows of 2^(i-1) < length <= 2^i, padded with zeros); rows longer
// than the partition's largest width (chosen by LiteForm's cost model, Algorithm 3, or given) folded
// into several ELL rows of that width. A bucket's ELL rows are cut into blocks of E products (E / W
// rows), a thread block each; a warp per ELL row and 32*V columns, padding included (weight 0,
// column 0). A block's results are added to C with atomicAdd where the partitions are several or
// the bucket holds folded rows (C zeroed first), else stored.
struct CellBlock {
  int entry;  // first entry of its ELL rows in cell_col / cell_w
  int first;  // its first ELL row (in cell_row)
  int rows;   // ELL rows in the block
  int width;  // W
  int atomic; // 1: atomicAdd into C
};

template <int V>
__global__ void __launch_bounds__(32 * kWarpsPerBlock) cell_blocks(const CellBlock* __restrict__ blocks,
                                                                 const int* __restrict__ cell_row, const int* __restrict__ cell_col,
                                                                 const float* __restrict__ cell_w, const float* __restrict__ B,
                                                                 float* __restrict__ C, int64_t n) {
  const CellBlock blk = blocks[blockIdx.x];
  const int lane = threadIdx.x & 31;
  const int64_t col = int64_t(blockIdx.y) * 32 * V + lane * V;
  for (int r = threadIdx.x >> 5; r < blk.rows; r += kWarpsPerBlock) {
    const int begin = blk.entry + r * blk.width;
    float acc[V] = {};
    sum_products<V, 1>(cell_col, cell_w, begin, begin + blk.width, B + col, n, 0, acc);
    float* out = C + int64_t(cell_row[blk.first + r]) * n + col;
    if (blk.atomic) {
#pragma unroll
      for (int v = 0; v < V; ++v) atomicAdd(out + v, acc[v]);
    } else {
      store_c<V>(out, acc);
    }
  }
}

// ---- a row's pieces in one block, combined in shared memory ------------------------------------------
// The same pieces, placed so that a row's pieces are warps of one block of W warps (rows longer than
// W * L cut into W pieces): each piece's sum goes to the block's shared memory, and the row's last
// warp to finish adds them in piece order (a shared counter per row): no workspace in global memory,
// no global atomics, deterministic. warp_piece[block * W + w]: the piece of warp w (row -1: idle).
struct BlockPiece {
  int row, begin, end;
  int first;   // the warp (in its block) of the row's first piece
  int pieces;  // the row's pieces
};

// The end of a piece of a lane group (`mask`, lanes gl = 0 .. L - 1, slot `slot` of S in its block):
// its sums for L x V columns stored at `out` where its row is one piece; else left in partial[slot],
// and the row's last piece to arrive (a counter at the row's first slot) adds all of the row's
// pieces in piece order and stores them.
template <int V, int L, int S>
__device__ __forceinline__ void finish_piece(const BlockPiece& piece, int slot, int gl, unsigned mask, float (&partial)[S][L * V],
                                             unsigned (&arrived)[S], const float (&acc)[V], float* out) {
  if (piece.pieces == 1) {
    store_c<V>(out, acc);
    return;
  }
#pragma unroll
  for (int v = 0; v < V; ++v) partial[slot][gl * V + v] = acc[v];
  __threadfence_block();
  __syncwarp(mask);
  unsigned before = 0;
  if (gl == 0) before = atomicAdd(&arrived[piece.first], 1u);
  before = __shfl_sync(mask, before, 0, L);
  if (before + 1 != unsigned(piece.pieces)) return;
  __threadfence_block();
  __syncwarp(mask);
  float sum[V] = {};
  for (int q = 0; q < piece.pieces; ++q)
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] += *static_cast<volatile float*>(&partial[piece.first + q][gl * V + v]);
  store_c<V>(out, sum);
}

// A block of W warps, each taking R pieces one after the other (warp_piece[(block * W + w) * R + q]):
// R = 1 is the balanced family's design; with R > 1 a cut row's pieces go one per warp (the
// warp's other R - 1 entries idle) and the rows of one piece R to a warp in the longest-first order, so
// that a warp amortises its start over several short rows.
template <int V, int W, int R>
__global__ void __launch_bounds__(32 * W) block_rows(const int* __restrict__ cols, const float* __restrict__ ws,
                                                    const BlockPiece* __restrict__ warp_piece, const float* __restrict__ B,
                                                    float* __restrict__ C, int64_t n) {
  __shared__ float partial[W][32 * V];
  __shared__ unsigned arrived[W];
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) arrived[w] = 0;
  __syncthreads();
  const int64_t col = int64_t(blockIdx.y) * 32 * V + lane * V;
  for (int q = 0; q < R; ++q) {
    const BlockPiece piece = warp_piece[(int64_t(blockIdx.x) * W + w) * R + q];
    if (piece.row < 0) break;
    float acc[V] = {};
    sum_products<V, 1>(cols, ws, piece.begin, piece.end, B + col, n, 0, acc);
    finish_piece<V, 32, W>(piece, w, lane, kFull, partial, arrived, acc, C + int64_t(piece.row) * n + col);
  }
}

// ---- several pieces per warp (small n) -----------------------------------------------------------
// The same placement with G pieces per warp: the warp's lanes in G groups of L = 32 / G, each group a
// piece and L * V columns (dgSPARSE's vector-type dense-row loading for small n: at n = 32 a piece
// of a warp per row leaves most of its loads of B idle where V = 1, while 4 groups of 8 lanes take
// float4s). A block of W warps holds W * G pieces (warp_piece[block * W * G + slot]); each group
// shuffles its products within itself (width L), so groups run their own trip counts.
template <int V, int W, int G>
__global__ void __launch_bounds__(32 * W) grouped_pieces(const int* __restrict__ cols, const float* __restrict__ ws,
                                                        const BlockPiece* __restrict__ warp_piece, const float* __restrict__ B,
                                                        float* __restrict__ C, int64_t n) {
  constexpr int S = W * G, L = 32 / G;
  __shared__ float partial[S][L * V];
  __shared__ unsigned arrived[S];
  const int lane = threadIdx.x & 31, group = lane / L, gl = lane % L;
  const int slot = (threadIdx.x >> 5) * G + group;
  const unsigned mask = G == 1 ? kFull : ((1u << L) - 1) << (group * L);
  if (gl == 0) arrived[slot] = 0;
  __syncthreads();
  const BlockPiece piece = warp_piece[blockIdx.x * S + slot];
  if (piece.row < 0) return;
  const int64_t col = int64_t(blockIdx.y) * L * V + gl * V;
  const float* const at = B + col;
  float acc[V] = {};
  for (int p = piece.begin; p < piece.end; p += L) {
    const int count = min(L, piece.end - p);
    const int my_col = gl < count ? __ldg(&cols[p + gl]) : 0;
    const float my_w = gl < count ? __ldg(&ws[p + gl]) : 0.0f;
    int j = 0;
    for (; j + kAhead <= count; j += kAhead) {
      float b[kAhead][V], w[kAhead];
#pragma unroll
      for (int u = 0; u < kAhead; ++u) {
        const int k = __shfl_sync(mask, my_col, j + u, L);
        w[u] = __shfl_sync(mask, my_w, j + u, L);
        load_b<V>(at + int64_t(k) * n, b[u]);
      }
#pragma unroll
      for (int u = 0; u < kAhead; ++u)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = fmaf(w[u], b[u][v], acc[v]);
    }
    for (; j < count; ++j) {
      const int k = __shfl_sync(mask, my_col, j, L);
      const float w = __shfl_sync(mask, my_w, j, L);
      float b[V];
      load_b<V>(at + int64_t(k) * n, b);
#pragma unroll
      for (int v = 0; v < V; ++v) acc[v] = fmaf(w, b[v], acc[v]);
    }
  }
  finish_piece<V, L, S>(piece, slot, gl, mask, partial, arrived, acc, C + int64_t(piece.row) * n + col);
}

// ---- a long row's pieces over the blocks of a cluster ---------------------------------------------
// block_rows (R = 1) where the cluster's entry in cluster_row is -1; else the cluster's X blocks hold
// the pieces of that one row, piece q in block q / W, warp q % W (warp_piece as for block_rows, the
// slots past the row's pieces idle): each block adds its pieces' sums in piece order in shared memory,
// and after the cluster's barrier its first block adds the X blocks' sums in block order, reading them
// through distributed shared memory; a second barrier keeps every block's shared memory alive until
// then. Every thread of such a cluster reaches both barriers (none returns early).
template <int V, int W>
__global__ void __launch_bounds__(32 * W) cluster_rows(const int* __restrict__ cols, const float* __restrict__ ws,
                                                      const BlockPiece* __restrict__ warp_piece,
                                                      const int* __restrict__ cluster_row, const float* __restrict__ B,
                                                      float* __restrict__ C, int64_t n) {
  namespace cg = cooperative_groups;
  __shared__ float partial[W][32 * V];
  __shared__ unsigned arrived[W];
  __shared__ float block_sum[32 * V];
  const cg::cluster_group cluster = cg::this_cluster();
  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t col = int64_t(blockIdx.y) * 32 * V + lane * V;
  const unsigned x = cluster.num_blocks();
  const int row = cluster_row[blockIdx.x / x];
  const BlockPiece piece = warp_piece[int64_t(blockIdx.x) * W + w];
  if (row < 0) {
    if (lane == 0) arrived[w] = 0;
    __syncthreads();
    if (piece.row < 0) return;
    float acc[V] = {};
    sum_products<V, 1>(cols, ws, piece.begin, piece.end, B + col, n, 0, acc);
    finish_piece<V, 32, W>(piece, w, lane, kFull, partial, arrived, acc, C + int64_t(piece.row) * n + col);
    return;
  }
  float acc[V] = {};
  if (piece.row >= 0) sum_products<V, 1>(cols, ws, piece.begin, piece.end, B + col, n, 0, acc);
#pragma unroll
  for (int v = 0; v < V; ++v) partial[w][lane * V + v] = acc[v];
  __syncthreads();
  const unsigned rank = cluster.block_rank();
  // The row's pieces: piece.pieces in every slot of the cluster (idle slots too); this block's W or fewer.
  const int pieces = warp_piece[int64_t(blockIdx.x - rank) * W].pieces;
  const int here = min(W, pieces - int(rank) * W);
  if (w == 0) {
    float sum[V] = {};
    for (int q = 0; q < here; ++q)
#pragma unroll
      for (int v = 0; v < V; ++v) sum[v] += partial[q][lane * V + v];
#pragma unroll
    for (int v = 0; v < V; ++v) block_sum[lane * V + v] = sum[v];
  }
  cluster.sync();
  if (rank == 0 && w == 0) {
    const int blocks = (pieces + W - 1) / W;
    float sum[V] = {};
    for (int b = 0; b < blocks; ++b) {
      const float* const other = cluster.map_shared_rank(block_sum, b);
#pragma unroll
      for (int v = 0; v < V; ++v) sum[v] += other[lane * V + v];
    }
    store_c<V>(C + int64_t(row) * n + col, sum);
  }
  cluster.sync();
}

// The least i with 2^i >= x.
int log2_ceil(int x) {
  int i = 0;
  while ((1 << i) < x) ++i;
  return i;
}

// Rows longest first; a row longer than `length` cut into min(W, ceil(len / length)) pieces of equal
// size, all in one block (a block closed, its rest idle, where they do not fit).
// `max_pieces` (default W): at most this many pieces per row, W slots per block.
// `classes`: rows in classes of length (2^(i-1), 2^i], longest class first, each class in row order
// (CELL's buckets: rows that are neighbours in A run together). `longest` > 0: rows of more products
// are left out (placed elsewhere).
std::vector<BlockPiece> place_pieces(const Csr& a, int length, int W, int& cut, int max_pieces = 0, bool classes = false,
                                     int longest = 0) {
  if (max_pieces <= 0) max_pieces = W;
  std::vector<int> order(a.m);
  std::iota(order.begin(), order.end(), 0);
  auto len = [&](int r) { return a.row_ptr[r + 1] - a.row_ptr[r]; };
  if (longest > 0) order.erase(std::remove_if(order.begin(), order.end(), [&](int r) { return len(r) > longest; }), order.end());
  if (classes)
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return log2_ceil(len(x)) > log2_ceil(len(y)); });
  else
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return len(x) > len(y); });
  std::vector<BlockPiece> out;
  cut = 0;
  for (int r : order) {
    const int l = len(r);
    const int pieces = l > length ? std::min(max_pieces, (l + length - 1) / length) : 1;
    const int used = int(out.size() % W);
    if (used + pieces > W)
      while (out.size() % W) out.push_back({-1, 0, 0, 0, 0});
    const int first = int(out.size() % W), size = (l + pieces - 1) / pieces;
    for (int q = 0; q < pieces; ++q)
      out.push_back({r, a.row_ptr[r] + std::min(l, q * size), a.row_ptr[r] + std::min(l, (q + 1) * size), first, pieces});
    cut += pieces > 1;
  }
  while (out.size() % W) out.push_back({-1, 0, 0, 0, 0});
  return out;
}

// cluster_rows' placement: rows of more than W * length products (longest first) one cluster of X
// blocks each, cut into min(X * W, ceil(len / length)) pieces of equal size (every slot of the cluster
// names the row's pieces in `pieces`, idle ones with row -1); then the other rows as place_pieces
// places them (at most W pieces, one block), the grid padded to whole clusters. cluster_row gets each
// cluster's long row or -1; `clustered` the rows spread over clusters.
std::vector<BlockPiece> place_clustered(const Csr& a, int length, int W, int X, std::vector<int>& cluster_row, int& cut,
                                        int& clustered) {
  std::vector<int> order(a.m);
  std::iota(order.begin(), order.end(), 0);
  auto len = [&](int r) { return a.row_ptr[r + 1] - a.row_ptr[r]; };
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return len(x) > len(y); });
  std::vector<BlockPiece> out;
  cluster_row.clear();
  clustered = 0;
  for (size_t i = 0; i < order.size() && len(order[i]) > W * length; ++i) {
    const int r = order[i], l = len(r);
    const int pieces = std::min(X * W, (l + length - 1) / length), size = (l + pieces - 1) / pieces;
    for (int q = 0; q < X * W; ++q)
      out.push_back(q < pieces ? BlockPiece{r, a.row_ptr[r] + std::min(l, q * size), a.row_ptr[r] + std::min(l, (q + 1) * size),
                                            0, pieces}
                               : BlockPiece{-1, 0, 0, 0, pieces});
    cluster_row.push_back(r);
    ++clustered;
  }
  const std::vector<BlockPiece> rest = place_pieces(a, length, W, cut, 0, false, W * length);
  out.insert(out.end(), rest.begin(), rest.end());
  cut += clustered;
  while (out.size() % (size_t(W) * X)) out.push_back({-1, 0, 0, 0, 0});
  cluster_row.resize(out.size() / (size_t(W) * X), -1);
  return out;
}

// LiteForm's cost of a partition's buckets at largest width 2^cap (its equation 6): per bucket
// 2 I1 W + |columns| J + Atomic I2 J, with I1 its ELL rows, I2 the rows of C they write and Atomic
// = I1 / I2 where the bucket needs atomics (several partitions, or folded rows), else 1.
struct PartRow {
  int row;
  std::vector<int> at;  // positions in A's CSR arrays of the row's products in the partition
};

double cell_cost(const std::vector<PartRow>& rows, const Csr& a, int cap, bool partitions, int n) {
  const int top = 1 << cap;
  std::vector<long long> i1(cap + 1, 0), i2(cap + 1, 0);
  std::vector<std::vector<int>> cols(cap + 1);
  for (const PartRow& r : rows) {
    const int l = int(r.at.size()), b = std::min(cap, log2_ceil(l));
    i1[b] += b == cap ? (l + top - 1) / top : 1;
    i2[b] += 1;
    for (int p : r.at) cols[b].push_back(a.col[p]);
  }
  double cost = 0;
  for (int b = 0; b <= cap; ++b) {
    if (i2[b] == 0) continue;
    std::sort(cols[b].begin(), cols[b].end());
    const double unique = double(std::unique(cols[b].begin(), cols[b].end()) - cols[b].begin());
    const bool atomic = partitions || i1[b] > i2[b];
    const double atomic_weight = atomic ? double(i1[b]) / double(i2[b]) : 1.0;
    cost += 2.0 * double(i1[b]) * (1 << b) + unique * n + atomic_weight * double(i2[b]) * n;
  }
  return cost;
}

struct Cell {
  std::vector<CellBlock> blocks;
  std::vector<int> row, col;
  std::vector<float> w;
  long long padded = 0;  // entries, padding included
  bool atomic = false;   // some block adds with atomics
  std::string caps;      // the largest width of each partition
};

// The CELL format of A with P column partitions. cap_log2 < 0: each partition's largest width by
// LiteForm's search (Algorithm 3: a binary search on the cost's trend between widths 2^m and
// 2^(m+1)); else that width everywhere (never above the partition's longest row). Blocks of
// max(entries, largest width) products.
Cell build_cell(const Csr& a, int P, int cap_log2, int entries, int n) {
  Cell out;
  for (int part = 0; part < P; ++part) {
    const int lo = int(int64_t(a.k) * part / P), hi = int(int64_t(a.k) * (part + 1) / P);
    std::vector<PartRow> rows;
    int longest = 0;
    for (int i = 0; i < a.m; ++i) {
      PartRow r{i, {}};
      for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        if (a.col[p] >= lo && a.col[p] < hi) r.at.push_back(p);
      if (r.at.empty()) continue;
      longest = std::max(longest, int(r.at.size()));
      rows.push_back(std::move(r));
    }
    if (rows.empty()) continue;
    int cap = log2_ceil(longest);
    if (cap_log2 >= 0) {
      cap = std::min(cap, cap_log2);
    } else {
      int left = 0, right = cap;
      while (left < right) {
        const int mid = (left + right) / 2;
        if (cell_cost(rows, a, mid, P > 1, n) > cell_cost(rows, a, mid + 1, P > 1, n)) left = mid + 1;
        else right = mid;
      }
      cap = left;
    }
    out.caps += (out.caps.empty() ? "" : ",") + std::to_string(1 << cap);
    const int top = 1 << cap, per_block = std::max(entries, top);
    for (int b = 0; b <= cap; ++b) {
      const int width = 1 << b;
      std::vector<std::pair<int, std::vector<int>>> ell;  // (row, products), each <= width
      bool folded = false;
      for (const PartRow& r : rows) {
        const int l = int(r.at.size());
        if (std::min(cap, log2_ceil(l)) != b) continue;
        for (int s = 0; s < l; s += width) {
          ell.push_back({r.row, std::vector<int>(r.at.begin() + s, r.at.begin() + std::min(l, s + width))});
          folded |= s > 0;
        }
      }
      const bool atomic = P > 1 || folded;
      out.atomic |= atomic;
      const int rows_per_block = per_block / width;
      for (size_t e = 0; e < ell.size(); e += rows_per_block) {
        const int count = int(std::min<size_t>(rows_per_block, ell.size() - e));
        out.blocks.push_back({int(out.col.size()), int(out.row.size()), count, width, atomic ? 1 : 0});
        for (int q = 0; q < count; ++q) {
          const auto& [row, at] = ell[e + q];
          out.row.push_back(row);
          for (int j = 0; j < width; ++j) {
            out.col.push_back(j < int(at.size()) ? a.col[at[j]] : 0);
            out.w.push_back(j < int(at.size()) ? a.w[at[j]] : 0.0f);
          }
        }
      }
    }
  }
  out.padded = (long long)out.col.size();
  return out;
}

// place_pieces' cuts and order with R entries per warp (block_rows): a cut row's pieces in entry 0 of
// consecutive warps of one block, the rows of one piece R to a warp.
std::vector<BlockPiece> place_rows(const Csr& a, int length, int W, int R, int& cut) {
  const std::vector<BlockPiece> pieces = place_pieces(a, length, W, cut);
  std::vector<BlockPiece> out;
  const BlockPiece idle{-1, 0, 0, 0, 0};
  std::vector<BlockPiece> pending;  // rows of one piece waiting for a warp
  auto close_warp = [&](const std::vector<BlockPiece>& entries) {
    for (int q = 0; q < R; ++q) out.push_back(q < int(entries.size()) ? entries[q] : idle);
  };
  for (size_t i = 0; i < pieces.size();) {
    const BlockPiece& p = pieces[i];
    if (p.row < 0) { ++i; continue; }
    if (p.pieces == 1) {
      pending.push_back(p);
      if (int(pending.size()) == R) close_warp(pending), pending.clear();
      ++i;
      continue;
    }
    if (!pending.empty()) close_warp(pending), pending.clear();
    if (int(out.size() / R % W) + p.pieces > W)
      while (out.size() / R % W) close_warp({});
    const int first = int(out.size() / R % W);
    for (int q = 0; q < p.pieces; ++q) {
      BlockPiece piece = pieces[i + q];
      piece.first = first;
      close_warp({piece});
    }
    i += p.pieces;
  }
  if (!pending.empty()) close_warp(pending);
  while (out.size() / R % W) close_warp({});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  mb::Options o = mb::parse_options(argc, argv, " FILE.{smtx,mtx} N [--only S[|S...]]");
  std::vector<std::string> only;  // --only: substrings of the variants to run (rb-sr and cuSPARSE always)
  for (size_t i = 0; i + 1 < o.rest.size();)
    if (o.rest[i] == "--only") {
      for (size_t at = 0; at <= o.rest[i + 1].size();) {
        const size_t comma = std::min(o.rest[i + 1].find('|', at), o.rest[i + 1].size());
        if (comma > at) only.push_back(o.rest[i + 1].substr(at, comma - at));
        at = comma + 1;
      }
      o.rest.erase(o.rest.begin() + long(i), o.rest.begin() + long(i) + 2);
    } else {
      ++i;
    }
  if (o.rest.size() != 2) {
    std::fprintf(stderr, "usage: %s FILE.{smtx,mtx} N [--runs R] [--warmup W] [--only S[|S...]]\n", argv[0]);
    return mb::kExitUsage;
  }
  const auto wanted = [&](const std::string& name) {
    if (only.empty() || name == "rb-sr" || name.rfind("cuSPARSE", 0) == 0) return true;
    for (const std::string& s : only)
      if (name.find(s) != std::string::npos) return true;
    return false;
  };
  const long long n_arg = std::atoll(o.rest[1].c_str());
  if (n_arg < 32 || n_arg > 8192 || n_arg % 32) {
    std::fprintf(stderr, "N must be a multiple of 32 in 32..8192\n");
    return mb::kExitUsage;
  }
  const Csr a = read_matrix(o.rest[0]);
  const int n = int(n_arg);
  mb::require_gpu(argv[0]);
  const int nnz = int(a.col.size());
  int longest = 0;
  double mean = double(nnz) / std::max(1, a.m), var = 0;
  for (int i = 0; i < a.m; ++i) {
    const int len = a.row_ptr[i + 1] - a.row_ptr[i];
    longest = std::max(longest, len);
    var += (len - mean) * (len - mean);
  }
  const double cov = mean > 0 ? std::sqrt(var / std::max(1, a.m)) / mean : 0;

  CsrStudy study(a, n, o);
  const DeviceArray d_row_ptr(a.row_ptr), d_col(a.col);
  const DeviceArray d_w(a.w), d_b(study.b());
  float* const d_c = study.c();
  const int64_t c_bytes = int64_t(a.m) * n * sizeof(float);

  mb::StudyTable table(study);
  auto measure = [&](const std::string& name, bool ordered, const std::function<void()>& launch) {
    if (!wanted(name)) return;
    table.measure(name, ordered, launch);
  };

  // cuSPARSE, each algorithm that takes row-major B and C; preprocessing untimed.
  mb::CusparsePeer peer(a.m, a.k, nnz, d_row_ptr.get(), d_col.get(), d_w.get(), d_b.get(), d_c, n);
  table.measure_peer(peer);

  // Our kernels: V floats per lane, 32*V columns per warp (the vector that divides n).
  const int v = n % 128 == 0 ? 4 : n % 64 == 0 ? 2 : 1;
  auto blocks = [](int warps) { return unsigned((warps + kWarpsPerBlock - 1) / kWarpsPerBlock); };
  std::vector<int> by_length(a.m);
  std::iota(by_length.begin(), by_length.end(), 0);
  std::stable_sort(by_length.begin(), by_length.end(), [&](int x, int y) {
    return a.row_ptr[x + 1] - a.row_ptr[x] > a.row_ptr[y + 1] - a.row_ptr[y];
  });
  const DeviceArray d_by_length(by_length);
  auto rb = [&](auto kernel, int g, const std::string& name, const int* order, bool ordered) {
    const dim3 grid{blocks(a.m), unsigned(n / (32 * v / g))};
    measure(name, ordered, [&, kernel, grid, order] {
      kernel<<<grid, 32 * kWarpsPerBlock>>>(d_row_ptr.get(), d_col.get(), d_w.get(), order, a.m, d_b.get(), d_c, n);
    });
  };
  auto by_v = [&](auto run) {
    if (v == 4) run(std::integral_constant<int, 4>{});
    else if (v == 2) run(std::integral_constant<int, 2>{});
    else run(std::integral_constant<int, 1>{});
  };
  by_v([&](auto vv) {
    constexpr int V = decltype(vv)::value;
    rb(row_balance<V, 1>, 1, "rb-sr", nullptr, true);
    rb(row_balance<V, 1>, 1, "rb-sr lpt", d_by_length.get(), true);
    rb(row_balance<V, 2>, 2, "rb-pr 2 lpt", d_by_length.get(), false);
    rb(row_balance<V, 4>, 4, "rb-pr 4 lpt", d_by_length.get(), false);
    for (int chunk : {32, 128, 512}) {
      const int warps = (nnz + chunk - 1) / chunk;
      std::vector<int> first_row(std::max(1, warps));
      for (int w = 0; w < warps; ++w)
        first_row[w] = int(std::upper_bound(a.row_ptr.begin(), a.row_ptr.end(), w * chunk) - a.row_ptr.begin()) - 1;
      const DeviceArray d_first(first_row);
      const dim3 grid{blocks(warps), unsigned(n / (32 * V))};
      measure(mb::format("eb-sr %d", chunk), false, [&, grid, warps, chunk] {
        MB_CHECK(cudaMemsetAsync(d_c, 0, c_bytes));
        element_balance<V><<<grid, 32 * kWarpsPerBlock>>>(d_row_ptr.get(), d_col.get(), d_w.get(), d_first.get(), warps,
                                                          chunk, nnz, d_b.get(), d_c, n);
      });
    }
    {
      std::vector<int> product_row(std::max(1, nnz));
      for (int i = 0; i < a.m; ++i)
        for (int q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) product_row[q] = i;
      const DeviceArray d_product_row(product_row);
      const int warps = (nnz + 31) / 32;
      const dim3 grid{blocks(warps), unsigned(n / (32 * V))};
      measure("eb-pr (DA-SpMM's conditional reduction, dgSPARSE's VSR)", false, [&, grid] {
        MB_CHECK(cudaMemsetAsync(d_c, 0, c_bytes));
        element_parallel<V><<<grid, 32 * kWarpsPerBlock>>>(d_row_ptr.get(), d_col.get(), d_w.get(), d_product_row.get(), nnz,
                                                           d_b.get(), d_c, n);
      });
    }
    for (int length : {64, 256, 1024}) {
      int slots = 0, split = 0;
      const std::vector<Piece> pieces = cut_rows(a, length, slots, split);
      if (split == 0) continue;
      const DeviceArray d_pieces(pieces);
      const DeviceArray d_work(std::vector<float>(size_t(slots) * n));
      const DeviceArray d_arrived(std::vector<unsigned>(size_t(split) * (n / (32 * V))));
      const dim3 grid{blocks(int(pieces.size())), unsigned(n / (32 * V))};
      const int count = int(pieces.size());
      measure(mb::format("split %d (%d rows cut)", length, split), false, [&, grid, count] {
        split_rows<V, false><<<grid, 32 * kWarpsPerBlock>>>(d_col.get(), d_w.get(), d_pieces.get(), count, d_work.get(),
                                                            d_arrived.get(), d_b.get(), d_c, n);
      });
      measure(mb::format("split %d atomic", length), false, [&, grid, count] {
        MB_CHECK(cudaMemsetAsync(d_c, 0, c_bytes));
        split_rows<V, true><<<grid, 32 * kWarpsPerBlock>>>(d_col.get(), d_w.get(), d_pieces.get(), count, nullptr, nullptr,
                                                           d_b.get(), d_c, n);
      });
    }
    auto blocked = [&](auto kernel, int w, int length, bool classes = false) {
      int cut = 0;
      const std::vector<BlockPiece> placed = place_pieces(a, length, w, cut, 0, classes);
      const DeviceArray d_placed(placed);
      const dim3 grid{unsigned(placed.size() / w), unsigned(n / (32 * V))};
      measure(mb::format("block %d warps, pieces of %d (%d rows cut)%s", w, length, cut, classes ? ", length classes in row order" : ""), false, [&, kernel, grid, w] {
        kernel<<<grid, 32 * w>>>(d_col.get(), d_w.get(), d_placed.get(), d_b.get(), d_c, n);
      });
    };
    for (int length : {64, 256}) {
      blocked(block_rows<V, 8, 1>, 8, length);
      blocked(block_rows<V, 16, 1>, 16, length);
      blocked(block_rows<V, 32, 1>, 32, length);
    }
    blocked(block_rows<V, 16, 1>, 16, 64, true);
    auto by_rows = [&](auto kernel, int w, int r) {
      int cut = 0;
      const std::vector<BlockPiece> placed = place_rows(a, 64, w, r, cut);
      const DeviceArray d_placed(placed);
      const dim3 grid{unsigned(placed.size() / (w * r)), unsigned(n / (32 * V))};
      measure(mb::format("block %d warps, pieces of 64, %d rows per warp (%d rows cut)", w, r, cut), false,
              [&, kernel, grid, w] { kernel<<<grid, 32 * w>>>(d_col.get(), d_w.get(), d_placed.get(), d_b.get(), d_c, n); });
    };
    // A row of more than 16 pieces over the blocks of a cluster of X (launched with the cluster dimension).
    auto clustered = [&](auto kernel, int w, int length, int x) {
      std::vector<int> cluster_row;
      int cut = 0, spread = 0;
      const std::vector<BlockPiece> placed = place_clustered(a, length, w, x, cluster_row, cut, spread);
      if (spread == 0) return;  // no row over w pieces: the block variant's kernel
      const DeviceArray d_placed(placed);
      const DeviceArray d_cluster_row(cluster_row);
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3{unsigned(placed.size() / w), unsigned(n / (32 * V))};
      config.blockDim = dim3{unsigned(32 * w)};
      cudaLaunchAttribute attribute[1];
      attribute[0].id = cudaLaunchAttributeClusterDimension;
      attribute[0].val.clusterDim.x = unsigned(x), attribute[0].val.clusterDim.y = 1, attribute[0].val.clusterDim.z = 1;
      config.attrs = attribute, config.numAttrs = 1;
      measure(mb::format("cluster %d x %d warps, pieces of %d (%d rows cut, %d over a cluster)", x, w, length, cut, spread), false,
              [&, kernel, config] {
                MB_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<const int*>(d_col.get()), static_cast<const float*>(d_w.get()),
                                            static_cast<const BlockPiece*>(d_placed.get()),
                                            static_cast<const int*>(d_cluster_row.get()), static_cast<const float*>(d_b.get()),
                                            d_c, int64_t(n)));
              });
    };
    for (int length : {64, 256})
      for (int x : {2, 4, 8}) clustered(cluster_rows<V, 16>, 16, length, x);
    by_rows(block_rows<V, 16, 2>, 16, 2);
    by_rows(block_rows<V, 16, 4>, 16, 4);
    by_rows(block_rows<V, 16, 8>, 16, 8);
    by_rows(block_rows<V, 4, 8>, 4, 8);
  });
  // Several pieces per warp: G groups of 32 / G lanes, each L * V columns (where they divide n), pieces
  // of 64 and at most 16 per row as in the family, 16 warps per block.
  auto grouped = [&](auto kernel, int vv, int g) {
    const int cols = 32 / g * vv;
    if (n % cols) return;
    int cut = 0;
    const std::vector<BlockPiece> placed = place_pieces(a, 64, 16 * g, cut, 16);
    const DeviceArray d_placed(placed);
    const dim3 grid{unsigned(placed.size() / (16 * g)), unsigned(n / cols)};
    measure(mb::format("grouped %d x %d lanes, V = %d, pieces of 64 (%d rows cut)", g, 32 / g, vv, cut), false,
            [&, kernel, grid] { kernel<<<grid, 32 * 16>>>(d_col.get(), d_w.get(), d_placed.get(), d_b.get(), d_c, n); });
  };
  grouped(grouped_pieces<4, 16, 4>, 4, 4);
  grouped(grouped_pieces<2, 16, 2>, 2, 2);
  grouped(grouped_pieces<4, 16, 2>, 4, 2);
  grouped(grouped_pieces<4, 16, 1>, 4, 1);

  // LiteForm's CELL: P column partitions, the cost model's widths (and, at P = 1, fixed largest
  // widths to check the model), blocks of 256 products; timed with the zeroing of C its atomics need
  // (where it needs it: atomics or empty rows) and without it.
  bool empty_rows = false;
  for (int i = 0; i < a.m; ++i) empty_rows |= a.row_ptr[i + 1] == a.row_ptr[i];
  auto cell = [&](int P, int cap_log2) {
    if (!wanted("cell")) return;
    const Cell c = build_cell(a, P, cap_log2, 256, n);
    if (c.blocks.empty()) return;  // no products
    const DeviceArray d_blocks(c.blocks);
    const DeviceArray d_row(c.row), d_col(c.col);
    const DeviceArray d_cw(c.w);
    const bool zero = c.atomic || empty_rows;
    const std::string name = mb::format("cell P = %d, widths %s%s, padding %.2f", P, cap_log2 < 0 ? "by cost model " : "",
                                        c.caps.c_str(), double(c.padded) / nnz);
    by_v([&](auto vv) {
      constexpr int V = decltype(vv)::value;
      const dim3 grid{unsigned(c.blocks.size()), unsigned(n / (32 * V))};
      if (zero)
        measure(name + ", C zeroed", false, [&, grid] {
          MB_CHECK(cudaMemsetAsync(d_c, 0, c_bytes));
          cell_blocks<V><<<grid, 32 * kWarpsPerBlock>>>(d_blocks.get(), d_row.get(), d_col.get(), d_cw.get(), d_b.get(), d_c, n);
        });
      measure(name + (zero ? ", kernel alone" : ""), false, [&, grid] {
        cell_blocks<V><<<grid, 32 * kWarpsPerBlock>>>(d_blocks.get(), d_row.get(), d_col.get(), d_cw.get(), d_b.get(), d_c, n);
      });
    });
  };
  for (int P : {1, 2, 4, 8}) cell(P, -1);
  for (int cap : {3, 5, 7, 9}) cell(1, cap);

  std::printf("## %s, n = %d (%d x %d, %d non-zeros, rows: mean %.1f, longest %d, COV %.2f)\n\n", o.rest[0].c_str(), n,
              a.m, a.k, nnz, mean, longest, cov);
  std::printf("| variant | µs | TFLOP/s | × best cuSPARSE (%s) | bit-equal to rb-sr | max rel error |\n|---|--:|--:|--:|---|--:|\n",
              table.best_peer_name().c_str());
  const double best_cusparse = table.best_peer_us();
  for (const mb::StudyTable::Row& row : table.rows())
    std::printf("| %s | %.1f | %.2f | %.2f | %s | %.1e |\n", row.name.c_str(), row.r.us, 2.0 * nnz * n / (row.r.us * 1e6),
                best_cusparse > 0 ? best_cusparse / row.r.us : 0.0, row.ordered ? (row.r.equal ? "yes" : "NO") : "—", row.r.error);
  std::printf("\ngraph_spmm: %s\n", study.failures() ? "MISMATCH (a variant differs from rb-sr or from float64)" : "all agree");
  return study.failures() ? 1 : 0;
}
