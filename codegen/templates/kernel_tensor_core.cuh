/*@HEADER_COMMENT*/// Template of the tensor-core path of an spmmc-emitted kernel (codegen/templates/kernel_tensor_core.cuh):
// A's 8 x 1 vectors as constants and the tensor-core kernel. The emitter fills it
// (codegen/print_tensor_core.h) and pastes it into NAME.cu (kernel.cu) for the tensor-core family.
// Needs int64_t, spmmc_elem and spmmc_pack2 (dtype_fp16.cuh / dtype_bf16.cuh) and the CUDA built-ins
// from its includer.
/*@*/
// The tensor-core family (FlashSparse's swap-and-transpose MMA, docs/design/precision.md). A's rows
// are taken in windows of spmmc_tc_rows = 8 or 16 (in the row order spmmc chose so that a window's
// rows share columns); the non-empty columns of a window are its vectors (8 x 1 or 16 x 1), 8 of
// them a block (ME-BCRS-like; the last block of a window padded with zero vectors). The structure is
// fixed ahead of time: the arrays below are constants of this file, A's values already in the order
// the lanes of a warp hold them as MMA operands.
//
// One warp computes a window's rows of C for 64 adjacent columns c0..c0+63, in halves of 8 rows
// (spmmc_tc_halves: 1 or 2). Per block and half h it runs four m16n8k8 MMAs (s = 0..3),
// D(16 x 8) += L(16 x 8) x R(8 x 8), with L = B^T (16 columns of B x the block's 8 rows of B), the
// same for both halves, and R = A^T (the block's 8 vectors x the half's 8 rows): the MMA's
// row g (0..7) is column c0 + 8g + 2s of C and its row g + 8 column c0 + 8g + 2s + 1. So lane
// l = 4g + t, which holds L's elements of rows g and g + 8 at k = 2t, 2t + 1, loads 16 bytes of
// row cols[2t] and 16 bytes of row cols[2t + 1] of B at columns c0 + 8g .. c0 + 8g + 7 for all
// four MMAs at once (a warp reads 128 contiguous bytes of each of the block's rows of B), and
// shuffles the halves into the fragments with two byte permutations per MMA. D's lane l holds
// rows 2t and 2t + 1 of each half at columns c0 + 8g + 2s and + 1: after the last block each
// lane stores 16 bytes of each of its rows. Sums in float32 on the tensor cores (the order
// of their additions is the hardware's), rounded to spmmc_elem when stored.
//
// A block of spmmc_tc_warps warps takes that many consecutive windows (which share columns, so
// their loads of B meet in L1) at one 64-column slab: grid.x over the slabs, grid.y over the
// groups of windows (looping where they exceed 65535). n must be a multiple of 8 and B and C
// 16-byte aligned (the entry point takes the generic path otherwise).
constexpr int spmmc_tc_windows = /*@WINDOWS*/1/*@*/;  // the windows with non-zeros, then those of the empty rows
constexpr int spmmc_tc_rows = /*@ROWS*/8/*@*/;  // rows per window: 8 or 16
constexpr int spmmc_tc_halves = spmmc_tc_rows / 8;  // MMAs per block and 16 columns (a word of A per lane each)
static_assert(spmmc_tc_rows == 8 || spmmc_tc_rows == 16, "windows of 8 or 16 rows");
constexpr int spmmc_tc_warps = 4;                       // windows per block
constexpr int spmmc_tc_threads = 32 * spmmc_tc_warps;
constexpr int spmmc_tc_cols_per_warp = 64;
// Window w owns blocks spmmc_tc_window_block[w] .. spmmc_tc_window_block[w + 1] - 1 (none: rows of C that are zero).
__device__ const int spmmc_tc_window_block[] = {/*@WINDOW_BLOCK*/0, 0/*@*/};
// The spmmc_tc_rows rows of C of each window (-1: none, in a window of fewer rows).
__device__ const int spmmc_tc_window_rows[] = {/*@WINDOW_ROWS*/0, -1, -1, -1, -1, -1, -1, -1/*@*/};
// The row of B of each vector of each block, as 4 pairs per block (pair t: vectors 2t and 2t + 1).
alignas(16) __device__ const int2 spmmc_tc_cols[] = {/*@COLS*/{0, 0}, {0, 0}, {0, 0}, {0, 0}/*@*/};
// A's values, 32 spmmc_tc_halves words per block: lane 4g + t's word h (at 32 spmmc_tc_halves block +
// spmmc_tc_halves lane + h) holds, as two elements of spmmc_elem (low half first), the window's row
// 8h + g times vectors 2t and 2t + 1 (the B fragment of the m16n8k8 MMA of rows 8h .. 8h + 7).
alignas(16) __device__ const unsigned spmmc_tc_a[] = {/*@A_BITS*/0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u,
    0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u/*@*/};

