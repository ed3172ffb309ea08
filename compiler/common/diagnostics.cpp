#include "compiler/common/diagnostics.h"

namespace spmmc {

std::string SourceLocation::str() const {
  if (file.empty()) return {};
  if (line > 0) return fmt::format("{}:{}", file, line);
  if (byte >= 0) return fmt::format("{}:byte {}", file, byte);
  return file;
}

UserError::UserError(ExitCode code, SourceLocation where, std::string message)
    : std::runtime_error(where.str().empty() ? "error: " + message
                                             : where.str() + ": error: " + message),
      code_(code),
      where_(std::move(where)),
      message_(std::move(message)) {}

void fail_internal(const char* file, int line, const char* condition, const std::string& message) {
  throw InternalError(fmt::format("{}:{}: internal error: check '{}' failed: {}", file, line, condition, message));
}

std::string format_diagnostic(const UserError& error) { return error.what(); }

}  // namespace spmmc
