// Where an emitted file leaves its family for the generic path (issue 27; docs/emitted-code.md,
// *Every batch size*): the unrolled and tensor-core kernels are tuned for one n and take about the
// same time at every smaller n (each block walks its whole tile code), while the generic kernels'
// time shrinks with n, so below some n the generic path is the faster one. spmmc compile writes the
// answer into the file (EmitOptions::generic_below_n, NAME_info()->generic_below_n).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spmmc {

struct SmallNDispatch {
  int64_t generic_below_n = 0;  // the generic path for every n below this
  std::string why;              // for NAME.json
};

// The unrolled launch of the emitted file, for the rule where nothing was measured.
struct UnrolledLaunch {
  int64_t a_tiles = 0;  // blocks along grid.x (every kernel's A-tiles)
  int64_t n1 = 0;       // columns of a block
  int64_t sms = 0;      // the target's SMs (0: unknown)
};

// Where the unrolled launch reaches this share of the SMs' blocks (a_tiles x n / N1 against the
// SMs), it and the generic path took about the same time on an H100: 0.3-0.7, median 0.45, over
// 16 layers of 256-2048 rows with tiles of N1 = 512 and 1024 compiled for n = 8192 (issue 27;
// docs/benchmarks.md, *Fourth round*).
inline constexpr double kUnrolledFillAtCrossing = 0.45;

// The dispatch of a file tuned for n whose family is not the generic one. Where the tuner measured
// both at n (`family_ms`: the emitted kernel's median, `generic_ms`: the generic kernel's), the n at
// which the generic kernel's time, scaled in proportion to n, meets the family's flat time:
// floor(n x family_ms / generic_ms), at most n. Else n / 2, the crossover measured on an H100 for
// kernels about twice as fast as the generic one at their n, or lower where `launch` says the
// unrolled blocks reach kUnrolledFillAtCrossing x the SMs before: ceil(0.45 x SMs x N1 / A-tiles)
// (many A-tiles: the unrolled kernel fills the GPU at a smaller n; docs/benchmarks.md, issue 27).
// At least 1. Needs n >= 1 and positive times (InternalError).
SmallNDispatch choose_generic_below_n(int64_t n, std::optional<double> family_ms, std::optional<double> generic_ms,
                                      const UnrolledLaunch& launch = {});

// Both kernels' medians at one batch size.
struct BatchSizeTime {
  int64_t n = 0;
  double family_ms = 0.0;
  double generic_ms = 0.0;
};

// The dispatch of a file compiled for several batch sizes (compiler/planning/batch_sizes.h), from
// both kernels timed at each of them (`measured`, ascending n, the largest the n it is tuned for).
// The family's kernel takes every n from the smallest measured n at which it is at least as fast as
// the generic kernel and stays so at every larger measured n. Below the smallest measured n, the
// rule above at that n; between a size where the generic kernel was faster and the next, where the
// family's was, the n where the two times, each linear in n between the sizes, meet. Where the
// generic kernel was faster at every size, the family's kernel takes only the n above the largest.
// One size: the rule above. Needs ascending n >= 1 and positive times (InternalError).
SmallNDispatch choose_generic_below_n(const std::vector<BatchSizeTime>& measured);

}  // namespace spmmc
