/*@HEADER_COMMENT*/// Template of the tensor-core path of an spmmc-emitted kernel (codegen/templates/kernel_tensor_core.cuh):
// A's 8 x 1 vectors as constants and the tensor-core kernel. The emitter fills it
// (codegen/print_tensor_core.h) and pastes it into NAME.cu (kernel.cu) for the tensor-core family.
// Needs int64_t, spmmc_elem and spmmc_pack2 (dtype_fp16.cuh / dtype_bf16.cuh) and the CUDA built-ins
// from its includer.
/*@*/
// The tensor-core family (FlashSparse's swap-and-transpose MMA, docs/design/precision.md). A's rows
// are taken in windows of 8 (in the row order spmmc chose so that a window's rows share columns);
// the non-empty columns of a window are its 8 x 1 vectors, 8 of them a block (ME-BCRS-like; the
// last block of a window padded with zero vectors). The structure is fixed ahead of time: the
// arrays below are constants of this file, A's values already in the order the lanes of a warp
// hold them as an MMA operand.
//
// One warp computes a window's 8 rows of C for 64 adjacent columns c0..c0+63. Per block it runs
// four m16n8k8 MMAs (s = 0..3), D(16 x 8) += L(16 x 8) x R(8 x 8), with L = B^T (16 columns of B x
// the block's 8 rows of B) and R = A^T (the block's 8 vectors x the window's 8 rows): the MMA's
// row g (0..7) is column c0 + 8g + 2s of C and its row g + 8 column c0 + 8g + 2s + 1. So lane
// l = 4g + t, which holds L's elements of rows g and g + 8 at k = 2t, 2t + 1, loads 16 bytes of
// row cols[2t] and 16 bytes of row cols[2t + 1] of B at columns c0 + 8g .. c0 + 8g + 7 for all
// four MMAs at once (a warp reads 128 contiguous bytes of each of the block's rows of B), and
// shuffles the halves into the fragments with two byte permutations per MMA. D's lane l holds
// rows 2t and 2t + 1 of the window at columns c0 + 8g + 2s and + 1: after the last block each
// lane stores 16 bytes of each of its two rows. Sums in float32 on the tensor cores (the order
// of their additions is the hardware's), rounded to spmmc_elem when stored.
//
// A block of spmmc_tc_warps warps takes that many consecutive windows (which share columns, so
// their loads of B meet in L1) at one 64-column slab: grid.x over the slabs, grid.y over the
// groups of windows (looping where they exceed 65535). n must be a multiple of 8 and B and C
// 16-byte aligned (the entry point takes the generic path otherwise).
constexpr int spmmc_tc_windows = /*@WINDOWS*/1/*@*/;  // the windows with non-zeros, then those of the empty rows
constexpr int spmmc_tc_warps = 4;                       // windows per block
constexpr int spmmc_tc_threads = 32 * spmmc_tc_warps;
constexpr int spmmc_tc_cols_per_warp = 64;
// Window w owns blocks spmmc_tc_window_block[w] .. spmmc_tc_window_block[w + 1] - 1 (none: rows of C that are zero).
__device__ const int spmmc_tc_window_block[] = {/*@WINDOW_BLOCK*/0, 0/*@*/};
// The 8 rows of C of each window (-1: none, in a window of fewer than 8 rows).
__device__ const int spmmc_tc_window_rows[] = {/*@WINDOW_ROWS*/0, -1, -1, -1, -1, -1, -1, -1/*@*/};
// The row of B of each vector of each block, as 4 pairs per block (pair t: vectors 2t and 2t + 1).
__device__ const int2 spmmc_tc_cols[] = {/*@COLS*/{0, 0}, {0, 0}, {0, 0}, {0, 0}/*@*/};
// A's values, 32 words per block: lane 4g + t's word holds, as two elements of spmmc_elem (low half
// first), the window's row g times vectors 2t and 2t + 1 (the m16n8k8 MMA's B fragment).
__device__ const unsigned spmmc_tc_a[] = {/*@A_BITS*/0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u,
    0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u/*@*/};

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

