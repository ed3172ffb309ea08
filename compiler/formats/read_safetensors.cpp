#include "compiler/formats/read_safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/common/diagnostics.h"
#include "compiler/formats/dense_to_csr.h"
#include "compiler/formats/input_limits.h"

namespace spmmc {
namespace {

using Json = nlohmann::json;

constexpr int64_t kSizeFieldBytes = 8;
// The reference implementation (safetensors' MAX_HEADER_SIZE) refuses larger headers.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";
// The not-found message lists at most this many names.
constexpr size_t kMaxListedNames = 40;

struct DTypeInfo {
  std::string_view name;
  int64_t bits;
  std::optional<DenseDType> dense;  // set for the dtypes spmmc reads
};

// Every dtype of the safetensors specification (0.8.0).
constexpr DTypeInfo kDTypes[] = {
    {"BOOL", 8, std::nullopt},        {"F4", 4, std::nullopt},           {"F6_E2M3", 6, std::nullopt},
    {"F6_E3M2", 6, std::nullopt},     {"U8", 8, std::nullopt},           {"I8", 8, std::nullopt},
    {"F8_E5M2", 8, std::nullopt},     {"F8_E4M3", 8, std::nullopt},      {"F8_E8M0", 8, std::nullopt},
    {"F8_E4M3FNUZ", 8, std::nullopt}, {"F8_E5M2FNUZ", 8, std::nullopt},  {"I16", 16, std::nullopt},
    {"U16", 16, std::nullopt},        {"F16", 16, DenseDType::kF16},     {"BF16", 16, DenseDType::kBF16},
    {"I32", 32, std::nullopt},        {"U32", 32, std::nullopt},         {"F32", 32, DenseDType::kF32},
    {"C64", 64, std::nullopt},        {"F64", 64, DenseDType::kF64},     {"I64", 64, std::nullopt},
    {"U64", 64, std::nullopt},
};

constexpr std::string_view kReadableDTypes = "F32, F16, BF16 and F64";

const DTypeInfo* find_dtype(std::string_view name) {
  for (const DTypeInfo& d : kDTypes)
    if (d.name == name) return &d;
  return nullptr;
}

std::string all_dtype_names() {
  std::string out;
  for (const DTypeInfo& d : kDTypes) out += (out.empty() ? "" : ", ") + std::string(d.name);
  return out;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// --- where things are in the header ---------------------------------------------------------
// nlohmann::json keeps no source positions, so a small scanner walks the (already validated)
// header text and records the byte offset of each tensor entry and of each of its fields.

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && is_json_space(s[i])) ++i;
  return i;
}

// s[i] is the opening quote; returns the offset after the closing one.
size_t skip_string(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return s.size();
}

size_t skip_value(std::string_view s, size_t i) {
  if (i >= s.size()) return i;
  if (s[i] == '"') return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int64_t depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = skip_string(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return i + 1;
      ++i;
    }
    return i;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_json_space(s[i])) ++i;
  return i;
}

// s[i] is '{'. Calls on_member(key, value_offset) for each member; it returns the offset after
// the value.
template <typename OnMember>
void for_each_member(std::string_view s, size_t i, OnMember&& on_member) {
  i = skip_space(s, i + 1);
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = skip_string(s, i);
    const std::string key = Json::parse(s.begin() + static_cast<std::ptrdiff_t>(i),
                                        s.begin() + static_cast<std::ptrdiff_t>(key_end))
                                .get<std::string>();
    i = skip_space(s, key_end);
    i = skip_space(s, i + 1);  // past ':'
    i = skip_space(s, on_member(key, i));
    if (i < s.size() && s[i] == ',') i = skip_space(s, i + 1);
  }
}

struct HeaderPlaces {
  std::map<std::string, int64_t> entries;                           // name -> value offset
  std::map<std::pair<std::string, std::string>, int64_t> fields;    // (name, field) -> offset
};

