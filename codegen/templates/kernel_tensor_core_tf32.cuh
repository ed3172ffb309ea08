/*@HEADER_COMMENT*/// Template of the tensor-core path of an spmmc-emitted kernel in tf32
// (codegen/templates/kernel_tensor_core_tf32.cuh; fp16 and bf16: kernel_tensor_core.cuh): A's 8 x 1
// vectors as constants and the tensor-core kernel with the m16n8k4 TF32 MMA. The emitter fills it
// (codegen/print_tensor_core.h) and pastes it into NAME.cu (kernel.cu) for the tensor-core family of
// --dtype tf32. Needs int64_t, spmmc_elem (float) and spmmc_tf32_bits (dtype_tf32.cuh) and the CUDA
// built-ins from its includer.
/*@*/
// The tensor-core family in tf32 (FlashSparse's swap-and-transpose MMA, docs/design/precision.md). A's
// rows are taken in windows of 8 (in the row order spmmc chose so that a window's rows share columns);
// the non-empty columns of a window are its 8 x 1 vectors, 4 of them a block (the m16n8k4 MMA's K; the
// last block of a window padded with zero vectors). The structure is fixed ahead of time: the arrays
// below are constants of this file, A's values already rounded to tf32 and in the order the lanes of
// a warp hold them as an MMA operand.
//
// One warp computes a window's 8 rows of C for 64 adjacent columns c0..c0+63. Per block it runs four
// m16n8k4 MMAs (s = 0..3), D(16 x 8) += L(16 x 4) x R(4 x 8), with L = B^T (16 columns of B x the
// block's 4 rows of B) and R = A^T (the block's 4 vectors x the window's 8 rows): the MMA's row g
// (0..7) is column c0 + 8g + 2s of C and its row g + 8 column c0 + 8g + 2s + 1. So lane l = 4g + t,
// which holds L's elements of rows g and g + 8 at k = t (a0, a1), loads the 8 floats of row cols[t]
// of B at columns c0 + 8g .. c0 + 8g + 7 (two 16-byte loads; a warp reads 256 contiguous bytes of each
// of the block's 4 rows of B) and hands MMA s its floats 2s and 2s + 1, rounded to tf32 with
// cvt.rna.tf32.f32; its word of R (b0) is the window's row g times vector t. D's lane l holds rows
// 2t and 2t + 1 of the window at columns c0 + 8g + 2s and + 1: after the last block each lane stores
// 8 contiguous floats (two 16-byte stores) of each of its two rows. Sums in float32 on the tensor
// cores (the order of their additions is the hardware's), stored as they are.
//
// A block of spmmc_tc_warps warps takes that many consecutive windows (which share columns, so their
// loads of B meet in L1) at one 64-column slab: grid.x over the slabs, grid.y over the groups of
// windows (looping where they exceed 65535). n must be a multiple of 8 and B and C 16-byte aligned
// (the entry point takes the generic path otherwise).
constexpr int spmmc_tc_windows = /*@WINDOWS*/1/*@*/;  // the windows with non-zeros, then those of the empty rows
constexpr int spmmc_tc_rows = 8;                        // rows per window (always 8 in tf32)
static_assert(spmmc_tc_rows == 8, "the m16n8k4 kernel's windows have 8 rows (one MMA's N)");
constexpr int spmmc_tc_warps = 4;                       // windows per block
constexpr int spmmc_tc_threads = 32 * spmmc_tc_warps;
constexpr int spmmc_tc_cols_per_warp = 64;
// Window w owns blocks spmmc_tc_window_block[w] .. spmmc_tc_window_block[w + 1] - 1 (none: rows of C that are zero).
__device__ const int spmmc_tc_window_block[] = {/*@WINDOW_BLOCK*/0, 0/*@*/};
// The 8 rows of C of each window (-1: none, in a window of fewer than 8 rows).
__device__ const int spmmc_tc_window_rows[] = {/*@WINDOW_ROWS*/0, -1, -1, -1, -1, -1, -1, -1/*@*/};
// The row of B of each vector of each block, 4 per block (vector t: lanes 4g + t load it).
__device__ const int spmmc_tc_cols[] = {/*@COLS*/0, 0, 0, 0/*@*/};
// A's values, 32 words per block: lane 4g + t's word is the window's row g times vector t, a float's
// bits rounded to tf32 (its 13 low mantissa bits zero; the m16n8k4 MMA's B fragment b0).
__device__ const unsigned spmmc_tc_a[] = {/*@A_BITS*/0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u,
    0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u/*@*/};

