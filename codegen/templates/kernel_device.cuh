/*@HEADER_COMMENT*/// Template of the device code of an spmmc-emitted kernel (codegen/templates/kernel_device.cuh):
// the tile functions and the __global__ kernel. The emitter fills it and pastes it into both forms
// of the kernel: NAME.cu (kernel.cu, for nvcc) and the NVRTC form (kernel_nvrtc.cu) that the
// tuner compiles and times. Needs int64_t and the CUDA built-ins from its includer.
/*@*/
// Launch mapping (docs/design/kernel.md): grid.x = A-tiles; a block of spmmc_threads threads
// computes its A-tile for N1 = spmmc_threads x spmmc_v adjacent columns of C at a time, each
// thread spmmc_v adjacent columns, and loops over the B-tiles along grid.y, so an SM keeps
// re-executing code already in its instruction cache.
constexpr int spmmc_m1 = /*@M1*/1/*@*/;
constexpr int spmmc_threads = /*@THREADS*/32/*@*/;
constexpr int spmmc_v = /*@V*/1/*@*/;
constexpr int spmmc_min_blocks = /*@MIN_BLOCKS*/1/*@*/;
constexpr int spmmc_n1 = spmmc_threads * spmmc_v;
constexpr int spmmc_a_tiles = /*@A_TILES*/1/*@*/;
// Largest grid.y: B-tiles beyond it are covered by the blocks looping.
constexpr int64_t spmmc_max_grid_y = 65535;
// Largest n of this kernel: the row stride in bytes (n x 4) is a 32-bit PTX operand.
constexpr int64_t spmmc_max_n = (int64_t{1} << 32) / 4 - 1;

static_assert(spmmc_threads % 32 == 0, "threads per block must be a multiple of the warp size");
static_assert(spmmc_threads <= 1024, "at most 1024 threads per block");
static_assert(spmmc_v == 1 || spmmc_v == 2 || spmmc_v == 4, "1, 2 or 4 columns per thread");
static_assert(spmmc_m1 >= 1, "M1 must be at least 1");
static_assert(spmmc_min_blocks >= 1, "at least one block per SM");

// Each tile body is one inline-PTX statement: b and c point at this thread's first column of B
// and C, ld is the row stride in bytes. The tests' host emulation defines its own macro.
#ifndef SPMMC_TILE_ASM
#define SPMMC_TILE_ASM(ptx) asm volatile(ptx : : "l"(b), "l"(c), "r"(ld) : "memory")
#endif

// One function per A-tile: every weight an immediate in an FMA, row COL of B loaded once per
// non-empty column of the tile (V floats per thread), each row stored at its original index.
/*@TILE_FUNCTIONS*/__device__ __forceinline__ void spmmc_tile_0(const float* __restrict__ b, float* __restrict__ c, unsigned ld) {
  SPMMC_TILE_ASM("{.reg .f32 a<1>;.reg .b64 p<1>;mov.b32 a0,0f00000000;mad.wide.u32 p0,%2,0,%1;st.global.f32 [p0],a0;}");
}
/*@*/
// Requires n % spmmc_v == 0, n <= spmmc_max_n and B, C aligned to 4 x spmmc_v bytes: the entry
// point checks and takes the generic path otherwise.
__global__ void __launch_bounds__(spmmc_threads, spmmc_min_blocks)
    /*@KERNEL*/spmmc_template_kernel/*@*/(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  const unsigned ld = static_cast<unsigned>(n) * 4u;
  for (int64_t bt = blockIdx.y; bt < b_tiles; bt += gridDim.y) {
    const int64_t col = bt * spmmc_n1 + static_cast<int64_t>(threadIdx.x) * spmmc_v;
    if (col >= n) continue;  // n % spmmc_v == 0: a thread has all of its V columns or none
    const float* const b = B + col;
    float* const c = C + col;
    switch (blockIdx.x) {
/*@DISPATCH*/      case 0: spmmc_tile_0(b, c, ld); break;
/*@*/      default: break;
    }
  }
}