// What a lane needs of one block: its word of A's values and its 8 columns of the block's rows
// cols[2t] (x) and cols[2t + 1] (y) of B (zero where its columns are past n).
struct spmmc_tc_operands {
  unsigned a;
  uint4 x, y;
};

__device__ __forceinline__ spmmc_tc_operands spmmc_tc_load(const spmmc_elem* __restrict__ B, int64_t n, int64_t col, bool in,
                                                          int block, int lane) {
  spmmc_tc_operands o;
  o.a = __ldg(&spmmc_tc_a[32 * block + lane]);
  const int2 k = __ldg(&spmmc_tc_cols[4 * block + (lane & 3)]);
  o.x = in ? __ldg(reinterpret_cast<const uint4*>(B + static_cast<int64_t>(k.x) * n + col)) : make_uint4(0u, 0u, 0u, 0u);
  o.y = in ? __ldg(reinterpret_cast<const uint4*>(B + static_cast<int64_t>(k.y) * n + col)) : make_uint4(0u, 0u, 0u, 0u);
  return o;
}

// The four MMAs of one block: MMA s takes word s of x and y (columns c0 + 8g + 2s, + 1 of rows
// cols[2t], cols[2t + 1]); L's fragment is {x.lo, y.lo} (row g) and {x.hi, y.hi} (row g + 8).
__device__ __forceinline__ void spmmc_tc_mma4(const spmmc_tc_operands& o, float (&acc)[4][4]) {
  const unsigned xs[4] = {o.x.x, o.x.y, o.x.z, o.x.w}, ys[4] = {o.y.x, o.y.y, o.y.z, o.y.w};
  for (int s = 0; s < 4; ++s) {
    const unsigned lo = __byte_perm(xs[s], ys[s], 0x5410), hi = __byte_perm(xs[s], ys[s], 0x7632);
    SPMMC_TC_MMA(acc[s], lo, hi, o.a);
  }
}

__global__ void __launch_bounds__(spmmc_tc_threads)
    spmmc_tc_kernel(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  const int lane = static_cast<int>(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * spmmc_tc_cols_per_warp + 8 * g;  // this lane's 8 columns
  const bool in = col < n;  // n % 8 == 0: all 8 or none
  const int step = static_cast<int>(gridDim.y) * spmmc_tc_warps;
  // Every lane of a warp takes the same windows (the MMAs are warp-wide).
  for (int w = static_cast<int>(blockIdx.y) * spmmc_tc_warps + static_cast<int>(threadIdx.x >> 5); w < spmmc_tc_windows;
       w += step) {
    float acc[4][4] = {};
    const int end = spmmc_tc_window_block[w + 1];
    int block = spmmc_tc_window_block[w];
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
    if (!in) continue;
    const int r0 = spmmc_tc_window_rows[8 * w + 2 * t], r1 = spmmc_tc_window_rows[8 * w + 2 * t + 1];
    if (r0 >= 0)
      *reinterpret_cast<uint4*>(C + static_cast<int64_t>(r0) * n + col) =
          make_uint4(spmmc_pack2(acc[0][0], acc[0][2]), spmmc_pack2(acc[1][0], acc[1][2]), spmmc_pack2(acc[2][0], acc[2][2]),
                     spmmc_pack2(acc[3][0], acc[3][2]));
    if (r1 >= 0)
      *reinterpret_cast<uint4*>(C + static_cast<int64_t>(r1) * n + col) =
          make_uint4(spmmc_pack2(acc[0][1], acc[0][3]), spmmc_pack2(acc[1][1], acc[1][3]), spmmc_pack2(acc[2][1], acc[2][3]),
                     spmmc_pack2(acc[3][1], acc[3][3]));
  }
}

// The launch: n a multiple of 8, B and C 16-byte aligned (checked by the entry point).
cudaError_t spmmc_launch_tc(void** args, int64_t n, cudaStream_t stream) {
  const int64_t x = (n + spmmc_tc_cols_per_warp - 1) / spmmc_tc_cols_per_warp;
  const int64_t y = (spmmc_tc_windows + spmmc_tc_warps - 1) / spmmc_tc_warps;
  if (x > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(y < 65535 ? y : 65535));
  return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_tc_kernel), grid, dim3(spmmc_tc_threads), args, 0, stream);
}
