#include "compiler/formats/generate_matrix.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "tests/test_util.h"

namespace spmmc {
namespace {

using test::expect_user_error;

GeneratorOptions make(GeneratorKind kind, int64_t rows, int64_t cols, double sparsity, uint64_t seed = 0) {
  GeneratorOptions o;
  o.kind = kind;
  o.rows = rows;
  o.cols = cols;
  o.sparsity = sparsity;
  o.seed = seed;
  return o;
}

int64_t expected_nnz(double sparsity, int64_t cells) {
  return std::llround((1.0 - sparsity) * static_cast<double>(cells));
}

std::vector<int32_t> row_columns(const Csr& a, int32_t r) {
  return {a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1]};
}

// FNV-1a over the topology: pins the exact output of a generator. (Values are pinned by the
// synthesize_value tests; they go through libm, which this test should not depend on.)
uint64_t fingerprint(const Csr& a) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&](uint32_t v) {
    for (int b = 0; b < 4; ++b) h = (h ^ ((v >> (8 * b)) & 0xFF)) * 1099511628211ull;
  };
  for (int32_t v : a.row_ptr) mix(static_cast<uint32_t>(v));
  for (int32_t v : a.col_idx) mix(static_cast<uint32_t>(v));
  return h;
}

GeneratorOptions banded(int64_t rows, int64_t cols, int64_t bandwidth, double sparsity, uint64_t seed = 0) {
  GeneratorOptions o = make(GeneratorKind::kBanded, rows, cols, sparsity, seed);
  o.bandwidth = bandwidth;
  return o;
}

// The banded generator's scaled diagonal, computed another way than the generator does (in
// double, exact for these small sizes; halves up; clamped to the last column).
int64_t scaled_diagonal(int64_t r, int64_t rows, int64_t cols) {
  return std::min<int64_t>(cols - 1, static_cast<int64_t>(std::floor(static_cast<double>(r) * static_cast<double>(cols) / static_cast<double>(rows) + 0.5)));
}

TEST_CASE("generate: uniform has exactly round((1-s)*M*K) non-zeros", "[generate]") {
  struct Case {
    int64_t rows, cols;
    double sparsity;
  } cases[] = {
      {100, 100, 0.88},   // sparse path with many repeated draws (top-up rounds)
      {1000, 3000, 0.99}, // sparse path
      {300, 200, 0.5},    // dense path (selection sampling)
      {37, 41, 0.0},      // every cell
      {7, 9, 0.999},      // round(0.063) = 0: empty
      {1, 5, 0.5},        // round(2.5) = 3 (halves away from zero)
  };
  for (const Case& c : cases) {
    const Csr a = generate_matrix(make(GeneratorKind::kUniform, c.rows, c.cols, c.sparsity, 3));
    INFO(c.rows << "x" << c.cols << " at " << c.sparsity);
    CHECK(a.rows == c.rows);
    CHECK(a.cols == c.cols);
    CHECK(a.nnz() == expected_nnz(c.sparsity, c.rows * c.cols));
    const double sparsity = 1.0 - static_cast<double>(a.nnz()) / static_cast<double>(c.rows * c.cols);
    CHECK(std::fabs(sparsity - c.sparsity) <= 0.5 / static_cast<double>(c.rows * c.cols) + 1e-12);
  }
  CHECK(generate_matrix(make(GeneratorKind::kUniform, 1, 5, 0.5)).nnz() == 3);
}

TEST_CASE("generate: uniform spreads non-zeros over every row and column", "[generate]") {
  for (double sparsity : {0.9, 0.5}) {  // both sampling paths
    const Csr a = generate_matrix(make(GeneratorKind::kUniform, 1000, 1000, sparsity, 11));
    const double mean = (1.0 - sparsity) * 1000;
    const double spread = 6 * std::sqrt(mean * sparsity);  // six binomial standard deviations
    std::vector<int64_t> col_counts(1000, 0);
    for (int32_t c : a.col_idx) ++col_counts[static_cast<size_t>(c)];
    for (int32_t r = 0; r < a.rows; ++r) REQUIRE(std::fabs(a.row_length(r) - mean) < spread);
    for (int64_t n : col_counts) REQUIRE(std::fabs(static_cast<double>(n) - mean) < spread);
  }
}