// The staged form (spmmc prints these where a block's windows read most rows of B, the rule of
// codegen/print_tensor_core.cpp): each window's blocks come per chunk of spmmc_tc_chunk_rows rows of
// B, window w's blocks of chunk c being spmmc_tc_chunk_block[w * spmmc_tc_chunks + c] ..
// spmmc_tc_chunk_block[w * spmmc_tc_chunks + c + 1] - 1, spmmc_tc_offsets says where each block's
// rows lie in the chunk's copy, and spmmc_tc_staged_kernel runs from
// n = spmmc_tc_staged_from_n (below, its launch would leave the GPU short of blocks and
// spmmc_tc_kernel runs).
/*@STAGED_TABLES*/#define SPMMC_TC_STAGED 1
constexpr int spmmc_tc_k = 8;             // A's columns: the rows of B
constexpr int spmmc_tc_chunk_rows = 64;  // rows of B in shared memory at a time
constexpr int spmmc_tc_chunks = 1;
constexpr int spmmc_tc_chunk_blocks = 8;  // a window's blocks in one chunk, at most
constexpr int64_t spmmc_tc_staged_from_n = 64;  // the staged kernel from this n (its launch fills the target's SMs)
constexpr int64_t spmmc_tc_staged_max_n = 16777215;  // and up to this n (a thread's offsets into a chunk of B are ints)
__device__ const int spmmc_tc_chunk_block[] = {0, 0};
// Per group of 8 windows and chunk, the key (0..7) of each row of the chunk: its 16-byte pieces are
// stored swizzled by it (spmmc_tc_piece), keys chosen ahead of time so that the vectors of each block
// have distinct keys (vector_blocks.h).
constexpr int spmmc_tc_keyed = 1;  // 1: the copy reads spmmc_tc_keys; 0: every key is its row's residue mod 8
__device__ const unsigned char spmmc_tc_keys[spmmc_tc_chunks * spmmc_tc_chunk_rows] = {0};
// Per block, the byte offsets of its 8 vectors' rows in the chunk's copy (16 (8 r + key), r the row
// within the chunk, key its key for the block's group of windows), vector i read by lanes i, i + 8,
// i + 16, i + 24.
alignas(16) __device__ const unsigned short spmmc_tc_offsets[] = {0, 0, 0, 0, 0, 0, 0, 0};
/*@*/
#ifndef SPMMC_TC_STAGED
#define SPMMC_TC_STAGED 0
#endif

// The MMA of the dtype: D += L x R with float32 accumulators, in place (the tests' host emulation
// defines its own macros, a warp collective).
#ifndef SPMMC_MMA_M16N8K8_F16
#define SPMMC_MMA_M16N8K8_F16(d, a0, a1, b0)                                                                     \
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                \
               : "r"(a0), "r"(a1), "r"(b0))
#endif
#ifndef SPMMC_MMA_M16N8K8_BF16
#define SPMMC_MMA_M16N8K8_BF16(d, a0, a1, b0)                                                                      \
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                  \
               : "r"(a0), "r"(a1), "r"(b0))
#endif
#define SPMMC_TC_MMA /*@MMA*/SPMMC_MMA_M16N8K8_F16/*@*/

// What a lane needs of one block: its words of A's values (one per half) and its 8 columns of the
// block's rows cols[2t] (x) and cols[2t + 1] (y) of B (zero where its columns are past n).
struct spmmc_tc_operands {
  unsigned a[spmmc_tc_halves];
  uint4 x, y;
};

__device__ __forceinline__ spmmc_tc_operands spmmc_tc_load(const spmmc_elem* __restrict__ B, int64_t n, int64_t col, bool in,
                                                          int block, int lane) {
  spmmc_tc_operands o;
  if constexpr (spmmc_tc_halves == 2) {
    const uint2 w = __ldg(reinterpret_cast<const uint2*>(spmmc_tc_a) + 32 * block + lane);
    o.a[0] = w.x;
    o.a[1] = w.y;
  } else {
    o.a[0] = __ldg(&spmmc_tc_a[32 * block + lane]);
  }
  const int2 k = __ldg(&spmmc_tc_cols[4 * block + (lane & 3)]);
  o.x = in ? __ldg(reinterpret_cast<const uint4*>(B + static_cast<int64_t>(k.x) * n + col)) : make_uint4(0u, 0u, 0u, 0u);
  o.y = in ? __ldg(reinterpret_cast<const uint4*>(B + static_cast<int64_t>(k.y) * n + col)) : make_uint4(0u, 0u, 0u, 0u);
  return o;
}

