/*@HEADER_COMMENT*/// Template of the generic path of an spmmc-emitted kernel (codegen/templates/kernel_generic.cuh):
// A's CSR arrays and the generic kernels. The emitter fills it and pastes it into NAME.cu
// (kernel.cu) and, for the tuner to time the generic family, into its NVRTC form
// (kernel_nvrtc.cu). Needs int64_t and the CUDA built-ins from its includer.
/*@*/
// The generic path, for what the unrolled kernel does not take (n below spmmc_generic_below_n, n
// not a multiple of spmmc_v, B or C not aligned to spmmc_v elements, n above spmmc_max_n) and for
// builds with SPMMC_GENERIC_ONLY: A as CSR data (the weights as constants of this file, read through
// the read-only cache); below n = SPMMC_GENERIC_SPLIT_BELOW the split kernel (further below), else
// each thread V adjacent columns of one row of C (V = 4 with vector loads and stores where n >=
// SPMMC_GENERIC_V4_FROM is a multiple of 4 and B and C are aligned to four elements, else 1; B's
// and C's elements are spmmc_elem, dtype_*.cuh, the sums float32). The rows are
// taken in the order of spmmc_generic_order (the A-tiles' rows, which share columns, then the empty
// rows): with V = 4 a block is 16 such rows x 64 columns, so that the rows of B its warps load
// are shared through L1 (study 10 (j): 1.1-1.2x over 128 columns of one row per block); with
// V = 1 a block covers `width` threads' columns of 128 / width rows (width: the row's threads,
// rounded up to a power of two below the warp size and to a multiple of it above, at most 128).
// A row's products are summed in column order like the unrolled code (fmaf from +0), their loads
// of B issued a batch at a time, the next batch's columns and weights loaded while the batch's
// loads of B are in flight (the constant-trip loops are unrolled by nvcc -O3); range of K by
// range of K (the split along K: each range's sum from +0, added to the row's total in range
// order, a range without products of the row adding nothing).
constexpr int spmmc_rows = /*@M*/1/*@*/;
constexpr int64_t spmmc_products = /*@NNZ*/0/*@*/;  // A's non-zeros
// A as CSR: spmmc_row_ptr is what spmmc verify checks the rows against (the kernels read their rows'
// products from spmmc_generic_span below), spmmc_col_idx and spmmc_weight_bits what every kernel reads.
[[maybe_unused]] __device__ const int spmmc_row_ptr[] = {/*@ROW_PTR*/0, 0/*@*/};
__device__ const int spmmc_col_idx[] = {/*@COL_IDX*/0/*@*/};
__device__ const unsigned spmmc_weight_bits[] = {/*@WEIGHT_BITS*/0u/*@*/};
__device__ const int spmmc_generic_order[] = {/*@GENERIC_ORDER*/0/*@*/};  // a permutation of the rows
// Where the products of each slot's row begin and end: spmmc_row_ptr[row] and spmmc_row_ptr[row + 1]
// of row = spmmc_generic_order[slot], as pairs, so that a thread reads them with one 8-byte load
// beside its row instead of after it: one dependent load fewer before the loads of B (each a trip
// to DRAM when L2 does not hold A's arrays).
alignas(8) __device__ const int spmmc_generic_span[] = {/*@GENERIC_SPAN*/0, 0/*@*/};
__device__ __forceinline__ int2 spmmc_span_of(int slot) { return __ldg(reinterpret_cast<const int2*>(spmmc_generic_span) + slot); }
constexpr int spmmc_k_parts = /*@K_PARTS*/1/*@*/;
__device__ const int spmmc_k_part_begin[] = {/*@K_PART_BEGIN*/0, 1/*@*/};
constexpr int spmmc_generic_threads = 256;  // the most threads of a block of the generic kernel
// Rows of a block of the generic kernel with four columns per thread (of 256 threads: 16 rows x 64
// columns); nvcc -D for studies (docs/benchmarks.md, study 10 (j)): 8, 16 or 32.
#ifndef SPMMC_GENERIC_ROWS
#define SPMMC_GENERIC_ROWS 16
#endif
static_assert(SPMMC_GENERIC_ROWS == 8 || SPMMC_GENERIC_ROWS == 16 || SPMMC_GENERIC_ROWS == 32,
              "SPMMC_GENERIC_ROWS: 8, 16 or 32 rows per block");
