// safetensors reader (Hugging Face, https://github.com/huggingface/safetensors).
//
// Format: an 8-byte little-endian header size N, N bytes of UTF-8 JSON (possibly padded with
// spaces), then the data buffer. The JSON object maps tensor names to
// {"dtype", "shape", "data_offsets": [begin, end)} (offsets relative to the data buffer, which
// starts at byte 8 + N) plus an optional "__metadata__" string-to-string map.
//
// The header is validated as a whole (every entry, like the reference implementation), each
// error naming the byte of the offending JSON value. The tensor options.tensor names is then
// read as a dense, C-order, little-endian matrix through dense_to_csr: it must be 2-D, with
// both dimensions >= 1, of dtype F32, F16, BF16 or F64. Zeros are dropped, and entries with
// |w| <= options.threshold pruned.
//
// Without options.tensor the reader throws a usage error (ExitCode::kUsage) listing every
// tensor (name, dtype, shape, whether it is usable) and saying to pick one with --tensor NAME;
// an unknown name is a data error listing the names (with a close match when there is one).
#pragma once

#include <istream>
#include <string>

#include "compiler/common/csr.h"
#include "compiler/formats/read_options.h"

namespace spmmc {

Csr read_safetensors(std::istream& in, const std::string& file, const ReadOptions& options, ReadReport& report);

}  // namespace spmmc