// The MMAs of one block: MMA s of half h takes word s of x and y (columns c0 + 8g + 2s, + 1 of rows
// cols[2t], cols[2t + 1]) and word h of A; L's fragment is {x.lo, y.lo} (row g) and {x.hi, y.hi} (row g + 8).
__device__ __forceinline__ void spmmc_tc_mma4(const spmmc_tc_operands& o, float (&acc)[spmmc_tc_halves][4][4]) {
  const unsigned xs[4] = {o.x.x, o.x.y, o.x.z, o.x.w}, ys[4] = {o.y.x, o.y.y, o.y.z, o.y.w};
  for (int s = 0; s < 4; ++s) {
    const unsigned lo = __byte_perm(xs[s], ys[s], 0x5410), hi = __byte_perm(xs[s], ys[s], 0x7632);
    for (int h = 0; h < spmmc_tc_halves; ++h) SPMMC_TC_MMA(acc[h][s], lo, hi, o.a[h]);
  }
}

// Half h of a window's rows of C (rows 8h .. 8h + 7) at the lane's 8 columns from `col`, after its
// last block: lane 4g + t holds the half's rows 2t and 2t + 1 at columns c0 + 8g + 2s and + 1 (MMA
// s), 16 contiguous bytes of each.
__device__ __forceinline__ void spmmc_tc_store(spmmc_elem* __restrict__ C, int64_t n, int64_t col, int w, int h, int t,
                                               const float (&acc)[4][4]) {
  const int* const rows = spmmc_tc_window_rows + spmmc_tc_rows * w + 8 * h;
  const int r0 = rows[2 * t], r1 = rows[2 * t + 1];
  if (r0 >= 0)
    *reinterpret_cast<uint4*>(C + static_cast<int64_t>(r0) * n + col) =
        make_uint4(spmmc_pack2(acc[0][0], acc[0][2]), spmmc_pack2(acc[1][0], acc[1][2]), spmmc_pack2(acc[2][0], acc[2][2]),
                   spmmc_pack2(acc[3][0], acc[3][2]));
  if (r1 >= 0)
    *reinterpret_cast<uint4*>(C + static_cast<int64_t>(r1) * n + col) =
        make_uint4(spmmc_pack2(acc[0][1], acc[0][3]), spmmc_pack2(acc[1][1], acc[1][3]), spmmc_pack2(acc[2][1], acc[2][3]),
                   spmmc_pack2(acc[3][1], acc[3][3]));
}

// Split K where the direct launch would leave the SMs short of warps (few windows, small n): below
// spmmc_tc_split4_below_n each window is taken by 4 warps of a block, below spmmc_tc_split2_below_n
// by 2, each on a contiguous share of the window's blocks, their sums added in shared memory in the
// order of the shares (spmmc prints the thresholds from the target's SMs; 0: never; -DSPMMC_TC_SPLIT=P
// forces P, the measurement knob of docs/benchmarks.md).
constexpr int64_t spmmc_tc_split2_below_n = /*@SPLIT2_BELOW_N*/0/*@*/;
constexpr int64_t spmmc_tc_split4_below_n = /*@SPLIT4_BELOW_N*/0/*@*/;
__host__ __device__ __forceinline__ int spmmc_tc_parts(int64_t n) {
#ifdef SPMMC_TC_SPLIT
  static_cast<void>(n);
  return SPMMC_TC_SPLIT;
#else
  return n < spmmc_tc_split4_below_n ? 4 : n < spmmc_tc_split2_below_n ? 2 : 1;
#endif
}
#ifdef SPMMC_TC_SPLIT
constexpr bool spmmc_tc_splits = true;
#else
constexpr bool spmmc_tc_splits = spmmc_tc_split2_below_n > 0 || spmmc_tc_split4_below_n > 0;
#endif

