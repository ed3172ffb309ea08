// Helpers for the tests of verify/: kernels emitted in-process by codegen/ into a temporary
// folder, verified through the library, and text edits that corrupt them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"
#include "verify/analyze_emitted_kernel.h"
#include "verify/compare_with_weights.h"

namespace spmmc::test {

struct EmittedFiles {
  std::filesystem::path cu, h;
  EmittedKernel kernel;
};

// Emits A with tiles of m1 rows (`method` reordering, N1 = n1, V = v columns per thread), split
// into kernels of at most `fmas_per_kernel` FMAs (0: one kernel), as dir/NAME.cu and dir/NAME.h,
// with A's weights SHA-256 in the info object, as `spmmc compile` does.
EmittedFiles emit_kernel_files(const std::filesystem::path& dir, const std::string& name, const Csr& a, int32_t m1,
                               ReorderMethod method, int32_t n1 = 32, int32_t v = 1, int64_t fmas_per_kernel = 0,
                               int32_t k_parts = 1);

struct Verified {
  EmittedKernelAnalysis code;
  WeightsComparison result;
  std::string messages;  // every reported difference, "where: message" one per line
};

// analyze_emitted_kernel + compare_with_weights, naming the weights "weights.mtx".
Verified verify_file(const std::filesystem::path& cu, const Csr& a, size_t max_reported = 1000);

// A rows x cols matrix whose entry (r, c) is value(r, c) (zeros left out).
Csr make_matrix(int32_t rows, int32_t cols, const std::function<float(int32_t, int32_t)>& value);

// `text` with its first occurrence of `from` at or after `start` replaced by `to`; fails the test
// when there is none.
std::string replace_first(const std::string& text, const std::string& from, const std::string& to, size_t start = 0);

// `text` with every occurrence of `from` replaced by `to`; fails the test when there is none.
std::string replace_all(const std::string& text, const std::string& from, const std::string& to);

// The 1-based line of byte `offset` of `text`.
int64_t line_of(const std::string& text, size_t offset);
// The 1-based column of byte `offset` of `text`.
int64_t column_of(const std::string& text, size_t offset);

// The 0fHHHHHHHH literal of a float (as PTX writes an f32 immediate).
std::string ptx_float(float v);

// The offset in `cu` of the definition of the unrolled kernel `symbol` ("NAME_kernel_1"); fails
// the test when there is none.
size_t kernel_start(const std::string& cu, const std::string& symbol);

}  // namespace spmmc::test
