#include "verify/ptx_tokens.h"

#include <cctype>

namespace spmmc::verify_detail {
namespace {

bool word_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '$' || ch == '%' || ch == '.';
}

}  // namespace

bool PtxStatementReader::token(PtxToken& out) {
  if (has_peeked_) {
    has_peeked_ = false;
    out = peeked_;
    return true;
  }
  while (pos_ < text_.size()) {
    const char ch = text_[pos_];
    if (std::isspace(static_cast<unsigned char>(ch))) {
      ++pos_;
    } else if (text_.compare(pos_, 2, "//") == 0) {
      const size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end;
    } else if (text_.compare(pos_, 2, "/*") == 0) {
      const size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        error_ = "a /* comment that never ends";
        error_offset_ = pos_;
        return false;
      }
      pos_ = end + 2;
    } else {
      break;
    }
  }
  if (pos_ >= text_.size()) return false;
  const size_t start = pos_;
  if (word_char(text_[pos_])) {
    while (pos_ < text_.size() && word_char(text_[pos_])) ++pos_;
    out = {PtxToken::Kind::kWord, text_.substr(start, pos_ - start), start};
  } else {
    ++pos_;
    out = {PtxToken::Kind::kPunct, text_.substr(start, 1), start};
  }
  return true;
}

bool PtxStatementReader::peek(PtxToken& out) {
  if (!has_peeked_) {
    if (!token(peeked_)) return false;
    has_peeked_ = true;
  }
  out = peeked_;
  return true;
}

bool PtxStatementReader::next(PtxStatement& out) {
  out.tokens.clear();
  PtxToken t;
  for (;;) {
    if (!token(t)) return false;
    if (!t.is(';')) break;  // an empty statement
  }
  out.offset = t.offset;
  out.end = t.offset + t.text.size();
  if (t.is('{') || t.is('}')) {
    out.kind = t.is('{') ? PtxStatement::Kind::kOpen : PtxStatement::Kind::kClose;
    return true;
  }
  PtxToken after;
  if (t.kind == PtxToken::Kind::kWord && t.text[0] != '.' && peek(after) && after.is(':')) {
    token(after);
    out.kind = PtxStatement::Kind::kLabel;
    out.end = after.offset + 1;
    out.tokens.push_back(t);
    return true;
  }
  out.kind = PtxStatement::Kind::kBody;
  for (;;) {
    out.tokens.push_back(t);
    if (!token(t)) {
      if (error_.empty()) {
        error_ = "a statement without its ';'";
        error_offset_ = out.offset;
      }
      return false;
    }
    if (t.is(';')) {
      out.end = t.offset + 1;
      return true;
    }
  }
  return false;
}

std::string ptx_one_line(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\n' || ch == '\t' || ch == '\r') ch = ' ';
    if (ch == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += ch;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace spmmc::verify_detail