// The direct kernel's registers. On 16-row windows they are fixed at 72: left to ptxas, nvcc's build
// took 64 and spilled 8 bytes where the kernel splits K, NVRTC's (what spmmc's timing measures) 72
// without a spill, from the same source (nvcc's front end addresses `partial` in 32 bits, NVRTC's in
// 64), and nvcc's ran up to 1.25x slower. On 8-row windows both builds take 64 without a spill
// (__maxnreg__(64) made nvcc spill), so they keep the launch bounds. docs/design/precision.md.
#define SPMMC_TC_DIRECT_REGISTERS /*@DIRECT_REGISTERS*/__launch_bounds__(spmmc_tc_threads)/*@*/
static_assert(spmmc_tc_threads <= 1024, "a block of the direct kernel");

// [[maybe_unused]]: a file of the staged form launches spmmc_tc_staged_kernel instead.
[[maybe_unused]] __global__ void SPMMC_TC_DIRECT_REGISTERS
    spmmc_tc_kernel(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  // The shares of the other warps of a window, element [warp][16 h + 4 s + i][lane] (where the file splits).
  __shared__ float partial[spmmc_tc_splits ? spmmc_tc_warps : 1][spmmc_tc_splits ? 16 * spmmc_tc_halves : 1][32];
  const int lane = static_cast<int>(threadIdx.x) & 31, g = lane >> 2, t = lane & 3, warp = static_cast<int>(threadIdx.x >> 5);
  const int64_t col = static_cast<int64_t>(blockIdx.x) * spmmc_tc_cols_per_warp + 8 * g;  // this lane's 8 columns
  const bool in = col < n;  // n % 8 == 0: all 8 or none
  // P warps per window (1, 2 or 4): a block takes spmmc_tc_warps / P windows, warp i share i % P of window i / P.
  const int parts = spmmc_tc_parts(n), per_block = spmmc_tc_warps / parts, part = warp % parts;
  const int groups = (spmmc_tc_windows + per_block - 1) / per_block;
  // The whole block takes the same groups of windows (where it splits, it shares their barriers).
  for (int group = static_cast<int>(blockIdx.y); group < groups; group += static_cast<int>(gridDim.y)) {
    const int w = group * per_block + warp / parts;
    float acc[spmmc_tc_halves][4][4] = {};
    if (w < spmmc_tc_windows) {
      const int first = spmmc_tc_window_block[w], count = spmmc_tc_window_block[w + 1] - first;
      int block = first + static_cast<int>(static_cast<int64_t>(count) * part / parts);
      const int end = first + static_cast<int>(static_cast<int64_t>(count) * (part + 1) / parts);
      if (block < end) {
        // The next block's loads are issued before this block's MMAs, so two blocks' loads are in flight.
        spmmc_tc_operands now = spmmc_tc_load(B, n, col, in, block, lane);
        for (; block + 1 < end; ++block) {
          const spmmc_tc_operands next = spmmc_tc_load(B, n, col, in, block + 1, lane);
          spmmc_tc_mma4(now, acc);
          now = next;
        }
        spmmc_tc_mma4(now, acc);
      }
    }
    if (spmmc_tc_splits && parts > 1) {
      if (part > 0)
        for (int h = 0; h < spmmc_tc_halves; ++h)
          for (int s = 0; s < 4; ++s)
            for (int i = 0; i < 4; ++i) partial[warp][16 * h + 4 * s + i][lane] = acc[h][s][i];
      __syncthreads();
      if (part == 0)
        for (int q = 1; q < parts; ++q)
          for (int h = 0; h < spmmc_tc_halves; ++h)
            for (int s = 0; s < 4; ++s)
              for (int i = 0; i < 4; ++i) acc[h][s][i] += partial[warp + q][16 * h + 4 * s + i][lane];
      __syncthreads();
    }
    if (part == 0 && w < spmmc_tc_windows && in)
      for (int h = 0; h < spmmc_tc_halves; ++h) spmmc_tc_store(C, n, col, w, h, t, acc[h]);
  }
}