// Products per batch with four columns per thread (times four) and the largest batch of one column
// per thread; nvcc -D for studies (docs/benchmarks.md, study 10: 32 and 8 ran fastest).
#ifndef SPMMC_GENERIC_BATCH
#define SPMMC_GENERIC_BATCH 32
#endif

// A thread's columns of B: its first element `at` and the rows' distance in bytes, `Stride` an int
// where a row of B has at most INT32_MAX bytes (spmmc_narrow_n), so that the address of row k is
// one 32 x 32 -> 64-bit multiply-add (IMAD.WIDE); with int64_t a 64-bit multiply, cast and shift
// gave each load of B about ten more instructions (PTX of the ffn layer's kernel at n = 32).
template <typename Stride>
struct spmmc_b_columns {
  const char* at;
  Stride stride;
};
constexpr int64_t spmmc_narrow_n = 0x7fffffff / static_cast<int64_t>(sizeof(spmmc_elem));
template <typename Stride>
__device__ __forceinline__ spmmc_b_columns<Stride> spmmc_columns_of(const spmmc_elem* B, int64_t n, int64_t col) {
  return {reinterpret_cast<const char*>(B + col), static_cast<Stride>(n * static_cast<int64_t>(sizeof(spmmc_elem)))};
}

// k x stride: a 32 x 32 -> 64-bit multiply (written in PTX: nvcc hoisted the stride's widening out of
// the loop and multiplied in 64 bits), or a 64-bit one.
__device__ __forceinline__ int64_t spmmc_row_offset(int k, int stride) {
#ifdef __CUDA_ARCH__
  int64_t offset;
  asm("mul.wide.s32 %0, %1, %2;" : "=l"(offset) : "r"(k), "r"(stride));
  return offset;
#else
  return static_cast<int64_t>(k) * stride;
#endif
}
__device__ __forceinline__ int64_t spmmc_row_offset(int k, int64_t stride) { return k * stride; }

// V elements of row k of B at a thread's columns, as floats: one, or four (aligned to four elements).
template <int V, typename Stride>
__device__ __forceinline__ void spmmc_generic_load(const spmmc_b_columns<Stride>& cols, int k, float (&b)[V]) {
  const spmmc_elem* const at = reinterpret_cast<const spmmc_elem*>(cols.at + spmmc_row_offset(k, cols.stride));
  if constexpr (V == 4) spmmc_load_b4(at, b);
  else b[0] = spmmc_load_b1(at);
}

