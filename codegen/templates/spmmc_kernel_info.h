/* The metadata every spmmc-emitted kernel describes itself with (NAME_info()). Emitted headers
   carry a copy of this definition behind the same guard, so any number of emitted layers can
   be included together. ABI rules: docs/emitted-code.md. */
#ifndef SPMMC_KERNEL_INFO_DEFINED
#define SPMMC_KERNEL_INFO_DEFINED
#include <stdint.h>

#define SPMMC_KERNEL_ABI_VERSION 2

/* One of a file's kernels (NAME_info()->variants): the entry point takes, for each call, the first
   variant in the table whose n range holds n and whose `needs` the call meets. */
typedef struct spmmc_kernel_variant {
  const char* kernel;         /* "unrolled", "tensor-core", "generic-split", "generic-warp-wide", "generic-warp", "generic-v4", "generic-v1", ... */
  int64_t n_min;              /* the n it takes, n_min to n_max inclusive (none where n_min > n_max) */
  int64_t n_max;
  const char* needs;          /* what else the call must meet ("" for nothing) */
} spmmc_kernel_variant;

typedef struct spmmc_kernel_info {
  int32_t abi_version;        /* SPMMC_KERNEL_ABI_VERSION of the emitting spmmc */
  const char* name;           /* the C name of the entry point */
  int64_t m;                  /* rows of A and C */
  int64_t k;                  /* columns of A, rows of B */
  int64_t nnz;                /* non-zeros of A baked into the code */
  const char* a_format;       /* "unrolled-constants", "csr-constants" or "vector-blocks-constants": A is compiled in */
  const char* b_layout;       /* "row-major": B is K x n, element (i, j) at B[i * n + j] */
  const char* c_layout;       /* "row-major": C is M x n, element (i, j) at C[i * n + j] */
  const char* dtype;          /* B's and C's elements: "float32", "float16" or "bfloat16" (A rounded to it),
                                 or "tfloat32" (float elements, A rounded to tf32, and B too where the
                                 tensor cores multiply: a_format "vector-blocks-constants") */
  const char* arch;           /* the architecture it was tuned for, e.g. "sm_90" */
  int32_t m1;                 /* rows of A per thread block (A-tile size) */
  int32_t n1;                 /* columns of C per thread block */
  int32_t cols_per_thread;    /* columns of C per thread */
  int32_t a_tiles;            /* thread-block functions (A-tiles, including zero-row tiles) */
  const char* reorder;        /* row reordering used: "overlap", "none", "length" or "grow" */
  const char* weights_sha256; /* SHA-256 of A in spmmc's canonical form (docs/emitted-code.md) */
  const char* spmmc_version;  /* the spmmc that emitted it */
  int64_t generic_below_n;    /* the entry point runs the generic path (A as CSR data, a variant for small n)
                                 for every n below this, the file's family from it on (0: by alignment only) */
  int32_t variant_count;      /* the file's kernels, in the order the entry point tries them (appended in */
  const spmmc_kernel_variant* variants; /* version 2; docs/emitted-code.md, *Every batch size*) */
} spmmc_kernel_info;

#endif /* SPMMC_KERNEL_INFO_DEFINED */
