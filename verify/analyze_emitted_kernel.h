// The first stage of `spmmc verify`: parse an emitted NAME.cu with Clang as CUDA device code and
// reconstruct, from the AST and the inline PTX of its tile functions alone, what the unrolled
// kernels compute: which kernels the entry point launches and with how many blocks, which tile
// function each thread block of each kernel runs, how a thread's V columns of B and C follow
// from its indices, and for every row of C and lane (column col + l of the thread) it stores, the
// (column, value) products summed into it. Also the generic path's CSR arrays, the tensor-core
// family's arrays and MMAs, and the info object. An independent oracle of the emitter: it shares
// no code with codegen/.
//
// The parts (docs/verify.md, "How"): analyze_emitted_kernel.cpp runs Clang; walk_kernel_ast.h
// walks the translation unit (the kernels, their dispatch, the tiles); read_launch.h reads the
// host's launch loop and kernel table; read_tile_ptx.h (with ptx_tokens.h) reads a tile's inline
// PTX symbolically; match_expressions.h matches and evaluates C++ expressions; code_locations.h
// turns Clang's locations (and bytes of the PTX string literal) into CodeLocations and messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/common/dtype.h"

namespace spmmc {

// A place in the parsed code (1-based line and column; 0 when unknown).
struct CodeLocation {
  std::string file;  // the path the caller gave for NAME.cu, or a header's path
  int64_t line = 0;
  int64_t column = 0;

