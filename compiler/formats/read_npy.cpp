#include "compiler/formats/read_npy.h"

#include <cctype>
#include <cstring>
#include <limits>

#include <fmt/ranges.h>

#include "compiler/common/diagnostics.h"
#include "compiler/formats/dense_to_csr.h"
#include "compiler/formats/input_limits.h"

namespace spmmc {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr int64_t kMagicSize = 6;
// numpy itself refuses headers above 10000 bytes unless told otherwise; allow far more, but
// not what a corrupt length field could claim.
constexpr int64_t kMaxHeaderBytes = 1 << 20;

// Bytes shown in messages: printable ASCII as is, everything else as \xNN.
std::string escape_bytes(std::string_view bytes) {
  std::string out;
  for (char ch : bytes) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (u >= 0x20 && u < 0x7f && u != '\\') out += ch;
    else out += fmt::format("\\x{:02x}", u);
  }
  return out;
}

uint32_t little_u32(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct Prefix {
  int major = 0;
  int minor = 0;
  int64_t header_length = 0;
  int64_t size = 0;  // bytes before the header text: 10 or 12
};

// Magic, version and header length from the first bytes of a .npy (`first` holds what is
// available, up to 12 bytes).
Prefix parse_prefix(std::string_view first, const std::string& file) {
  if (static_cast<int64_t>(first.size()) < kMagicSize || first.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize)) {
    if (first.empty()) fail_data(SourceLocation::at_byte(file, 0), "empty file: not a .npy array");
    fail_data(SourceLocation::at_byte(file, 0), "not a .npy file: it starts with '{}', not the magic '\\x93NUMPY'",
              escape_bytes(first.substr(0, std::min<size_t>(first.size(), kMagicSize))));
  }
  if (first.size() < 8) fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(first.size())), "file ends inside the .npy version");
  Prefix p;
  p.major = static_cast<unsigned char>(first[6]);
  p.minor = static_cast<unsigned char>(first[7]);
  if (!((p.major == 1 || p.major == 2 || p.major == 3) && p.minor == 0))
    fail_data(SourceLocation::at_byte(file, 6), "unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", p.major,
              p.minor);
  const int length_bytes = p.major == 1 ? 2 : 4;
  p.size = 8 + length_bytes;
  if (static_cast<int64_t>(first.size()) < p.size)
    fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(first.size())), "file ends inside the .npy header length");
  p.header_length = little_u32(reinterpret_cast<const unsigned char*>(first.data()) + 8, length_bytes);
  return p;
}

void check_header_length(const Prefix& p, int64_t total_bytes, const std::string& file) {
  if (total_bytes >= 0 && p.size + p.header_length > total_bytes)
    fail_data(SourceLocation::at_byte(file, 8),
              "header length {} runs past the end of the file: the header would end at byte {}, the file has {} bytes",
              p.header_length, p.size + p.header_length, total_bytes);
  if (p.header_length > kMaxHeaderBytes)
    fail_data(SourceLocation::at_byte(file, 8), "header length {} is implausibly large (more than {} bytes)",
              p.header_length, kMaxHeaderBytes);
}

