#include "verify/code_locations.h"

#include <algorithm>
#include <cctype>

#include <clang/AST/ASTContext.h>
#include <clang/Lex/Lexer.h>
#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>

#include "verify/ptx_tokens.h"

namespace spmmc {

std::string CodeLocation::str() const {
  if (file.empty()) return {};
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

namespace verify_detail {

CodeLocation Locator::at(clang::SourceLocation loc) const {
  CodeLocation out;
  out.file = display_;
  if (loc.isInvalid()) return out;
  loc = sm_.getExpansionLoc(loc);
  const clang::FileID id = sm_.getFileID(loc);
  if (id != sm_.getMainFileID()) {
    const llvm::StringRef name = sm_.getFilename(loc);
    if (!name.empty()) out.file = name.str();
  }
  bool invalid = false;
  const unsigned line = sm_.getSpellingLineNumber(loc, &invalid);
  if (invalid) return out;
  out.line = line;
  out.column = sm_.getSpellingColumnNumber(loc, &invalid);
  if (invalid) out.column = 0;
  return out;
}

void ErrorCollector::HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) {
  clang::DiagnosticConsumer::HandleDiagnostic(level, info);
  if (level == clang::DiagnosticsEngine::Note) {
    if (noted_ || out_.empty() || !info.hasSourceManager()) return;
    noted_ = true;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    const CodeLocation at = Locator(info.getSourceManager(), display_).at(info.getLocation());
    const std::string note = text.str().str();
    out_.back().message += at.line > 0 ? fmt::format(" ({}: {})", note, at.str()) : fmt::format(" ({})", note);
    return;
  }
  if (level < clang::DiagnosticsEngine::Error) {
    noted_ = true;  // a warning's notes are not an error's
    return;
  }
  llvm::SmallString<256> text;
  info.FormatDiagnostic(text);
  CodeDiagnostic d;
  d.message = text.str().str();
  if (info.hasSourceManager()) {
    d.where = Locator(info.getSourceManager(), display_).at(info.getLocation());
  } else {
    d.where.file = display_;
  }
  // A truncated file ends several scopes at one place: one message for each is enough.
  if (!out_.empty() && last_error_ == d.message && out_.back().where.str() == d.where.str()) {
    noted_ = true;
    return;
  }
  last_error_ = d.message;
  noted_ = false;
  out_.push_back(std::move(d));
}

std::string one_line(const std::string& text) {
  std::string out = ptx_one_line(text);
  if (out.size() > kMaxSnippet) out = out.substr(0, kMaxSnippet) + "...";
  return out;
}

std::string snippet(clang::SourceRange range, const clang::SourceManager& sm, const clang::LangOptions& lang) {
  const llvm::StringRef text = clang::Lexer::getSourceText(clang::CharSourceRange::getTokenRange(range), sm, lang);
  return one_line(text.str());
}

namespace {

bool is_octal(char ch) { return ch >= '0' && ch <= '7'; }

}  // namespace

StringLiteralBytes::StringLiteralBytes(const clang::StringLiteral& literal, const clang::ASTContext& ctx,
                                       const Locator& locator)
    : literal_(literal), ctx_(ctx), locator_(locator) {
  const clang::SourceManager& sm = ctx.getSourceManager();
  bool fallback = literal.getCharByteWidth() != 1 || literal.getKind() != clang::StringLiteral::Ascii;
  size_t total = 0;
  for (unsigned i = 0; i < literal.getNumConcatenated() && !fallback; ++i) {
    Piece piece;
    piece.first_byte = total;
    const clang::SourceLocation token = sm.getSpellingLoc(literal.getStrTokenLoc(i));
    bool invalid = false;
    const char* text = sm.getCharacterData(token, &invalid);
    if (invalid || *text != '"') {  // a prefix (u8, R, ...): let Clang decode it
      fallback = true;
      break;
    }
    piece.content = token.getLocWithOffset(1);
    uint32_t extra = 0;
    size_t bytes = 0;
    const char* p = text + 1;
    for (;;) {
      if (*p == '"') break;
      if (*p == '\0' || *p == '\n' || *p == '\r') {
        fallback = true;
        break;
      }
      if (*p != '\\') {
        ++p;
        ++bytes;
        continue;
      }
      const char* start = p++;
      if (*p == 'u' || *p == 'U' || *p == '\n' || *p == '\r' || *p == '\0') {
        fallback = true;
        break;
      }
      if (*p == 'x') {
        ++p;
        while (std::isxdigit(static_cast<unsigned char>(*p))) ++p;
      } else if (is_octal(*p)) {
        for (int digits = 0; digits < 3 && is_octal(*p); ++digits) ++p;
      } else {
        ++p;  // \n, \t, \\, \", ...
      }
      extra += static_cast<uint32_t>(p - start - 1);
      ++bytes;
      piece.widenings.emplace_back(static_cast<uint32_t>(bytes), extra);
    }
    if (fallback) break;
    piece.bytes = bytes;
    total += bytes;
    pieces_.push_back(std::move(piece));
  }
  // The decoding must agree with Clang's on the length, or Clang decodes every byte.
  if (fallback || total != literal.getByteLength()) {
    pieces_.clear();
    Piece whole;
    whole.fallback = true;
    pieces_.push_back(whole);
  }
}

CodeLocation StringLiteralBytes::at(size_t byte) const {
  if (pieces_.size() == 1 && pieces_[0].fallback) {
    const clang::SourceLocation loc = literal_.getLocationOfByte(static_cast<unsigned>(byte), ctx_.getSourceManager(),
                                                                 ctx_.getLangOpts(), ctx_.getTargetInfo());
    return locator_.at(ctx_.getSourceManager().getSpellingLoc(loc));
  }
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), byte,
                             [](size_t b, const Piece& p) { return b < p.first_byte; });
  if (it != pieces_.begin()) --it;
  const Piece& piece = *it;
  const size_t offset = std::min(byte - piece.first_byte, piece.bytes);
  uint32_t extra = 0;
  const auto w = std::upper_bound(piece.widenings.begin(), piece.widenings.end(), offset,
                                  [](size_t b, const std::pair<uint32_t, uint32_t>& e) { return b < e.first; });
  if (w != piece.widenings.begin()) extra = std::prev(w)->second;
  return locator_.at(piece.content.getLocWithOffset(static_cast<int>(offset + extra)));
}

}  // namespace verify_detail
}  // namespace spmmc
