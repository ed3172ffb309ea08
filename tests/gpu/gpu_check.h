// What the plain GPU check programs (spmmc-runtime-gpu-check, spmmc-tuner-gpu-check) share: one
// PASS/FAIL line per check, and a main that skips with exit 69 where no GPU is usable, runs the
// checks, turns an escaping exception into a failed check and prints the summary last.
#pragma once

#include <cstdio>
#include <exception>
#include <string>

#include "runtime/cuda_driver.h"

namespace spmmc::gpu_check {

inline int failures = 0;
inline int passes = 0;

inline void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
  (ok ? passes : failures)++;
}

// The program's exit code: 69 without a GPU (nothing run), 0 when every check passed, else 1.
template <typename Checks>
int run(const char* program, Checks&& checks) {
  std::string why;
  if (!GpuContext::available(&why)) {
    std::printf("%s: skipped: no CUDA GPU available (%s)\n", program, why.c_str());
    return 69;
  }
  try {
    checks();
  } catch (const std::exception& e) {
    check(false, std::string("unexpected exception: ") + e.what());
  }
  std::printf("%s: %s: %d passed, %d failed\n", program, failures == 0 ? "PASS" : "FAIL", passes, failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace spmmc::gpu_check
