// Reporting for `spmmc verify`'s analysis (internal to verify/): Clang's source locations as
// CodeLocations (file:line:column of the main file under the caller's name), Clang's own errors
// collected as CodeDiagnostics, short one-line snippets of code for messages, and the place in
// the file of any byte of a (concatenated) string literal, so that an error or a product inside
// a tile's inline PTX points at the very instruction in NAME.cu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <clang/AST/Expr.h>
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/LangOptions.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Basic/TargetInfo.h>

#include "verify/analyze_emitted_kernel.h"

namespace spmmc::verify_detail {

// Longest snippet of code quoted in a message.
constexpr size_t kMaxSnippet = 60;

// Converts Clang source locations to CodeLocation: physical line and column (not #line) of the
// expansion, the main file under the name the caller used.
class Locator {
 public:
  Locator(const clang::SourceManager& sm, std::string display) : sm_(sm), display_(std::move(display)) {}

  CodeLocation at(clang::SourceLocation loc) const;
  const clang::SourceManager& source_manager() const { return sm_; }

 private:
  const clang::SourceManager& sm_;
  std::string display_;
};

// Collects Clang's errors (warnings are off: -w) as CodeDiagnostics.
class ErrorCollector : public clang::DiagnosticConsumer {
 public:
  ErrorCollector(std::vector<CodeDiagnostic>& out, std::string display) : out_(out), display_(std::move(display)) {}

  // Errors become CodeDiagnostics; the first note after an error is appended to it, with its place
  // ("conflicting types for 'layer0' (previous declaration is here: layer0.h:57:13)": a .cu whose
  // header declares the entry point with other element types).
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override;

 private:
  std::vector<CodeDiagnostic>& out_;
  std::string display_;
  std::string last_error_;   // the last error's own text, without its note
  bool noted_ = true;        // the last error has its note (or none may follow)
};

// The source text of `range` on one line, blanks collapsed, cut at kMaxSnippet characters.
std::string snippet(clang::SourceRange range, const clang::SourceManager& sm, const clang::LangOptions& lang);
// `text` on one line, blanks collapsed, cut at kMaxSnippet characters.
std::string one_line(const std::string& text);

// Where each byte of a string literal's value is spelled in the file. A literal written as
// several adjacent pieces ("...\n" "...\n", as the emitter writes a tile's PTX one line per
// piece) maps byte i of the concatenated value to its piece's line and the column of the
// character that spells it (an escape such as \n counts from its backslash). Built once per
// literal; `at` is a binary search. Pieces it cannot decode itself (raw or wide strings, line
// splices, universal character names) fall back to Clang's StringLiteral::getLocationOfByte.
class StringLiteralBytes {
 public:
  StringLiteralBytes(const clang::StringLiteral& literal, const clang::ASTContext& ctx, const Locator& locator);

  CodeLocation at(size_t byte) const;

 private:
  struct Piece {
    size_t first_byte = 0;            // of the value
    size_t bytes = 0;                 // in the value
    clang::SourceLocation content;    // spelling location of the character after the opening quote
    bool fallback = false;            // decode with Clang
    // (byte within the piece, extra source characters before it): where escapes widen the text
    std::vector<std::pair<uint32_t, uint32_t>> widenings;
  };

  const clang::StringLiteral& literal_;
  const clang::ASTContext& ctx_;
  const Locator& locator_;
  std::vector<Piece> pieces_;
};

}  // namespace spmmc::verify_detail