TEST_CASE("generate: values come from synthesize_value of the chosen kind and seed", "[generate]") {
  GeneratorOptions o = make(GeneratorKind::kUniform, 50, 60, 0.8, 5);
  o.values = ValueKind::kUniform;
  const Csr a = generate_matrix(o);
  REQUIRE(a.nnz() > 0);
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      REQUIRE(a.values[p] == synthesize_value(ValueKind::kUniform, 5, r, a.col_idx[p]));
  o.values = ValueKind::kOnes;
  const Csr ones = generate_matrix(o);
  CHECK(ones.col_idx == a.col_idx);  // the values kind does not change the topology
  CHECK(std::all_of(ones.values.begin(), ones.values.end(), [](float v) { return v == 1.0f; }));
}

TEST_CASE("generate: magnitude keeps exactly the largest |w|, ties to the earlier cell", "[generate]") {
  for (double sparsity : {0.5, 0.93}) {
    const int32_t rows = 200, cols = 300;
    const uint64_t seed = 21;
    const Csr a = generate_matrix(make(GeneratorKind::kMagnitude, rows, cols, sparsity, seed));
    const int64_t k = expected_nnz(sparsity, int64_t{rows} * cols);
    REQUIRE(a.nnz() == k);
    // Brute force: rank every cell by (|w| descending, row-major index ascending).
    std::vector<std::pair<float, int64_t>> cells;
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t c = 0; c < cols; ++c)
        cells.emplace_back(std::fabs(synthesize_value(ValueKind::kNormal, seed, r, c)), int64_t{r} * cols + c);
    std::sort(cells.begin(), cells.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    std::vector<int64_t> expected;
    for (int64_t i = 0; i < k; ++i) expected.push_back(cells[static_cast<size_t>(i)].second);
    std::sort(expected.begin(), expected.end());
    std::vector<int64_t> kept;
    for (int32_t r = 0; r < rows; ++r)
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
        kept.push_back(int64_t{r} * cols + a.col_idx[p]);
        REQUIRE(a.values[p] == synthesize_value(ValueKind::kNormal, seed, r, a.col_idx[p]));
      }
    CHECK(kept == expected);
    // And so the smallest kept magnitude is at least the largest dropped one.
    CHECK(cells[static_cast<size_t>(k - 1)].first >= cells[static_cast<size_t>(k)].first);
  }
  CHECK(generate_matrix(make(GeneratorKind::kMagnitude, 10, 10, 0.999)).nnz() == 0);
  CHECK(generate_matrix(make(GeneratorKind::kMagnitude, 10, 10, 0.0)).nnz() == 100);
}

TEST_CASE("generate: magnitude breaks a tie at the cut in favour of the earlier cell", "[generate]") {
  // Find two cells with equal |w| and cut right between them.
  const int32_t rows = 300, cols = 400;
  const uint64_t seed = 5;
  std::vector<std::pair<float, int64_t>> cells;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c)
      cells.emplace_back(std::fabs(synthesize_value(ValueKind::kNormal, seed, r, c)), int64_t{r} * cols + c);
  std::sort(cells.begin(), cells.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  size_t tie = 0;
  while (tie + 1 < cells.size() && cells[tie].first != cells[tie + 1].first) ++tie;
  REQUIRE(tie + 1 < cells.size());  // the field has ties (it does for this seed)
  const int64_t k = static_cast<int64_t>(tie) + 1;  // keep the earlier of the pair only
  const Csr a = generate_matrix(make(GeneratorKind::kMagnitude, rows, cols,
                                     1.0 - static_cast<double>(k) / (double{rows} * cols), seed));
  REQUIRE(a.nnz() == k);
  const auto has = [&](int64_t cell) {
    const auto r = static_cast<int32_t>(cell / cols);
    const auto c = static_cast<int32_t>(cell % cols);
    return std::binary_search(a.col_idx.begin() + a.row_ptr[r], a.col_idx.begin() + a.row_ptr[r + 1], c);
  };
  CHECK(has(cells[tie].second));
  CHECK(!has(cells[tie + 1].second));
  CHECK(cells[tie].second < cells[tie + 1].second);
}