  // "layer0.cu:57:3", "layer0.cu" (no line) or "" (no file).
  std::string str() const;
};

// One problem found while parsing or analysing: Clang's own errors (the file does not compile)
// and constructs the analysis does not recognise (so it cannot tell what the code computes).
struct CodeDiagnostic {
  CodeLocation where;
  std::string message;
};

// `fma.rn.f32 aI, xJ, WEIGHT, aI` where xJ holds lane `lane` of B's row `column`: one product of
// A(row, column) for the thread's column col + lane.
struct AnalyzedProduct {
  int64_t column = 0;
  float value = 0.0f;  // the immediate's exact float value
  int32_t lane = 0;    // the lane of B it multiplies
  CodeLocation where;  // the FMA instruction (inside the PTX string literal)
};

// A store of lane `lane` of one row of C (C(row, col + lane)), with every product summed into the
// stored value (none for a sum that stayed +0), in the order the code performs them.
// With `adds`, the stored value is the element of C loaded before (ld.global of the same row and
// lane) plus the sum: a tile of a later range of K adding to what the kernels before it stored.
struct AnalyzedStore {
  int64_t row = 0;
  int32_t lane = 0;
  CodeLocation where;  // the store instruction
  std::vector<AnalyzedProduct> products;
  bool adds = false;
};

// A load of row `row` of B into `lanes` registers, lanes first_lane .. first_lane + lanes - 1.
struct AnalyzedLoad {
  int64_t row = 0;
  int32_t first_lane = 0;
  int32_t lanes = 1;
  bool used = false;  // some FMA multiplies one of its registers
  CodeLocation where;
};

// A register holding a sum of products that no store writes to C (when the PTX ends).
struct UnstoredSum {
  std::string variable;  // "a3"
  CodeLocation where;    // the last FMA into it
  std::vector<AnalyzedProduct> products;
};

// One thread-block (tile) function and its static counts (LO-SpMM §5.1.2): PTX instructions,
// global loads of B (one per vector load), FMA instructions (V per non-zero), and loads no FMA
// uses.
struct AnalyzedTile {
  std::string function;  // "spmmc_tile_7"
  CodeLocation where;    // its definition
  int64_t statements = 0;  // PTX instructions of its body (declarations, labels and braces not counted)
  int64_t loads = 0;
  int64_t fmas = 0;
  int64_t dead_loads = 0;
  bool waits = false;             // griddepcontrol.wait: waits for the kernels before its own
  bool reads_c_early = false;     // loads an element of C before any griddepcontrol.wait
  CodeLocation first_c_read;      // its first load of C
  std::vector<AnalyzedLoad> load_sites;
  std::vector<AnalyzedStore> stores;
  std::vector<UnstoredSum> unstored;
  // The blocks that run it, numbered over all launches in launch order (AnalyzedBlock::global):
  // in a correct file, tile t runs in block t only.
  std::vector<int64_t> blocks;
};

// One case of a kernel's switch (blockIdx.x): the tile functions it runs, from its label to the
// next break (fall-through followed), as indices into EmittedKernelAnalysis::tiles, in call order.
struct AnalyzedCase {
  int64_t label = 0;
  std::vector<int32_t> tiles;
  CodeLocation where;  // the case label
};

// What block `block` (blockIdx.x) of launch `launch` runs: `tiles` indexes
// EmittedKernelAnalysis::tiles, in call order.
struct AnalyzedBlock {
  int32_t launch = 0;   // index into LaunchTable::launches
  int64_t block = 0;    // blockIdx.x
  int64_t global = 0;   // its place over all launches: the blocks along x of the launches before, plus block
  std::vector<int32_t> tiles;
  CodeLocation where;  // its case label, if any
};

// A field of the spmmc_kernel_info initialiser, where it could be evaluated.
template <typename T>
struct InfoField {
  std::optional<T> value;
  CodeLocation where;
};

struct KernelInfoFields {
  bool found = false;
  CodeLocation where;  // the info object's definition
  InfoField<std::string> name, weights_sha256, a_format, b_layout, c_layout, dtype;
  InfoField<int64_t> m, k, nnz, m1, n1, cols_per_thread, a_tiles;
};

// A file-scope integer array of the generic path (`__device__ const int spmmc_row_ptr[] = {...}`),
// each element evaluated as a constant.
struct IntegerArray {
  bool found = false;
  CodeLocation where;                 // its definition
  std::vector<int64_t> values;
  std::vector<int32_t> lines, columns;  // of each element (parallel to values)
};

// The generic fallback kernel's data: A as CSR, weights as their float bits.
struct GenericPath {
  IntegerArray row_ptr, col_idx, weight_bits;  // spmmc_row_ptr, spmmc_col_idx, spmmc_weight_bits
  IntegerArray k_part_begin;                   // spmmc_k_part_begin: the ranges of K it sums separately
  IntegerArray order;                          // spmmc_generic_order: the rows in the order the kernel takes them
  IntegerArray span;                           // spmmc_generic_span: where each slot's row begins and ends
};

// A file-scope integer constant of the tensor-core family (`constexpr int spmmc_tc_windows = 5;`).
struct IntegerConstant {
  bool found = false;
  InfoField<int64_t> field;  // its value (none: not a constant) and the place of its initialiser
  CodeLocation where;        // its definition
};

// An inline-PTX `mma` of the tensor-core kernel (SPMMC_TC_MMA as expanded in the file): its opcode
// ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32") and where the asm statement is. The same for
// the file's conversions to tf32 (the tf32 kernel's rounding of B, "cvt.rna.tf32.f32").
struct MmaStatement {
  std::string opcode;
  std::string function;  // the function whose body holds it
  CodeLocation where;
};

// The tensor-core family's data (a_format "vector-blocks-constants", codegen's
// kernel_tensor_core.cuh and kernel_tensor_core_tf32.cuh): A's rows in windows of spmmc_tc_rows (8,
// or 16 in fp16 and bf16), each window's vectors (its non-empty columns, spmmc_tc_rows x 1; zero
// vectors padding its last block) 8 to a block (fp16, bf16: the m16n8k8 MMA's K) or 4 (tf32:
// m16n8k4), the values as the MMA's operand, 32 H words per block (H = spmmc_tc_rows / 8). Read
// element by element, with each element's place.
struct TensorCorePath {
  IntegerConstant windows;      // spmmc_tc_windows
  IntegerConstant rows;         // spmmc_tc_rows: rows of A per window, 8 or 16 (H = rows / 8 halves)
  IntegerConstant halves;       // spmmc_tc_halves (fp16, bf16): the kernel's words per lane and block, rows / 8
  IntegerConstant warps;        // spmmc_tc_warps: windows per thread block
  IntegerConstant threads;      // spmmc_tc_threads: its threads (32 per warp)
  IntegerConstant cols_per_warp;  // spmmc_tc_cols_per_warp: the columns of C a warp computes
  IntegerArray window_block;    // spmmc_tc_window_block: window w owns blocks [w], .. [w + 1] - 1
  IntegerArray window_rows;     // spmmc_tc_window_rows: spmmc_tc_rows per window, -1 for none
  // spmmc_tc_cols, an array of int2 (fp16, bf16: element i's x at 2i, its y at 2i + 1) or of int
  // (tf32), so that vector j of block b (the row of B it multiplies) is values[k b + j], k the
  // vectors per block.
  IntegerArray cols;
  bool cols_are_pairs = false;  // spmmc_tc_cols was an array of int2 (false: of integers)
  // spmmc_tc_a: 32 H words per block, lane l = 4g + t's word h (row 8h + g of the window) at
  // 32 H b + H l + h (H = spmmc_tc_rows / 8; tf32: H = 1).
  IntegerArray a;
  // The staged form (spmmc_tc_staged_kernel: B's slab in shared memory a chunk of rows at a time),
  // present in fp16 and bf16 files where spmmc chose it: A's columns, the rows per chunk, the chunks,
  // and window w's blocks of chunk c, [chunk_block[w * chunks + c], chunk_block[w * chunks + c + 1]).
  IntegerConstant k;             // spmmc_tc_k
  IntegerConstant chunk_rows;    // spmmc_tc_chunk_rows
  IntegerConstant chunks;        // spmmc_tc_chunks
  // spmmc_tc_chunk_blocks: the most blocks a window has in one chunk (the staged kernel's buffers
  // of a window's words of A and offsets for a chunk hold that many blocks).
  IntegerConstant chunk_blocks;
  IntegerConstant staged_warps;    // spmmc_tc_staged_warps: windows per thread block of the staged kernel
  IntegerConstant staged_threads;  // spmmc_tc_staged_threads: its threads
  IntegerArray chunk_block;      // spmmc_tc_chunk_block
  // spmmc_tc_offsets: per block, its vectors' byte offsets in the chunk's copy of B (8 per block).
  IntegerArray offsets;
  // spmmc_tc_keys: per group of staged_warps windows and chunk, each row's key (0..7): the staged
  // kernel stores the row's 16-byte pieces swizzled by it.
  IntegerArray keys;
  IntegerConstant keyed;  // spmmc_tc_keyed: 1 the copy reads the keys, 0 it takes every row's residue mod 8
  std::vector<MmaStatement> mmas;  // every asm statement of the file whose PTX is an mma
  std::vector<MmaStatement> tf32_conversions;  // every asm statement whose PTX is a cvt to .tf32
};

// The balanced family's data (a_format "csr-pieces-constants", codegen/families/balanced/
// kernel_balanced.cuh): A's CSR arrays (GenericPath: row_ptr, col_idx, weight_bits) and the schedule
// of pieces its kernels run: spmmc_balanced_blocks blocks (grid.x) of spmmc_balanced_slots slots, slot
// s of block b running spmmc_piece[b * slots + s], an int4 {row (-1: idle), begin, end, first + slots x
// pieces} whose products [begin, end) it sums; a row cut into several pieces has them in consecutive
// slots first, first + 1, ... of one block, and its sum is theirs added in that order.
struct BalancedPath {
  IntegerConstant warps;   // spmmc_balanced_warps: warps per block
  IntegerConstant groups;  // spmmc_balanced_groups: pieces per warp (1, 2 or 4)
  IntegerConstant slots;   // spmmc_balanced_slots: pieces per block (warps x groups)
  IntegerConstant blocks;  // spmmc_balanced_blocks: the launch's grid.x
  // spmmc_piece flattened: element i's x, y, z, w at 4i .. 4i + 3, each with its own place.
  IntegerArray pieces;
};

// How a thread of an unrolled kernel finds its columns, read from the kernel and its launch:
// for (bt = blockIdx.y; bt < (n + b_tile_columns - 1) / b_tile_columns; bt += gridDim.y) with
// col = bt * n1 + threadIdx.x * cols_per_thread, B + col and C + col passed to the tiles; the
// block size from the launch. compare_with_weights checks that they tile the columns of C.
struct ColumnMapping {
  bool found = false;
  int64_t cols_per_thread = 0;  // V: the thread's lanes are columns col + 0 .. col + V - 1
  int64_t n1 = 0;               // col's step from one B-tile to the next
  int64_t b_tile_columns = 0;   // the columns per B-tile the loop's bound counts
  bool guarded = false;         // `if (col >= n) continue;` (or return) comes before the dispatch
  int64_t threads = 0;          // the launch's block size (x)
  int64_t max_threads = 0;      // __launch_bounds__'s first argument (0: none)
  CodeLocation where;           // the loop over the B-tiles
  CodeLocation launch_where;    // the launch
};

// One unrolled kernel: a __global__ function with a switch (blockIdx.x) dispatch; its body is
// const locals, one loop over the B-tiles holding the guard and the dispatch, and the
// SPMMC_LAUNCH_DEPENDENTS() / SPMMC_WAIT_FOR_PREVIOUS_KERNEL() statements (programmatic
// dependent launch).
struct AnalyzedKernel {
  std::string function;              // "layer0_kernel_1"
  CodeLocation where;                // its definition
  ColumnMapping columns;             // its loop, guard, __launch_bounds__, and the launch's block size
  std::vector<AnalyzedCase> cases;   // its case labels in source order
  bool waits_for_previous = false;   // its body has SPMMC_WAIT_FOR_PREVIOUS_KERNEL()
};

// Iteration j of the entry point's launch loop: cudaLaunchKernelExC of spmmc_kernels[j] with
// config.gridDim = dim3(spmmc_kernel_tiles[j], ...).
struct KernelLaunch {
  int32_t kernel = -1;       // index into EmittedKernelAnalysis::kernels; -1: not an unrolled kernel
  std::string function;      // the function spmmc_kernels[j] points at ("" when it names none)
  int64_t grid_x = 0;        // spmmc_kernel_tiles[j]: its blocks along x
  CodeLocation where;        // the element of spmmc_kernels
  CodeLocation tiles_where;  // the element of spmmc_kernel_tiles
};

// The host's launch of the unrolled kernels: for (int j = 0; j < COUNT; ++j) { config.gridDim =
// dim3(TILES[j], grid_y); config.blockDim = dim3(THREADS); cudaLaunchKernelExC(&config,
// KERNELS[j], args); } with KERNELS and TILES const arrays of the file (spmmc_kernels,
// spmmc_kernel_tiles) and COUNT a constant (spmmc_kernel_count); and spmmc_a_tiles, the total of
// A-tiles the tables must add up to.
struct LaunchTable {
  bool found = false;
  CodeLocation where;                  // the cudaLaunchKernelExC call
  std::string count_name;              // the loop's bound as spelled ("spmmc_kernel_count")
  int64_t count = 0;                   // its value: launches j = 0 .. count - 1
  CodeLocation count_where;            // its definition (the bound itself if not a variable)
  std::string kernels_name, tiles_name;  // "spmmc_kernels", "spmmc_kernel_tiles"
  std::vector<KernelLaunch> launches;  // in launch order
  InfoField<int64_t> a_tiles;          // the constant spmmc_a_tiles (no value: not found or not constant)
};

struct EmittedKernelAnalysis {
  std::string file;       // NAME.cu as the caller named it
  bool parsed = false;    // Clang parsed it without errors
  bool analyzed = false;  // and every construct of the kernel, the dispatch and the tile functions was recognised
  // The generic family (a_format "csr-constants"): no unrolled code; the generic path's arrays
  // and the info object are all there is to check.
  bool generic_only = false;
  // The tensor-core family (a_format "vector-blocks-constants"): no unrolled code; the tensor-core
  // arrays (A rebuilt from them), the generic path's arrays (the calls the tensor-core kernel does
  // not take) and the info object are what is checked; its __global__ functions must be the
  // tensor-core kernel and the generic kernels, its MMAs of the file's dtype.
  bool tensor_core = false;
  // The balanced family (a_format "csr-pieces-constants"): no unrolled code; its CSR arrays, its
  // pieces (each row's products covered once, in order, by pieces of one block) and the info object
  // are what is checked; its __global__ functions must be its three kernels (V = 4, 2, 1).
  bool balanced = false;
  // B's and C's elements (spmmc compile --dtype): float, __half or __nv_bfloat16, and how they are
  // multiplied. The info object's dtype when it names one of the four ("float32", "float16",
  // "bfloat16", "tfloat32": float elements multiplied as tf32; dtype_from_info), else the element
  // type of the first __global__ function's B. Every kernel, tile function and the entry point must
  // take pointers to its element type (dtype_storage), and the tiles' PTX must load, convert and
  // store it so; compare_with_weights rounds the weights to it (compiler/common/dtype.h) before
  // comparing.
  DType dtype = DType::kFp32;
  bool dtype_from_info = false;
  std::vector<CodeDiagnostic> errors;  // why not (empty when analyzed)
  std::vector<std::string> notes;      // e.g. that NAME.h was missing and the prelude stood in
  std::vector<AnalyzedKernel> kernels; // the unrolled kernels, in order of definition
  std::string kernel;                  // the first one launched (the first defined if none is)
  CodeLocation kernel_where;
  std::string entry_point;             // the host function that launches them
  LaunchTable launch;
  int64_t grid_x = 0;                  // thread blocks along x over all launches (the sum of their grid.x)
  ColumnMapping columns;               // the column mapping of `kernel`
  std::vector<AnalyzedTile> tiles;     // every tile function some case calls, in order of definition
  // Device functions of the file that no case calls but that read as tile functions (never
  // dispatched; they explain rows never written).
  std::vector<AnalyzedTile> uncalled_tiles;
  std::vector<AnalyzedBlock> blocks;   // the blocks along x of every launch of an unrolled kernel, in launch order
  KernelInfoFields info;
  GenericPath generic;
  TensorCorePath tc;
  BalancedPath balanced_path;
  // Its second table for uneven rows (spmmc_piece_mid, spmmc_balanced_mid_blocks; the path's warps,
  // groups and slots), where the file has one.
  BalancedPath balanced_mid;
  int64_t source_bytes = 0;
  double parse_seconds = 0.0;          // Clang (preprocess, parse, semantic analysis)
  double analyze_seconds = 0.0;        // the walk of the AST and the PTX
};

// Parses `cu_path` (an emitted NAME.cu; NAME.h is read from beside it when there, otherwise the
// prelude's definitions stand in) with Clang as CUDA device code: -xcuda --cuda-device-only
// -nocudainc -nocudalib, no system headers, a small in-memory prelude (verify/prelude/) in their
// place. Then walks the AST: every unrolled kernel's column mapping and switch (blockIdx.x)
// dispatch, the launch loop (which kernel each iteration launches, its grid.x, the block size),
// each tile function's inline PTX (loads of B rows into registers,
// FMAs with an immediate weight, stores of C rows, lane by lane), the spmmc_kernel_info
// initialiser and the generic path's arrays; in a file of the tensor-core family (a_format
// "vector-blocks-constants") its arrays, constants, __global__ functions and the opcodes of its
// inline-PTX MMAs instead of unrolled kernels; in a file of the balanced family (a_format
// "csr-pieces-constants") its constants, piece table and __global__ functions. Never throws for bad content: parse errors and
// unrecognised constructs come back in `errors`. A missing or unreadable file is a UserError
// (ExitCode::kNoInput).
EmittedKernelAnalysis analyze_emitted_kernel(const std::string& cu_path);

// The Clang arguments the analysis uses (for documentation and tests).
std::vector<std::string> emitted_kernel_clang_args();

}  // namespace spmmc
