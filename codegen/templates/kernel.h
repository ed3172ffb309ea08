/*@HEADER_COMMENT*//* Template of an spmmc-emitted header (codegen/templates/kernel.h). */
/*@*/
#ifndef /*@GUARD*/SPMMC_TEMPLATE_H/*@*/
#define /*@GUARD*/SPMMC_TEMPLATE_H/*@*/

#include <stdint.h>

#include <cuda_runtime.h>
/*@DTYPE_INCLUDE*//*@*/
/*@KERNEL_INFO*/#include "spmmc_kernel_info.h"
/*@*/
#ifdef __cplusplus
extern "C" {
#endif

/* C = A * B for the A compiled into this file: B row-major K x n, C row-major M x n, elements of
   the type below (NAME_info()->dtype names it; in half precision the products are summed in float32;
   "tfloat32": float B and C, A rounded to tf32, products summed in float32; on the tensor cores
   (a_format "vector-blocks-constants") B is rounded to tf32 too, on CUDA cores it is multiplied as given).
   Enqueues its kernels on `stream` and returns at once: no device memory allocated, no
   synchronisation, no output. Several kernels go as one CUDA graph, built on the first calls and
   kept per host thread and device (define SPMMC_NO_GRAPH when compiling the .cu to launch them
   one by one). Returns cudaErrorInvalidValue for a null B or C or n < 1, otherwise the launch's
   status. Every element of C is written (rows of A without non-zeros give zero rows). */
cudaError_t /*@NAME*/spmmc_template/*@*/(const /*@ELEM*/float/*@*/* B, /*@ELEM*/float/*@*/* C, int64_t n, cudaStream_t stream);

/* Shapes, layouts, tile choice and provenance of this kernel (static storage; never NULL). */
const spmmc_kernel_info* /*@INFO_NAME*/spmmc_template_info/*@*/(void);

#ifdef __cplusplus
}
#endif

#endif
