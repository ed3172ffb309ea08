#include "compiler/formats/generate_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
// Magnitude pruning scores every cell; beyond this many cells use uniform.
constexpr int64_t kMaxMagnitudeCells = int64_t{1} << 31;
// More patterns than this is no longer "a small set" (and only costs memory).
constexpr int64_t kMaxPatterns = int64_t{1} << 24;
constexpr int kMaxRmatScale = 30;  // 2^30 nodes: the largest power of two <= kMaxIndex

// 64 x 64 -> 128-bit product, split into halves (exact; the portable path gives the same bits).
void multiply_wide(uint64_t a, uint64_t b, uint64_t& hi, uint64_t& lo) {
#ifdef __SIZEOF_INT128__
  __extension__ typedef unsigned __int128 uint128;
  const uint128 p = static_cast<uint128>(a) * b;
  hi = static_cast<uint64_t>(p >> 64);
  lo = static_cast<uint64_t>(p);
#else
  const uint64_t a_lo = a & 0xFFFFFFFFu, a_hi = a >> 32, b_lo = b & 0xFFFFFFFFu, b_hi = b >> 32;
  const uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
  const uint64_t middle = (p0 >> 32) + (p1 & 0xFFFFFFFFu) + (p2 & 0xFFFFFFFFu);
  lo = (middle << 32) | (p0 & 0xFFFFFFFFu);
  hi = p3 + (p1 >> 32) + (p2 >> 32) + (middle >> 32);
#endif
}

// xoshiro256** 1.0 (Blackman and Vigna), its state the first four outputs of a SplitMix64
// generator started at seed ^ splitmix64(stream).
class Xoshiro256 {
 public:
  Xoshiro256(uint64_t seed, uint64_t stream) {
    const uint64_t start = seed ^ splitmix64(stream);
    for (uint64_t i = 0; i < 4; ++i) state_[i] = splitmix64(start + i * kGolden);
  }

  uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, bound), bound >= 1, without bias (Lemire 2019, multiply and reject).
  uint64_t below(uint64_t bound) {
    uint64_t hi, lo;
    multiply_wide(next(), bound, hi, lo);
    if (lo < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (lo < threshold) multiply_wide(next(), bound, hi, lo);
    }
    return hi;
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

// round((1 - sparsity) * total), halves away from zero.
int64_t kept_count(double sparsity, uint64_t total) {
  return static_cast<int64_t>(std::llround((1.0 - sparsity) * static_cast<double>(total)));
}

// Sorts keys that are all below 2^bits: LSD radix sort with digits of at most 11 bits for large
// inputs (several times faster than std::sort on 10^7 keys), std::sort for small ones.
void sort_keys(std::vector<uint64_t>::iterator first, std::vector<uint64_t>::iterator last, int bits) {
  const auto count = static_cast<size_t>(last - first);
  if (count < (size_t{1} << 16) || bits <= 0) {
    std::sort(first, last);
    return;
  }
  const int passes = (bits + 10) / 11;
  const int digit_bits = (bits + passes - 1) / passes;
  const uint64_t mask = (uint64_t{1} << digit_bits) - 1;
  std::vector<uint64_t> scratch(count);
  std::vector<size_t> offsets(static_cast<size_t>(mask) + 2);
  auto from = first;
  auto to = scratch.begin();
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * digit_bits;
    std::fill(offsets.begin(), offsets.end(), 0);
    for (auto it = from; it != from + static_cast<std::ptrdiff_t>(count); ++it) ++offsets[((*it >> shift) & mask) + 1];
    for (size_t d = 1; d < offsets.size(); ++d) offsets[d] += offsets[d - 1];
    for (auto it = from; it != from + static_cast<std::ptrdiff_t>(count); ++it)
      to[static_cast<std::ptrdiff_t>(offsets[(*it >> shift) & mask]++)] = *it;
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + static_cast<std::ptrdiff_t>(count), first);
}

// The number of bits needed to write every value below n.
int bits_below(uint64_t n) {
  int bits = 0;
  while (bits < 64 && (n - 1) >> bits) ++bits;
  return bits;
}