// The sums of products p..end-1 of a row for a thread's V columns, each in order from +0: whole
// batches of `batch` products whose loads are all in flight at once, the next batch's columns and
// weights loaded while a batch's loads of B are in flight; then the rest one product at a time
// (measured faster than a last batch with its loads clamped, study 10, and than one with its slots
// beyond the row masked: 0.87-0.94x at n = 128 and 256 on 11 layers, issue 27).
// With one column per thread, a batch's weights are loaded after its loads of B are issued in the
// unrolled files' generic path (0, -Xptxas -O1: 128 registers instead of 154, 4 blocks of 128
// threads per SM instead of 3; on 11 layers 1.07-1.21x at 17 <= n <= 256, geomeans, no layer below
// 0.96x), a batch ahead with its columns in the generic family's files (1, nvcc's default level:
// there the layers of long rows ran 0.81-0.90x without it, e.g. 1000- and 512-row layers of 614 and
// 1382 products a row at their n = 32, H100, issue 27). Four columns per thread keep them ahead.
#ifndef SPMMC_GENERIC_WEIGHTS_AHEAD
#define SPMMC_GENERIC_WEIGHTS_AHEAD /*@WEIGHTS_AHEAD*/0/*@*/
#endif
template <int V, int Batch, typename Stride>
__device__ __forceinline__ void spmmc_generic_sum(const spmmc_b_columns<Stride>& cols, int p, int end, float (&acc)[V]) {
  constexpr int batch = Batch;
  for (int v = 0; v < V; ++v) acc[v] = 0.0f;
  constexpr bool weights_ahead = SPMMC_GENERIC_WEIGHTS_AHEAD || V == 4;
  int k[batch];
  unsigned bits[batch];
  if (p + batch <= end)
    for (int i = 0; i < batch; ++i) {
      k[i] = __ldg(&spmmc_col_idx[p + i]);
      if (weights_ahead) bits[i] = __ldg(&spmmc_weight_bits[p + i]);
    }
  for (; p + batch <= end; p += batch) {
    float b[batch][V], w[batch];
    for (int i = 0; i < batch; ++i) spmmc_generic_load<V>(cols, k[i], b[i]);
    for (int i = 0; i < batch; ++i) w[i] = __uint_as_float(weights_ahead ? bits[i] : __ldg(&spmmc_weight_bits[p + i]));
    if (p + 2 * batch <= end)  // the next batch's columns (and weights), while these loads of B are in flight
      for (int i = 0; i < batch; ++i) {
        k[i] = __ldg(&spmmc_col_idx[p + batch + i]);
        if (weights_ahead) bits[i] = __ldg(&spmmc_weight_bits[p + batch + i]);
      }
    for (int i = 0; i < batch; ++i)
      for (int v = 0; v < V; ++v) acc[v] = fmaf(w[i], b[i][v], acc[v]);
  }
  for (; p < end; ++p) {
    float b[V];
    spmmc_generic_load<V>(cols, __ldg(&spmmc_col_idx[p]), b);
    const float w = __uint_as_float(__ldg(&spmmc_weight_bits[p]));
    for (int v = 0; v < V; ++v) acc[v] = fmaf(w, b[v], acc[v]);
  }
}

// A row's sums for a thread's V columns, range of K by range of K: sum(p, end, acc) sums products
// p..end-1 from +0; each range's sum is added to the row's total in range order (range 0 sets it, an
// empty later range adds nothing).
template <int V, typename Sum>
__device__ __forceinline__ void spmmc_generic_row_total(int2 span, Sum sum, float (&total)[V]) {
  const int row_end = span.y;
  int p = span.x;
  for (int v = 0; v < V; ++v) total[v] = 0.0f;  // (range 0 sets it)
  for (int part = 0; part < spmmc_k_parts; ++part) {
    int end = row_end;
    if (spmmc_k_parts > 1)
      for (end = p; end < row_end && spmmc_col_idx[end] < spmmc_k_part_begin[part + 1];) ++end;
    if (part > 0 && end == p) continue;
    float acc[V];
    sum(p, end, acc);
    for (int v = 0; v < V; ++v) total[v] = part == 0 ? acc[v] : total[v] + acc[v];
    p = end;
  }
}

// The rows of C in the order of spmmc_generic_order, V columns per thread, batches of Batch products
// (the body of the kernels of one and four columns per thread).
template <int V, int Batch, typename Stride>
__device__ __forceinline__ void spmmc_generic_rows(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  const int64_t col = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (col >= n) return;  // V = 4 only where n % 4 == 0: a thread has all of its columns or none
  const spmmc_b_columns<Stride> cols = spmmc_columns_of<Stride>(B, n, col);
  const int step = static_cast<int>(gridDim.y * blockDim.y);
  for (int slot = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y); slot < spmmc_rows; slot += step) {
    const int row = spmmc_generic_order[slot];
    float total[V];
    const auto sum = [&](int p, int end, float (&acc)[V]) { spmmc_generic_sum<V, Batch>(cols, p, end, acc); };
    spmmc_generic_row_total<V>(spmmc_span_of(slot), sum, total);
    spmmc_elem* const out = C + static_cast<int64_t>(row) * n + col;
    if constexpr (V == 4) spmmc_store_c4(out, total);
    else spmmc_store_c1(out, total[0]);
  }
}

