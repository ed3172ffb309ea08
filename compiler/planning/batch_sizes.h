// The batch sizes a file is compiled for (`spmmc compile --n`, issue 27): one n, a list, or a range.
// The file is tuned for the largest (its family's kernel: the tile, the unrolled code); the others
// are the n at which the tuner also times that kernel and the generic path, to place the dispatch
// between them (compiler/planning/small_n_dispatch.h). Every file is correct at every n whatever
// was given; the sizes only decide where each variant runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spmmc {

struct BatchSizes {
  int64_t tune_n = 0;           // the largest: what the tile and family are tuned for
  std::vector<int64_t> points;  // ascending, distinct, the last one tune_n
  bool several() const { return points.size() > 1; }
  std::string label() const;    // the points, comma-separated: "1,2,8,32,128,512,2048,8192"
};

// Parses `N` (one size), `N1,N2,...` (a list, any order, repeats merged) or `LO:HI` (a range: HI,
// HI/4, HI/16, ... while above LO, and LO; "1:8192" gives 1, 2, 8, 32, 128, 512, 2048, 8192).
// Every size in [1, max_n]; in a range LO <= HI. Returns none and says why in `error` otherwise.
std::optional<BatchSizes> parse_batch_sizes(std::string_view text, int64_t max_n, std::string& error);

}  // namespace spmmc