#if SPMMC_TC_STAGED
// The staged kernel: a block of spmmc_tc_staged_warps warps, one window each, at one 64-column slab
// of B and C. The block copies the slab's rows of B into shared memory one chunk of
// spmmc_tc_chunk_rows rows at a time (cp.async into two buffers: the next chunk's copy runs during
// this chunk's MMAs; one barrier per chunk), and each warp runs its window's blocks of that chunk on
// the copy (each row of the slab is loaded from global memory once per block of windows, where
// spmmc_tc_kernel loads it once per window's block that uses it). With the chunk of B each warp
// copies its window's words of A and the blocks' offsets for that chunk, so the loop over a chunk's
// blocks reads shared memory only. The MMAs take B's fragments with ldmatrix.trans, the standard
// mapping of the m16n8k8 MMA: MMA s's row m is column c0 + 16 s + m of C (so a block costs a word of
// A, an offset, two ldmatrix.x4.trans and four MMAs per lane, no byte permutation), and lane 4g + t
// ends with rows 2t and 2t + 1 of the window at columns c0 + 8p + g (p = 0..7), stored through
// shared memory once per window (spmmc_tc_staged_store). A row's 16-byte pieces are stored at piece
// q ^ key, the row's key for this group of windows and chunk (spmmc_tc_keys; its residue mod 8 where
// spmmc_tc_keyed is 0): an 8 x 8 matrix of ldmatrix reads one piece of each of a block's 8 rows,
// which spmmc keys and places with distinct keys as far as it can (vector_blocks.h), so its reads
// fall in different banks. Every count and address that does not depend on the data is a constant
// of the file or computed once per thread, and the copies advance pointers by a chunk
// (docs/design/precision.md, *The staged kernel*).
// Lane `lane`'s words of A of block `block` (from `words`, 32 spmmc_tc_halves per block).
__device__ __forceinline__ void spmmc_tc_words(const unsigned* words, int block, int lane, unsigned (&a)[spmmc_tc_halves]) {
  if constexpr (spmmc_tc_halves == 2) {
    const uint2 w = reinterpret_cast<const uint2*>(words)[32 * block + lane];
    a[0] = w.x;
    a[1] = w.y;
  } else {
    a[0] = words[32 * block + lane];
  }
}

constexpr int spmmc_tc_staged_warps = 8;
// Resident blocks per SM the staged kernel is compiled for: 4 (64 registers) with windows of 8 rows,
// 3 (85) with 16, whose 32 accumulators per lane spilled at 64 (docs/design/precision.md).
constexpr int spmmc_tc_staged_blocks_per_sm = spmmc_tc_halves == 2 ? 3 : 4;
constexpr int spmmc_tc_staged_threads = 32 * spmmc_tc_staged_warps;
constexpr int spmmc_tc_chunk_pieces = spmmc_tc_chunk_rows * 8;  // 16-byte pieces of a chunk (64 columns: 8 per row)
// The pieces of a chunk each thread copies (thread i: pieces i, i + spmmc_tc_staged_threads, ...).
constexpr int spmmc_tc_copies = (spmmc_tc_chunk_pieces + spmmc_tc_staged_threads - 1) / spmmc_tc_staged_threads;
// A warp's buffer of words of A for one chunk, in 16-byte pieces (8 spmmc_tc_halves a block), and at
// least 1 KB: after the last chunk it holds the warp's 8 x 64 tile of C (one half at a time) when it is stored.
constexpr int spmmc_tc_word_pieces = 8 * spmmc_tc_halves * spmmc_tc_chunk_blocks > 64 ? 8 * spmmc_tc_halves * spmmc_tc_chunk_blocks : 64;
static_assert(spmmc_tc_chunk_blocks <= (spmmc_tc_chunk_rows + 7) / 8, "a window's vectors in a chunk are distinct rows of it");

// The copy of 16 bytes of global memory into shared memory, asynchronous (zero-filled where bytes
// is 0), and the wait for this thread's copies (the tests' host emulation defines its own).
#ifndef SPMMC_CP_ASYNC_16
#define SPMMC_CP_ASYNC_16(dst, src, bytes)                                                                  \
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), \
               "l"(src), "r"(bytes))
#define SPMMC_CP_ASYNC_WAIT_ALL() asm volatile("cp.async.wait_all;" ::: "memory")
#endif
// Four 8 x 8 matrices of 16-bit elements from shared memory, transposed: lane 8j + i gives the address
// of row i of matrix j (16 bytes), and lane 4g + t receives elements g of rows 2t (low half) and
// 2t + 1 of matrix j in r[j] (the tests' host emulation defines its own, a warp collective).
#ifndef SPMMC_LDMATRIX_X4_TRANS
#define SPMMC_LDMATRIX_X4_TRANS(r, at)                                                                  \
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"                   \
               : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                                \
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(at))))
#endif

