/*@HEADER_COMMENT*/// Template of the unrolled kernel with its ranges of K in one block (codegen/templates/kernel_k_in_block.cuh),
// a study hook (issue 27; docs/design/small-n.md, *Narrower blocks*): spmmc compile --k-parts P with
// SPMMC_STUDY_K_IN_BLOCK=1 in its environment prints it instead of the chain of kernels of kernel_group.cuh.
// Needs the tile functions and constants of kernel_device.cuh before it.
/*@*/
// Below a full wave the unrolled kernel's time is one warp's walk through its tile's straight-line code
// (docs/benchmarks.md, *The rule's end as emitted*): here the P ranges of K of a tile run at once in the
// P rows of warps of one block (threadIdx.y = the range), each storing its slots' partial sums to shared
// memory ([range][slot][column]: the tile function's c is its column of its range's rows, each row of
// spmmc_n1 floats, addressed by immediate offsets); then the block adds them in range order, as the chain does (a range
// without products in a slot stores -0, which adds nothing), and stores each row of C.
#define SPMMC_K_IN_BLOCK 1
constexpr int spmmc_k_ranges = /*@K_RANGES*/2/*@*/;
static_assert(spmmc_threads * spmmc_k_ranges <= 1024, "the ranges' warps fit one block");
// The original row of each slot of each A-tile (-1: no row), and the ranges each tile has code for (bit r).
__device__ const int spmmc_k_in_block_rows[spmmc_a_tiles][spmmc_m1] = {/*@TILE_ROWS*/{0}/*@*/};
__device__ const unsigned spmmc_k_in_block_ranges[spmmc_a_tiles] = {/*@TILE_RANGES*/1u/*@*/};
static_assert(int64_t{spmmc_k_ranges} * spmmc_m1 * spmmc_n1 * sizeof(float) <= 48 * 1024,
              "the ranges' partial sums fit 48 KB of static shared memory");

__global__ void __launch_bounds__(spmmc_threads * spmmc_k_ranges, 1)
    /*@KERNEL*/spmmc_template_kernel_0/*@*/(const spmmc_elem* __restrict__ B, spmmc_elem* __restrict__ C, int64_t n) {
  __shared__ float spmmc_partial[spmmc_k_ranges * spmmc_m1 * spmmc_n1];  // [range][slot][column of the block]
  const int range = static_cast<int>(threadIdx.y);
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  const unsigned ld = static_cast<unsigned>(n) * static_cast<unsigned>(sizeof(spmmc_elem));  // B's row stride
  const unsigned ranges = spmmc_k_in_block_ranges[blockIdx.x];
  for (int64_t bt = blockIdx.y; bt < b_tiles; bt += gridDim.y) {
    const int64_t col = bt * spmmc_n1 + static_cast<int64_t>(threadIdx.x) * spmmc_v;
    if (col < n) {  // n % spmmc_v == 0: a thread has all of its V columns or none
      const spmmc_elem* const b = B + col;
      float* const c = spmmc_partial + (range * spmmc_m1) * spmmc_n1 + threadIdx.x * spmmc_v;
      switch (static_cast<int>(blockIdx.x) * spmmc_k_ranges + range) {
/*@DISPATCH*/        case 0: spmmc_tile_0(b, c, ld); break;
/*@*/        default: break;
      }
    }
    __syncthreads();
    for (int slot = range; slot < spmmc_m1 && col < n; slot += spmmc_k_ranges) {
      const int row = spmmc_k_in_block_rows[blockIdx.x][slot];
      if (row < 0) continue;
      float total[spmmc_v];
      for (int v = 0; v < spmmc_v; ++v) total[v] = spmmc_partial[slot * spmmc_n1 + threadIdx.x * spmmc_v + v];
      for (int r = 1; r < spmmc_k_ranges; ++r)
        if (ranges >> r & 1u)
          for (int v = 0; v < spmmc_v; ++v) total[v] += spmmc_partial[(r * spmmc_m1 + slot) * spmmc_n1 + threadIdx.x * spmmc_v + v];
      for (int v = 0; v < spmmc_v; ++v) C[static_cast<int64_t>(row) * n + col + v] = total[v];
    }
    __syncthreads();
  }
}

#if !defined(__CUDACC_RTC__)
// One launch: a block per A-tile and B-tile (grid.y looping beyond 65535), the ranges' rows of warps.
cudaError_t spmmc_launch_k_in_block(void** args, int64_t n, cudaStream_t stream) {
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  return cudaLaunchKernel(reinterpret_cast<const void*>(&/*@KERNEL*/spmmc_template_kernel_0/*@*/),
                          dim3(spmmc_a_tiles, static_cast<unsigned>(b_tiles < 65535 ? b_tiles : 65535)),
                          dim3(spmmc_threads, spmmc_k_ranges), args, 0, stream);
}
#endif
