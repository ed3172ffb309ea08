#include "compiler/planning/batch_sizes.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace spmmc {

namespace {

// A whole decimal number in [1, max_n], nothing else.
std::optional<int64_t> size_of(std::string_view text, int64_t max_n) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || stop != end || value < 1 || value > max_n) return std::nullopt;
  return value;
}

}  // namespace

std::string BatchSizes::label() const {
  std::string out;
  for (const int64_t p : points) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out;
}

std::optional<BatchSizes> parse_batch_sizes(std::string_view text, int64_t max_n, std::string& error) {
  const std::string expected =
      fmt::format("expected N, N1,N2,... or LO:HI with sizes in [1, {}] (e.g. 4096, 1,32,4096 or 1:8192)", max_n);
  BatchSizes sizes;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    const std::optional<int64_t> lo = size_of(text.substr(0, colon), max_n);
    const std::optional<int64_t> hi = size_of(text.substr(colon + 1), max_n);
    if (!lo || !hi || *lo > *hi) {
      error = fmt::format("'{}': {}", text, expected);
      return std::nullopt;
    }
    for (int64_t p = *hi; p > *lo; p /= 4) sizes.points.push_back(p);
    sizes.points.push_back(*lo);
  } else {
    for (size_t at = 0;;) {
      const size_t comma = std::min(text.find(',', at), text.size());
      const std::optional<int64_t> n = size_of(text.substr(at, comma - at), max_n);
      if (!n) {
        error = fmt::format("'{}': {}", text, expected);
        return std::nullopt;
      }
      sizes.points.push_back(*n);
      if (comma == text.size()) break;
      at = comma + 1;
    }
  }
  std::sort(sizes.points.begin(), sizes.points.end());
  sizes.points.erase(std::unique(sizes.points.begin(), sizes.points.end()), sizes.points.end());
  sizes.tune_n = sizes.points.back();
  return sizes;
}

}  // namespace spmmc