TEST_CASE("generate: same options give the same matrix, another seed another one", "[generate]") {
  std::vector<GeneratorOptions> all = {make(GeneratorKind::kUniform, 300, 200, 0.9),
                                       make(GeneratorKind::kMagnitude, 100, 120, 0.9),
                                       make(GeneratorKind::kPatterns, 200, 300, 0.9),
                                       make(GeneratorKind::kBlocks, 100, 100, 0.8),
                                       banded(300, 200, 5, 0.5)};
  GeneratorOptions rmat = make(GeneratorKind::kRmat, 0, 0, 0.0);
  rmat.scale = 9;
  all.push_back(rmat);
  for (GeneratorOptions o : all) {
    INFO(generator_kind_name(o.kind));
    const Csr a = generate_matrix(o);
    CHECK(generate_matrix(o) == a);
    o.seed = 1;
    const Csr b = generate_matrix(o);
    CHECK(b != a);
    CHECK(b.col_idx != a.col_idx);  // the topology too
  }
}

TEST_CASE("generate: output is pinned (files made by spmmc gen stay reproducible)", "[generate]") {
  // If this fails, a generator changed its output: matrices that users regenerate from the
  // command recorded in a .mtx header would silently differ. Change only on purpose.
  GeneratorOptions rmat = make(GeneratorKind::kRmat, 0, 0, 0.0, 4);
  rmat.scale = 7;
  GeneratorOptions patterns = make(GeneratorKind::kPatterns, 64, 96, 0.75, 4);
  patterns.patterns = 3;
  GeneratorOptions blocks = make(GeneratorKind::kBlocks, 30, 50, 0.6, 4);
  blocks.block_rows = 4;
  blocks.block_cols = 8;
  CHECK(fingerprint(generate_matrix(make(GeneratorKind::kUniform, 64, 96, 0.9, 4))) == 0xade72e32841e58b3ull);
  CHECK(fingerprint(generate_matrix(make(GeneratorKind::kUniform, 64, 96, 0.4, 4))) == 0x76c384d034a8342cull);
  CHECK(fingerprint(generate_matrix(make(GeneratorKind::kMagnitude, 64, 96, 0.9, 4))) == 0xecbd4340b8382b03ull);
  CHECK(fingerprint(generate_matrix(rmat)) == 0x16aef2ff7598b9c7ull);
  CHECK(fingerprint(generate_matrix(patterns)) == 0xe7dc7f42c9972117ull);
  CHECK(fingerprint(generate_matrix(blocks)) == 0xecd93f6e1c179a86ull);
  CHECK(fingerprint(generate_matrix(banded(64, 96, 3, 0.4, 4))) == 0xc0689f84f5f2cea1ull);
  CHECK(fingerprint(generate_matrix(banded(64, 96, 3, 0.0, 4))) == 0xdd94960047cec066ull);
}

TEST_CASE("generate: rmat degrees follow the quadrant probabilities", "[generate]") {
  GeneratorOptions o = make(GeneratorKind::kRmat, 0, 0, 0.0, 2);
  o.scale = 10;
  o.edge_factor = 8;
  const Csr skewed = generate_matrix(o);
  CHECK(skewed.rows == 1024);
  CHECK(skewed.cols == 1024);
  CHECK(skewed.nnz() <= 8 * 1024);
  CHECK(skewed.nnz() > 4 * 1024);  // duplicates are dropped, but not most edges
  o.abcd = {0.25, 0.25, 0.25, 0.25};
  const Csr flat = generate_matrix(o);
  const auto max_row = [](const Csr& a) {
    int32_t m = 0;
    for (int32_t r = 0; r < a.rows; ++r) m = std::max(m, a.row_length(r));
    return m;
  };
  // a = 0.57: row 0 draws (a+b)^10 = 6% of all edges; uniform quadrants give ~8 per row.
  CHECK(max_row(skewed) > 100);
  CHECK(skewed.row_length(0) > skewed.row_length(1023));
  CHECK(max_row(flat) < 30);
  CHECK(flat.nnz() > 8 * 1024 * 99 / 100);  // few repeats on a flat 1024 x 1024
  // a = 1 puts every edge at (0, 0): one non-zero.
  o.abcd = {1.0, 0.0, 0.0, 0.0};
  const Csr corner = generate_matrix(o);
  CHECK(corner.nnz() == 1);
  CHECK(corner.col_idx[0] == 0);
}