// A uniformly random k-subset of [0, n), sorted. Dense requests (k > n/8) use selection
// sampling (Knuth's Algorithm S, O(n)); sparse ones draw k positions, sort, drop repeats and
// draw again for the deficit until k distinct remain (O(k log k)). Drawing only the deficit
// never overshoots, and by symmetry every k-subset is equally likely.
std::vector<uint64_t> sample_sorted_subset(Xoshiro256& rng, uint64_t n, uint64_t k) {
  SPMMC_CHECK(k <= n, "subset larger than its set");
  std::vector<uint64_t> out;
  out.reserve(static_cast<size_t>(k));
  if (k == 0) return out;
  if (k > n / 8) {
    for (uint64_t i = 0; out.size() < k; ++i)
      if (rng.below(n - i) < k - out.size()) out.push_back(i);
    return out;
  }
  while (out.size() < k) {
    const size_t sorted = out.size();
    for (uint64_t i = sorted; i < k; ++i) out.push_back(rng.below(n));
    sort_keys(out.begin() + static_cast<std::ptrdiff_t>(sorted), out.end(), bits_below(n));
    std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(sorted), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

void check_dimension(int64_t value, const char* option) {
  if (value < 1 || value > kMaxIndex) fail_usage("{} must be in [1, {}], got {}", option, kMaxIndex, value);
}

void check_nnz(int64_t nnz, const char* why) {
  if (nnz > kMaxIndex)
    fail_usage("{} would give {} non-zeros, more than the {} spmmc supports (int32 indices)", why, nnz, kMaxIndex);
}

// Starts a CSR of the given shape with an empty row_ptr ready for push-style filling.
Csr empty_csr(int64_t rows, int64_t cols, int64_t nnz_hint) {
  Csr csr;
  csr.rows = static_cast<int32_t>(rows);
  csr.cols = static_cast<int32_t>(cols);
  csr.row_ptr.reserve(static_cast<size_t>(rows) + 1);
  csr.row_ptr.push_back(0);
  csr.col_idx.reserve(static_cast<size_t>(nnz_hint));
  return csr;
}

// Values from synthesize_value for every stored (row, col).
void fill_synthesised_values(Csr& csr, ValueKind kind, uint64_t seed) {
  csr.values.resize(csr.col_idx.size());
  for (int32_t r = 0; r < csr.rows; ++r)
    for (int32_t p = csr.row_ptr[r]; p < csr.row_ptr[r + 1]; ++p)
      csr.values[p] = synthesize_value(kind, seed, r, csr.col_idx[p]);
}

// CSR topology from sorted, distinct row-major cell indices r * cols + c.
Csr csr_from_sorted_cells(const std::vector<uint64_t>& cells, int64_t rows, int64_t cols) {
  Csr csr = empty_csr(rows, cols, static_cast<int64_t>(cells.size()));
  const auto width = static_cast<uint64_t>(cols);
  size_t p = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t row_end = static_cast<uint64_t>(r + 1) * width;
    for (; p < cells.size() && cells[p] < row_end; ++p)
      csr.col_idx.push_back(static_cast<int32_t>(cells[p] - static_cast<uint64_t>(r) * width));
    csr.row_ptr.push_back(static_cast<int32_t>(p));
  }
  return csr;
}

Csr generate_uniform(const GeneratorOptions& o, Xoshiro256& rng) {
  const uint64_t total = static_cast<uint64_t>(o.rows) * static_cast<uint64_t>(o.cols);
  const int64_t nnz = kept_count(o.sparsity, total);
  check_nnz(nnz, fmt::format("--sparsity {} of a {}x{} matrix", o.sparsity, o.rows, o.cols).c_str());
  std::vector<uint64_t> cells = sample_sorted_subset(rng, total, static_cast<uint64_t>(nnz));
  Csr csr = csr_from_sorted_cells(cells, o.rows, o.cols);
  cells = {};
  fill_synthesised_values(csr, o.values, o.seed);
  return csr;
}

// The 31-bit key magnitude pruning ranks by: the bits of |w| (monotone in |w| for finite w).
uint32_t magnitude_key(float w) {
  uint32_t bits;
  std::memcpy(&bits, &w, 4);
  return bits & 0x7FFFFFFFu;
}

Csr generate_magnitude(const GeneratorOptions& o) {
  if (o.values != ValueKind::kNormal)
    fail_usage("magnitude pruning keeps the largest of Gaussian weights: --values must be normal, not {}",
               value_kind_name(o.values));
  const int64_t total = o.rows * o.cols;
  if (total > kMaxMagnitudeCells)
    fail_usage("magnitude pruning scores every one of the {}x{} = {} weights, more than the limit of 2^31; use the "
               "uniform kind for matrices this large", o.rows, o.cols, total);
  const int64_t k = kept_count(o.sparsity, static_cast<uint64_t>(total));
  check_nnz(k, "--sparsity");
  if (k == 0) {
    Csr csr = empty_csr(o.rows, o.cols, 0);
    csr.row_ptr.resize(static_cast<size_t>(o.rows) + 1, 0);
    return csr;
  }
  const auto rows = static_cast<int32_t>(o.rows);
  const auto cols = static_cast<int32_t>(o.cols);
  // Pass 1: histogram of the top 16 bits of the key; find the bucket holding the k-th largest.
  constexpr int kShift = 15;
  std::vector<int64_t> histogram(size_t{1} << 16, 0);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c)
      ++histogram[magnitude_key(synthesize_value(ValueKind::kNormal, o.seed, r, c)) >> kShift];
  int64_t above = 0;
  uint32_t cut = static_cast<uint32_t>(histogram.size() - 1);
  for (;; --cut) {
    if (above + histogram[cut] >= k) break;
    above += histogram[cut];
  }
  const int64_t needed_from_cut = k - above;  // in [1, histogram[cut]]

  // Pass 2: keep every weight above the cut bucket and every one in it, noting the latter.
  Csr csr = empty_csr(o.rows, o.cols, above + histogram[cut]);
  struct Candidate {
    uint32_t key;
    int64_t cell;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(static_cast<size_t>(histogram[cut]));
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < cols; ++c) {
      const float w = synthesize_value(ValueKind::kNormal, o.seed, r, c);
      const uint32_t key = magnitude_key(w);
      if ((key >> kShift) < cut) continue;
      if ((key >> kShift) == cut) candidates.push_back({key, static_cast<int64_t>(r) * cols + c});
      csr.col_idx.push_back(c);
      csr.values.push_back(w);
    }
    csr.row_ptr.push_back(static_cast<int32_t>(csr.col_idx.size()));
  }
  // The needed_from_cut best candidates: larger |w| first, then the earlier cell.
  const auto better = [](const Candidate& a, const Candidate& b) {
    return a.key != b.key ? a.key > b.key : a.cell < b.cell;
  };
  std::nth_element(candidates.begin(), candidates.begin() + (needed_from_cut - 1), candidates.end(), better);
  const Candidate last_kept = candidates[static_cast<size_t>(needed_from_cut - 1)];
  candidates = {};

  // Drop the candidates ranked after last_kept, compacting in place.
  size_t write = 0;
  int32_t row_start = 0;
  for (int32_t r = 0; r < rows; ++r) {
    const int32_t row_end = csr.row_ptr[r + 1];
    for (int32_t p = row_start; p < row_end; ++p) {
      const Candidate here{magnitude_key(csr.values[p]), static_cast<int64_t>(r) * cols + csr.col_idx[p]};
      if ((here.key >> kShift) == cut && better(last_kept, here)) continue;
      csr.col_idx[write] = csr.col_idx[p];
      csr.values[write] = csr.values[p];
      ++write;
    }
    row_start = row_end;
    csr.row_ptr[r + 1] = static_cast<int32_t>(write);
  }
  csr.col_idx.resize(write);
  csr.values.resize(write);
  SPMMC_CHECK(static_cast<int64_t>(write) == k, "magnitude pruning kept the wrong count");
  return csr;
}

