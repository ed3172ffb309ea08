// The first stage of `spmmc verify`: parse an emitted NAME.cu with Clang as CUDA device code and
// reconstruct, from the AST and the inline PTX of its tile functions alone, what the kernel
// computes: which tile function each thread block runs, how a thread's V columns of B and C
// follow from its indices, and for every row of C and lane (column col + l of the thread) it
// stores, the (column, value) products summed into it. Also the generic path's CSR arrays and
// the info object. An independent oracle of the emitter: it shares no code with codegen/.
//
// The parts (docs/verify.md, "How"): analyze_emitted_kernel.cpp runs Clang; walk_kernel_ast.h
// walks the translation unit; read_tile_ptx.h (with ptx_tokens.h) reads a tile's inline PTX
// symbolically; match_expressions.h matches and evaluates C++ expressions; code_locations.h turns
// Clang's locations (and bytes of the PTX string literal) into CodeLocations and messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
struct AnalyzedStore {
  int64_t row = 0;
  int32_t lane = 0;
  CodeLocation where;  // the store instruction
  std::vector<AnalyzedProduct> products;
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
  std::vector<AnalyzedLoad> load_sites;
  std::vector<AnalyzedStore> stores;
  std::vector<UnstoredSum> unstored;
  std::vector<int64_t> blocks;  // the blockIdx.x values that call it
};

// What blockIdx.x == block runs: `tiles` indexes EmittedKernelAnalysis::tiles, in call order.
struct AnalyzedBlock {
  int64_t block = 0;
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
};

// How a thread of the unrolled kernel finds its columns, read from the kernel and its launch:
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

struct EmittedKernelAnalysis {
  std::string file;       // NAME.cu as the caller named it
  bool parsed = false;    // Clang parsed it without errors
  bool analyzed = false;  // and every construct of the kernel, the dispatch and the tile functions was recognised
  std::vector<CodeDiagnostic> errors;  // why not (empty when analyzed)
  std::vector<std::string> notes;      // e.g. that NAME.h was missing and the prelude stood in
  std::string kernel;                  // the __global__ function with the switch (blockIdx.x) dispatch
  CodeLocation kernel_where;
  std::string entry_point;             // the host function that launches it
  int64_t grid_x = 0;                  // thread blocks along x, from the launch in the host entry point
  ColumnMapping columns;
  std::vector<AnalyzedTile> tiles;     // every tile function some case calls, in order of definition
  // Device functions of the file that no block calls but that read as tile functions (to explain
  // rows never written).
  std::vector<AnalyzedTile> uncalled_tiles;
  std::vector<AnalyzedBlock> blocks;   // blockIdx.x = 0 .. grid_x - 1, in order
  KernelInfoFields info;
  GenericPath generic;
  int64_t source_bytes = 0;
  double parse_seconds = 0.0;          // Clang (preprocess, parse, semantic analysis)
  double analyze_seconds = 0.0;        // the walk of the AST and the PTX
};

// Parses `cu_path` (an emitted NAME.cu; NAME.h is read from beside it when there, otherwise the
// prelude's definitions stand in) with Clang as CUDA device code: -xcuda --cuda-device-only
// -nocudainc -nocudalib, no system headers, a small in-memory prelude (verify/prelude/) in their
// place. Then walks the AST: the launch's grid and block, the kernel's column mapping and its
// switch (blockIdx.x) dispatch, each tile function's inline PTX (loads of B rows into registers,
// FMAs with an immediate weight, stores of C rows, lane by lane), the spmmc_kernel_info
// initialiser and the generic path's arrays. Never throws for bad content: parse errors and
// unrecognised constructs come back in `errors`. A missing or unreadable file is a UserError
// (ExitCode::kNoInput).
EmittedKernelAnalysis analyze_emitted_kernel(const std::string& cu_path);

// The Clang arguments the analysis uses (for documentation and tests).
std::vector<std::string> emitted_kernel_clang_args();

}  // namespace spmmc