// The inverse: lane 8j + i gives the address of row i of matrix j, and lane 4g + t's r[j] holds
// elements g of its rows 2t (low half) and 2t + 1 (sm_90 and later).
#ifndef SPMMC_STMATRIX_X4_TRANS
#define SPMMC_STMATRIX_X4_TRANS(at, r)                                                                                        \
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(                                 \
                   static_cast<unsigned>(__cvta_generic_to_shared(at))),                                                     \
               "r"((r)[0]), "r"((r)[1]), "r"((r)[2]), "r"((r)[3])                                                            \
               : "memory")
#endif

// Where the 16 bytes of row `row` (of key `key`) of a chunk at columns c0 + 8q .. c0 + 8q + 7 lie in
// its copy, in pieces (spmmc_tc_offsets holds 16 (8 row + key) for each vector: piece q of that row
// is at that byte offset xor 16 q).
__device__ __forceinline__ int spmmc_tc_piece(int row, int key, int q) { return 8 * row + (q ^ key); }

// Stores 8 rows of a window's C (half h: rows 8h .. 8h + 7) at columns c0 .. c0 + 63 after its last
// block: lane 4g + t holds rows
// 2t (acc[s][0], acc[s][2]) and 2t + 1 (acc[s][1], acc[s][3]) at columns c0 + 16 s + g and
// c0 + 16 s + 8 + g. On sm_90, stmatrix.trans writes them to `tile` (1 KB of this warp's shared
// memory, piece p of row i at 16 (8 i + (p ^ i))) as 8 rows of 64 contiguous elements, and each lane
// stores 32 contiguous bytes of one row; before sm_90 (no stmatrix), each element is stored alone.
__device__ __forceinline__ void spmmc_tc_staged_store(spmmc_elem* __restrict__ C, int64_t n, int64_t c0, int w, int h,
                                                      int lane, char* tile, const float (&acc)[4][4]) {
  const int* const rows = spmmc_tc_window_rows + spmmc_tc_rows * w + 8 * h;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define SPMMC_TC_SCATTER_STORE 1
#endif
#ifdef SPMMC_TC_SCATTER_STORE
  static_cast<void>(tile);
  const int g = lane >> 2, t = lane & 3;
  for (int e = 0; e < 2; ++e) {
    const int r = rows[2 * t + e];
    if (r < 0) continue;
    spmmc_elem* const out = C + static_cast<int64_t>(r) * n + c0 + g;
    for (int s = 0; s < 4; ++s) {
      if (c0 + 16 * s < n) spmmc_store_c1(out + 16 * s, acc[s][e]);
      if (c0 + 16 * s + 8 < n) spmmc_store_c1(out + 16 * s + 8, acc[s][2 + e]);
    }
  }
#else
  // Matrix p (piece p: columns c0 + 8p ..) is MMA p / 2's rows g (p even) or g + 8 (p odd), its
  // column 2t + h row 2t + h of the window; lane 8j + i gives row i of matrix j (then 4 + j).
  unsigned f[8];
  for (int s = 0; s < 4; ++s) {
    f[2 * s] = spmmc_pack2(acc[s][0], acc[s][1]);
    f[2 * s + 1] = spmmc_pack2(acc[s][2], acc[s][3]);
  }
  const int i = lane & 7, j = lane >> 3;
  SPMMC_STMATRIX_X4_TRANS(tile + 16 * (8 * i + (j ^ i)), f);
  SPMMC_STMATRIX_X4_TRANS(tile + 16 * (8 * i + ((4 + j) ^ i)), f + 4);
  __syncwarp();
  // Lane l: row l / 4 of the window, pieces 2 (l % 4) and 2 (l % 4) + 1.
  const int row = lane >> 2, q = 2 * (lane & 3), r = rows[row];
  const uint4 lo = *reinterpret_cast<const uint4*>(tile + 16 * (8 * row + (q ^ row))),
              hi = *reinterpret_cast<const uint4*>(tile + 16 * (8 * row + ((q + 1) ^ row)));
  if (r >= 0) {
    spmmc_elem* const out = C + static_cast<int64_t>(r) * n + c0 + 8 * q;
    if (c0 + 8 * q < n) *reinterpret_cast<uint4*>(out) = lo;
    if (c0 + 8 * q + 8 < n) *reinterpret_cast<uint4*>(out + 8) = hi;
  }
  __syncwarp();
#endif
}

