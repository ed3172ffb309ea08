// The balanced family's printer (docs/design/balanced.md): fills kernel_balanced.cuh with A's CSR
// arrays and its schedule, the device code that the emitter (codegen/emit_unrolled_kernel.h) pastes
// into NAME.cu in place of the generic family's.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/arrays_on_host.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/common/csr.h"

namespace spmmc {

// The filled template: A (rows at their original index) and `schedule` (schedule_balanced of A). With
// `csr_arrays` false, without A's CSR arrays and spmmc_rows (balanced_csr.cuh): for a file whose generic
// path defines the same ones (kernel_generic.cuh), where the balanced kernel is its small-n path.
// `pairs_below_n` > 0 (a schedule of one piece per warp only): every n below it takes the pairs kernel,
// two pieces per warp (spmmc_balanced_pairs_v1). `spmv`: n = 1 takes spmmc_balanced_spmv, a lane per
// product of each piece (SPMMC_BALANCED_SPMV). `aside` (forms whose arrays lose their values anyway:
// --arrays host, the tuner's NVRTC form): A's CSR arrays and the table of pieces printed as `{0}`, their bytes appended
// there (codegen/arrays_on_host.h, ArraysAside). `mid` (the small-n path's, one piece per warp like
// `schedule`, the same warps per block): a second table of pieces, spmmc_piece_mid, and its kernels
// spmmc_balanced_mid_v4, _v2 and _v1 (SPMMC_BALANCED_MID; docs/design/small-n.md, *Uneven rows from n = 512*).
struct BalancedPrint {
  bool csr_arrays = true;
  int64_t pairs_below_n = 0;
  bool spmv = false;
  ArraysAside* aside = nullptr;
  const BalancedSchedule* mid = nullptr;
};
std::string print_balanced(const Csr& a, const BalancedSchedule& schedule, const BalancedPrint& how);

}  // namespace spmmc
