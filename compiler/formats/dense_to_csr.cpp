#include "compiler/formats/dense_to_csr.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "compiler/common/diagnostics.h"
#include "compiler/formats/input_limits.h"

namespace spmmc {
namespace {

constexpr int64_t kChunkBytes = 1 << 20;

template <typename T>
T load(const unsigned char* p, bool little_endian) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, p, sizeof(T));
  if (!little_endian)
    for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

double element_value(const unsigned char* p, const DenseLayout& layout) {
  switch (layout.dtype) {
    case DenseDType::kF16: return half_to_float(load<uint16_t>(p, layout.little_endian));
    case DenseDType::kBF16: return bfloat16_to_float(load<uint16_t>(p, layout.little_endian));
    case DenseDType::kF32: return load<float>(p, layout.little_endian);
    case DenseDType::kF64: return load<double>(p, layout.little_endian);
  }
  return 0.0;
}

// Calls visit(row, col, value_as_float, byte_offset) for every element kept (non-zero, above
// the threshold), in storage order; counts the others when `counts` is given.
template <typename Visit>
void scan_dense(std::istream& in, const DenseLayout& layout, double threshold, const std::string& file,
                DenseCounts* counts, Visit&& visit) {
  const int size = dense_dtype_size(layout.dtype);
  const int64_t total = layout.rows * layout.cols;
  const int64_t per_chunk = kChunkBytes / size;
  std::vector<unsigned char> buffer(static_cast<size_t>(per_chunk * size));
  in.clear();
  in.seekg(layout.data_offset);
  if (!in) fail_data(SourceLocation::at_byte(file, layout.data_offset), "cannot seek to the array data");
  const int64_t inner = layout.column_major ? layout.rows : layout.cols;
  for (int64_t first = 0; first < total; first += per_chunk) {
    const int64_t count = std::min(per_chunk, total - first);
    in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(count * size));
    const int64_t got = in.gcount() / size;
    if (got < count) {
      const int64_t end = layout.data_offset + (first + got) * size;
      fail_data(SourceLocation::at_byte(file, end),
                "file truncated: the {}x{} array needs {} bytes of data from byte {}, the file ends after {}",
                layout.rows, layout.cols, total * size, layout.data_offset, end - layout.data_offset);
    }
    for (int64_t k = 0; k < count; ++k) {
      const int64_t i = first + k;
      const int64_t outer_index = i / inner, inner_index = i % inner;
      const int64_t r = layout.column_major ? inner_index : outer_index;
      const int64_t c = layout.column_major ? outer_index : inner_index;
      const double w = element_value(&buffer[static_cast<size_t>(k * size)], layout);
      if (!std::isfinite(w) || std::fabs(w) > std::numeric_limits<float>::max()) {
        fail_data(SourceLocation::at_byte(file, layout.data_offset + i * size),
                  "element ({}, {}) is {}: weights must be finite float32 values", r, c, w);
      }
      const float f = static_cast<float>(w);
      if (f == 0.0f) {
        if (counts) ++counts->zeros_dropped;
        continue;
      }
      if (std::fabs(w) <= threshold) {
        if (counts) ++counts->pruned_by_threshold;
        continue;
      }
      visit(static_cast<int32_t>(r), static_cast<int32_t>(c), f);
    }
  }
}

}  // namespace

int dense_dtype_size(DenseDType dtype) {
  switch (dtype) {
    case DenseDType::kF16:
    case DenseDType::kBF16: return 2;
    case DenseDType::kF32: return 4;
    case DenseDType::kF64: return 8;
  }
  return 4;
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

float bfloat16_to_float(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

Csr dense_to_csr(std::istream& in, const DenseLayout& layout, double threshold, const std::string& file,
                 DenseCounts& counts) {
  Csr csr;
  csr.rows = static_cast<int32_t>(layout.rows);
  csr.cols = static_cast<int32_t>(layout.cols);
  // Pass 1: count the kept entries of each row (and validate every element).
  std::vector<int64_t> row_count(static_cast<size_t>(layout.rows), 0);
  int64_t nnz = 0;
  scan_dense(in, layout, threshold, file, &counts, [&](int32_t r, int32_t, float) {
    ++row_count[r];
    ++nnz;
  });
  check_entry_count(nnz, "the number of non-zeros", SourceLocation::whole(file));
  csr.row_ptr.assign(static_cast<size_t>(layout.rows) + 1, 0);
  for (int64_t r = 0; r < layout.rows; ++r)
    csr.row_ptr[r + 1] = csr.row_ptr[r] + static_cast<int32_t>(row_count[r]);
  std::vector<int64_t>().swap(row_count);
  // Pass 2: scatter. Both storage orders visit each row's columns in increasing order.
  csr.col_idx.resize(static_cast<size_t>(nnz));
  csr.values.resize(static_cast<size_t>(nnz));
  std::vector<int32_t> next(csr.row_ptr.begin(), csr.row_ptr.end() - 1);
  scan_dense(in, layout, threshold, file, nullptr, [&](int32_t r, int32_t c, float v) {
    const int32_t p = next[r]++;
    csr.col_idx[p] = c;
    csr.values[p] = v;
  });
  return csr;
}

}  // namespace spmmc
