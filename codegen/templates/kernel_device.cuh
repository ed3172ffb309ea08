/*@HEADER_COMMENT*/// Template of the device code of an spmmc-emitted kernel (codegen/templates/kernel_device.cuh):
// the tile functions and the __global__ kernel. The emitter fills it and pastes it into both forms
// of the kernel: NAME.cu (kernel.cu, for nvcc) and the NVRTC form (kernel_nvrtc.cu) that the
// tuner compiles and times. Needs int64_t and the CUDA built-ins from its includer.
/*@*/
// Tile shape: a thread block computes an (M1, N1) tile of C, each thread an (M1, 1) strip.
constexpr int spmmc_m1 = /*@M1*/1/*@*/;
constexpr int spmmc_n1 = /*@N1*/32/*@*/;
constexpr int spmmc_a_tiles = /*@A_TILES*/1/*@*/;
// Largest grid.y: B-tiles beyond it are covered by the blocks looping.
constexpr int64_t spmmc_max_grid_y = 65535;

static_assert(spmmc_n1 % 32 == 0, "N1 must be a multiple of the warp size");
static_assert(spmmc_n1 <= 1024, "at most 1024 threads per block");
static_assert(spmmc_m1 >= 1, "M1 must be at least 1");

// One function per A-tile: every weight an immediate in an FMA, B loaded once per non-empty
// column of the tile (prefetched one column ahead), each row stored at its original index.
/*@TILE_FUNCTIONS*/__device__ __forceinline__ void tile_0(const float* __restrict__ b, float* __restrict__ c, int64_t n) {
  (void)b;
  (void)c;
  (void)n;
}
/*@*/
// Grid: x = A-tiles, y = B-tiles of N1 columns (looping beyond 65535); one thread per column.
__global__ void __launch_bounds__(spmmc_n1)
    /*@KERNEL*/spmmc_template_kernel/*@*/(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  for (int64_t bt = blockIdx.y; bt < b_tiles; bt += gridDim.y) {
    const int64_t col = bt * spmmc_n1 + threadIdx.x;
    if (col >= n) continue;
    switch (blockIdx.x) {
/*@DISPATCH*/      case 0: tile_0(B + col, C + col, n); break;
/*@*/      default: break;
    }
  }
}
