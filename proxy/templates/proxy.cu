/*@HEADER_COMMENT*/// Template of an spmmc proxy kernel (proxy/templates/proxy.cu; LO-SpMM §5, Fig. 8c-d). It
// compiles on its own with NVRTC as a proxy of one empty block function; proxy/build_proxy.cpp
// fills each marked span (see codegen/fill_template.h).
/*@*/
// A proxy stands for every real kernel with the same M1, columns per thread V and launch bounds:
// N1 is a run-time argument, the thread-block functions of the real kernel are replaced by one
// proxy block function per cluster, each a truncated loop block of loads and FMAs shaped like
// its cluster's centroid and printed as the real tiles are (one inline-PTX statement:
// codegen/print_tile_ptx.h), launched as the real kernel is (codegen/templates/kernel_device.cuh:
// a block of N1 / V threads, V adjacent columns each, looping over the B-tiles along grid.y). It
// computes nothing useful; only its time relative to other candidates matters. Dynamic shared
// memory, set at launch and never touched, aligns its occupancy with the real kernel's (Eq. 5-6).
typedef long long int64_t;  // NVRTC provides no <stdint.h>

constexpr int spmmc_m1 = /*@M1*/1/*@*/;
constexpr int spmmc_v = /*@V*/1/*@*/;
// Launch bounds of the real kernels this proxy stands for (their register budget): the widest
// block of the group and the blocks per SM the real kernels ask for.
constexpr int spmmc_max_threads = /*@MAX_THREADS*/256/*@*/;
constexpr int spmmc_min_blocks = /*@MIN_BLOCKS*/1/*@*/;

// Each block function's body is one inline-PTX statement over b and c (this thread's first
// column of B and of the block's own M1 rows of the proxy's output) and ld (the row stride in
// bytes), as in the real kernel.
#ifndef SPMMC_TILE_ASM
#define SPMMC_TILE_ASM(ptx) asm volatile(ptx : : "l"(b), "l"(c), "r"(ld) : "memory")
#endif

/*@BLOCK_FUNCTIONS*/__device__ __forceinline__ void spmmc_tile_0(const float* __restrict__ b, float* __restrict__ c, unsigned ld) {
  SPMMC_TILE_ASM("{.reg .f32 a<1>;.reg .b64 p<1>;mov.b32 a0,0f00000000;mad.wide.u32 p0,%2,0,%1;st.global.f32 [p0],a0;}");
}
/*@*/
// Grid: x = A-tiles of the real kernel, y = blocks per A-tile (each looping over its share of the
// B-tiles of n1 columns); block: n1 / V threads. cluster_of_tile maps each A-tile (blockIdx.x) to
// its proxy block function. Requires n % V == 0 and B, C aligned to 4 x V bytes.
extern "C" __global__ void __launch_bounds__(spmmc_max_threads, spmmc_min_blocks)
    spmmc_proxy(const float* __restrict__ B, float* __restrict__ C, int64_t n, int n1, const int* __restrict__ cluster_of_tile) {
  const int64_t b_tiles = (n + n1 - 1) / n1;
  const unsigned ld = static_cast<unsigned>(n) * 4u;
  const int cluster = cluster_of_tile[blockIdx.x];
  float* const c_tile = C + static_cast<int64_t>(blockIdx.x) * spmmc_m1 * n;
  for (int64_t bt = blockIdx.y; bt < b_tiles; bt += gridDim.y) {
    const int64_t col = bt * n1 + static_cast<int64_t>(threadIdx.x) * spmmc_v;
    if (col >= n) continue;
    const float* const b = B + col;
    float* const c = c_tile + col;
    switch (cluster) {
/*@DISPATCH*/      case 0: spmmc_tile_0(b, c, ld); break;
/*@*/      default: break;
    }
  }
}
