// Matrix Market writer: `coordinate real general`, 1-based, one entry per line in row-major
// order, values in the shortest decimal form that reads back as the same float.
#pragma once

#include <ostream>
#include <string>

#include "compiler/common/csr.h"

namespace spmmc {

// Writes
//   %%MatrixMarket matrix coordinate real general
//   % <each line of comment>          (none when comment is empty)
//   M K NNZ
//   row col value                     (NNZ lines, 1-based, rows then columns ascending)
// Values are printed by fmt's shortest round-trip representation ("{}") (one float magnitude,
// whose shortest form suffers double rounding in readers that parse via double, gets its exact
// double form instead), so read_matrix_market gives back exactly the same floats.
void write_matrix_market(const Csr& csr, std::ostream& out, const std::string& comment);

}  // namespace spmmc
