#include "compiler/formats/read_npz.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "compiler/common/diagnostics.h"
#include "compiler/formats/assemble_csr.h"
#include "compiler/formats/dense_to_csr.h"
#include "compiler/formats/input_limits.h"
#include "compiler/formats/read_npy.h"
#include "compiler/formats/zip_archive.h"

namespace spmmc {
namespace {

// One .npy member of the archive, decompressed, with its parsed header.
struct Member {
  std::string key;    // "indices"
  std::string where;  // "w.npz[indices.npy]": the file name diagnostics use
  std::string bytes;
  NpyHeader header;

  SourceLocation at(int64_t offset) const { return SourceLocation::at_byte(where, offset); }
  SourceLocation element_at(int64_t i) const { return at(header.data_offset + i * header.itemsize); }
  const unsigned char* element(int64_t i) const {
    return reinterpret_cast<const unsigned char*>(bytes.data()) + header.data_offset + i * header.itemsize;
  }
  int64_t size() const { return header.element_count; }
};

uint64_t load_unsigned(const unsigned char* p, int64_t n, bool little_endian) {
  uint64_t v = 0;
  for (int64_t i = 0; i < n; ++i) v = (v << 8) | p[little_endian ? n - 1 - i : i];
  return v;
}

bool is_integer_kind(const NpyHeader& h) {
  return (h.kind == 'i' || h.kind == 'u' || h.kind == 'b') &&
         (h.itemsize == 1 || h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8);
}

// Element i of an integer (or bool) member.
int64_t integer_element(const Member& m, int64_t i) {
  const uint64_t u = load_unsigned(m.element(i), m.header.itemsize, m.header.little_endian);
  if (m.header.kind == 'i') {
    const int bits = static_cast<int>(m.header.itemsize * 8);
    if (bits == 64) {
      int64_t s;
      std::memcpy(&s, &u, sizeof s);
      return s;
    }
    const uint64_t sign = uint64_t{1} << (bits - 1);
    return static_cast<int64_t>(u & (sign - 1)) - static_cast<int64_t>(u & sign);
  }
  if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail_data(m.element_at(i), "{}[{}] = {} is far beyond any valid value", m.key, i, u);
  return static_cast<int64_t>(u);
}

// Element i of a numeric member as a double.
double numeric_element(const Member& m, int64_t i) {
  if (m.header.kind == 'f') {
    const unsigned char* p = m.element(i);
    const uint64_t u = load_unsigned(p, m.header.itemsize, m.header.little_endian);
    switch (m.header.itemsize) {
      case 2: return half_to_float(static_cast<uint16_t>(u));
      case 4: {
        const uint32_t w = static_cast<uint32_t>(u);
        float f;
        std::memcpy(&f, &w, sizeof f);
        return f;
      }
      default: {
        double d;
        std::memcpy(&d, &u, sizeof d);
        return d;
      }
    }
  }
  return static_cast<double>(integer_element(m, i));
}

void require_rank(const Member& m, size_t rank, const char* what) {
  if (m.header.shape.size() != rank)
    fail_data(m.at(m.header.shape_offset), "'{}' must be {}, but its shape is {}", m.key, what,
              npy_shape_string(m.header.shape));
}

void require_index_member(const Member& m, size_t rank, const char* what) {
  if (!is_integer_kind(m.header) || m.header.kind == 'b')
    fail_data(m.at(m.header.descr_offset), "'{}' must be an integer array (int32 or int64), not {} ('{}')", m.key,
              npy_dtype_name(m.header), m.header.descr);
  require_rank(m, rank, what);
}

class Archive {
 public:
  Archive(std::istream& in, const std::string& file) : in_(in), file_(file), entries_(list_zip(in, file)) {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (!by_name_.emplace(entries_[i].name, i).second)
        fail_data(SourceLocation::at_byte(file, static_cast<int64_t>(entries_[i].central_header_offset)),
                  "member '{}' appears twice in the archive", entries_[i].name);
    }
  }

  bool has(const std::string& key) const { return by_name_.count(key + ".npy") != 0; }

  std::string member_list() const {
    std::string names;
    for (const ZipEntry& e : entries_) names += (names.empty() ? "" : ", ") + e.name;
    return names.empty() ? "none" : names;
  }

  // Loads `key`.npy; `why` completes "there is no '<key>' member: ...".
  Member load(const std::string& key, const std::string& why) const {
    const auto it = by_name_.find(key + ".npy");
    if (it == by_name_.end())
      fail_data(SourceLocation::whole(file_), "there is no '{}' member: {} (members: {})", key, why, member_list());
    Member m;
    m.key = key;
    m.where = fmt::format("{}[{}]", file_, it->first);
    m.bytes = read_zip_member(in_, entries_[it->second], file_);
    m.header = parse_npy_header(m.bytes, m.where);
    if (m.header.kind == 'O')
      fail_data(m.at(m.header.descr_offset), "'{}' holds pickled Python objects, which spmmc does not read", key);
    return m;
  }

