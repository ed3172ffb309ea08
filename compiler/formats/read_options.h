// What the readers take (ReadOptions) and what they say about how they built the matrix
// (ReadReport). Shared by every reader in compiler/read_*.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/common/synthesize_values.h"

namespace spmmc {

enum class MatrixFormat { kMatrixMarket, kSmtx, kNpy, kNpz, kSafetensors };

struct ReadOptions {
  // Forced input format; by default it comes from the file extension.
  std::optional<MatrixFormat> format;
  // Values for inputs that carry only a topology (.smtx, Matrix Market "pattern").
  // Unset means the format's default: normal for .smtx, ones for pattern (as SciPy reads it).
  std::optional<ValueKind> values;
  uint64_t seed = 0;
  // Dense inputs (.npy, safetensors, Matrix Market array): entries with |w| <= threshold are
  // dropped. 0 drops exact zeros only.
  double threshold = 0.0;
  // safetensors: which tensor to read.
  std::string tensor;
};

// The usage error for --threshold on sparse input (where a file's entries are kept as stored).
inline constexpr const char* kThresholdIsForDenseInput =
    "--threshold prunes dense input only (.npy, .safetensors, Matrix Market array); this file is sparse";

struct ReadReport {
  std::string format;        // "matrix-market", "smtx", "npy", "npz", "safetensors"
  std::string detail;        // e.g. "coordinate real symmetric", "<f4 C-order", "csr"
  std::string values_origin; // "file", or how values were synthesised
  int64_t stored_entries = 0;          // entries as stored in the file (dense: rows*cols)
  int64_t explicit_zeros_dropped = 0;  // stored zeros (and duplicate sums that cancelled)
  int64_t duplicates_summed = 0;       // entries merged into an earlier one at the same place
  int64_t mirrored_entries = 0;        // entries added by symmetric/skew-symmetric expansion
  int64_t pruned_by_threshold = 0;     // dense: non-zeros with |w| <= threshold
  std::string tensor;                  // safetensors: the tensor read
  double load_seconds = 0.0;
};

}  // namespace spmmc