HeaderPlaces locate_header_values(std::string_view header) {
  HeaderPlaces places;
  const size_t start = skip_space(header, 0);
  if (start >= header.size() || header[start] != '{') return places;
  for_each_member(header, start, [&](const std::string& name, size_t at) {
    places.entries[name] = static_cast<int64_t>(at);
    if (at < header.size() && header[at] == '{') {
      for_each_member(header, at, [&](const std::string& field, size_t field_at) {
        places.fields[{name, field}] = static_cast<int64_t>(field_at);
        return skip_value(header, field_at);
      });
    }
    return skip_value(header, at);
  });
  return places;
}

// --- the header -----------------------------------------------------------------------------

struct TensorEntry {
  std::string name;
  const DTypeInfo* dtype = nullptr;
  std::vector<int64_t> shape;
  int64_t elements = 0;
  int64_t begin = 0;  // data_offsets, relative to the data buffer
  int64_t end = 0;
};

class HeaderReader {
 public:
  HeaderReader(const std::string& file, std::string_view header, int64_t data_start, int64_t file_size)
      : file_(file), places_(locate_header_values(header)), data_start_(data_start), file_size_(file_size),
        header_start_(kSizeFieldBytes + static_cast<int64_t>(skip_space(header, 0))) {}

  SourceLocation at_entry(const std::string& name) const {
    const auto it = places_.entries.find(name);
    return SourceLocation::at_byte(file_, it == places_.entries.end() ? header_start_ : kSizeFieldBytes + it->second);
  }
  SourceLocation at_field(const std::string& name, const std::string& field) const {
    const auto it = places_.fields.find({name, field});
    return it == places_.fields.end() ? at_entry(name) : SourceLocation::at_byte(file_, kSizeFieldBytes + it->second);
  }
  SourceLocation at_header() const { return SourceLocation::at_byte(file_, header_start_); }

  void check_metadata(const Json& value) const {
    const std::string key(kMetadataKey);
    if (!value.is_object())
      fail_data(at_entry(key), "\"__metadata__\" must be an object mapping strings to strings, found {}",
                value.type_name());
    for (const auto& item : value.items()) {
      if (!item.value().is_string())
        fail_data(at_field(key, item.key()), "\"__metadata__\" must map strings to strings, but '{}' maps to {}",
                  item.key(), item.value().type_name());
    }
  }