[[maybe_unused]] __global__ void __launch_bounds__(spmmc_tc_staged_threads, spmmc_tc_staged_blocks_per_sm)
    spmmc_tc_staged_kernel(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  alignas(128) __shared__ uint4 slab[2][spmmc_tc_chunk_pieces];
  // Each warp's words of A and offsets of its window's blocks in the chunk, copied with the chunk.
  __shared__ uint4 words[2][spmmc_tc_staged_warps][spmmc_tc_word_pieces];
  __shared__ uint4 offsets[2][spmmc_tc_staged_warps][spmmc_tc_chunk_blocks];
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x >> 5);
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * spmmc_tc_cols_per_warp;
  const int groups = (spmmc_tc_windows + spmmc_tc_staged_warps - 1) / spmmc_tc_staged_warps;
  // This thread's pieces of every chunk: piece i = threadIdx.x + spmmc_tc_staged_threads p is row
  // i / 8 of the chunk at columns c0 + 8 (i % 8), `from[p]` elements past the chunk's first row at c0
  // (an int: n <= spmmc_tc_staged_max_n, checked by the launch; 0 where the piece lies past n, which
  // is zero-filled), stored at piece spmmc_tc_piece(i / 8, its key, i % 8) (a piece past the chunk's
  // is not copied).
  int from[spmmc_tc_copies];
  unsigned bytes[spmmc_tc_copies];
  for (int p = 0; p < spmmc_tc_copies; ++p) {
    const int i = static_cast<int>(threadIdx.x) + spmmc_tc_staged_threads * p;
    const bool in = c0 + 8 * (i & 7) < n;
    bytes[p] = in ? 16u : 0u;
    from[p] = in ? (i >> 3) * static_cast<int>(n) + 8 * (i & 7) : 0;
  }
  // The lane's row of the two ldmatrix.x4 of a block: vector lane % 8, pieces lane / 8 and 4 + lane / 8.
  const unsigned piece0 = 16u * static_cast<unsigned>(lane >> 3), piece1 = piece0 ^ 64u;
  // The whole block takes the same groups of windows (it shares the slab and its barriers).
  for (int group = static_cast<int>(blockIdx.y); group < groups; group += static_cast<int>(gridDim.y)) {
    const int w = group * spmmc_tc_staged_warps + warp;
    const bool computes = w < spmmc_tc_windows;
    // The window's entries of spmmc_tc_chunk_block for chunks c .. c + 3 (e0 .. e3): chunk c's blocks
    // are e0 .. e1 - 1; each is read from global memory two chunks before it is needed.
    const int* const entry = spmmc_tc_chunk_block + (computes ? w * spmmc_tc_chunks : 0);
    int e0 = computes ? entry[0] : 0, e1 = computes ? entry[1] : 0;
    int e2 = computes ? entry[spmmc_tc_chunks < 2 ? spmmc_tc_chunks : 2] : 0;
    // The first row at column c0 of the chunk the next stage() copies, and the keys of this thread's
    // rows of that chunk (each read from global memory one chunk before it is needed).
    const spmmc_elem* chunk = B + c0;
    const unsigned char* keys = spmmc_tc_keys + static_cast<int64_t>(group) * spmmc_tc_chunks * spmmc_tc_chunk_rows;
    int key[spmmc_tc_copies];
    for (int p = 0; p < spmmc_tc_copies; ++p) {
      const int row = (static_cast<int>(threadIdx.x) + spmmc_tc_staged_threads * p) >> 3;
      key[p] = !spmmc_tc_keyed ? row & 7 : row < spmmc_tc_chunk_rows ? keys[row] : 0;
    }
    const auto stage = [&](int c, int first, int end) {
      for (int p = 0; p < spmmc_tc_copies; ++p) {
        const int i = static_cast<int>(threadIdx.x) + spmmc_tc_staged_threads * p;
        const bool copied = spmmc_tc_k % spmmc_tc_chunk_rows == 0 || c * spmmc_tc_chunk_rows + (i >> 3) < spmmc_tc_k;
        if (spmmc_tc_chunk_pieces % spmmc_tc_staged_threads == 0 || p + 1 < spmmc_tc_copies || i < spmmc_tc_chunk_pieces) {
          SPMMC_CP_ASYNC_16(&slab[c & 1][spmmc_tc_piece(i >> 3, key[p], i & 7)],
                            reinterpret_cast<const uint4*>(copied ? chunk + from[p] : chunk), copied ? bytes[p] : 0u);
          if (spmmc_tc_keyed && c + 1 < spmmc_tc_chunks) key[p] = keys[(c + 1) * spmmc_tc_chunk_rows + (i >> 3)];
        }
      }
      chunk += static_cast<int64_t>(spmmc_tc_chunk_rows) * n;
      if (computes) {
        // The window's words of A (8 spmmc_tc_halves pieces a block) and offsets (one piece a block) of
        // blocks first .. end - 1 (at most spmmc_tc_chunk_blocks).
        const uint4* const a = reinterpret_cast<const uint4*>(spmmc_tc_a) + 8 * spmmc_tc_halves * first + lane;
        for (int q = 0; q < (8 * spmmc_tc_halves * spmmc_tc_chunk_blocks + 31) / 32; ++q)
          if (lane + 32 * q < 8 * spmmc_tc_halves * (end - first))
            SPMMC_CP_ASYNC_16(&words[c & 1][warp][lane + 32 * q], a + 32 * q, 16u);
        if (lane < end - first)
          SPMMC_CP_ASYNC_16(&offsets[c & 1][warp][lane], reinterpret_cast<const uint4*>(spmmc_tc_offsets) + first + lane, 16u);
      }
    };
    float acc[spmmc_tc_halves][4][4] = {};
    stage(0, e0, e1);
    SPMMC_CP_ASYNC_WAIT_ALL();
    __syncthreads();
    for (int c = 0; c < spmmc_tc_chunks; ++c) {
      const int e3 = computes ? entry[c + 3 < spmmc_tc_chunks ? c + 3 : spmmc_tc_chunks] : 0;
      if (c + 1 < spmmc_tc_chunks) stage(c + 1, e1, e2);
      if (computes) {
        const char* const rows = reinterpret_cast<const char*>(slab[c & 1]);
        const unsigned* const a = reinterpret_cast<const unsigned*>(words[c & 1][warp]);
        // A block's piece: the offsets of its vectors 0..7 (vector j's row r of the chunk at 16 (8 r + key)).
        const unsigned short* const k = reinterpret_cast<const unsigned short*>(offsets[c & 1][warp]);
        for (int j = 0; j < e1 - e0; ++j) {
          unsigned word[spmmc_tc_halves];
          spmmc_tc_words(a, j, lane, word);
          const unsigned at = k[8 * j + (lane & 7)];
          unsigned l[8];
          SPMMC_LDMATRIX_X4_TRANS(l, rows + (at ^ piece0));
          SPMMC_LDMATRIX_X4_TRANS(l + 4, rows + (at ^ piece1));
          for (int h = 0; h < spmmc_tc_halves; ++h)
            for (int s = 0; s < 4; ++s) SPMMC_TC_MMA(acc[h][s], l[2 * s], l[2 * s + 1], word[h]);
        }
      }
      e0 = e1;
      e1 = e2;
      e2 = e3;
      SPMMC_CP_ASYNC_WAIT_ALL();
      __syncthreads();
    }
    if (computes)
      for (int h = 0; h < spmmc_tc_halves; ++h)
        spmmc_tc_staged_store(C, n, c0, w, h, lane, reinterpret_cast<char*>(words[1][warp]), acc[h]);
  }
}
#endif

