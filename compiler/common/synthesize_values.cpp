#include "compiler/common/synthesize_values.h"

#include <cmath>

#include <fmt/format.h>

namespace spmmc {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

float synthesize_value(ValueKind kind, uint64_t seed, int32_t row, int32_t col) {
  if (kind == ValueKind::kOnes) return 1.0f;
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(row)) << 32) |
                       static_cast<uint32_t>(col);
  const uint64_t h = splitmix64(seed ^ splitmix64(key));
  constexpr double kScale = 1.0 / 16777216.0;  // 2^-24
  const double u1 = (static_cast<double>(h >> 40) + 0.5) * kScale;
  const double u2 = (static_cast<double>(h & 0xFFFFFFu) + 0.5) * kScale;
  if (kind == ValueKind::kUniform) return static_cast<float>(2.0 * u1 - 1.0);
  constexpr double kTwoPi = 6.283185307179586476925;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
}

std::string_view value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNormal: return "normal";
    case ValueKind::kUniform: return "uniform";
    case ValueKind::kOnes: return "ones";
  }
  return "?";
}

std::optional<ValueKind> parse_value_kind(std::string_view name) {
  if (name == "normal") return ValueKind::kNormal;
  if (name == "uniform") return ValueKind::kUniform;
  if (name == "ones") return ValueKind::kOnes;
  return std::nullopt;
}

std::string describe_synthesis(ValueKind kind, uint64_t seed) {
  switch (kind) {
    case ValueKind::kNormal: return fmt::format("synthesised: normal(0,1), seed {}", seed);
    case ValueKind::kUniform: return fmt::format("synthesised: uniform(-1,1), seed {}", seed);
    case ValueKind::kOnes: return "synthesised: ones";
  }
  return "synthesised";
}

}  // namespace spmmc