  TensorEntry parse_entry(const std::string& name, const Json& value) const {
    if (!value.is_object())
      fail_data(at_entry(name), "tensor '{}': expected an object with \"dtype\", \"shape\" and \"data_offsets\", found {}",
                name, value.type_name());
    for (const char* field : {"dtype", "shape", "data_offsets"})
      if (!value.contains(field)) fail_data(at_entry(name), "tensor '{}' has no \"{}\" field", name, field);
    TensorEntry entry;
    entry.name = name;

    const Json& dtype = value["dtype"];
    if (!dtype.is_string())
      fail_data(at_field(name, "dtype"), "tensor '{}': \"dtype\" must be a string, found {}", name, dtype.type_name());
    entry.dtype = find_dtype(dtype.get_ref<const std::string&>());
    if (!entry.dtype)
      fail_data(at_field(name, "dtype"), "tensor '{}' has unknown dtype '{}' (safetensors defines {})", name,
                dtype.get_ref<const std::string&>(), all_dtype_names());

    const SourceLocation shape_at = at_field(name, "shape");
    const Json& shape = value["shape"];
    if (!shape.is_array())
      fail_data(shape_at, "tensor '{}': \"shape\" must be an array of non-negative integers, found {}", name,
                shape.type_name());
    entry.elements = 1;
    bool overflow = false;
    for (size_t k = 0; k < shape.size(); ++k) {
      const int64_t dim = non_negative_integer(shape[k], shape_at, name, fmt::format("dimension {} of \"shape\"", k));
      entry.shape.push_back(dim);
      if (dim != 0 && entry.elements > std::numeric_limits<int64_t>::max() / dim) overflow = true;
      if (!overflow) entry.elements *= dim;
    }
    // An empty dimension makes the tensor empty whatever the others say.
    if (std::find(entry.shape.begin(), entry.shape.end(), 0) != entry.shape.end()) {
      entry.elements = 0;
      overflow = false;
    }
    if (overflow || entry.elements > std::numeric_limits<int64_t>::max() / entry.dtype->bits)
      fail_data(shape_at, "tensor '{}': shape {} has too many elements (the byte count overflows 64 bits)", name,
                shape_str(entry.shape));
    const int64_t bits = entry.elements * entry.dtype->bits;
    if (bits % 8 != 0)
      fail_data(shape_at, "tensor '{}': {} elements of the {}-bit dtype {} do not fill whole bytes", name,
                entry.elements, entry.dtype->bits, entry.dtype->name);
    const int64_t bytes = bits / 8;

    const SourceLocation offsets_at = at_field(name, "data_offsets");
    const Json& offsets = value["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2)
      fail_data(offsets_at, "tensor '{}': \"data_offsets\" must be a pair [begin, end], found {}", name,
                offsets.is_array() ? fmt::format("an array of {}", offsets.size()) : std::string(offsets.type_name()));
    entry.begin = non_negative_integer(offsets[0], offsets_at, name, "the begin of \"data_offsets\"");
    entry.end = non_negative_integer(offsets[1], offsets_at, name, "the end of \"data_offsets\"");
    if (entry.begin > entry.end)
      fail_data(offsets_at, "tensor '{}': \"data_offsets\" [{}, {}] begins after it ends", name, entry.begin, entry.end);
    if (entry.end > file_size_ - data_start_)
      fail_data(offsets_at,
                "tensor '{}': \"data_offsets\" [{}, {}] ends beyond the file: the data buffer starts at byte {} and "
                "holds {} bytes (truncated file?)",
                name, entry.begin, entry.end, data_start_, file_size_ - data_start_);
    if (entry.end - entry.begin != bytes)
      fail_data(offsets_at, "tensor '{}': \"data_offsets\" [{}, {}] span {} bytes, but {} {} needs {}", name,
                entry.begin, entry.end, entry.end - entry.begin, entry.dtype->name, shape_str(entry.shape), bytes);
    return entry;
  }

 private:
  int64_t non_negative_integer(const Json& v, const SourceLocation& where, const std::string& name,
                               const std::string& what) const {
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail_data(where, "tensor '{}': {} is {}, too large", name, what, u);
      return static_cast<int64_t>(u);
    }
    if (v.is_number_integer()) fail_data(where, "tensor '{}': {} is negative ({})", name, what, v.get<int64_t>());
    fail_data(where, "tensor '{}': {} must be a non-negative integer, found {}", name, what, v.dump());
  }

  const std::string& file_;
  HeaderPlaces places_;
  int64_t data_start_;
  int64_t file_size_;
  int64_t header_start_;
};

// Why `t` cannot be read as a sparse matrix, or "" when it can.
std::string unusable_reason(const TensorEntry& t) {
  if (!t.dtype->dense)
    return fmt::format("dtype {} is not supported (spmmc reads {})", t.dtype->name, kReadableDTypes);
  if (t.shape.empty()) return "a scalar (0-D), not a 2-D [rows, cols] matrix";
  if (t.shape.size() != 2) return fmt::format("{}-D, not a 2-D [rows, cols] matrix", t.shape.size());
  if (t.shape[0] == 0 || t.shape[1] == 0) return "empty: both dimensions must be at least 1";
  if (t.shape[0] > kMaxIndex || t.shape[1] > kMaxIndex)
    return fmt::format("a dimension is above {} (spmmc uses 32-bit indices)", kMaxIndex);
  return "";
}

