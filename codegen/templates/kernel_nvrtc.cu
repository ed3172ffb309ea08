/*@HEADER_COMMENT*/// Template of the NVRTC form of an spmmc-emitted kernel (codegen/templates/kernel_nvrtc.cu):
// the device code of NAME.cu alone, with no headers (NVRTC has none here) and the kernel given C
// linkage so the driver finds it by name. The tuner compiles it to a cubin to time real
// candidates (spmmc compile --tune exhaustive) and, with the generic code instead of tiles, the
// generic family (--tune proxy and exhaustive), or with the tensor-core code, that family (the
// timed choice of half precision); users get NAME.cu. In half precision it includes the dtype's
// header, which NVRTC finds with the toolkit's include folder (runtime/nvrtc_compile.h).
/*@*/
typedef long long int64_t;  // NVRTC provides no <stdint.h>
/*@DTYPE_INCLUDE*//*@*/
/*@DTYPE_CODE*/#include "dtype_fp32.cuh"
/*@*/
// Declared first with C linkage: the definitions in the device code below inherit it.
/*@KERNEL_DECLARATIONS*/extern "C" __global__ void spmmc_template_kernel_0(const float* __restrict__ B, float* __restrict__ C, int64_t n);
/*@*/

/*@DEVICE_CODE*/#include "kernel_device.cuh"
/*@*/
/*@GENERIC_CODE*//*@*/
/*@TENSOR_CORE_CODE*//*@*/