Csr generate_rmat(const GeneratorOptions& o, Xoshiro256& rng) {
  const int64_t n = int64_t{1} << o.scale;
  const int64_t edges = static_cast<int64_t>(std::llround(o.edge_factor * static_cast<double>(n)));
  check_nnz(edges, fmt::format("--edge-factor {} at --scale {}", o.edge_factor, o.scale).c_str());
  // Each level compares 32 random bits with the cumulative probabilities scaled to 2^32 (the
  // quantisation, 2^-32, is far below any meaningful probability), two levels per draw.
  const auto scaled = [](double p) { return static_cast<uint64_t>(std::min(p, 1.0) * 4294967296.0); };
  const uint64_t a = scaled(o.abcd[0]);
  const uint64_t ab = scaled(o.abcd[0] + o.abcd[1]);
  const uint64_t abc = scaled(o.abcd[0] + o.abcd[1] + o.abcd[2]);
  std::vector<uint64_t> cells(static_cast<size_t>(edges));
  for (uint64_t& cell : cells) {
    uint64_t r = 0, c = 0, bits = 0;
    for (int level = 0; level < o.scale; ++level) {
      if (level % 2 == 0) bits = rng.next();
      const uint64_t u = level % 2 == 0 ? bits & 0xFFFFFFFFu : bits >> 32;
      const uint64_t down = u >= ab ? 1 : 0;                           // quadrant c or d
      const uint64_t right = (u >= a && u < ab) || u >= abc ? 1 : 0;  // quadrant b or d
      r = (r << 1) | down;
      c = (c << 1) | right;
    }
    cell = r * static_cast<uint64_t>(n) + c;
  }
  sort_keys(cells.begin(), cells.end(), 2 * o.scale);
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  Csr csr = csr_from_sorted_cells(cells, n, n);
  cells = {};
  fill_synthesised_values(csr, o.values, o.seed);
  return csr;
}