// A warp per row (from n = SPMMC_GENERIC_WARP_FROM, where four columns per thread would run): the
// kernel of four columns per thread above spends a third of its load instructions on its rows'
// columns and weights, each lane loading every product's (Nsight Compute at n = 2048: bound by its
// loads through L1, docs/benchmarks.md). Here a warp takes one row of spmmc_generic_order for 128
// columns of C, four adjacent per lane; it loads 32 products' columns and weights at a time, one per
// lane, and hands them to every lane by shuffles (dgSPARSE's coalesced row caching, as the balanced
// family's kernel does), eight loads of B in flight per lane; the sums in column order from +0 range
// of K by range of K, as above: the same bits. Blocks of spmmc_generic_warp_rows warps, rows (slots)
// along grid.x, blocks of 128 columns along grid.y (looping beyond 65535 of them), n at most
// spmmc_generic_warp_max_n. Lanes of columns at or beyond n load columns 0-3 of B and store nothing
// (n >= 4: no branch around the shuffles). It ran 1.11, 1.10, 1.10 and 1.14x faster than four
// columns per thread on the 23 range-sample layers at n = 512, 1024, 2048 and 4096 (geomeans; H100,
// issue 27, docs/benchmarks.md, *A warp per row on the GPU*). Where four adjacent columns cannot be
// loaded at once (n % 4 != 0, or B or C not aligned to four elements) the same warp gives each lane four
// columns 32 apart (lane l: l, l + 32, l + 64, l + 96 of the warp's 128), four loads of one element, each
// coalesced across the warp, in place of one column per thread's loads of a column and a weight for
// every product; in a warp's last block of columns the lanes' columns at or beyond n load one within n.
constexpr int spmmc_generic_warp_rows = 8;     // warps (rows) per block
// The same in blocks of 32 warps (spmmc_generic_kernel_warp_wide), where the printer finds A's rows long
// along K (SPMMC_GENERIC_WARP_WIDE 1: at least 2048 columns, float elements) and the launch has at least
// 31/32 of a block per SM: 32 rows that share columns read the same rows of B for their 128 columns
// through one SM's L1 (codegen/generic_launch.h: 1.14-1.37x the blocks of 8 on such layers, H100).
#ifndef SPMMC_GENERIC_WARP_WIDE
#define SPMMC_GENERIC_WARP_WIDE /*@WARP_WIDE*/0/*@*/
#endif
#if SPMMC_GENERIC_WARP_WIDE
constexpr int spmmc_generic_warp_wide_rows = 32;
#endif
constexpr int spmmc_generic_warp_columns = 128;  // columns of a warp
constexpr int64_t spmmc_generic_warp_max_n = 0x7fffffff / 4;  // B's rows within INT32_MAX bytes in every dtype
// A lane's four columns of B and C: adjacent (Strided false: one vector load of row k at `cols`) or 32
// apart (true: four loads of one element, at `cols` plus `skip`'s bytes, which the caller gives as
// constants where all four are within n and clamps in a warp's last block of columns).
template <bool Strided>
__device__ __forceinline__ void spmmc_generic_warp_load(const spmmc_b_columns<int>& cols, const int (&skip)[4], int k,
                                                        float (&b)[4]) {
  if constexpr (Strided) {
    const char* const row = cols.at + spmmc_row_offset(k, cols.stride);
    for (int v = 0; v < 4; ++v) b[v] = spmmc_load_b1(reinterpret_cast<const spmmc_elem*>(row + skip[v]));
  } else {
    spmmc_generic_load<4>(cols, k, b);
  }
}
template <bool Strided>
__device__ __forceinline__ void spmmc_generic_warp_sum(const spmmc_b_columns<int>& cols, const int (&skip)[4], int p, int end,
                                                       float (&acc)[4]) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  constexpr int ahead = 8;  // loads of B in flight per lane
  for (int v = 0; v < 4; ++v) acc[v] = 0.0f;
  for (; p < end; p += 32) {
    const int count = end - p < 32 ? end - p : 32;
    const int my_k = lane < count ? __ldg(&spmmc_col_idx[p + lane]) : 0;
    const unsigned my_bits = lane < count ? __ldg(&spmmc_weight_bits[p + lane]) : 0u;
    int j = 0;
    for (; j + ahead <= count; j += ahead) {
      float b[ahead][4], w[ahead];
      for (int u = 0; u < ahead; ++u) {
        w[u] = __uint_as_float(__shfl_sync(0xffffffffu, my_bits, j + u));
        spmmc_generic_warp_load<Strided>(cols, skip, __shfl_sync(0xffffffffu, my_k, j + u), b[u]);
      }
      for (int u = 0; u < ahead; ++u)
        for (int v = 0; v < 4; ++v) acc[v] = fmaf(w[u], b[u][v], acc[v]);
    }
    for (; j < count; ++j) {
      const float w = __uint_as_float(__shfl_sync(0xffffffffu, my_bits, j));
      float b[4];
      spmmc_generic_warp_load<Strided>(cols, skip, __shfl_sync(0xffffffffu, my_k, j), b);
      for (int v = 0; v < 4; ++v) acc[v] = fmaf(w, b[v], acc[v]);
    }
  }
}
template <int Rows, bool Strided>
__device__ __forceinline__ void spmmc_generic_warp_rows_of(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C,
                                                           int64_t n) {
  const int slot = static_cast<int>(blockIdx.x) * Rows + static_cast<int>(threadIdx.x) / 32;
  if (slot >= spmmc_rows) return;  // the whole warp
  const int row = spmmc_generic_order[slot];
  const int2 span = spmmc_span_of(slot);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  spmmc_elem* const c_row = C + static_cast<int64_t>(row) * n;
  for (int64_t first = blockIdx.y * int64_t{spmmc_generic_warp_columns}; first < n;
       first += gridDim.y * int64_t{spmmc_generic_warp_columns}) {
    float total[4];
    if constexpr (!Strided) {
      const int64_t col = first + lane * 4;
      const bool mine = col < n;
      const spmmc_b_columns<int> cols = spmmc_columns_of<int>(B, n, mine ? col : 0);
      const int skip[4] = {};
      const auto sum = [&](int p, int end, float (&acc)[4]) { spmmc_generic_warp_sum<false>(cols, skip, p, end, acc); };
      spmmc_generic_row_total<4>(span, sum, total);
      if (mine) spmmc_store_c4(c_row + col, total);
    } else if (first + spmmc_generic_warp_columns <= n) {  // all four columns of every lane within n
      constexpr int e = static_cast<int>(sizeof(spmmc_elem));
      const int skip[4] = {0, 32 * e, 64 * e, 96 * e};
      const spmmc_b_columns<int> cols = spmmc_columns_of<int>(B, n, first + lane);
      const auto sum = [&](int p, int end, float (&acc)[4]) { spmmc_generic_warp_sum<true>(cols, skip, p, end, acc); };
      spmmc_generic_row_total<4>(span, sum, total);
      for (int v = 0; v < 4; ++v) spmmc_store_c1(c_row + first + lane + 32 * v, total[v]);
    } else {  // the last block of columns: a column at or beyond n loads the lane's first within n (or n - 1)
      const int64_t base = first + lane < n ? first + lane : n - 1;
      int skip[4];
      for (int v = 0; v < 4; ++v)
        skip[v] = first + lane + 32 * v < n ? static_cast<int>((first + lane + 32 * v - base) * int64_t{sizeof(spmmc_elem)}) : 0;
      const spmmc_b_columns<int> cols = spmmc_columns_of<int>(B, n, base);
      const auto sum = [&](int p, int end, float (&acc)[4]) { spmmc_generic_warp_sum<true>(cols, skip, p, end, acc); };
      spmmc_generic_row_total<4>(span, sum, total);
      for (int v = 0; v < 4; ++v)
        if (first + lane + 32 * v < n) spmmc_store_c1(c_row + first + lane + 32 * v, total[v]);
    }
  }
}

