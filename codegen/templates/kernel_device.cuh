/*@HEADER_COMMENT*/// Template of the device code of an spmmc-emitted kernel (codegen/templates/kernel_device.cuh):
// the tile functions and the __global__ kernels. The emitter fills it and pastes it into both forms
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
constexpr int spmmc_n1 = spmmc_threads * spmmc_v;
constexpr int spmmc_a_tiles = /*@A_TILES*/1/*@*/;
#ifndef SPMMC_GENERIC_ONLY  // the unrolled path (kernel.cu)
constexpr int spmmc_min_blocks = /*@MIN_BLOCKS*/1/*@*/;
// Largest grid.y: B-tiles beyond it are covered by the blocks looping.
constexpr int64_t spmmc_max_grid_y = 65535;
// Largest n of this kernel: the row stride in bytes (n x the element's bytes) is a 32-bit PTX operand.
constexpr int64_t spmmc_max_n = (int64_t{1} << 32) / static_cast<int64_t>(sizeof(spmmc_elem)) - 1;

static_assert(spmmc_threads % 32 == 0, "threads per block must be a multiple of the warp size");
static_assert(spmmc_threads <= 1024, "at most 1024 threads per block");
static_assert(spmmc_v == 1 || spmmc_v == 2 || spmmc_v == 4, "1, 2 or 4 columns per thread");
static_assert(spmmc_m1 >= 1, "M1 must be at least 1");
static_assert(spmmc_min_blocks >= 1, "at least one block per SM");

// Programmatic dependent launch (sm_90 and later): every kernel lets the next one start at once
// (the kernels write disjoint rows of C), and waits before it ends until the kernel before it has
// completed, so the last kernel's completion means all are done, for whatever the stream runs
// next. Both are no-ops for a kernel launched without the attribute (the first) and where the
// device code predates sm_90; the tests' host emulation gets the no-ops too.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SPMMC_LAUNCH_DEPENDENTS() asm volatile("griddepcontrol.launch_dependents;" : : : "memory")
#define SPMMC_WAIT_FOR_PREVIOUS_KERNEL() asm volatile("griddepcontrol.wait;" : : : "memory")
#else
#define SPMMC_LAUNCH_DEPENDENTS() ((void)0)
#define SPMMC_WAIT_FOR_PREVIOUS_KERNEL() ((void)0)
#endif

// Each tile body is one inline-PTX statement: b and c point at this thread's first column of B
// and C, ld is the row stride in bytes. The tests' host emulation defines its own macro.
#ifndef SPMMC_TILE_ASM
#define SPMMC_TILE_ASM(ptx) asm volatile(ptx : : "l"(b), "l"(c), "r"(ld) : "memory")
#endif

// One function per A-tile: every weight an immediate in an FMA, row COL of B loaded once per
// non-empty column of the tile (V elements per thread), each row stored at its original index.
/*@TILE_FUNCTIONS*/__device__ __forceinline__ void spmmc_tile_0(const float* __restrict__ b, float* __restrict__ c, unsigned ld) {
  SPMMC_TILE_ASM("{.reg .f32 a<1>;.reg .b64 p<1>;mov.b32 a0,0f00000000;mad.wide.u32 p0,%2,0,%1;st.global.f32 [p0],a0;}");
}
/*@*/
// The kernels, each a few consecutive tiles (kernel_group.cuh); the entry point launches them in
// order, overlapped by programmatic dependent launch.
/*@KERNELS*/#include "kernel_group.cuh"
/*@*/
#endif  // SPMMC_GENERIC_ONLY
