// DLMC .smtx reader (Gale et al., "Sparse GPU Kernels for Deep Learning").
//
// Format: line 1 "M, K, NNZ"; line 2 the M+1 row offsets; line 3 the NNZ column indices,
// 0-based, space-separated. No values: they are synthesised from (options.values, default
// normal; options.seed) by synthesize_value, so the same file and seed always give the same
// matrix. A row listing a column twice is a data error (there is no value to sum).
#pragma once

#include <istream>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/formats/read_options.h"

namespace spmmc {

Csr read_smtx(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report);

}  // namespace spmmc