// Parses the Python dict literal of the header. `base` is the offset of text[0] in the .npy.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, int64_t base, const std::string& file) : text_(text), base_(base), file_(file) {}

  void parse(NpyHeader& h) {
    skip_space();
    expect('{', "'{' opening the header dict");
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const int64_t key_pos = pos_;
      const std::string key = parse_string("a quoted key");
      skip_space();
      expect(':', "':' after the key");
      skip_space();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &seen_descr;
        h.descr_offset = base_ + pos_;
        parse_descr(h);
      } else if (key == "fortran_order") {
        seen = &seen_fortran;
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        seen = &seen_shape;
        h.shape_offset = base_ + pos_;
        parse_shape(h);
      } else {
        fail_at(key_pos, "unexpected key '{}' in the .npy header (expected 'descr', 'fortran_order' and 'shape')",
                escape_bytes(key));
      }
      if (*seen) fail_at(key_pos, "key '{}' appears twice in the .npy header", key);
      *seen = true;
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') fail_found("',' or '}' after the value of '" + key + "'");
    }
    ++pos_;  // '}'
    while (pos_ < size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
    if (pos_ < size()) fail_found("only spaces and a newline after the header dict");
    if (!seen_descr || !seen_fortran || !seen_shape) {
      std::string missing;
      for (auto [seen, name] : {std::pair{seen_descr, "'descr'"}, {seen_fortran, "'fortran_order'"}, {seen_shape, "'shape'"}})
        if (!seen) missing += std::string(missing.empty() ? "" : ", ") + name;
      fail_at(0, "the .npy header dict lacks {}", missing);
    }
  }

 private:
  int64_t size() const { return static_cast<int64_t>(text_.size()); }
  char peek() const { return pos_ < size() ? text_[pos_] : '\0'; }

  template <typename... Args>
  [[noreturn]] void fail_at(int64_t pos, fmt::format_string<Args...> f, Args&&... args) const {
    fail_data(SourceLocation::at_byte(file_, base_ + pos), f, std::forward<Args>(args)...);
  }
  [[noreturn]] void fail_found(const std::string& expected) const {
    if (pos_ >= size()) fail_at(pos_, "malformed .npy header: expected {}, but the header ends", expected);
    fail_at(pos_, "malformed .npy header: expected {}, found '{}'", expected, escape_bytes(text_.substr(pos_, 12)));
  }

  void skip_space() {
    while (pos_ < size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char ch, const char* what) {
    if (peek() != ch) fail_found(what);
    ++pos_;
  }

  std::string parse_string(const char* what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail_found(what);
    const int64_t start = ++pos_;
    while (pos_ < size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') fail_at(pos_, "escape sequences in .npy header strings are not supported");
      ++pos_;
    }
    if (pos_ >= size()) fail_at(start - 1, "malformed .npy header: unterminated string");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail_found("True or False for 'fortran_order'");
  }

  void parse_descr(NpyHeader& h) {
    if (peek() == '[')
      fail_at(pos_, "unsupported dtype: structured (record) arrays are not supported, only plain numeric dtypes");
    const int64_t start = pos_;
    const std::string d = parse_string("a dtype string for 'descr'");
    h.descr = d;
    size_t i = 0;
    char order = '|';
    if (i < d.size() && std::strchr("<>|=", d[i])) order = d[i++];
    if (i >= d.size() || !std::isalpha(static_cast<unsigned char>(d[i])))
      fail_at(start, "unknown dtype '{}' in the .npy header", escape_bytes(d));
    h.kind = d[i++] == 'a' ? 'S' : d[i - 1];
    int64_t count = -1;
    if (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i]))) {
      count = 0;
      while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i]))) {
        count = count * 10 + (d[i++] - '0');
        if (count > (int64_t{1} << 40)) fail_at(start, "dtype '{}': item size is absurd", escape_bytes(d));
      }
    }
    const std::string rest = d.substr(i);
    const bool datetime = h.kind == 'M' || h.kind == 'm';
    if (!std::strchr("biufcSUVOMm", h.kind) || (!rest.empty() && !(datetime && rest.front() == '[' && rest.back() == ']')))
      fail_at(start, "unknown dtype '{}' in the .npy header", escape_bytes(d));
    if (h.kind == 'O') count = count < 0 ? 8 : count;
    if (count < 0) fail_at(start, "dtype '{}' lacks an item size", escape_bytes(d));
    h.itemsize = h.kind == 'U' ? count * 4 : count;
    if (order == '=') {
      const uint16_t probe = 1;
      unsigned char first;
      std::memcpy(&first, &probe, 1);
      h.little_endian = first == 1;
    } else {
      h.little_endian = order != '>';
    }
  }

  int64_t parse_dimension() {
    const int64_t start = pos_;
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail_found("an integer dimension in 'shape'");
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int digit = text_[pos_++] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10)
        fail_at(start, "dimension {}... in 'shape' is absurdly large", text_.substr(start, 20));
      v = v * 10 + digit;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 long literal
    if (negative) fail_at(start, "negative dimension -{} in 'shape'", v);
    return v;
  }

  void parse_shape(NpyHeader& h) {
    expect('(', "a tuple for 'shape'");
    skip_space();
    h.shape.clear();
    while (peek() != ')') {
      h.shape.push_back(parse_dimension());
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        fail_found("',' or ')' in 'shape'");
      }
    }
    ++pos_;
  }

  std::string_view text_;
  int64_t base_;
  const std::string& file_;
  int64_t pos_ = 0;
};

void finish_header(NpyHeader& h, const Prefix& p, const std::string& file) {
  h.major_version = p.major;
  h.minor_version = p.minor;
  h.data_offset = p.size + p.header_length;
  int64_t count = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      fail_data(SourceLocation::at_byte(file, h.shape_offset), "shape {} has too many elements (the product overflows)",
                npy_shape_string(h.shape));
    count *= d;
  }
  if (h.itemsize != 0 && count > std::numeric_limits<int64_t>::max() / h.itemsize)
    fail_data(SourceLocation::at_byte(file, h.shape_offset), "shape {} of {} needs more bytes than a file can hold",
              npy_shape_string(h.shape), npy_dtype_name(h));
  h.element_count = count;
  h.data_bytes = count * h.itemsize;
}

NpyHeader parse_header_text(std::string_view text, const Prefix& p, const std::string& file) {
  NpyHeader h;
  HeaderParser(text, p.size, file).parse(h);
  finish_header(h, p, file);
  return h;
}