TEST_CASE("generate: patterns give at most P distinct, scattered row patterns", "[generate]") {
  GeneratorOptions o = make(GeneratorKind::kPatterns, 400, 500, 0.9, 8);
  o.patterns = 4;
  const Csr a = generate_matrix(o);
  std::map<std::vector<int32_t>, int> seen;
  int changes = 0;
  for (int32_t r = 0; r < a.rows; ++r) {
    REQUIRE(a.row_length(r) == 50);
    ++seen[row_columns(a, r)];
    if (r > 0 && row_columns(a, r) != row_columns(a, r - 1)) ++changes;
  }
  CHECK(seen.size() <= 4);
  CHECK(seen.size() == 4);        // 400 rows pick each of 4 patterns (all but certainly)
  CHECK(changes > a.rows / 2);    // rows of one pattern are not contiguous (expected 3/4 change)
  o.patterns = 1;
  const Csr one = generate_matrix(o);
  for (int32_t r = 1; r < one.rows; ++r) REQUIRE(row_columns(one, r) == row_columns(one, 0));
}

TEST_CASE("generate: blocks are kept whole (edge blocks clipped), the rest is zero", "[generate]") {
  GeneratorOptions o = make(GeneratorKind::kBlocks, 30, 50, 0.6, 6);
  o.block_rows = 4;
  o.block_cols = 8;
  const Csr a = generate_matrix(o);
  const int64_t grid_rows = 8, grid_cols = 7;  // ceil(30/4), ceil(50/8)
  std::map<std::pair<int, int>, int64_t> per_block;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) ++per_block[{r / 4, a.col_idx[p] / 8}];
  CHECK(static_cast<int64_t>(per_block.size()) == expected_nnz(0.6, grid_rows * grid_cols));
  bool clipped_seen = false;
  for (const auto& [block, count] : per_block) {
    const int64_t height = std::min<int64_t>(30, (block.first + 1) * 4) - block.first * 4;
    const int64_t width = std::min<int64_t>(50, (block.second + 1) * 8) - block.second * 8;
    CHECK(count == height * width);  // full: every cell of a touched block is present
    clipped_seen |= height * width < 32;
  }
  CHECK(clipped_seen);
  o.sparsity = 0.0;
  CHECK(generate_matrix(o).nnz() == 30 * 50);
}