std::string tensor_listing(const std::vector<TensorEntry>& tensors) {
  size_t name_width = 4, dtype_width = 5, shape_width = 5;
  for (const TensorEntry& t : tensors) {
    name_width = std::max(name_width, t.name.size());
    dtype_width = std::max(dtype_width, t.dtype->name.size());
    shape_width = std::max(shape_width, shape_str(t.shape).size());
  }
  std::string out = fmt::format("  {:<{}}  {:<{}}  {:<{}}  usable?", "name", name_width, "dtype", dtype_width, "shape",
                                shape_width);
  for (const TensorEntry& t : tensors) {
    const std::string reason = unusable_reason(t);
    out += fmt::format("\n  {:<{}}  {:<{}}  {:<{}}  {}", t.name, name_width, t.dtype->name, dtype_width,
                       shape_str(t.shape), shape_width, reason.empty() ? "yes: a 2-D float matrix" : "no: " + reason);
  }
  return out;
}

std::string lowercase(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The name closest to `wanted` (case-insensitive edit distance at most a third of its length,
// and at least 1 allowed), or "".
std::string close_match(const std::string& wanted, const std::vector<TensorEntry>& tensors) {
  const std::string key = lowercase(wanted);
  const size_t limit = std::max<size_t>(1, key.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const TensorEntry& t : tensors) {
    const size_t d = edit_distance(key, lowercase(t.name));
    if (d < best_distance) {
      best_distance = d;
      best = t.name;
    }
  }
  return best;
}

std::string parse_error_text(const Json::parse_error& e) {
  // what() is "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ...".
  std::string text = e.what();
  const size_t column = text.find("column ");
  const size_t colon = column == std::string::npos ? std::string::npos : text.find(": ", column);
  if (colon != std::string::npos) text = text.substr(colon + 2);
  for (char& c : text)  // it quotes what it last read, which may be any byte
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return text;
}

// Where the DOM parser gave up: a SAX pass that only records the position of the error.
// nlohmann::json reports a number beyond the double range ("1e999") as out_of_range 406,
// which, unlike parse_error, carries no byte offset.
class ErrorLocator : public nlohmann::json_sax<Json> {
 public:
  int64_t token_start = 0;  // offset in the header of the token the parser refused
  std::string token;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token, const Json::exception&) override {
    token_start = static_cast<int64_t>(position) - static_cast<int64_t>(last_token.size());
    token = last_token;
    return false;
  }
};

}  // namespace

