#include "compiler/formats/read_matrix.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "compiler/common/diagnostics.h"
#include "compiler/formats/read_matrix_market.h"
#include "compiler/formats/read_npy.h"
#include "compiler/formats/read_npz.h"
#include "compiler/formats/read_safetensors.h"
#include "compiler/formats/read_smtx.h"

namespace spmmc {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::optional<MatrixFormat> format_from_extension(std::string_view path) {
  if (ends_with(path, ".mtx") || ends_with(path, ".mm")) return MatrixFormat::kMatrixMarket;
  if (ends_with(path, ".smtx")) return MatrixFormat::kSmtx;
  if (ends_with(path, ".npy")) return MatrixFormat::kNpy;
  if (ends_with(path, ".npz")) return MatrixFormat::kNpz;
  if (ends_with(path, ".safetensors")) return MatrixFormat::kSafetensors;
  return std::nullopt;
}

std::string_view format_name(MatrixFormat format) {
  switch (format) {
    case MatrixFormat::kMatrixMarket: return "mtx";
    case MatrixFormat::kSmtx: return "smtx";
    case MatrixFormat::kNpy: return "npy";
    case MatrixFormat::kNpz: return "npz";
    case MatrixFormat::kSafetensors: return "safetensors";
  }
  return "?";
}

std::optional<MatrixFormat> parse_format_name(std::string_view name) {
  for (MatrixFormat f : {MatrixFormat::kMatrixMarket, MatrixFormat::kSmtx, MatrixFormat::kNpy, MatrixFormat::kNpz,
                         MatrixFormat::kSafetensors})
    if (name == format_name(f)) return f;
  return std::nullopt;
}

Csr read_matrix_stream(std::istream& in, MatrixFormat format, const std::string& file, const ReadOptions& options,
                       ReadReport& report) {
  if (options.threshold > 0 && (format == MatrixFormat::kSmtx || format == MatrixFormat::kNpz))
    throw UserError(ExitCode::kUsage, SourceLocation::whole(file), kThresholdIsForDenseInput);
  switch (format) {
    case MatrixFormat::kMatrixMarket: return read_matrix_market(in, file, options, report);
    case MatrixFormat::kSmtx: return read_smtx(in, file, options, report);
    case MatrixFormat::kNpy: return read_npy(in, file, options, report);
    case MatrixFormat::kNpz: return read_npz(in, file, options, report);
    case MatrixFormat::kSafetensors: return read_safetensors(in, file, options, report);
  }
  SPMMC_CHECK(false, "unhandled matrix format");
  return {};
}

LoadedMatrix read_matrix_file(const std::string& path, const ReadOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::optional<MatrixFormat> format = options.format ? options.format : format_from_extension(path);
  if (!format) {
    throw UserError(ExitCode::kUsage, SourceLocation::whole(path),
                    "cannot tell the format from the file name: use a .mtx, .smtx, .npy, .npz or .safetensors "
                    "extension, or --format");
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw UserError(ExitCode::kNoInput, SourceLocation::whole(path), fmt::format("cannot open: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    throw UserError(ExitCode::kNoInput, SourceLocation::whole(path), "is a directory, not a matrix file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(ExitCode::kNoInput, SourceLocation::whole(path), fmt::format("cannot open: {}", std::strerror(errno)));
  LoadedMatrix loaded;
  loaded.csr = read_matrix_stream(in, *format, path, options, loaded.report);
  if (in.bad()) throw UserError(ExitCode::kIoError, SourceLocation::whole(path), "read error");
  check_csr_invariants(loaded.csr);
  loaded.report.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return loaded;
}

}  // namespace spmmc