TEST_CASE("generate: banded at sparsity 0 is the whole band, clipped at the borders", "[generate][banded]") {
  // Square: n(2W+1) cells less the W(W+1) cut off in the two corners.
  for (const auto& [n, w] : std::vector<std::pair<int64_t, int64_t>>{{10, 2}, {1, 0}, {7, 0}, {7, 6}, {100, 8}, {64, 63}}) {
    INFO(n << "x" << n << ", W = " << w);
    const Csr a = generate_matrix(banded(n, n, w, 0.0, 3));
    CHECK(a.rows == n);
    CHECK(a.cols == n);
    CHECK(a.nnz() == n * (2 * w + 1) - w * (w + 1));
    for (int32_t r = 0; r < a.rows; ++r) {
      const auto first = std::max<int64_t>(0, r - w), last = std::min<int64_t>(n - 1, r + w);
      std::vector<int32_t> band;
      for (int64_t c = first; c <= last; ++c) band.push_back(static_cast<int32_t>(c));
      REQUIRE(row_columns(a, r) == band);
    }
  }
  CHECK(generate_matrix(banded(10, 10, 2, 0.0)).nnz() == 44);  // 3 + 4 + 6 * 5 + 4 + 3
  // Wide, 4 x 8, W = 1: diagonal at columns 0, 2, 4, 6.
  const Csr wide = generate_matrix(banded(4, 8, 1, 0.0));
  CHECK(wide.rows == 4);
  CHECK(wide.cols == 8);
  CHECK(wide.row_ptr == std::vector<int32_t>{0, 2, 5, 8, 11});
  CHECK(wide.col_idx == std::vector<int32_t>{0, 1, 1, 2, 3, 3, 4, 5, 5, 6, 7});
  // Tall, 8 x 4, W = 0: round(r/2) with halves up is 0 1 1 2 2 3 3 4, the last clamped to 3.
  const Csr tall = generate_matrix(banded(8, 4, 0, 0.0));
  CHECK(tall.rows == 8);
  CHECK(tall.cols == 4);
  CHECK(tall.row_ptr == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(tall.col_idx == std::vector<int32_t>{0, 1, 1, 2, 2, 3, 3, 3});
  // Other shapes against a brute-force count of the band's cells.
  for (const auto& [m, k, w] : std::vector<std::array<int64_t, 3>>{{30, 70, 4}, {70, 30, 4}, {1, 9, 3}, {9, 1, 0}, {33, 100, 99}}) {
    INFO(m << "x" << k << ", W = " << w);
    const Csr a = generate_matrix(banded(m, k, w, 0.0));
    int64_t cells = 0;
    for (int64_t r = 0; r < m; ++r) {
      const int64_t centre = scaled_diagonal(r, m, k);
      for (int64_t c = 0; c < k; ++c) cells += std::abs(c - centre) <= w ? 1 : 0;
      REQUIRE(a.row_length(static_cast<int32_t>(r)) >= 1);  // every row meets its diagonal
    }
    CHECK(a.nnz() == cells);
  }
  CHECK(generate_matrix(banded(33, 100, 99, 0.0)).nnz() == 33 * 100);  // W = K - 1: dense
}

TEST_CASE("generate: banded keeps exactly round((1-s)*T) in-band cells, spread over the band", "[generate][banded]") {
  for (const auto& [m, k, w, s] : std::vector<std::tuple<int64_t, int64_t, int64_t, double>>{
           {300, 300, 6, 0.5},    // dense subset path
           {200, 500, 20, 0.95},  // sparse subset path
           {500, 200, 3, 0.25},
           {5, 5, 1, 0.3}}) {
    INFO(m << "x" << k << ", W = " << w << ", S = " << s);
    const Csr full = generate_matrix(banded(m, k, w, 0.0, 7));
    const Csr a = generate_matrix(banded(m, k, w, s, 7));
    CHECK(a.rows == m);
    CHECK(a.cols == k);
    CHECK(a.nnz() == expected_nnz(s, full.nnz()));
    CHECK(a.nnz() < full.nnz());
    for (int32_t r = 0; r < a.rows; ++r) {
      const int64_t centre = scaled_diagonal(r, m, k);
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
        REQUIRE(std::abs(a.col_idx[p] - centre) <= w);  // inside the band
        REQUIRE(a.values[p] == synthesize_value(ValueKind::kNormal, 7, r, a.col_idx[p]));
      }
    }
  }
  // Uniform over the band: each half of the rows holds about half of the kept cells.
  const Csr a = generate_matrix(banded(2000, 2000, 10, 0.5, 1));
  const int32_t top = a.row_ptr[1000];
  CHECK(std::abs(top - (a.nnz() - top)) < 600);  // ~10500 each; the difference's sd is ~100
  // Each diagonal offset keeps about half of its cells too (not, say, the band's left side only).
  std::vector<int64_t> by_offset(21, 0);
  for (int32_t r = 0; r < a.rows; ++r)
    for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) ++by_offset[static_cast<size_t>(a.col_idx[p] - r + 10)];
  for (const int64_t kept : by_offset) CHECK(std::abs(kept - 1000) < 200);
}

