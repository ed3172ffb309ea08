// Seeded generators of sparse test matrices: what `spmmc gen` writes, what tests and
// benchmarks use when they need a matrix of a given shape and structure.
//
// Determinism. The result is a function of the options only, identical on every platform and
// compiler: topology randomness comes from xoshiro256** whose state is four splitmix64 outputs
// of (seed, kind); bounded integers use an exact multiply-and-reject method; no std::*_distribution
// (their output is implementation-defined) and no libm call decides a topology (only exact
// IEEE operations: rounding of counts, rmat's cumulative probabilities). Values
// come from synthesize_value(values, seed, row, col), so a topology written to .smtx reads back
// with identical values given the same --values and --seed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "compiler/common/csr.h"
#include "compiler/common/synthesize_values.h"

namespace spmmc {

// The order is part of the output: a kind's random stream is seeded from its position (append only).
enum class GeneratorKind { kUniform, kMagnitude, kRmat, kPatterns, kBlocks, kBanded };

struct GeneratorOptions {
  GeneratorKind kind = GeneratorKind::kUniform;
  int64_t rows = 0;  // M; rmat: 2^scale (0 means "take it from scale")
  int64_t cols = 0;  // K; rmat: 2^scale (0 means "take it from scale")
  // Fraction of zeros: of all cells (uniform, magnitude), of each pattern's columns
  // (patterns), of the blocks (blocks), of the in-band cells (banded; spmmc gen's default for
  // banded is 0, the full band). In [0, 1). Not used by rmat.
  double sparsity = 0.9;
  uint64_t seed = 0;
  ValueKind values = ValueKind::kNormal;  // magnitude: must be kNormal

  // rmat: n = 2^scale nodes, round(edge_factor * n) edges drawn, probabilities of the four
  // quadrants (a: top-left, b: top-right, c: bottom-left, d: bottom-right), summing to 1.
  int scale = 0;
  double edge_factor = 16.0;
  std::array<double, 4> abcd = {0.57, 0.19, 0.19, 0.05};

  // patterns: the number of distinct column patterns rows are drawn from.
  int64_t patterns = 8;

  // blocks: the block shape (rows x cols).
  int64_t block_rows = 4;
  int64_t block_cols = 4;

  // banded: the non-zeros lie within bandwidth columns of the scaled diagonal, 0 <= bandwidth < K.
  int64_t bandwidth = 1;
};

// Generates a matrix of options.kind:
//  * uniform:   exactly round((1-s)*M*K) non-zeros at distinct positions drawn uniformly among
//               all M*K (every subset of that size equally likely).
//  * magnitude: magnitude pruning of Gaussian weights: the dense M x K field
//               w(r,c) = synthesize_value(normal, seed, r, c) keeps its round((1-s)*M*K)
//               largest |w|; among equal |w| the earlier cell in row-major order wins. Values
//               are the kept weights. M*K is limited to 2^31 (every weight is scored).
//  * rmat:      R-MAT graph (Chakrabarti et al. 2004) on n = 2^scale nodes: round(edge_factor*n)
//               edges, each placed by descending `scale` times into quadrant a, b, c or d of the
//               adjacency matrix with those probabilities. Repeated edges are kept once, self
//               loops kept, so nnz <= the edges drawn.
//  * patterns:  P random column patterns of round((1-s)*K) distinct columns each; every row takes
//               one of them uniformly at random, so rows sharing a pattern are scattered.
//  * blocks:    the matrix cut into block_rows x block_cols blocks (those on the last block row
//               and column clipped to the matrix); round((1-s)*B) of the B blocks, chosen as
//               in uniform, are kept and dense; all others are zero.
//  * banded:    FEM/stencil-like band: row r's band is the columns c with |c - c'(r)| <= bandwidth
//               (clipped to [0, K)) around the scaled diagonal c'(r) = min(round(r*K/M), K-1)
//               (halves rounded up, in exact integers: floor((2rK + M) / 2M); c' = r when square).
//               Of the T in-band cells, round((1-s)*T) chosen as in uniform are kept (s = 0: the
//               whole band, every row non-empty).
// Invalid options (sparsity outside [0, 1), a dimension outside [1, 2^31-1], more than 2^31-1
// non-zeros, probabilities that are negative or do not sum to 1, non-positive block sizes,
// P < 1, non-normal values for magnitude, a bandwidth outside [0, K)) are usage errors that say which option and why.
// The result satisfies check_csr_invariants.
Csr generate_matrix(const GeneratorOptions& options);

// "uniform", "magnitude", "rmat", "patterns", "blocks", "banded" and back.
std::string_view generator_kind_name(GeneratorKind kind);
std::optional<GeneratorKind> parse_generator_kind(std::string_view name);

}  // namespace spmmc
