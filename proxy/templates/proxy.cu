/*@HEADER_COMMENT*/// Template of an spmmc proxy kernel (proxy/templates/proxy.cu; LO-SpMM §5, Fig. 8c-d). It
// compiles on its own with NVRTC as a proxy of one empty block function; proxy/build_proxy.cpp
// fills each marked span (see codegen/fill_template.h).
/*@*/
// A proxy stands for every real kernel with the same M1 (and launch-bound class): N1 is a
// run-time argument, the thread-block functions of the real kernel are replaced by one proxy
// block function per cluster, each a truncated loop block of loads and FMAs shaped like its
// cluster's centroid. It computes nothing useful; only its time relative to other candidates
// matters. Dynamic shared memory, set at launch and never touched, aligns its occupancy with
// the real kernel's (Eq. 5-6).
typedef long long int64_t;  // NVRTC provides no <stdint.h>

constexpr int spmmc_m1 = /*@M1*/1/*@*/;
// Launch bounds of the class of N1 this proxy covers (the real kernels use __launch_bounds__(N1)).
constexpr int spmmc_max_threads = /*@MAX_THREADS*/256/*@*/;

// Proxy block functions: b points at this thread's column of B, c at its column of the block's
// own M1 rows of the proxy's output.
/*@BLOCK_FUNCTIONS*/__device__ __forceinline__ void spmmc_pb_0(const float* __restrict__ b, float* __restrict__ c, int64_t n) {
  (void)b;
  (void)n;
  c[0] = 0.0f;
}
/*@*/
// Grid: x = A-tiles of the real kernel, y = B-tiles of n1 columns (looping beyond gridDim.y);
// block: n1 threads. cluster_of_tile maps each A-tile (blockIdx.x) to its proxy block function.
extern "C" __global__ void __launch_bounds__(spmmc_max_threads)
    spmmc_proxy(const float* __restrict__ B, float* __restrict__ C, int64_t n, int n1, const int* __restrict__ cluster_of_tile) {
  const int64_t b_tiles = (n + n1 - 1) / n1;
  const int cluster = cluster_of_tile[blockIdx.x];
  float* const c_tile = C + static_cast<int64_t>(blockIdx.x) * spmmc_m1 * n;
  for (int64_t bt = blockIdx.y; bt < b_tiles; bt += gridDim.y) {
    const int64_t col = bt * n1 + threadIdx.x;
    if (col >= n) continue;
    switch (cluster) {
/*@DISPATCH*/      case 0: spmmc_pb_0(B + col, c_tile + col, n); break;
/*@*/      default: break;
    }
  }
}
