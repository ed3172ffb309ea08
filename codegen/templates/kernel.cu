/*@HEADER_COMMENT*/// Template of an spmmc-emitted kernel (codegen/templates/kernel.cu). It compiles on its own
// as an empty kernel; the emitter replaces each marked span (see codegen/fill_template.h).
/*@*/
#include /*@HEADER*/"kernel.h"/*@*/

namespace {

/*@DEVICE_CODE*/#include "kernel_device.cuh"
/*@*/
const spmmc_kernel_info spmmc_info = {
    SPMMC_KERNEL_ABI_VERSION,
    "/*@NAME*/spmmc_template/*@*/",
    /*@M*/0/*@*/,
    /*@K*/0/*@*/,
    /*@NNZ*/0/*@*/,
    "unrolled-constants",
    "row-major",
    "row-major",
    "float32",
    "/*@ARCH*/sm_90/*@*/",
    spmmc_m1,
    spmmc_n1,
    1,
    spmmc_a_tiles,
    "/*@REORDER*/none/*@*/",
    "/*@SHA256*//*@*/",
    "/*@VERSION*//*@*/",
};

}  // namespace

extern "C" cudaError_t /*@NAME*/spmmc_template/*@*/(const float* B, float* C, int64_t n, cudaStream_t stream) {
  if (B == nullptr || C == nullptr || n < 1) return cudaErrorInvalidValue;
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  const dim3 grid(static_cast<unsigned>(spmmc_a_tiles), static_cast<unsigned>(b_tiles < spmmc_max_grid_y ? b_tiles : spmmc_max_grid_y));
  const dim3 block(spmmc_n1);
  void* args[] = {const_cast<float**>(&B), &C, &n};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&/*@KERNEL*/spmmc_template_kernel/*@*/), grid, block, args, 0,
                          stream);
}

extern "C" const spmmc_kernel_info* /*@INFO_NAME*/spmmc_template_info/*@*/(void) { return &spmmc_info; }