 private:
  std::istream& in_;
  const std::string& file_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, size_t> by_name_;
};

std::string read_format(const Member& m) {
  const NpyHeader& h = m.header;
  if ((h.kind != 'S' && h.kind != 'U') || !h.shape.empty())
    fail_data(m.at(h.descr_offset), "'format' must be a 0-d string such as b'csr', not {} of shape {}", npy_dtype_name(h),
              npy_shape_string(h.shape));
  std::string text;
  if (h.kind == 'S') {
    text.assign(m.bytes, static_cast<size_t>(h.data_offset), static_cast<size_t>(h.itemsize));
  } else {
    for (int64_t i = 0; i < h.itemsize / 4; ++i) {
      const uint64_t code = load_unsigned(m.element(0) + 4 * i, 4, h.little_endian);
      if (code >= 0x80) fail_data(m.at(h.data_offset + 4 * i), "'format' holds a non-ASCII character");
      text += static_cast<char>(code);
    }
  }
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

struct Shape {
  int32_t rows = 0;
  int32_t cols = 0;
};

Shape read_shape(const Member& m) {
  if (!is_integer_kind(m.header) || m.header.kind == 'b' || m.header.shape.size() != 1)
    fail_data(m.at(m.header.descr_offset), "'shape' must be a 1-D integer array, not {} of shape {}",
              npy_dtype_name(m.header), npy_shape_string(m.header.shape));
  if (m.size() != 2)
    fail_data(m.at(m.header.shape_offset), "'shape' holds {} dimensions: only 2-D sparse matrices are supported",
              m.size());
  const int64_t rows = integer_element(m, 0), cols = integer_element(m, 1);
  check_matrix_shape(rows, cols, m.element_at(0));
  return {static_cast<int32_t>(rows), static_cast<int32_t>(cols)};
}

// 'data' converted to float32 (finite values only).
std::vector<float> read_values(const Member& m) {
  const NpyHeader& h = m.header;
  if (h.kind == 'c')
    fail_data(m.at(h.descr_offset), "complex data ({}) is not supported: spmmc computes in real float32",
              npy_dtype_name(h));
  const bool float_kind = h.kind == 'f' && (h.itemsize == 2 || h.itemsize == 4 || h.itemsize == 8);
  if (!float_kind && !is_integer_kind(h))
    fail_data(m.at(h.descr_offset), "unsupported dtype '{}' ({}) for 'data' (supported: float16, float32, float64, "
              "integers and bool)", h.descr, npy_dtype_name(h));
  require_rank(m, 1, "a 1-D array");
  check_entry_count(m.size(), "the number of stored entries", m.at(h.shape_offset));
  std::vector<float> values(static_cast<size_t>(m.size()));
  for (int64_t i = 0; i < m.size(); ++i) {
    const double v = numeric_element(m, i);
    if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
      fail_data(m.element_at(i), "data[{}] is {}: values must be finite and within the float32 range", i, v);
    values[i] = static_cast<float>(v);
  }
  return values;
}

// A 1-D index member of `expected` entries with every value in [0, limit), as int32.
std::vector<int32_t> read_indices(const Member& m, int64_t expected, int64_t limit, const char* meaning) {
  require_index_member(m, 1, "a 1-D array");
  if (m.size() != expected)
    fail_data(m.at(m.header.shape_offset), "'{}' has {} entries, but 'data' has {}", m.key, m.size(), expected);
  std::vector<int32_t> out(static_cast<size_t>(expected));
  for (int64_t i = 0; i < expected; ++i) {
    const int64_t v = integer_element(m, i);
    if (v < 0 || v >= limit)
      fail_data(m.element_at(i), "{}[{}] = {}: {} out of range [0, {}]", m.key, i, v, meaning, limit - 1);
    out[i] = static_cast<int32_t>(v);
  }
  return out;
}

// 'indptr' of a csr (major = rows) or csc (major = cols) matrix with nnz entries.
std::vector<int32_t> read_indptr(const Member& m, int64_t major, int64_t nnz, const char* major_name) {
  require_index_member(m, 1, "a 1-D array");
  if (m.size() != major + 1)
    fail_data(m.at(m.header.shape_offset), "'indptr' has {} entries, but {} {} need {}", m.size(), major, major_name,
              major + 1);
  std::vector<int32_t> out(static_cast<size_t>(major + 1));
  int64_t previous = 0;
  for (int64_t i = 0; i <= major; ++i) {
    const int64_t v = integer_element(m, i);
    if (i == 0 && v != 0) fail_data(m.element_at(i), "indptr[0] is {}, it must be 0", v);
    if (v < previous) fail_data(m.element_at(i), "indptr decreases at entry {} ({} after {})", i, v, previous);
    if (v > nnz) fail_data(m.element_at(i), "indptr[{}] = {} is beyond the {} stored entries", i, v, nnz);
    out[i] = static_cast<int32_t>(v);
    previous = v;
  }
  if (previous != nnz)
    fail_data(m.element_at(major), "the last indptr entry is {}, but 'data' has {} entries", previous, nnz);
  return out;
}

}  // namespace

Csr read_npz(std::istream& in, const std::string& file, const ReadOptions& /*options*/, ReadReport& report) {
  report.format = "npz";
  const Archive archive(in, file);
  std::string format;
  {
    const Member m = archive.load(
        "format", "not a SciPy sparse .npz (scipy.sparse.save_npz writes one; plain np.savez archives are not supported)");
    format = read_format(m);
    if (format != "csr" && format != "csc" && format != "coo")
      fail_data(m.at(m.header.data_offset), "unsupported sparse format '{}' (supported: csr, csc, coo)", format);
  }
  bool is_array = false;
  if (archive.has("_is_array")) {
    const Member m = archive.load("_is_array", "");
    if (!is_integer_kind(m.header) || m.size() != 1)
      fail_data(m.at(m.header.descr_offset), "'_is_array' must be a single bool, not {} of shape {}",
                npy_dtype_name(m.header), npy_shape_string(m.header.shape));
    is_array = integer_element(m, 0) != 0;
  }
  const Shape shape = read_shape(archive.load("shape", "save_npz always writes one"));
  std::vector<float> values = read_values(archive.load("data", "save_npz always writes one"));
  const int64_t nnz = static_cast<int64_t>(values.size());
  const std::string why = fmt::format("a {} matrix needs it", format);

  AssemblyCounts counts;
  const SourceLocation where = SourceLocation::whole(file);
  Csr csr;
  if (format == "csr") {
    csr.rows = shape.rows;
    csr.cols = shape.cols;
    csr.row_ptr = read_indptr(archive.load("indptr", why), shape.rows, nnz, "rows");
    csr.col_idx = read_indices(archive.load("indices", why), nnz, shape.cols, "column index");
    csr.values = std::move(values);
    canonicalize_csr_rows(csr, DuplicatePolicy::kSum, where, counts);
  } else if (format == "csc") {
    const std::vector<int32_t> col_ptr = read_indptr(archive.load("indptr", why), shape.cols, nnz, "columns");
    CooEntries coo;
    coo.row = read_indices(archive.load("indices", why), nnz, shape.rows, "row index");
    coo.col.resize(static_cast<size_t>(nnz));
    for (int32_t c = 0; c < shape.cols; ++c)
      for (int32_t p = col_ptr[c]; p < col_ptr[c + 1]; ++p) coo.col[p] = c;
    coo.value = std::move(values);
    csr = assemble_csr_from_coo(std::move(coo), shape.rows, shape.cols, DuplicatePolicy::kSum, where, counts);
  } else {
    CooEntries coo;
    if (archive.has("coords") && !archive.has("row")) {
      // N-D coo_array layout: coords has shape (2, nnz).
      const Member m = archive.load("coords", why);
      require_index_member(m, 2, "a 2-D array of shape (2, nnz)");
      if (m.header.shape[0] != 2 || m.header.shape[1] != nnz)
        fail_data(m.at(m.header.shape_offset), "'coords' has shape {}, but a 2-D matrix with {} entries needs (2, {})",
                  npy_shape_string(m.header.shape), nnz, nnz);
      coo.row.resize(static_cast<size_t>(nnz));
      coo.col.resize(static_cast<size_t>(nnz));
      for (int64_t k = 0; k < nnz; ++k) {
        for (int axis = 0; axis < 2; ++axis) {
          const int64_t i = m.header.fortran_order ? k * 2 + axis : axis * nnz + k;
          const int64_t v = integer_element(m, i);
          const int64_t limit = axis == 0 ? shape.rows : shape.cols;
          if (v < 0 || v >= limit)
            fail_data(m.element_at(i), "coords[{}, {}] = {}: {} out of range [0, {}]", axis, k, v,
                      axis == 0 ? "row index" : "column index", limit - 1);
          (axis == 0 ? coo.row : coo.col)[k] = static_cast<int32_t>(v);
        }
      }
    } else {
      coo.row = read_indices(archive.load("row", why), nnz, shape.rows, "row index");
      coo.col = read_indices(archive.load("col", why), nnz, shape.cols, "column index");
    }
    coo.value = std::move(values);
    csr = assemble_csr_from_coo(std::move(coo), shape.rows, shape.cols, DuplicatePolicy::kSum, where, counts);
  }

  report.detail = fmt::format("{}_{}", format, is_array ? "array" : "matrix");
  report.values_origin = "file";
  report.stored_entries = nnz;
  report.explicit_zeros_dropped = counts.zeros_dropped;
  report.duplicates_summed = counts.duplicates_summed;
  return csr;
}

}  // namespace spmmc
