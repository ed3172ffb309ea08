// Seeded values for inputs that carry only a topology (DLMC .smtx, Matrix Market "pattern",
// generated matrices).
//
// The value of entry (row, col) depends only on (kind, seed, row, col): not on the order in
// which entries are visited, nor on the other entries. So the same topology gives the same
// values whatever file format carries it, and a sub-matrix keeps its values. Values are never
// zero, so synthesis never changes a topology.
//
//   h        = splitmix64(seed ^ splitmix64((row << 32) | col))
//   u1, u2   = the top and bottom 24 bits of h, mapped to (k + 0.5) / 2^24, in (0, 1)
//   normal   : sqrt(-2 ln u1) * cos(2 pi u2)       (Box-Muller; N(0, 1))
//   uniform  : 2 u1 - 1                            (U(-1, 1), never 0)
//   ones     : 1
// computed in double and rounded to float. See docs/input-formats.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spmmc {

enum class ValueKind { kNormal, kUniform, kOnes };

float synthesize_value(ValueKind kind, uint64_t seed, int32_t row, int32_t col);

// "normal" / "uniform" / "ones"; parse returns nullopt on anything else.
std::string_view value_kind_name(ValueKind kind);
std::optional<ValueKind> parse_value_kind(std::string_view name);

// Human-readable origin for reports: "synthesised: normal(0,1), seed 7".
std::string describe_synthesis(ValueKind kind, uint64_t seed);

// The 64-bit mixer used above, exposed for the generators (deterministic on every platform).
uint64_t splitmix64(uint64_t x);

}  // namespace spmmc