Csr generate_patterns(const GeneratorOptions& o, Xoshiro256& rng) {
  const int64_t length = kept_count(o.sparsity, static_cast<uint64_t>(o.cols));
  if (static_cast<double>(length) * static_cast<double>(o.patterns) > static_cast<double>(kMaxIndex))
    fail_usage("{} patterns of {} columns each would hold more than {} column indices; use fewer --patterns",
               o.patterns, length, kMaxIndex);
  check_nnz(o.rows * length, fmt::format("{} rows of {} columns each", o.rows, length).c_str());
  std::vector<std::vector<int32_t>> patterns(static_cast<size_t>(o.patterns));
  for (auto& pattern : patterns) {
    const std::vector<uint64_t> columns =
        sample_sorted_subset(rng, static_cast<uint64_t>(o.cols), static_cast<uint64_t>(length));
    pattern.assign(columns.begin(), columns.end());
  }
  Csr csr = empty_csr(o.rows, o.cols, o.rows * length);
  for (int64_t r = 0; r < o.rows; ++r) {
    const auto& pattern = patterns[static_cast<size_t>(rng.below(static_cast<uint64_t>(o.patterns)))];
    csr.col_idx.insert(csr.col_idx.end(), pattern.begin(), pattern.end());
    csr.row_ptr.push_back(static_cast<int32_t>(csr.col_idx.size()));
  }
  fill_synthesised_values(csr, o.values, o.seed);
  return csr;
}

Csr generate_blocks(const GeneratorOptions& o, Xoshiro256& rng) {
  const int64_t grid_rows = (o.rows + o.block_rows - 1) / o.block_rows;
  const int64_t grid_cols = (o.cols + o.block_cols - 1) / o.block_cols;
  const uint64_t blocks = static_cast<uint64_t>(grid_rows) * static_cast<uint64_t>(grid_cols);
  const int64_t kept = kept_count(o.sparsity, blocks);
  // All but the last block row and column are full: a lower bound on nnz before any allocation.
  const double full = std::max(0.0, static_cast<double>(kept) - static_cast<double>(grid_rows + grid_cols - 1));
  if (kept > kMaxIndex || full * static_cast<double>(o.block_rows) * static_cast<double>(o.block_cols) > static_cast<double>(kMaxIndex))
    fail_usage("keeping {} of the {} blocks of {}x{} would give more than {} non-zeros", kept, blocks, o.block_rows,
               o.block_cols, kMaxIndex);
  const std::vector<uint64_t> chosen = sample_sorted_subset(rng, blocks, static_cast<uint64_t>(kept));
  int64_t nnz = 0;
  for (const uint64_t b : chosen) {
    const int64_t bi = static_cast<int64_t>(b / static_cast<uint64_t>(grid_cols));
    const int64_t bj = static_cast<int64_t>(b % static_cast<uint64_t>(grid_cols));
    nnz += (std::min(o.rows, (bi + 1) * o.block_rows) - bi * o.block_rows) *
           (std::min(o.cols, (bj + 1) * o.block_cols) - bj * o.block_cols);
  }
  check_nnz(nnz, fmt::format("keeping {} blocks of {}x{}", kept, o.block_rows, o.block_cols).c_str());
  Csr csr = empty_csr(o.rows, o.cols, nnz);
  size_t first = 0;  // chosen[first..last) lie on the current block row
  for (int64_t bi = 0; bi < grid_rows; ++bi) {
    size_t last = first;
    while (last < chosen.size() && chosen[last] / static_cast<uint64_t>(grid_cols) == static_cast<uint64_t>(bi)) ++last;
    const int64_t row_end = std::min(o.rows, (bi + 1) * o.block_rows);
    for (int64_t r = bi * o.block_rows; r < row_end; ++r) {
      for (size_t k = first; k < last; ++k) {
        const int64_t bj = static_cast<int64_t>(chosen[k] % static_cast<uint64_t>(grid_cols));
        const int64_t col_end = std::min(o.cols, (bj + 1) * o.block_cols);
        for (int64_t c = bj * o.block_cols; c < col_end; ++c) csr.col_idx.push_back(static_cast<int32_t>(c));
      }
      csr.row_ptr.push_back(static_cast<int32_t>(csr.col_idx.size()));
    }
    first = last;
  }
  fill_synthesised_values(csr, o.values, o.seed);
  return csr;
}

