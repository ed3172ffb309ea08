// The second stage of `spmmc verify`: compare what an emitted kernel computes (as
// analyze_emitted_kernel reconstructed it) with the weights it claims: for every lane l of a
// thread's V columns, every non-zero exactly once with the same float bits, multiplied by lane l
// of B and summed in column order into lane l of the right row of C; every row and lane of C
// written exactly once (rows without non-zeros store +0), no load outside B, no store outside C;
// every tile function dispatched by exactly one case of exactly one unrolled kernel; the launch
// table agreeing with the kernels (spmmc_kernel_count kernels, each in spmmc_kernels once, launch
// j with as many blocks along x as its kernel has cases, adding up to spmmc_a_tiles, each kernel
// after the first waiting for the one before); each kernel's column mapping (B-tiles, block
// size, V) covering the columns of C; the generic path's CSR arrays equal to the weights; and the
// info object's m, k, nnz, m1, n1, cols_per_thread, a_tiles, name and weights SHA-256
// (compiler/common/sha256.h) agreeing with the matrix and the code. For the tensor-core family
// (EmittedKernelAnalysis::tensor_core), A rebuilt from its windows (of spmmc_tc_rows rows: 8 or 16),
// blocks, columns and values (each value decoded from its 16 bits as the dtype's) against the
// weights, every row of A in exactly one window, the staged form's chunks (every block in its
// chunk's rows, no window with more blocks in a chunk than spmmc_tc_chunk_blocks), and the generic
// path's arrays and the info object as above. For the balanced family (EmittedKernelAnalysis::
// balanced), the CSR arrays and the info object as above, and its pieces: each row's products
// covered once, in order, by consecutive slots of one block (check_balanced says exactly what).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "verify/analyze_emitted_kernel.h"

namespace spmmc {

struct CompareOptions {
  std::string weights_name;  // how messages name the weights file, e.g. "layer.mtx"
  size_t max_reported = 10;  // differences reported in detail; all are counted
};

struct WeightsComparison {
  bool match = false;
  // The first `max_reported` problems, in row order after the whole-file ones: the analysis's
  // own errors when it failed (then nothing is compared), else the differences.
  std::vector<CodeDiagnostic> differences;
  int64_t total_differences = 0;
  int64_t rows_differing = 0;     // rows of C with at least one difference
  int64_t weights_nnz = 0;        // non-zeros of the weights (rounded to the code's dtype)
  std::string weights_sha256;     // their hash (weights_sha256 of compiler/common/sha256.h)
  int64_t code_nnz = 0;           // products the code sums into stored rows (each row's lowest stored lane once)
  int64_t rows_written = 0;       // rows of C stored at least once (in some lane)
  // The tensor-core family, as rebuilt from its arrays: windows (spmmc_tc_window_block), blocks,
  // vectors (tc_rows x 1) with a non-zero value and padding vectors (all values zero); tc_rows is
  // spmmc_tc_rows, the rows per window (8 or 16; 0 where it is missing or not one of those).
  int64_t tc_windows = 0, tc_blocks = 0, tc_vectors = 0, tc_padding = 0, tc_rows = 0;
  // The balanced family: the rows whose pieces cover them as they must, those pieces, and the rows
  // among them cut into several.
  int64_t balanced_rows = 0, balanced_pieces = 0, balanced_cut_rows = 0;
};

// Compares `code` with `weights` (the canonical CSR read_matrix_file gives: sorted columns, no
// duplicates, no explicit zeros; the matrix spmmc compile read). For a half-precision or tf32 file
// (code.dtype fp16, bf16 or tf32) the weights are first rounded to the dtype as spmmc compile
// rounds them (round_values_to_dtype: values that round to zero dropped), and messages name them
// "WEIGHTS rounded to fp16"; a value beyond the dtype's range is one difference. Indices in
// messages are 0-based, as in the code.
WeightsComparison compare_with_weights(const EmittedKernelAnalysis& code, const Csr& weights,
                                       const CompareOptions& options);

// A float as the emitter writes it, without the suffix: "0x1.8p-3", "-0x1.99999ap-4", "0x0p+0".
std::string hex_float(float value);

}  // namespace spmmc