// The data must fill the rest of the .npy exactly: short is truncation; longer means the shape
// or the file is wrong (np.load would silently ignore the tail; spmmc refuses to guess).
void check_data_size(const NpyHeader& h, int64_t total, const std::string& file) {
  const int64_t present = total - h.data_offset;
  if (present < h.data_bytes)
    fail_data(SourceLocation::at_byte(file, total),
              "data truncated: shape {} of {} needs {} bytes of data from byte {}, only {} are present",
              npy_shape_string(h.shape), npy_dtype_name(h), h.data_bytes, h.data_offset, present);
  if (present > h.data_bytes)
    fail_data(SourceLocation::at_byte(file, h.data_offset + h.data_bytes),
              "{} unexpected bytes after the array data (shape {} of {} needs exactly {} bytes)", present - h.data_bytes,
              npy_shape_string(h.shape), npy_dtype_name(h), h.data_bytes);
}

}  // namespace

std::string npy_shape_string(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::string npy_dtype_name(const NpyHeader& h) {
  const int64_t bits = h.itemsize * 8;
  switch (h.kind) {
    case 'b': return "bool";
    case 'i': return fmt::format("int{}", bits);
    case 'u': return fmt::format("uint{}", bits);
    case 'f': return h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8 ? fmt::format("float{}", bits)
                                                                            : fmt::format("float{} (long double)", bits);
    case 'c': return fmt::format("complex{}", bits);
    case 'S': return fmt::format("bytes ({})", h.descr);
    case 'U': return fmt::format("str ({})", h.descr);
    case 'O': return "object (pickled Python objects)";
    case 'V': return fmt::format("void ({})", h.descr);
    case 'M': return fmt::format("datetime64 ({})", h.descr);
    case 'm': return fmt::format("timedelta64 ({})", h.descr);
    default: return h.descr;
  }
}

NpyHeader read_npy_header(std::istream& in, const std::string& file, int64_t total_bytes) {
  char first[12];
  in.read(first, 10);
  int64_t got = in.gcount();
  if (got == 10 && first[6] != 1) {
    in.read(first + 10, 2);
    got += in.gcount();
  }
  const Prefix p = parse_prefix(std::string_view(first, static_cast<size_t>(got)), file);
  // Version 1 prefixes are 10 bytes; a v2/v3 prefix read its 2 extra bytes above.
  check_header_length(p, total_bytes, file);
  std::string text(static_cast<size_t>(p.header_length), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.gcount() != static_cast<std::streamsize>(text.size()))
    fail_data(SourceLocation::at_byte(file, p.size + in.gcount()),
              "file ends inside the .npy header ({} of {} header bytes present)", in.gcount(), p.header_length);
  return parse_header_text(text, p, file);
}

NpyHeader parse_npy_header(std::string_view bytes, const std::string& file) {
  const Prefix p = parse_prefix(bytes.substr(0, 12), file);
  const int64_t total = static_cast<int64_t>(bytes.size());
  check_header_length(p, total, file);
  NpyHeader h = parse_header_text(bytes.substr(static_cast<size_t>(p.size), static_cast<size_t>(p.header_length)), p, file);
  check_data_size(h, total, file);
  return h;
}

Csr read_npy(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report) {
  const std::streampos start = in.tellg();
  if (start == std::streampos(-1))
    fail_data(SourceLocation::whole(file), "cannot seek in the input: .npy arrays are read from seekable files");
  const int64_t base = static_cast<int64_t>(start);
  const int64_t total = remaining_stream_bytes(in);
  const NpyHeader h = read_npy_header(in, file, total);
  report.format = "npy";

  const bool float_kind = h.kind == 'f' && (h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8);
  if (!float_kind)
    fail_data(SourceLocation::at_byte(file, h.descr_offset),
              "unsupported dtype '{}' ({}): .npy weights must be float16, float32 or float64 ('<f2', '<f4', '<f8' "
              "or big-endian '>f2', '>f4', '>f8')",
              h.descr, npy_dtype_name(h));
  if (h.shape.size() != 2)
    fail_data(SourceLocation::at_byte(file, h.shape_offset), "expected a 2-D array (a weight matrix), the shape is {} ({}-D)",
              npy_shape_string(h.shape), h.shape.size());
  check_matrix_shape(h.shape[0], h.shape[1], SourceLocation::at_byte(file, h.shape_offset));
  if (total >= 0) check_data_size(h, total, file);

  DenseLayout layout;
  layout.dtype = h.itemsize == 2 ? DenseDType::kF16 : h.itemsize == 4 ? DenseDType::kF32 : DenseDType::kF64;
  layout.little_endian = h.little_endian;
  layout.column_major = h.fortran_order;
  layout.rows = h.shape[0];
  layout.cols = h.shape[1];
  layout.data_offset = base + h.data_offset;
  DenseCounts counts;
  Csr csr = dense_to_csr(in, layout, options.threshold, file, counts);

  report.detail = fmt::format("{} {}-order", h.descr, h.fortran_order ? "Fortran" : "C");
  report.values_origin = "file";
  report.stored_entries = h.element_count;
  report.explicit_zeros_dropped = counts.zeros_dropped;
  report.pruned_by_threshold = counts.pruned_by_threshold;
  return csr;
}

}  // namespace spmmc
