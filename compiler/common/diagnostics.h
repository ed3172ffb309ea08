// Errors and exit codes shared by every stage of spmmc.
//
// Two kinds of error (after Halide's src/Error.h):
//  * UserError: the input or the invocation is wrong. It names the file, the place in it
//    (a line for text formats, a byte offset for binary ones) and the cause, and carries the
//    <sysexits.h> code the command line exits with.
//  * InternalError: an invariant of spmmc itself is broken: a bug. Raised by SPMMC_CHECK.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace spmmc {

// Exit codes after <sysexits.h>.
enum class ExitCode : int {
  kOk = 0,
  kUsage = 64,        // EX_USAGE: bad command line
  kDataError = 65,    // EX_DATAERR: malformed input data
  kNoInput = 66,      // EX_NOINPUT: input file missing or unreadable
  kUnavailable = 69,  // EX_UNAVAILABLE: a needed service (a GPU) is absent
  kSoftware = 70,     // EX_SOFTWARE: internal error (a bug)
  kCantCreate = 73,   // EX_CANTCREAT: output file cannot be created
  kIoError = 74,      // EX_IOERR: error while writing output
};

// Where in an input a problem was found. `line` > 0 for text formats, `byte` >= 0 for binary
// ones; both absent when the problem concerns the file as a whole.
struct SourceLocation {
  std::string file;
  int64_t line = 0;
  int64_t byte = -1;

  static SourceLocation at_line(std::string file, int64_t line) { return {std::move(file), line, -1}; }
  static SourceLocation at_byte(std::string file, int64_t byte) { return {std::move(file), 0, byte}; }
  static SourceLocation whole(std::string file) { return {std::move(file), 0, -1}; }

  // "layer.mtx:17", "w.npy:byte 128", "layer.mtx" or "" when there is no file.
  std::string str() const;
};

class UserError : public std::runtime_error {
 public:
  UserError(ExitCode code, SourceLocation where, std::string message);

  ExitCode code() const { return code_; }
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  ExitCode code_;
  SourceLocation where_;
  std::string message_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Shorthands for the most common user errors.
template <typename... Args>
[[noreturn]] void fail_data(const SourceLocation& where, fmt::format_string<Args...> f, Args&&... args) {
  throw UserError(ExitCode::kDataError, where, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void fail_usage(fmt::format_string<Args...> f, Args&&... args) {
  throw UserError(ExitCode::kUsage, SourceLocation{}, fmt::format(f, std::forward<Args>(args)...));
}

[[noreturn]] void fail_internal(const char* file, int line, const char* condition, const std::string& message);

// Formats a diagnostic the way the command line prints it: "file:line: error: message".
std::string format_diagnostic(const UserError& error);

}  // namespace spmmc

// An internal invariant. A failure is a bug in spmmc, never a problem with the input.
#define SPMMC_CHECK(condition, message)                                   \
  do {                                                                    \
    if (!(condition)) ::spmmc::fail_internal(__FILE__, __LINE__, #condition, (message)); \
  } while (0)
