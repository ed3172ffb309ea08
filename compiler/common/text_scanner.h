// A fast, line-aware tokenizer over a std::istream for the text formats (Matrix Market,
// .smtx). Reads fixed-size blocks, so neither the file nor a line (a .smtx line holds every
// column index) has to fit in memory; only a single token must (at most kMaxToken bytes).
#pragma once

#include <array>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace spmmc {

class TextScanner {
 public:
  static constexpr size_t kMaxToken = 4096;

  // `file` names the input in diagnostics. With `comma_is_space`, ',' separates tokens.
  TextScanner(std::istream& in, std::string file, bool comma_is_space = false);

  // The next token on the current line; false at the end of the line or of the input (the
  // newline is not consumed: call next_line()).
  bool next_token(std::string_view& token) {
    // Fast path, inlined into the readers: the token lies wholly in the buffer.
    const char* const data = buffer_.data();
    const char* p = data + pos_;
    const char* const stop = data + end_;
    while (p < stop && char_class_[static_cast<unsigned char>(*p)] == kBlank) ++p;
    if (p < stop && *p != '\n') {
      const char* const start = p;
      while (p < stop && char_class_[static_cast<unsigned char>(*p)] == kTokenChar) ++p;
      if (p < stop && static_cast<size_t>(p - start) <= kMaxToken) {
        pos_ = static_cast<size_t>(p - data);
        token = std::string_view(start, static_cast<size_t>(p - start));
        return true;
      }
    }
    return next_token_slow(token);
  }

  // Skips what is left of the current line, including its newline. False at end of input.
  bool next_line();

  // Reads the rest of the current line (without the newline) into `text`, up to kMaxToken
  // bytes; longer lines are a data error. Used for banners and comments.
  std::string rest_of_line();

  // The 1-based line the scanner is on, the byte offset of the next unread character.
  int64_t line() const { return line_; }
  int64_t offset() const { return consumed_ + static_cast<int64_t>(pos_); }
  bool at_end();
  const std::string& file() const { return file_; }

  // Peeks the next character of the current line without consuming it ('\n' at a line end,
  // -1 at end of input).
  int peek();

 private:
  enum CharClass : unsigned char { kTokenChar, kBlank, kNewline };

  bool next_token_slow(std::string_view& token);  // refills as needed; the same result
  bool refill();  // keeps [pos_, end_) and appends more input; false when nothing was added

  std::istream& in_;
  std::string file_;
  std::array<CharClass, 256> char_class_;
  std::vector<char> buffer_;
  size_t pos_ = 0;
  size_t end_ = 0;
  int64_t consumed_ = 0;  // bytes dropped from the front of buffer_ so far
  int64_t line_ = 1;
  bool eof_ = false;
};

// Parsing of numeric tokens; false when the whole token is not a number of that type.
bool parse_int64(std::string_view token, int64_t& value);
bool parse_double(std::string_view token, double& value);
// Parses straight to float (one rounding, unlike parsing to double and converting); a finite
// decimal beyond the float range gives +-inf, one below it 0 or a subnormal.
bool parse_float(std::string_view token, float& value);

}  // namespace spmmc
