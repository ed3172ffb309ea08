// The lexical half of `spmmc verify`'s PTX reading (internal to verify/; Clang-free): the text
// of an inline-PTX string split into tokens and statements. read_tile_ptx.h gives them meaning.
//
// Tokens: words are runs of [A-Za-z0-9_$%.] (opcodes with their modifiers such as
// ld.global.nc.v2.f32, registers, %N operands, immediates such as 0f3F800000, labels such as
// $Lspmmc_0_end, directives such as .reg); every other non-blank character is one punctuation
// token. Blanks and // and /* */ comments separate tokens.
// Statements: `{`, `}`, `LABEL:`, or the tokens of one directive or instruction up to its `;`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spmmc::verify_detail {

struct PtxToken {
  enum class Kind : uint8_t { kWord, kPunct };
  Kind kind = Kind::kWord;
  std::string_view text;
  size_t offset = 0;  // of its first character in the PTX text

  bool is(char punct) const { return kind == Kind::kPunct && text.size() == 1 && text[0] == punct; }
};

struct PtxStatement {
  enum class Kind : uint8_t { kOpen, kClose, kLabel, kBody };
  Kind kind = Kind::kBody;
  size_t offset = 0;  // of its first character
  size_t end = 0;     // one past its last character (the ';' of a body, the ':' of a label)
  std::vector<PtxToken> tokens;  // kLabel: the name; kBody: every token before the ';'
};

// Reads the statements of `text` one at a time (the text must outlive the reader and its tokens).
class PtxStatementReader {
 public:
  explicit PtxStatementReader(std::string_view text) : text_(text) {}

  // The next statement into `out`; false at the end of the text, or on a lexical error (then
  // error() says what, at error_offset()).
  bool next(PtxStatement& out);

  const std::string& error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

 private:
  // The next token; false at the end of the text or on an error.
  bool token(PtxToken& out);
  bool peek(PtxToken& out);

  std::string_view text_;
  size_t pos_ = 0;
  bool has_peeked_ = false;
  PtxToken peeked_;
  std::string error_;
  size_t error_offset_ = 0;
};

// `text` (a span of the PTX, or of C++: code_locations.h's one_line) on one line, blanks
// collapsed.
std::string ptx_one_line(std::string_view text);

}  // namespace spmmc::verify_detail
