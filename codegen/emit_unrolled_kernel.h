// The emitter of LO-SpMM §6.1, in the design of docs/design/kernel.md: builds the kernel
// program (codegen/kernel_program.h: per A-tile its loads, FMAs and stores, plus the launch
// mapping) and prints each tile as one straight-line inline-PTX function (codegen/print_tile_ptx.h),
// every weight an immediate operand of an FMA, B loaded once per non-empty column of the tile
// (V floats per thread), each row stored at its original index; rows of A without non-zeros
// become tiles that store zeros. Fills codegen/templates/kernel.cu, kernel_device.cuh and
// kernel.h (and kernel_nvrtc.cu on request), with A's CSR arrays for the generic path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/arrays_on_host.h"
#include "codegen/kernel_program.h"
#include "codegen/print_tensor_core.h"
#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"
#include "compiler/planning/reorder_rows.h"
#include "compiler/planning/tile_space.h"

namespace spmmc {

// How the unrolled family is built (docs/design/kernel.md, "ptxas -O1 and loads printed ahead";
// study 13): its body is inline PTX in its final order, each load of B printed kDefaultLoadsAhead
// columns ahead of its FMAs. At ptxas -O1 ptxas keeps that order, takes about half the time of -O3
// and spills nothing, and the kernels ran as fast as at -O3 (1.00-1.06x on 10 layers, 0.98x at
// worst). The generic family (CUDA C loops) keeps ptxas's default -O3: at -O1 it ran 0.92-1.0x.
constexpr int kUnrolledPtxasLevel = 1;
// And with nvcc's --split-compile 0: its optimizer and ptxas take the file's kernels on every core at
// once. The machine code is the same (every .text section of the cubin byte-identical on four files:
// 1-8 kernels, V = 1 and 2, fp16, --k-parts 2; only symbol order and metadata differ), the build of
// a file of 2-8 kernels 1.55-1.81x quicker on two cores, of one kernel as quick (docs/benchmarks.md).
inline constexpr const char* kUnrolledSplitCompile = "0";
constexpr int32_t kDefaultLoadsAhead = 4;
// The unrolled family's build options beyond -arch: for nvcc {"-Xptxas", "-O1"}, for NVRTC
// {"--ptxas-options=-O1"} (the real kernels and the proxies are compiled alike).
std::vector<std::string> unrolled_nvcc_options();
std::vector<std::string> unrolled_nvrtc_options();

struct EmitOptions {
  std::string name;            // the C entry point; a C identifier (checked by the caller)
  std::string arch = "sm_90";  // recorded in NAME_info()
  std::string provenance;      // lines for the files' header comment (how to regenerate them)
  std::string weights_sha256;  // of A (weights_sha256 in compiler/common/sha256.h)
  bool nvrtc_form = false;     // also produce EmittedKernel::nvrtc_cu
  // With nvrtc_form: that form only, EmittedKernel::cu left empty (the tuner compiles the NVRTC form
  // alone, and NAME.cu with A's arrays as constants is hundreds of MB at millions of non-zeros).
  bool nvrtc_only = false;
  // The unrolled code is split into kernels of consecutive tiles of at most this many FMAs
  // (0: one kernel), launched in order (build_kernel_program; spmmc compile's default is
  // default_fmas_per_kernel).
  int64_t fmas_per_kernel = 0;
  // The split along K (build_kernel_program): K in this many ranges of about equal non-zeros,
  // every range after the first added to C by kernels that wait for the ones before them.
  int32_t k_parts = 1;
  // The generic family (docs/emitted-code.md, *The generic family*): the file holds A's CSR arrays
  // and the generic kernel only (SPMMC_GENERIC_ONLY defined at its top, a_format "csr-constants"),
  // no unrolled code: for layers whose unrolled launch leaves the GPU short of warps. Needs
  // k_parts == 1; `tile` is not used, `tiling` gives the order of the generic kernel's rows.
  bool generic_only = false;
  // The balanced family (codegen/families/balanced, docs/design/balanced.md): with generic_only, its
  // kernel and schedule in place of the generic kernels (a_format "csr-pieces-constants"), rows
  // longer than piece_length products cut into pieces (the tiling is not used); float32 (and tf32's
  // CUDA-core code) only.
  bool balanced = false;
  int32_t piece_length = 64;
  int32_t balanced_groups = 1;  // pieces per warp: 1, 2 or 4 (schedule_balanced)
  // The small-n path (docs/design/small-n.md): where balanced_below_n > balanced_from_n >= 1, a file of
  // the unrolled or generic family in float32 (or tf32's CUDA-core code) also holds the balanced kernel
  // (rows of more than small_n_piece_length products cut, one piece per warp), which the entry point
  // takes for every n in [balanced_from_n, balanced_below_n) before any other path. 0: none.
  int64_t balanced_from_n = 0;
  int64_t balanced_below_n = 0;
  int32_t small_n_piece_length = 32;
  // Of that path, every n below this (above balanced_from_n) takes its pairs kernel: two pieces per
  // warp, 16 lanes each (kernel_balanced.cuh). 0: none.
  int64_t balanced_pairs_below_n = 0;
  // Of that path, its one column per lane (n odd, or B and C not aligned to 8 bytes) only below this
  // (0: to the path's end); from it such n go on to the generic path.
  int64_t balanced_v1_below_n = 0;
  // Of that path, a second table of pieces of mid_piece_length products (docs/design/small-n.md, *Uneven
  // rows from n = 512*), which the entry point takes for every n in [balanced_mid_from_n,
  // balanced_mid_below_n) (at or above balanced_below_n). 0: none.
  int64_t balanced_mid_from_n = 0;
  int64_t balanced_mid_below_n = 0;
  int32_t mid_piece_length = 0;
  // n = 1 by the balanced kernel with a lane per product of each piece (spmmc_balanced_spmv,
  // kernel_balanced.cuh), in the balanced family or on the small-n path (needs one of them).
  bool balanced_spmv = false;
  // The tensor-core family (docs/design/precision.md; fp16, bf16 or tf32): the file holds A's 8 x 1
  // vectors and the tensor-core kernel (codegen/print_tensor_core.h), taken where n is a multiple
  // of 8 and B and C are 16-byte aligned, and the generic path for the rest; no unrolled code.
  // `tiling` must have M1 = 8 (the windows); `tile` is not used. Excludes generic_only.
  bool tensor_core = false;
  // Loads of B printed this many columns ahead of their FMAs (print_tile_ptx; 0: each load just
  // before its FMAs, left to ptxas's scheduling).
  int32_t loads_ahead = kDefaultLoadsAhead;
  // B's and C's elements (docs/design/precision.md): A's values must already be rounded to the
  // dtype (round_values_to_dtype); half precision needs k_parts == 1. tf32 rounds B on the tensor
  // cores only: its unrolled and generic families are float32's code (B multiplied as given).
  DType dtype = DType::kFp32;
  // The entry point takes the generic path for every n below this (a variant for small n: the
  // unrolled kernel takes the same time at every n below the one it was tuned for), its family from
  // it on; 0: only where n or the alignment of B and C rules the family out. NAME_info()'s
  // generic_below_n. Not with generic_only (its only path is the generic one: 0).
  int64_t generic_below_n = 0;
  // The target's SMs: the tensor-core family takes its staged kernel from the n whose launch fills
  // them (codegen/print_tensor_core.h).
  int64_t sm_count = 132;
  // The largest n the file is tuned for (0: any): the tensor-core family prints its staged form only
  // where the staged kernel runs at that n (the staged form's blocks, cut at its chunks, pad those
  // the direct kernel runs below it).
  int64_t tuned_n = 0;
  // A's arrays as host bytes in NAME.cu, copied to each device at its first call there (codegen/
  // arrays_on_host.h; spmmc compile --arrays host): not the tensor-core family. The NVRTC form keeps
  // them constants.
  bool host_arrays = false;
};

// What the tuner compiles of a CSR family's file (the generic family's options; the balanced family
// adds its own): the NVRTC form alone (nvrtc_form, nvrtc_only, generic_only), named `name`, for `arch`.
EmitOptions csr_nvrtc_form_options(std::string name, std::string arch);

struct EmittedKernel {
  std::string cu;          // NAME.cu
  std::string h;           // NAME.h
  // With EmitOptions::nvrtc_form: the same device code alone, for NVRTC, with the kernels
  // `kernel_symbols` (the generic family's: codegen/generic_launch.h; the tensor-core family's:
  // codegen/tensor_core_launch.h) given C linkage (codegen/templates/kernel_nvrtc.cu). Headerless
  // in float32; in half precision it includes the dtype's header (nvrtc_cuda_include_options()).
  std::string nvrtc_cu;
  // The generic and balanced families' NVRTC form declares A's arrays without values (so that NVRTC
  // compiles it in seconds whatever A, and a cubin serves every A of the same sizes); their values,
  // to copy into the loaded module before a launch (Module::set_global). Empty elsewhere (the
  // unrolled and tensor-core forms keep their constants).
  std::shared_ptr<const std::vector<ArrayValues>> nvrtc_arrays;
  // NAME_kernel_0, NAME_kernel_1, ...: the __global__ functions of the unrolled path in launch
  // order (signature B, C, int64 n), and the A-tiles of each (its grid.x). Kernel j after the
  // first is launched with programmatic stream serialization (codegen/templates/kernel.cu).
  std::vector<std::string> kernel_symbols;  // none in the generic family
  std::vector<int32_t> kernel_tiles;
  std::vector<int32_t> k_part_begin;  // the ranges of K (KernelProgram::k_part_begin)
  int32_t tiles = 0;       // thread-block functions, zero-row tiles included
  int64_t fmas = 0;        // one per non-zero (each a V-wide group of FMA instructions)
  int64_t loads = 0;       // global loads of B per thread: the sum of non-empty columns over tiles
  int64_t stores = 0;      // one per row of C
  int64_t host_array_bytes = 0;  // EmitOptions::host_arrays: A's arrays' bytes, copied at the first call
  // The tensor-core family: what print_tensor_core made of A (windows, blocks, vectors, the staged and
  // split launches; codegen/print_tensor_core.h), its `code` left empty (it is in `cu`). Zero elsewhere.
  TensorCoreCode tensor_core;
  // The options the file is meant to be built with, beyond -arch: for nvcc ({"-Xptxas", "-O1"}
  // for the unrolled family, none for the generic one; spmmc compile writes them to
  // NAME.nvcc-options for nvcc --options-file) and the same for NVRTC ({"--ptxas-options=-O1"}).
  std::vector<std::string> nvcc_options;
  std::vector<std::string> nvrtc_options;
  // The file's variants as NAME_info()->variants lists them (codegen/templates/kernel.cu), in the
  // order the entry point tries them: for NAME.json.
  struct Variant {
    std::string kernel;
    int64_t n_min = 0, n_max = 0;
    std::string needs;
  };
  std::vector<Variant> variants;
  // The balanced kernel (the family's, or another family's small-n path): rows cut into pieces, and
  // the grid's blocks (zero where the file has none).
  int32_t balanced_rows_cut = 0;
  int32_t balanced_blocks = 0;
  // The small-n path's second table (EmitOptions::balanced_mid_below_n): rows cut, blocks (zero: none).
  int32_t balanced_mid_rows_cut = 0;
  int32_t balanced_mid_blocks = 0;
};

// Emits the kernel for A with `tiling` (rows grouped into A-tiles of at most tile.m1 rows; the
// generic kernel takes the rows in the same order, spmmc_generic_order) and the block of tile.n1 columns, tile.cols_per_thread per thread, launch bounds
// (tile.threads_per_block(), tile.min_blocks_per_sm). Deterministic: the same inputs give the same text.
EmittedKernel emit_unrolled_kernel(const Csr& a, const RowTiling& tiling, const TileCandidate& tile,
                                   const EmitOptions& options);

// "0x1.99999ap-4f": a C float literal that reads back as exactly `v` (hex float).
std::string float_literal(float v);

// True for a valid C identifier that is not reserved (no leading underscore + capital or "__")
// and is no keyword of C or C++.
bool is_c_identifier(const std::string& name);

}  // namespace spmmc