// Where n is small (below SPMMC_GENERIC_SPLIT_BELOW), one row's columns leave most lanes of a warp
// idle and each thread a long chain of loads: the split kernel gives each row a warp whose lanes
// are `ways` = 32 / width groups of `width` lanes (width: n rounded up to a power of two), a group's
// lane j column j. A round is ways x SPMMC_GENERIC_DEPTH products: group g loads the columns,
// weights and B-values of products g, g + ways, g + 2 ways, ... (every load of the round in flight
// at once) into the warp's shared memory as (weight, B-value) pairs laid out by product (lane l
// writes pair 32 d + l); then every lane sums the round's products of its column from shared
// memory in column order, one 8-byte load per product, eight loads ahead of the FMAs: bit for bit
// the other kernels' sums, with up to 32 times the loads in flight per row. The next round's
// columns, weights and B-values are loaded while a round is summed. Ranges of K end where
// a product's column reaches the next range (each range from +0, added in order; an empty one adds
// nothing), as above. Lanes of columns at or beyond n load nothing and store nothing; group 0
// stores. Blocks of spmmc_generic_split_threads threads, a warp per row in the order of
// spmmc_generic_order.
//
// The launch (spmmc_launch_generic; codegen/generic_launch.h for the tuner): the split kernel below
// n = SPMMC_GENERIC_SPLIT_BELOW (1..33: 33 for every n up to 32, 1 for never), four columns per
// thread from n = SPMMC_GENERIC_V4_FROM; nvcc -D for studies (docs/benchmarks.md, issue 27: the
// split kernel ran 1.4x one column per thread at n = 8 and 1.04x at 16; one column per thread was
// faster at n = 32).
#ifndef SPMMC_GENERIC_SPLIT_BELOW  // the printer's: 1 where A's rows are all short and many (generic_launch.h)
#define SPMMC_GENERIC_SPLIT_BELOW /*@SPLIT_BELOW*/17/*@*/
#endif
#ifndef SPMMC_GENERIC_V4_FROM
#define SPMMC_GENERIC_V4_FROM 512
#endif
#ifndef SPMMC_GENERIC_WARP_FROM  // where four columns per thread would run, a warp per row from this n (0: never)
#define SPMMC_GENERIC_WARP_FROM 512
#endif
#ifndef SPMMC_GENERIC_WARP_STRIDED_FROM  // where one column per thread would run, a warp per row from this n (0: never;
                                         // 1024 where A has more than 1024 columns: codegen/generic_launch.h)
