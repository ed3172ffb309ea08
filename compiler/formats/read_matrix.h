// Reading a matrix file of any supported format: the first stage of the pipeline.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/common/csr.h"
#include "compiler/formats/read_options.h"

namespace spmmc {

struct LoadedMatrix {
  Csr csr;
  ReadReport report;
};

// Reads `path` in the format options.format names, or the one its extension implies
// (.mtx/.mm, .smtx, .npy, .npz, .safetensors). Missing or unreadable files are
// ExitCode::kNoInput errors; malformed content kDataError; an unknown extension kUsage.
// Fills report.load_seconds. The result satisfies check_csr_invariants.
LoadedMatrix read_matrix_file(const std::string& path, const ReadOptions& options);

// The same on an already opened stream; `file` names it in diagnostics.
Csr read_matrix_stream(std::istream& in, MatrixFormat format, const std::string& file,
                       const ReadOptions& options, ReadReport& report);

// The format implied by a file name's extension, if any.
std::optional<MatrixFormat> format_from_extension(std::string_view path);

// "mtx", "smtx", "npy", "npz", "safetensors" and back.
std::string_view format_name(MatrixFormat format);
std::optional<MatrixFormat> parse_format_name(std::string_view name);

}  // namespace spmmc
