// The balanced family's printer (docs/design/balanced.md): fills kernel_balanced.cuh with A's CSR
// arrays and its schedule, the device code that the emitter (codegen/emit_unrolled_kernel.h) pastes
// into NAME.cu in place of the generic family's.
#pragma once

#include <string>

#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/common/csr.h"

namespace spmmc {

// The filled template: A (rows at their original index) and `schedule` (schedule_balanced of A).
std::string print_balanced(const Csr& a, const BalancedSchedule& schedule);

}  // namespace spmmc