#define SPMMC_GENERIC_WARP_STRIDED_FROM /*@WARP_STRIDED_FROM*/512/*@*/
#endif
static_assert(SPMMC_GENERIC_SPLIT_BELOW >= 1 && SPMMC_GENERIC_SPLIT_BELOW <= 33, "SPMMC_GENERIC_SPLIT_BELOW: 1..33");
#ifndef SPMMC_GENERIC_DEPTH
#define SPMMC_GENERIC_DEPTH 16  // products a lane loads per round
#endif
constexpr int spmmc_generic_split_threads = 128;
struct alignas(8) spmmc_product {  // a product's weight and B-value, one 8-byte load of shared memory
  float w, b;
};
constexpr int spmmc_generic_split_round = 32 * SPMMC_GENERIC_DEPTH;  // the most products of a round (n = 1)
template <typename Stride>
__device__ __forceinline__ void spmmc_generic_split_rows(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C,
                                                         int64_t n) {
  constexpr int warps = spmmc_generic_split_threads / 32;
  __shared__ spmmc_product wb_of[warps][spmmc_generic_split_round];  // [product x width + column]
  __shared__ int k_of[warps][spmmc_k_parts > 1 ? spmmc_generic_split_round : 1];  // [product]: ranges of K only
  int width = 1;
  while (width < n && width < 32) width *= 2;
  const int ways = 32 / width, lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) / 32;
  const int column = lane & (width - 1), group = lane / width;
  const bool mine = column < n;  // a lane of a column of C
  const spmmc_b_columns<Stride> cols = spmmc_columns_of<Stride>(B, n, column);
  const int round = ways * SPMMC_GENERIC_DEPTH;
  const int step = static_cast<int>(gridDim.x) * warps;
  for (int slot = static_cast<int>(blockIdx.x) * warps + warp; slot < spmmc_rows; slot += step) {
    const int row = spmmc_generic_order[slot];
    const int2 span = spmmc_span_of(slot);
    const int end = span.y;
    float total = 0.0f, acc = 0.0f;
    int part = 0, next = spmmc_k_parts > 1 ? spmmc_k_part_begin[1] : 0;
    bool any = false;  // the current range has products
    constexpr int depth = SPMMC_GENERIC_DEPTH;
    int k[depth], kr[depth];  // the columns of the round being loaded; of the round in flight
    float w[depth], wr[depth], b[depth];
    // The columns and weights of the round at p, then its loads of B (lanes beyond n or products
    // beyond the row load nothing).
    const auto load_columns = [&](int p) {
      for (int d = 0; d < depth; ++d) {
        const int q = p + d * ways + group;
        k[d] = q < end ? __ldg(&spmmc_col_idx[q]) : 0;
        w[d] = q < end ? __uint_as_float(__ldg(&spmmc_weight_bits[q])) : 0.0f;
      }
    };
    const auto load_b = [&](int p) {
      for (int d = 0; d < depth; ++d) {
        float bd[1] = {0.0f};
        if (p + d * ways + group < end && mine) spmmc_generic_load<1>(cols, k[d], bd);
        b[d] = bd[0], kr[d] = k[d], wr[d] = w[d];
      }
    };
    int p = span.x;
    if (p < end) {
      load_columns(p);
      load_b(p);
      if (p + round < end) load_columns(p + round);
    }
    for (; p < end; p += round) {
      for (int d = 0; d < depth; ++d) {  // the round's (weight, B-value) pairs, as they arrive
        wb_of[warp][d * 32 + lane] = {wr[d], b[d]};
        if constexpr (spmmc_k_parts > 1)
          if (column == 0) k_of[warp][d * ways + group] = kr[d];
      }
      __syncwarp();
      if (p + round < end) {  // the next round's loads in flight during this round's sum
        load_b(p + round);
        if (p + 2 * round < end) load_columns(p + 2 * round);
      }
      const int count = end - p < round ? end - p : round;
      if constexpr (spmmc_k_parts > 1) {
        for (int i = 0; i < count; ++i) {
          for (const int ki = k_of[warp][i]; ki >= next; next = spmmc_k_part_begin[part + 1]) {  // the range ends here
            total = part == 0 ? acc : any ? total + acc : total;
            acc = 0.0f, any = false, ++part;
          }
          const spmmc_product x = wb_of[warp][i * width + column];
          acc = fmaf(x.w, x.b, acc), any = true;
        }
      } else {
        const spmmc_product* x = &wb_of[warp][column];
        int i = 0;
        for (; i + 8 <= count; i += 8, x += 8 * width) {  // eight products' loads in flight, then their FMAs in order
          spmmc_product xi[8];
          for (int j = 0; j < 8; ++j) xi[j] = x[j * width];
          for (int j = 0; j < 8; ++j) acc = fmaf(xi[j].w, xi[j].b, acc);
        }
        for (; i < count; ++i, x += width) acc = fmaf(x->w, x->b, acc);
      }
      __syncwarp();  // every lane has read the round before the next one overwrites it
    }
    total = part == 0 ? acc : any ? total + acc : total;
    if (group == 0 && mine) spmmc_store_c1(C + static_cast<int64_t>(row) * n + column, total);
  }
}

