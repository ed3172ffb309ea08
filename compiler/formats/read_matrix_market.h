// Matrix Market reader (https://math.nist.gov/MatrixMarket/formats.html).
#pragma once

#include <istream>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/formats/read_options.h"

namespace spmmc {

// Reads a Matrix Market matrix: "coordinate" with field real, integer or pattern and symmetry
// general, symmetric or skew-symmetric; "array" with field real or integer, general. Indices
// are 1-based; comment and blank lines are skipped; duplicates are summed; explicit zeros are
// dropped; symmetric input is mirrored (the diagonal is not doubled). Pattern entries get
// values from options.values (default ones, as SciPy reads them). options.threshold prunes
// array (dense) input. Data errors name `file` and the line.
Csr read_matrix_market(std::istream& in, const std::string& file, const ReadOptions& options,
                       ReadReport& report);

}  // namespace spmmc
