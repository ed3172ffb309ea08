// The first stage of `spmmc verify`: parse an emitted NAME.cu with Clang as CUDA device code and
// reconstruct, from the AST alone, what the kernel computes: which tile function each thread
// block runs, and for every row of C it stores, the (column, value) products summed into it.
// An independent oracle of the emitter: it shares no code with codegen/ and matches no text.
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

// acc = fmaf(value, x, acc) where x holds B's row `column`: one product of A(row, column).
struct AnalyzedProduct {
  int64_t column = 0;
  float value = 0.0f;  // the immediate's exact float value
  CodeLocation where;  // the fmaf call
};

// c[row * n] = <sum>: a store of one row of C, with every product summed into the stored value
// (none for a store of 0.0f), in the order the code performs them.
struct AnalyzedStore {
  int64_t row = 0;
  CodeLocation where;
  std::vector<AnalyzedProduct> products;
};

// A register holding a sum of products that no store writes to C (when the function returns).
struct UnstoredSum {
  std::string variable;  // "acc3"
  CodeLocation where;    // its declaration
  std::vector<AnalyzedProduct> products;
};

// One thread-block (tile) function and its static counts (LO-SpMM §5.1.2).
struct AnalyzedTile {
  std::string function;  // "tile_7"
  CodeLocation where;    // its definition
  int64_t statements = 0;  // statements in its body
  int64_t loads = 0;       // global loads of B
  int64_t fmas = 0;        // fmaf calls
  int64_t dead_loads = 0;  // loads whose value no FMA uses
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
  InfoField<std::string> name, weights_sha256;
  InfoField<int64_t> m, k, nnz, m1, n1, cols_per_thread, a_tiles;
};

struct EmittedKernelAnalysis {
  std::string file;       // NAME.cu as the caller named it
  bool parsed = false;    // Clang parsed it without errors
  bool analyzed = false;  // and every construct of the dispatch and the tile functions was recognised
  std::vector<CodeDiagnostic> errors;  // why not (empty when analyzed)
  std::vector<std::string> notes;      // e.g. that NAME.h was missing and the prelude stood in
  std::string kernel;                  // the __global__ function
  CodeLocation kernel_where;
  int64_t grid_x = 0;                  // thread blocks along x, from the launch in the host entry point
  std::vector<AnalyzedTile> tiles;     // every tile function some case calls, in order of definition
  // Device functions of the file that no block calls but that read as tile functions (to explain
  // rows never written).
  std::vector<AnalyzedTile> uncalled_tiles;
  std::vector<AnalyzedBlock> blocks;   // blockIdx.x = 0 .. grid_x - 1, in order
  KernelInfoFields info;
  int64_t source_bytes = 0;
  double parse_seconds = 0.0;          // Clang (preprocess, parse, semantic analysis)
  double analyze_seconds = 0.0;        // the walk of the AST
};

// Parses `cu_path` (an emitted NAME.cu; NAME.h is read from beside it when there, otherwise the
// prelude's definitions stand in) with Clang as CUDA device code: -xcuda --cuda-device-only
// -nocudainc -nocudalib, no system headers, a small in-memory prelude (verify/prelude/) in their
// place. Then walks the AST: the launch's grid, the kernel's switch (blockIdx.x) dispatch, each
// tile function's straight-line statements (loads of B into registers, register copies, fmaf
// with an immediate, stores to C), and the spmmc_kernel_info initialiser. Never throws for bad
// content: parse errors and unrecognised constructs come back in `errors`. A missing or
// unreadable file is a UserError (ExitCode::kNoInput).
EmittedKernelAnalysis analyze_emitted_kernel(const std::string& cu_path);

// The Clang arguments the analysis uses (for documentation and tests).
std::vector<std::string> emitted_kernel_clang_args();

}  // namespace spmmc
