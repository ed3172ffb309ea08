#include "compiler/common/text_scanner.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {
// The fuzz builds define a tiny block so that short inputs cross block boundaries.
#ifdef SPMMC_TEXT_SCANNER_BLOCK
constexpr size_t kBlock = SPMMC_TEXT_SCANNER_BLOCK;
#else
constexpr size_t kBlock = 1 << 20;
#endif
}  // namespace

TextScanner::TextScanner(std::istream& in, std::string file, bool comma_is_space)
    : in_(in), file_(std::move(file)), buffer_(kBlock + kMaxToken) {
  char_class_.fill(kTokenChar);
  for (unsigned char c : {' ', '\t', '\r', '\v', '\f'}) char_class_[c] = kBlank;
  if (comma_is_space) char_class_[static_cast<unsigned char>(',')] = kBlank;
  char_class_[static_cast<unsigned char>('\n')] = kNewline;
}

bool TextScanner::refill() {
  if (eof_) return false;
  // Move the unread tail to the front, then read a block after it.
  const size_t tail = end_ - pos_;
  if (pos_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, tail);
    consumed_ += static_cast<int64_t>(pos_);
    pos_ = 0;
    end_ = tail;
  }
  if (buffer_.size() < end_ + kBlock) buffer_.resize(end_ + kBlock);
  const std::streamsize got = in_.rdbuf()->sgetn(buffer_.data() + end_, static_cast<std::streamsize>(kBlock));
  if (got <= 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<size_t>(got);
  return true;
}

int TextScanner::peek() {
  if (pos_ == end_ && !refill()) return -1;
  return static_cast<unsigned char>(buffer_[pos_]);
}

bool TextScanner::at_end() { return peek() == -1; }

bool TextScanner::next_token_slow(std::string_view& token) {
  // Skip separators on this line.
  for (;;) {
    while (pos_ < end_ && char_class_[static_cast<unsigned char>(buffer_[pos_])] == kBlank) ++pos_;
    if (pos_ < end_) break;
    if (!refill()) return false;
  }
  if (buffer_[pos_] == '\n') return false;
  size_t start = pos_;
  for (;;) {
    const char* p = buffer_.data() + pos_;
    const char* const stop = buffer_.data() + end_;
    while (p < stop && char_class_[static_cast<unsigned char>(*p)] == kTokenChar) ++p;
    pos_ = static_cast<size_t>(p - buffer_.data());
    if (pos_ - start > kMaxToken)
      fail_data(SourceLocation::at_line(file_, line_), "token longer than {} characters", kMaxToken);
    if (pos_ < end_) break;
    // The token reaches the end of the buffer: refill, keeping the token's start.
    const size_t length = pos_ - start;
    pos_ = start;
    const bool more = refill();
    start = pos_;
    pos_ = start + length;
    if (!more) break;
  }
  token = std::string_view(buffer_.data() + start, pos_ - start);
  return true;
}

bool TextScanner::next_line() {
  for (;;) {
    if (pos_ == end_ && !refill()) return false;
    const void* nl = std::memchr(buffer_.data() + pos_, '\n', end_ - pos_);
    if (nl) {
      pos_ = static_cast<size_t>(static_cast<const char*>(nl) - buffer_.data()) + 1;
      ++line_;
      return !at_end();
    }
    pos_ = end_;
  }
}

std::string TextScanner::rest_of_line() {
  std::string text;
  for (;;) {
    const int c = peek();
    if (c == '\n' || c == -1) break;
    if (text.size() >= kMaxToken)
      fail_data(SourceLocation::at_line(file_, line_), "line longer than {} characters", kMaxToken);
    text.push_back(static_cast<char>(c));
    ++pos_;
  }
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

bool parse_int64(std::string_view token, int64_t& value) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') ++first;
  const auto result = std::from_chars(first, last, value);
  return result.ec == std::errc() && result.ptr == last && first != last;
}

namespace {

// from_chars into T; a finite decimal beyond T's range gives +-inf (strtod/strtof), one below
// it 0 or a subnormal, so callers can tell "out of range" from "not a number".
template <typename T, typename Fallback>
bool parse_floating(std::string_view token, T& value, Fallback fallback) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (first != last && *first == '+') ++first;
  const auto result = std::from_chars(first, last, value);
  if (result.ec == std::errc::result_out_of_range && result.ptr == last) {
    value = fallback(std::string(first, last).c_str(), nullptr);
    return true;
  }
  return result.ec == std::errc() && result.ptr == last && first != last;
}

}  // namespace

bool parse_double(std::string_view token, double& value) { return parse_floating(token, value, std::strtod); }

bool parse_float(std::string_view token, float& value) { return parse_floating(token, value, std::strtof); }

}  // namespace spmmc