Csr read_safetensors(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report) {
  report.format = "safetensors";
  const std::streamoff base = std::max<std::streamoff>(0, static_cast<std::streamoff>(in.tellg()));
  in.clear();
  const int64_t file_size = remaining_stream_bytes(in);
  if (file_size < 0)
    fail_data(SourceLocation::whole(file), "cannot tell the size of the input: safetensors needs a seekable file");
  if (file_size < kSizeFieldBytes)
    fail_data(SourceLocation::at_byte(file, 0),
              "file is {} bytes long: too short for safetensors, which starts with an 8-byte header size", file_size);

  unsigned char size_field[kSizeFieldBytes];
  in.read(reinterpret_cast<char*>(size_field), kSizeFieldBytes);
  if (in.gcount() != kSizeFieldBytes) fail_data(SourceLocation::at_byte(file, 0), "cannot read the header size");
  uint64_t header_bytes = 0;
  for (int i = kSizeFieldBytes - 1; i >= 0; --i) header_bytes = (header_bytes << 8) | size_field[i];
  if (header_bytes > kMaxHeaderBytes)
    fail_data(SourceLocation::at_byte(file, 0),
              "header size {} is above the limit of {} bytes (the reference implementation's); not a safetensors "
              "file?",
              header_bytes, kMaxHeaderBytes);
  if (static_cast<int64_t>(header_bytes) > file_size - kSizeFieldBytes)
    fail_data(SourceLocation::at_byte(file, 0),
              "header size {} runs past the end of the file: only {} bytes follow the 8-byte size (truncated?)",
              header_bytes, file_size - kSizeFieldBytes);
  const int64_t data_start = kSizeFieldBytes + static_cast<int64_t>(header_bytes);

  std::string header(static_cast<size_t>(header_bytes), '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  if (in.gcount() != static_cast<std::streamsize>(header.size()))
    fail_data(SourceLocation::at_byte(file, kSizeFieldBytes + in.gcount()), "file ends inside the header");

  Json root;
  try {
    root = Json::parse(header);
  } catch (const Json::parse_error& e) {
    const int64_t at = std::clamp<int64_t>(static_cast<int64_t>(e.byte) - 1, 0, static_cast<int64_t>(header_bytes));
    fail_data(SourceLocation::at_byte(file, kSizeFieldBytes + at), "invalid JSON in the header: {}",
              parse_error_text(e));
  } catch (const Json::out_of_range&) {
    // A number beyond the double range: valid JSON syntax, but not representable.
    ErrorLocator locator;
    Json::sax_parse(header, &locator);
    const int64_t at = std::clamp<int64_t>(locator.token_start, 0, static_cast<int64_t>(header_bytes));
    fail_data(SourceLocation::at_byte(file, kSizeFieldBytes + at),
              "invalid JSON in the header: the number {} is beyond the range of a double", locator.token);
  }
  const HeaderReader reader(file, header, data_start, file_size);
  if (!root.is_object())
    fail_data(reader.at_header(), "the header must be a JSON object mapping tensor names to entries, found {}",
              root.type_name());

  std::vector<TensorEntry> tensors;  // sorted by name: nlohmann::json objects are std::maps
  for (const auto& item : root.items()) {
    if (item.key() == kMetadataKey) {
      reader.check_metadata(item.value());
    } else {
      tensors.push_back(reader.parse_entry(item.key(), item.value()));
    }
  }
  if (tensors.empty()) fail_data(reader.at_header(), "the header lists no tensors");

  if (options.tensor.empty()) {
    throw UserError(ExitCode::kUsage, SourceLocation::whole(file),
                    fmt::format("the file holds {} tensor{}; pick one with --tensor NAME:\n{}", tensors.size(),
                                tensors.size() == 1 ? "" : "s", tensor_listing(tensors)));
  }
  const auto chosen = std::find_if(tensors.begin(), tensors.end(),
                                   [&](const TensorEntry& t) { return t.name == options.tensor; });
  if (chosen == tensors.end()) {
    std::string names;
    for (size_t i = 0; i < tensors.size() && i < kMaxListedNames; ++i)
      names += (i ? ", " : "") + ("'" + tensors[i].name + "'");
    if (tensors.size() > kMaxListedNames)
      names += fmt::format(" and {} more (run without --tensor for the full list)", tensors.size() - kMaxListedNames);
    const std::string suggestion = close_match(options.tensor, tensors);
    fail_data(SourceLocation::whole(file), "no tensor named '{}'{}; the file holds {}", options.tensor,
              suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)", names);
  }
  const TensorEntry& t = *chosen;
  const std::string reason = unusable_reason(t);
  if (!reason.empty()) {
    fail_data(reader.at_field(t.name, t.dtype->dense ? "shape" : "dtype"),
              "tensor '{}' ({} {}) cannot be read as a sparse matrix: {}", t.name, t.dtype->name, shape_str(t.shape),
              reason);
  }
  check_matrix_shape(t.shape[0], t.shape[1], reader.at_field(t.name, "shape"));

  DenseLayout layout;
  layout.dtype = *t.dtype->dense;
  layout.little_endian = true;
  layout.column_major = false;
  layout.rows = t.shape[0];
  layout.cols = t.shape[1];
  layout.data_offset = static_cast<int64_t>(base) + data_start + t.begin;
  DenseCounts counts;
  Csr csr = dense_to_csr(in, layout, options.threshold, file, counts);

  report.detail = fmt::format("{} {}", t.dtype->name, shape_str(t.shape));
  report.values_origin = "file";
  report.tensor = t.name;
  report.stored_entries = t.elements;
  report.explicit_zeros_dropped = counts.zeros_dropped;
  report.pruned_by_threshold = counts.pruned_by_threshold;
  return csr;
}

}  // namespace spmmc
