// The launch of the generic family's kernel, as the emitted entry point makes it
// (codegen/templates/kernel.cu, spmmc_launch_generic), for the tuner, which compiles the NVRTC form
// of the generic family (EmitOptions::generic_only with nvrtc_form) and times it as users will run
// it. The tests' host emulation checks this rule against the emitted launch.
#pragma once

#include <cstdint>

#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"

namespace spmmc {

// The generic kernels' names (codegen/templates/kernel_generic.cuh): four columns per thread, a warp
// per row (four columns per lane), one column per thread (batches of 32, 16 and 8 products), the split
// kernel (a warp per row's products, small n).
inline constexpr const char* kGenericKernelV4 = "spmmc_generic_kernel_v4";
inline constexpr const char* kGenericKernelWarp = "spmmc_generic_kernel_warp";
inline constexpr const char* kGenericKernelV1 = "spmmc_generic_kernel_v1";
inline constexpr const char* kGenericKernelV1B16 = "spmmc_generic_kernel_v1_b16";
inline constexpr const char* kGenericKernelV1B8 = "spmmc_generic_kernel_v1_b8";
inline constexpr const char* kGenericKernelSplit = "spmmc_generic_kernel_split";
inline constexpr const char* kGenericKernels[] = {kGenericKernelV4, kGenericKernelWarp, kGenericKernelV1,
                                                  kGenericKernelV1B16, kGenericKernelV1B8, kGenericKernelSplit};
// The warp per row in blocks of 32 warps, in the files where generic_warp_wide says so (besides kGenericKernels).
inline constexpr const char* kGenericKernelWarpWide = "spmmc_generic_kernel_warp_wide";
// The warp per row with a lane's four columns 32 apart (one element a load), where one column per thread
// would run from kGenericWarpStridedFrom: in every file (kGenericKernelWarpStrided, besides kGenericKernels)
// and, where generic_warp_wide, in blocks of 32 warps (kGenericKernelWarpWideStrided).
inline constexpr const char* kGenericKernelWarpStrided = "spmmc_generic_kernel_warp_strided";
inline constexpr const char* kGenericKernelWarpWideStrided = "spmmc_generic_kernel_warp_wide_strided";
// The defaults of SPMMC_GENERIC_SPLIT_BELOW and SPMMC_GENERIC_V4_FROM: the split kernel below this
// n, four columns per thread from that one; threads per block of the split kernel.
inline constexpr int64_t kGenericSplitBelow = 17;
inline constexpr int64_t kGenericV4From = 512;
// Four columns per thread from this n below kGenericV4From (SPMMC_GENERIC_V4_WIDE_FROM's default)
// where their launch has at least kGenericV4WideWarps warps per SM.
inline constexpr int64_t kGenericV4WideFrom = 128;
inline constexpr int64_t kGenericV4WideWarps = 14;
// The variant table's needs of four columns per thread (NAME_info()->variants, NAME.json).
inline constexpr const char* kGenericV4Needs =
    "n % 4 == 0; B and C aligned to 4 elements; below n = 512 only where its launch has at least 14 warps per SM";
inline constexpr int32_t kGenericSplitThreads = 128;
// Rows per block with four columns per thread (SPMMC_GENERIC_ROWS's default; 256 threads).
inline constexpr int32_t kGenericRowsPerBlock = 16;
// Where four columns per thread would run, from this n a warp per row instead (SPMMC_GENERIC_WARP_FROM's
// default): blocks of kGenericWarpRows warps (rows) x kGenericWarpColumns columns. It ran 1.11, 1.10,
// 1.10 and 1.14x faster than four columns per thread at n = 512, 1024, 2048 and 4096 on the 23
// range-sample layers (geomeans, per layer 0.95-1.36x; H100, issue 27, docs/benchmarks.md, *A warp per
// row on the GPU*).
inline constexpr int64_t kGenericWarpFrom = 512;
inline constexpr int32_t kGenericWarpRows = 8;
inline constexpr int32_t kGenericWarpColumns = 128;
inline constexpr int64_t kGenericWarpMaxN = 0x7fffffff / 4;  // a row of B within INT32_MAX bytes in every dtype
inline constexpr const char* kGenericWarpNeeds = "n % 4 == 0; B and C aligned to 4 elements";
// Where one column per thread would run (n % 4 != 0, or B or C not aligned to four elements), from this n
// (SPMMC_GENERIC_WARP_STRIDED_FROM's default) up to kGenericWarpMaxN a warp per row whose lanes take four
// columns 32 apart, each load one element wide (coalesced across the warp): the warp per row's loads of
// A's columns and weights, once per 32 products, where one column per thread loads them for every product.
// H100: 1.07-1.50x one column per thread's speed at n = 513-4095, 0.91x at 255 (docs/design/small-n.md).
inline constexpr int64_t kGenericWarpStridedFrom = 512;
// Where A has more than kGenericWarpStridedShortK columns, from kGenericWarpStridedLongKFrom instead: there rows
// are long, and the warp per row's quarter of one column per thread's warps (a warp takes 128 columns, not 32)
// left the SMs short of work until the launch is large (Nsight Compute at n = 513, K = 2048: 0.81 waves, 25%
// achieved occupancy, against 2.42 waves and 38%): on the eight such layers measured it ran 0.88x one column
// per thread's speed at n = 513, 0.96x at 1023, 1.01x at 1026, 1.22x at 2047 (H100, docs/design/small-n.md).
inline constexpr int64_t kGenericWarpStridedShortK = 1024;
inline constexpr int64_t kGenericWarpStridedLongKFrom = 1024;
// SPMMC_GENERIC_WARP_STRIDED_FROM of A's file: kGenericWarpStridedFrom, or kGenericWarpStridedLongKFrom where A
// has more than kGenericWarpStridedShortK columns.
int64_t generic_warp_strided_from(const Csr& a);
inline constexpr const char* kGenericWarpWideStridedNeeds =
    "only where ceil(M / 32) x ceil(n / 128) blocks are at least 31/32 of the SMs";
// Blocks of kGenericWarpWideRows warps instead of kGenericWarpRows where A has at least
// kGenericWarpWideMinK columns (float32 and tf32 files: SPMMC_GENERIC_WARP_WIDE 1) and the wide launch has
// at least 31/32 of a block per SM (ceil(rows / 32) x ceil(n / 128) blocks): a block's warps take rows that
// share columns (spmmc_generic_order) for the same 128 columns, so 32 of them share B's rows through one
// SM's L1 where B's rows for 128 columns (K x 512 bytes) outgrow it. On the four range-sample layers of
// K >= 2048 it ran 1.14-1.37x faster (geomean 1.22x, 12 (layer, n) at n = 512-4096) wherever its launch
// had at least 128 blocks on 132 SMs, 0.71-0.90x with 32-64; on layers of K <= 1152 0.98x with 128 or
// more (H100, issue 27, docs/benchmarks.md, *The rule's end as emitted, and four studies*).
inline constexpr int32_t kGenericWarpWideRows = 32;
inline constexpr int64_t kGenericWarpWideMinK = 2048;
inline constexpr const char* kGenericWarpWideNeeds =
    "n % 4 == 0; B and C aligned to 4 elements; only where ceil(M / 32) x ceil(n / 128) blocks are at least 31/32 of the SMs";
bool generic_warp_wide(const Csr& a, DType dtype);
// The least n from which generic_launch takes the wide warp kernel for A on `sms` SMs (n % 4 == 0, B and C
// aligned; 0 where the file has none): ceil(rows / 32) x ceil(n / 128) blocks at least 31/32 of the SMs,
// and n >= kGenericWarpFrom.
int64_t generic_warp_wide_from_n(const Csr& a, DType dtype, int64_t sms);
// One column per thread's batch (spmmc_generic_v1_batch in codegen/templates/kernel.cu): the
// launch's warps are weighed against this many per SM; rows of at least this many products on
// average are long.
inline constexpr int64_t kGenericV1ResidentWarps = 16;
inline constexpr int64_t kGenericV1LongRow = 64;

// Where A's rows are all short and many, one column per thread (a thread per row at n = 1, summing in
// column order: the same bits) in place of the split kernel at every n: SPMMC_GENERIC_SPLIT_BELOW 1 in
// the file. kGenericSplitBelow where a row of A has more than kGenericShortRow products or A has fewer
// than kGenericV1FromRowsPerSm x `sms` rows, else 1. Measured at n = 1, 2, 4, 8, 16: on the three shared
// meshes (10 395-22 499 rows of at most 4-5 products) one column per thread took 0.29-0.56x the split
// kernel's time, on a 64-row layer (rows up to 30) 1.23-1.28x (H200); on uniform rows of about 8
// products (H100) the split kernel's time grows with the rows (5.8 us at 2048, 7.6 at 4096, 9.5 at 6144)
// where one column per thread's stays at 6.7-7.6 us, the two meeting at 2765-4096 rows by n (a median of
// 3444, 26 per SM of 132) (docs/benchmarks.md, *Short rows at small n*).
inline constexpr int32_t kGenericShortRow = 32;
inline constexpr int64_t kGenericV1FromRowsPerSm = 26;
int64_t generic_split_below(const Csr& a, int64_t sms);

// What the generic launch depends on besides n and the alignment of B and C.
struct GenericShape {
  int32_t rows = 1;            // A's rows
  int64_t products = 0;        // A's non-zeros
  int sms = 1;                 // the device's SMs
  bool weights_ahead = false;  // SPMMC_GENERIC_WEIGHTS_AHEAD: 1 in the generic family's files
  int64_t split_below = kGenericSplitBelow;  // SPMMC_GENERIC_SPLIT_BELOW (1..33)
  bool warp_wide = false;                    // SPMMC_GENERIC_WARP_WIDE: the file has the wide warp kernel
  int64_t warp_strided_from = kGenericWarpStridedFrom;  // SPMMC_GENERIC_WARP_STRIDED_FROM (0: never)
};
// A's shape for its file's generic path in `dtype`, the split kernel's end by generic_split_below, the wide
// warp kernel by generic_warp_wide, the strided warp kernel's start by generic_warp_strided_from.
GenericShape generic_shape(const Csr& a, int sms, bool weights_ahead, DType dtype);

struct GenericLaunch {
  const char* symbol = kGenericKernelV1;
  int32_t cols_per_thread = 1;  // V: 4 (also a warp per row's lanes) or 1 (1 for the split kernel)
  int32_t batch = 0;            // V = 1: products per batch (32, 16 or 8); else 0
  unsigned grid_x = 1, grid_y = 1;
  unsigned block_x = 1, block_y = 1;
  // The part of C a block covers (the split kernel: every column of its rows), and what its blocks loop
  // over beyond grid.y's 65535: C's columns (the warp per row, grid.y over the columns) or its rows.
  int64_t rows_per_block = 1, columns_per_block = 1;
  bool loops_over_columns = false;
};

// The launch for A with `rows` rows and n columns of B and C, B and C 16-byte aligned when
// `aligned16`: where n < a.split_below, the split kernel (blocks of 128 threads, a warp per row,
// grid.x over the rows, at most 65535); else V = 4 where n is a multiple of 4, both are aligned and
// n >= kGenericV4From, or n >= kGenericV4WideFrom and the V = 4 launch has at least
// kGenericV4WideWarps warps per SM (blocks of 16 rows x 16 threads, 8 warps; from n = kGenericWarpFrom
// up to kGenericWarpMaxN a warp per row instead: blocks of kGenericWarpRows warps, grid.x over the rows, grid.y over the
// columns in blocks of kGenericWarpColumns, at most 65535; blocks of kGenericWarpWideRows warps where
// a.warp_wide and ceil(rows / 32) x the columns' blocks >= 31/32 x the SMs), else V = 1 (a row's threads rounded up to a power of two below the warp size and to a
// multiple of it above, at most 128, and 128 / that many rows per block; from a.warp_strided_from (if not 0) up to
// kGenericWarpMaxN the warp per row with four columns 32 apart instead, launched as the one above, with
// cols_per_thread 1); grid.x over the columns,
// grid.y over the rows, at most 65535 (the blocks loop over the rest); with V = 1 the batch, from
// the launch's warps W against R = kGenericV1ResidentWarps per SM and whether A's rows hold at
// least kGenericV1LongRow products on average: in the generic family's files (weights ahead) long
// rows 32 up to W = R, else 8; shorter ones 32 up to R / 2, 16 up to 1.5 R, else 8; in the unrolled
// files' generic path long rows 32 up to 2 R, else 16; shorter ones 16 up to 2.5 R, else 8.
// Needs rows >= 1, sms >= 1 and 1 <= n with the columns' blocks within 2^31 - 1 (checked).
GenericLaunch generic_launch(const GenericShape& a, int64_t n, bool aligned16);

}  // namespace spmmc