TEST_CASE("generate: invalid options are usage errors that say why", "[generate][errors]") {
  struct Case {
    const char* name;
    GeneratorOptions options;
    const char* part;
  };
  std::vector<Case> cases;
  cases.push_back({"sparsity 1", make(GeneratorKind::kUniform, 10, 10, 1.0), "--sparsity must be in [0, 1)"});
  cases.push_back({"negative sparsity", make(GeneratorKind::kUniform, 10, 10, -0.1), "--sparsity"});
  cases.push_back({"NaN sparsity", make(GeneratorKind::kUniform, 10, 10, std::nan("")), "--sparsity"});
  cases.push_back({"no rows", make(GeneratorKind::kUniform, 0, 10, 0.5), "--rows must be in [1, 2147483647]"});
  cases.push_back({"too many cols", make(GeneratorKind::kUniform, 10, kMaxIndex + 1, 0.5), "--cols"});
  cases.push_back({"too many non-zeros", make(GeneratorKind::kUniform, kMaxIndex, kMaxIndex, 0.5), "more than the 2147483647"});
  cases.push_back({"magnitude too large", make(GeneratorKind::kMagnitude, 100000, 100000, 0.99), "limit of 2^31"});
  GeneratorOptions ones = make(GeneratorKind::kMagnitude, 10, 10, 0.5);
  ones.values = ValueKind::kOnes;
  cases.push_back({"magnitude of ones", ones, "--values must be normal"});
  GeneratorOptions no_patterns = make(GeneratorKind::kPatterns, 10, 10, 0.5);
  no_patterns.patterns = 0;
  cases.push_back({"zero patterns", no_patterns, "--patterns"});
  GeneratorOptions more_patterns_than_rows = make(GeneratorKind::kPatterns, 10, 10, 0.5);
  more_patterns_than_rows.patterns = 11;
  cases.push_back({"patterns > rows", more_patterns_than_rows, "--patterns must be in [1, 10]"});
  GeneratorOptions flat_block = make(GeneratorKind::kBlocks, 10, 10, 0.5);
  flat_block.block_cols = 0;
  cases.push_back({"zero block width", flat_block, "--block"});
  GeneratorOptions big_scale = make(GeneratorKind::kRmat, 0, 0, 0.0);
  big_scale.scale = 31;
  cases.push_back({"rmat scale", big_scale, "--scale must be in [0, 30]"});
  GeneratorOptions bad_sum = make(GeneratorKind::kRmat, 0, 0, 0.0);
  bad_sum.scale = 4;
  bad_sum.abcd = {0.5, 0.2, 0.2, 0.2};
  cases.push_back({"abcd sum", bad_sum, "sum to 1"});
  GeneratorOptions negative = bad_sum;
  negative.abcd = {1.2, -0.2, 0.0, 0.0};
  cases.push_back({"abcd negative", negative, "lie in [0, 1]"});
  GeneratorOptions wrong_shape = bad_sum;
  wrong_shape.abcd = {0.25, 0.25, 0.25, 0.25};
  wrong_shape.rows = 10;
  cases.push_back({"rmat shape", wrong_shape, "2^scale"});
  GeneratorOptions too_many_edges = wrong_shape;
  too_many_edges.rows = 0;
  too_many_edges.scale = 30;
  too_many_edges.edge_factor = 4;
  cases.push_back({"rmat edges", too_many_edges, "more than the 2147483647"});
  cases.push_back({"negative bandwidth", banded(10, 10, -1, 0.0), "--bandwidth must be >= 0"});
  cases.push_back({"bandwidth = cols", banded(20, 10, 10, 0.0), "--bandwidth must be below --cols 10"});
  cases.push_back({"bandwidth > cols", banded(5, 10, 1000, 0.0), "--bandwidth must be below --cols 10"});
  cases.push_back({"banded sparsity 1", banded(10, 10, 1, 1.0), "--sparsity must be in [0, 1)"});
  cases.push_back({"banded non-zeros", banded(kMaxIndex, kMaxIndex, 1000, 0.0), "more than the 2147483647"});
  for (const Case& c : cases) {
    SECTION(c.name) {
      const UserError e = expect_user_error([&] { generate_matrix(c.options); });
      CHECK(e.code() == ExitCode::kUsage);
      CHECK_THAT(e.message(), Catch::Contains(c.part));
    }
  }
}

TEST_CASE("generate: kind names parse and print", "[generate]") {
  for (GeneratorKind k : {GeneratorKind::kUniform, GeneratorKind::kMagnitude, GeneratorKind::kRmat,
                          GeneratorKind::kPatterns, GeneratorKind::kBlocks, GeneratorKind::kBanded})
    CHECK(parse_generator_kind(generator_kind_name(k)) == k);
  CHECK(generator_kind_name(GeneratorKind::kBanded) == "banded");
  CHECK(!parse_generator_kind("random"));
}

}  // namespace
}  // namespace spmmc