// The generic kernels: four columns per thread (vector loads and stores of four elements), a warp per
// row (four columns per lane), one column per thread with batches of 32, 16 or 8 products, and the
// split one for small n. Functions rather than one template, so that the NVRTC form can give them C
// linkage (the tuner times the generic family as it times the unrolled candidates:
// codegen/generic_launch.h).
__global__ void __launch_bounds__(spmmc_generic_threads)
    spmmc_generic_kernel_v4(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  if (n <= spmmc_narrow_n) spmmc_generic_rows<4, SPMMC_GENERIC_BATCH / 4, int>(B, C, n);
  else spmmc_generic_rows<4, SPMMC_GENERIC_BATCH / 4, int64_t>(B, C, n);
}
// Only where a row of B has at most INT32_MAX bytes in every dtype (n <= spmmc_generic_warp_max_n; the
// launch takes four columns per thread above): with the 64-bit rows' code beside it ptxas took 66
// registers (three blocks of 8 warps per SM), with four blocks asked it spilled; without it, 64.
__global__ void __launch_bounds__(32 * spmmc_generic_warp_rows)
    spmmc_generic_kernel_warp(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  spmmc_generic_warp_rows_of<spmmc_generic_warp_rows, false>(B, C, n);
}
#if SPMMC_GENERIC_WARP_WIDE
// 64 registers asked (one block per SM), as the blocks of 8 take unasked; ptxas spills 20 bytes (sm_90).
__global__ void __launch_bounds__(32 * spmmc_generic_warp_wide_rows, 1)
    spmmc_generic_kernel_warp_wide(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  spmmc_generic_warp_rows_of<spmmc_generic_warp_wide_rows, false>(B, C, n);
}
#endif
// The same with a lane's four columns 32 apart, where four adjacent ones cannot be loaded at once (n % 4 !=
// 0, or B or C not aligned to four elements): from n = SPMMC_GENERIC_WARP_STRIDED_FROM (0: never).
__global__ void __launch_bounds__(32 * spmmc_generic_warp_rows)
    spmmc_generic_kernel_warp_strided(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  spmmc_generic_warp_rows_of<spmmc_generic_warp_rows, true>(B, C, n);
}
#if SPMMC_GENERIC_WARP_WIDE
__global__ void __launch_bounds__(32 * spmmc_generic_warp_wide_rows, 1)
    spmmc_generic_kernel_warp_wide_strided(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  spmmc_generic_warp_rows_of<spmmc_generic_warp_wide_rows, true>(B, C, n);
}
#endif
__global__ void __launch_bounds__(spmmc_generic_split_threads)
    spmmc_generic_kernel_split(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  spmmc_generic_split_rows<int>(B, C, n);  // n < 33
}
__global__ void __launch_bounds__(spmmc_generic_threads)
    spmmc_generic_kernel_v1(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  if (n <= spmmc_narrow_n) spmmc_generic_rows<1, SPMMC_GENERIC_BATCH, int>(B, C, n);
  else spmmc_generic_rows<1, SPMMC_GENERIC_BATCH, int64_t>(B, C, n);
}
__global__ void __launch_bounds__(spmmc_generic_threads)
    spmmc_generic_kernel_v1_b16(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  if (n <= spmmc_narrow_n) spmmc_generic_rows<1, 16, int>(B, C, n);
  else spmmc_generic_rows<1, 16, int64_t>(B, C, n);
}
__global__ void __launch_bounds__(spmmc_generic_threads)
    spmmc_generic_kernel_v1_b8(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  if (n <= spmmc_narrow_n) spmmc_generic_rows<1, 8, int>(B, C, n);
  else spmmc_generic_rows<1, 8, int64_t>(B, C, n);
}

