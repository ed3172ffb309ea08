/* Used by `spmmc verify` only when NAME.h is not beside NAME.cu (a vendored .cu without its
   header): the ABI version 2 definition of spmmc_kernel_info, as codegen/templates/
   spmmc_kernel_info.h writes it (a test checks the two agree, fields and version). */
#ifndef SPMMC_KERNEL_INFO_DEFINED
#define SPMMC_KERNEL_INFO_DEFINED
#include <stdint.h>

#define SPMMC_KERNEL_ABI_VERSION 2

typedef struct spmmc_kernel_variant {
  const char* kernel;
  int64_t n_min;
  int64_t n_max;
  const char* needs;
} spmmc_kernel_variant;

typedef struct spmmc_kernel_info {
  int32_t abi_version;
  const char* name;
  int64_t m;
  int64_t k;
  int64_t nnz;
  const char* a_format;
  const char* b_layout;
  const char* c_layout;
  const char* dtype;
  const char* arch;
  int32_t m1;
  int32_t n1;
  int32_t cols_per_thread;
  int32_t a_tiles;
  const char* reorder;
  const char* weights_sha256;
  const char* spmmc_version;
  int64_t generic_below_n;
  int32_t variant_count;
  const spmmc_kernel_variant* variants;
} spmmc_kernel_info;

#endif
