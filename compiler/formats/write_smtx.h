// DLMC .smtx writer: the topology only, in exactly the layout of the DLMC files.
#pragma once

#include <ostream>

#include "compiler/common/csr.h"

namespace spmmc {

// Writes
//   M, K, NNZ\n
//   the M+1 row offsets, each followed by one space, then \n
//   the NNZ 0-based column indices, each followed by one space, then \n
// which is byte for byte the layout of the files of the DLMC collection. Values are not
// stored: read_smtx synthesises them (synthesize_values.h), so a matrix whose values came from
// synthesize_value(kind, seed, r, c) reads back identically with the same kind and seed.
void write_smtx(const Csr& csr, std::ostream& out);

}  // namespace spmmc