// The band of row r: columns [first, last] around the scaled diagonal c'(r) = min(round(r*K/M), K-1),
// halves rounded up, exactly: floor((2rK + M) / 2M) (2rK + M < 2^64 for dimensions below 2^31).
struct BandRow {
  int64_t first, last;
};
BandRow band_row(int64_t r, int64_t rows, int64_t cols, int64_t bandwidth) {
  const uint64_t scaled = (2 * static_cast<uint64_t>(r) * static_cast<uint64_t>(cols) + static_cast<uint64_t>(rows)) /
                          (2 * static_cast<uint64_t>(rows));
  const int64_t centre = std::min(static_cast<int64_t>(scaled), cols - 1);
  return {std::max<int64_t>(0, centre - bandwidth), std::min(cols - 1, centre + bandwidth)};
}

Csr generate_banded(const GeneratorOptions& o, Xoshiro256& rng) {
  // T, the in-band cells, row by row; stop counting once the kept ones exceed the index limit.
  uint64_t total = 0;
  for (int64_t r = 0; r < o.rows; ++r) {
    const BandRow b = band_row(r, o.rows, o.cols, o.bandwidth);
    total += static_cast<uint64_t>(b.last - b.first + 1);
    if (kept_count(o.sparsity, total) > kMaxIndex)
      fail_usage("--bandwidth {} of a {}x{} matrix at --sparsity {} would give more than the {} non-zeros spmmc "
                 "supports (int32 indices)", o.bandwidth, o.rows, o.cols, o.sparsity, kMaxIndex);
  }
  const int64_t nnz = kept_count(o.sparsity, total);
  Csr csr = empty_csr(o.rows, o.cols, nnz);
  if (static_cast<uint64_t>(nnz) == total) {  // the whole band: no draws
    for (int64_t r = 0; r < o.rows; ++r) {
      const BandRow b = band_row(r, o.rows, o.cols, o.bandwidth);
      for (int64_t c = b.first; c <= b.last; ++c) csr.col_idx.push_back(static_cast<int32_t>(c));
      csr.row_ptr.push_back(static_cast<int32_t>(csr.col_idx.size()));
    }
  } else {
    // A uniform subset of the band's cells numbered in row-major order, mapped back row by row.
    const std::vector<uint64_t> kept = sample_sorted_subset(rng, total, static_cast<uint64_t>(nnz));
    uint64_t row_start = 0;  // the number of the row's first band cell
    size_t p = 0;
    for (int64_t r = 0; r < o.rows; ++r) {
      const BandRow b = band_row(r, o.rows, o.cols, o.bandwidth);
      const uint64_t row_end = row_start + static_cast<uint64_t>(b.last - b.first + 1);
      for (; p < kept.size() && kept[p] < row_end; ++p)
        csr.col_idx.push_back(static_cast<int32_t>(b.first + static_cast<int64_t>(kept[p] - row_start)));
      csr.row_ptr.push_back(static_cast<int32_t>(p));
      row_start = row_end;
    }
  }
  fill_synthesised_values(csr, o.values, o.seed);
  return csr;
}

