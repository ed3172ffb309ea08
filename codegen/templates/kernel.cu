/*@HEADER_COMMENT*/// Template of an spmmc-emitted kernel (codegen/templates/kernel.cu). It compiles on its own
// as an empty kernel; the emitter replaces each marked span (see codegen/fill_template.h).
/*@*/
#include /*@HEADER*/"kernel.h"/*@*/

namespace {

/*@DEVICE_CODE*/#include "kernel_device.cuh"
/*@*/
// The generic path, for what the unrolled kernel does not take (n not a multiple of spmmc_v,
// B or C not aligned to 4 x spmmc_v bytes, n above spmmc_max_n): A as CSR data, one thread per
// element of C, the row's products summed in column order like the unrolled code.
constexpr int spmmc_rows = /*@M*/1/*@*/;
__device__ const int spmmc_row_ptr[] = {/*@ROW_PTR*/0, 0/*@*/};
__device__ const int spmmc_col_idx[] = {/*@COL_IDX*/0/*@*/};
__device__ const unsigned spmmc_weight_bits[] = {/*@WEIGHT_BITS*/0u/*@*/};
constexpr int spmmc_generic_threads = 128;

__global__ void __launch_bounds__(spmmc_generic_threads)
    spmmc_generic_kernel(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * spmmc_generic_threads + threadIdx.x;
  if (col >= n) return;
  for (int row = static_cast<int>(blockIdx.y); row < spmmc_rows; row += static_cast<int>(gridDim.y)) {
    float acc = 0.0f;
    for (int p = spmmc_row_ptr[row]; p < spmmc_row_ptr[row + 1]; ++p)
      acc = fmaf(__uint_as_float(spmmc_weight_bits[p]), __ldg(B + static_cast<int64_t>(spmmc_col_idx[p]) * n + col), acc);
    C[static_cast<int64_t>(row) * n + col] = acc;
  }
}

const spmmc_kernel_info spmmc_info = {
    SPMMC_KERNEL_ABI_VERSION,
    "/*@NAME*/spmmc_template/*@*/",
    spmmc_rows,
    /*@K*/0/*@*/,
    /*@NNZ*/0/*@*/,
    "unrolled-constants",
    "row-major",
    "row-major",
    "float32",
    "/*@ARCH*/sm_90/*@*/",
    spmmc_m1,
    spmmc_n1,
    spmmc_v,
    spmmc_a_tiles,
    "/*@REORDER*/none/*@*/",
    "/*@SHA256*//*@*/",
    "/*@VERSION*//*@*/",
};

// The kernels of the unrolled path in launch order, and the A-tiles of each (its grid.x).
constexpr int spmmc_kernel_count = /*@KERNEL_COUNT*/1/*@*/;
const void* const spmmc_kernels[spmmc_kernel_count] = {
    /*@KERNEL_POINTERS*/reinterpret_cast<const void*>(&spmmc_template_kernel_0)/*@*/};
constexpr unsigned spmmc_kernel_tiles[spmmc_kernel_count] = {/*@KERNEL_TILES*/1/*@*/};

// What the launch asks of the current device: the SMs (at every launch, cheap, so GPUs of one kind
// but different sizes work) and whether it has programmatic dependent launch (sm_90 and later).
struct spmmc_device_shape {
  int sms = 1;
  bool dependent_launch = false;
};
spmmc_device_shape spmmc_current_device() {
  spmmc_device_shape d;
  int device = 0, sms = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return d;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess && sms > 0) d.sms = sms;
  d.dependent_launch = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
  return d;
}

// grid.y of every unrolled kernel: blocks per A-tile, each looping over its share of the B-tiles,
// so that all kernels' blocks together fit the SMs in one wave (as many blocks per SM as fit at
// once) and the busiest block has as few B-tiles as that wave allows (the same rule as the
// compiler's blocks_per_a_tile). Blocks per SM depend on the architecture only: asked once (a
// thread-safe static).
int64_t spmmc_grid_y(int64_t b_tiles, int sms) {
  static const int per_sm = [] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spmmc_kernels[0], spmmc_threads, 0) != cudaSuccess ||
        blocks < 1)
      blocks = 1;
    return blocks;
  }();
  const int64_t most = int64_t{sms} * per_sm / spmmc_a_tiles;  // blocks per A-tile in one wave
  if (most <= 1 || b_tiles <= 1) return 1;
  const int64_t per_block = (b_tiles + most - 1) / most;  // B-tiles of the busiest block
  const int64_t y = (b_tiles + per_block - 1) / per_block;
  return y > spmmc_max_grid_y ? spmmc_max_grid_y : y;
}

}  // namespace

extern "C" cudaError_t /*@NAME*/spmmc_template/*@*/(const float* B, float* C, int64_t n, cudaStream_t stream) {
  if (B == nullptr || C == nullptr || n < 1) return cudaErrorInvalidValue;
  void* args[] = {const_cast<float**>(&B), &C, &n};
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % (4u * spmmc_v) == 0; };
  if (n % spmmc_v != 0 || n > spmmc_max_n || !aligned(B) || !aligned(C)) {
    const int64_t x = (n + spmmc_generic_threads - 1) / spmmc_generic_threads;
    if (x > 0x7fffffff) return cudaErrorInvalidValue;
    const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(spmmc_rows < 65535 ? spmmc_rows : 65535));
    return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_generic_kernel), grid, dim3(spmmc_generic_threads), args,
                            0, stream);
  }
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  const spmmc_device_shape device = spmmc_current_device();
  const unsigned grid_y = static_cast<unsigned>(spmmc_grid_y(b_tiles, device.sms));
  // Every kernel after the first may start while the one before it runs (each waits for its
  // predecessor only before it ends: kernel_device.cuh).
  cudaLaunchAttribute overlap[1];
  overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap[0].val.programmaticStreamSerializationAllowed = 1;
  for (int j = 0; j < spmmc_kernel_count; ++j) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(spmmc_kernel_tiles[j], grid_y);
    config.blockDim = dim3(spmmc_threads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = overlap;
    config.numAttrs = j > 0 && device.dependent_launch ? 1 : 0;
    const cudaError_t status = cudaLaunchKernelExC(&config, spmmc_kernels[j], args);
    if (status != cudaSuccess) return status;
  }
  return cudaSuccess;
}

extern "C" const spmmc_kernel_info* /*@INFO_NAME*/spmmc_template_info/*@*/(void) { return &spmmc_info; }