// The launch: n a multiple of 8, B and C 16-byte aligned (checked by the entry point). The staged
// kernel from spmmc_tc_staged_from_n where spmmc printed its tables (unless the file is built with
// -DSPMMC_TC_DIRECT, the measurement knob of docs/benchmarks.md), spmmc_tc_kernel otherwise. The
// tuner's NVRTC form (no runtime API) launches the kernels itself: codegen/tensor_core_launch.h.
#ifndef __CUDACC_RTC__
cudaError_t spmmc_launch_tc(void** args, int64_t n, cudaStream_t stream) {
  const int64_t x = (n + spmmc_tc_cols_per_warp - 1) / spmmc_tc_cols_per_warp;
  if (x > 0x7fffffff) return cudaErrorInvalidValue;
#if SPMMC_TC_STAGED && !defined(SPMMC_TC_DIRECT)
  if (n >= spmmc_tc_staged_from_n && n <= spmmc_tc_staged_max_n) {
    const int64_t y = (spmmc_tc_windows + spmmc_tc_staged_warps - 1) / spmmc_tc_staged_warps;
    const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(y < 65535 ? y : 65535));
    return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_tc_staged_kernel), grid, dim3(spmmc_tc_staged_threads), args,
                            0, stream);
  }
#endif
  const int64_t per_block = spmmc_tc_warps / spmmc_tc_parts(n), y = (spmmc_tc_windows + per_block - 1) / per_block;
  const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(y < 65535 ? y : 65535));
  return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_tc_kernel), grid, dim3(spmmc_tc_threads), args, 0, stream);
}
#endif