// The shape and kind-specific checks; returns the options with rmat's shape filled in.
GeneratorOptions validated(GeneratorOptions o) {
  if (!(o.sparsity >= 0.0 && o.sparsity < 1.0))
    fail_usage("--sparsity must be in [0, 1) (the fraction of zeros), got {}", o.sparsity);
  if (o.kind == GeneratorKind::kRmat) {
    if (o.scale < 0 || o.scale > kMaxRmatScale)
      fail_usage("--scale must be in [0, {}] (n = 2^scale nodes), got {}", kMaxRmatScale, o.scale);
    const int64_t n = int64_t{1} << o.scale;
    if ((o.rows != 0 && o.rows != n) || (o.cols != 0 && o.cols != n))
      fail_usage("an R-MAT matrix is 2^scale x 2^scale = {}x{}; --rows and --cols must be left out or equal {}", n, n, n);
    o.rows = o.cols = n;
    if (!(o.edge_factor >= 0.0) || !std::isfinite(o.edge_factor))
      fail_usage("--edge-factor must be a finite number >= 0, got {}", o.edge_factor);
    double sum = 0.0;
    for (const double p : o.abcd) {
      if (!(p >= 0.0 && p <= 1.0)) fail_usage("--abcd probabilities must lie in [0, 1], got {}", p);
      sum += p;
    }
    if (std::fabs(sum - 1.0) > 1e-9)
      fail_usage("--abcd probabilities must sum to 1, these sum to {} ({}, {}, {}, {})", sum, o.abcd[0], o.abcd[1],
                 o.abcd[2], o.abcd[3]);
  }
  check_dimension(o.rows, "--rows");
  check_dimension(o.cols, "--cols");
  if (o.kind == GeneratorKind::kPatterns && (o.patterns < 1 || o.patterns > std::min(o.rows, kMaxPatterns)))
    fail_usage("--patterns must be in [1, {}] (at most one per row, and at most 2^24), got {}",
               std::min(o.rows, kMaxPatterns), o.patterns);
  if (o.kind == GeneratorKind::kBlocks) {
    if (o.block_rows < 1 || o.block_rows > kMaxIndex || o.block_cols < 1 || o.block_cols > kMaxIndex)
      fail_usage("--block RxC needs 1 <= R, C <= {}, got {}x{}", kMaxIndex, o.block_rows, o.block_cols);
  }
  if (o.kind == GeneratorKind::kBanded) {
    if (o.bandwidth < 0)
      fail_usage("--bandwidth must be >= 0 (the columns kept on each side of the diagonal; 0 is the diagonal alone), "
                 "got {}", o.bandwidth);
    if (o.bandwidth >= o.cols)
      fail_usage("--bandwidth must be below --cols {} (a band of {} already covers every column), got {}", o.cols,
                 o.cols - 1, o.bandwidth);
  }
  return o;
}

}  // namespace

Csr generate_matrix(const GeneratorOptions& options) {
  const GeneratorOptions o = validated(options);
  Xoshiro256 rng(o.seed, static_cast<uint64_t>(o.kind) + 1);
  Csr csr;
  switch (o.kind) {
    case GeneratorKind::kUniform: csr = generate_uniform(o, rng); break;
    case GeneratorKind::kMagnitude: csr = generate_magnitude(o); break;
    case GeneratorKind::kRmat: csr = generate_rmat(o, rng); break;
    case GeneratorKind::kPatterns: csr = generate_patterns(o, rng); break;
    case GeneratorKind::kBlocks: csr = generate_blocks(o, rng); break;
    case GeneratorKind::kBanded: csr = generate_banded(o, rng); break;
  }
  check_csr_invariants(csr);
  return csr;
}

std::string_view generator_kind_name(GeneratorKind kind) {
  switch (kind) {
    case GeneratorKind::kUniform: return "uniform";
    case GeneratorKind::kMagnitude: return "magnitude";
    case GeneratorKind::kRmat: return "rmat";
    case GeneratorKind::kPatterns: return "patterns";
    case GeneratorKind::kBlocks: return "blocks";
    case GeneratorKind::kBanded: return "banded";
  }
  return "?";
}

std::optional<GeneratorKind> parse_generator_kind(std::string_view name) {
  for (GeneratorKind k : {GeneratorKind::kUniform, GeneratorKind::kMagnitude, GeneratorKind::kRmat,
                          GeneratorKind::kPatterns, GeneratorKind::kBlocks, GeneratorKind::kBanded})
    if (name == generator_kind_name(k)) return k;
  return std::nullopt;
}

}  // namespace spmmc