// The MMA: D += L x R, tf32 operands, float32 accumulators, in place (the tests' host emulation
// defines its own macro, a warp collective).
#ifndef SPMMC_MMA_M16N8K4_TF32
#define SPMMC_MMA_M16N8K4_TF32(d, a0, a1, b0)                                                                     \
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                 \
               : "r"(a0), "r"(a1), "r"(b0))
#endif

// What a lane needs of one block: its word of A's values and its 8 columns of the block's row
// cols[t] of B (lo: the first four, hi: the last four; zero where its columns are past n).
struct spmmc_tc_operands {
  unsigned a;
  float4 lo, hi;
};

__device__ __forceinline__ spmmc_tc_operands spmmc_tc_load(const spmmc_elem* __restrict__ B, int64_t n, int64_t col, bool in,
                                                          int block, int lane) {
  spmmc_tc_operands o;
  o.a = __ldg(&spmmc_tc_a[32 * block + lane]);
  const int k = __ldg(&spmmc_tc_cols[4 * block + (lane & 3)]);
  const float4* const row = reinterpret_cast<const float4*>(B + static_cast<int64_t>(k) * n + col);
  o.lo = in ? __ldg(row) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  o.hi = in ? __ldg(row + 1) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  return o;
}

// The four MMAs of one block: MMA s takes floats 2s (row g of L, column c0 + 8g + 2s) and 2s + 1
// (row g + 8, column c0 + 8g + 2s + 1) of the lane's 8, each rounded to tf32.
__device__ __forceinline__ void spmmc_tc_mma4(const spmmc_tc_operands& o, float (&acc)[4][4]) {
  const float x[8] = {o.lo.x, o.lo.y, o.lo.z, o.lo.w, o.hi.x, o.hi.y, o.hi.z, o.hi.w};
  for (int s = 0; s < 4; ++s) {
    const unsigned a0 = spmmc_tf32_bits(x[2 * s]), a1 = spmmc_tf32_bits(x[2 * s + 1]);
    SPMMC_MMA_M16N8K4_TF32(acc[s], a0, a1, o.a);
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
    // Row 2t: D's elements 0 (column 2s) and 2 (column 2s + 1) of MMA s; row 2t + 1: elements 1 and 3.
    // __stwb (st.global.wb, the default policy) keeps each a 16-byte store: nvcc 13 splits a plain
    // float4 assignment here into four 4-byte stores.
    const int r0 = spmmc_tc_window_rows[8 * w + 2 * t], r1 = spmmc_tc_window_rows[8 * w + 2 * t + 1];
    if (r0 >= 0) {
      float4* const out = reinterpret_cast<float4*>(C + static_cast<int64_t>(r0) * n + col);
      __stwb(out, make_float4(acc[0][0], acc[0][2], acc[1][0], acc[1][2]));
      __stwb(out + 1, make_float4(acc[2][0], acc[2][2], acc[3][0], acc[3][2]));
    }
    if (r1 >= 0) {
      float4* const out = reinterpret_cast<float4*>(C + static_cast<int64_t>(r1) * n + col);
      __stwb(out, make_float4(acc[0][1], acc[0][3], acc[1][1], acc[1][3]));
      __stwb(out + 1, make_float4(acc[2][1], acc[2][3], acc[3][1], acc[3][3]));
    }
  }
}

// The launch: n a multiple of 8, B and C 16-byte aligned (checked by the entry point); not in the
// tuner's NVRTC form (codegen/tensor_core_launch.h).
#ifndef __CUDACC_RTC__
cudaError_t spmmc_launch_tc(void** args, int64_t n, cudaStream_t stream) {
  const int64_t x = (n + spmmc_tc_cols_per_warp - 1) / spmmc_tc_cols_per_warp;
  const int64_t y = (spmmc_tc_windows + spmmc_tc_warps - 1) / spmmc_tc_warps;
  if (x > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(y < 65535 ? y : 65535));
  return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_tc_kernel), grid, dim3(spmmc_tc_threads), args, 0, stream);
}
#endif
