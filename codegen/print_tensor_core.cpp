#include "codegen/print_tensor_core.h"

#include <cstring>
#include <iterator>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "codegen/embedded_templates.h"
#include "codegen/fill_template.h"
#include "compiler/common/diagnostics.h"
#include "compiler/planning/vector_blocks.h"

namespace spmmc {

TensorCoreCode print_tensor_core(const Csr& a, const RowTiling& windows, DType dtype) {
  SPMMC_CHECK(dtype == DType::kFp16 || dtype == DType::kBf16 || dtype == DType::kTf32,
              "the tensor-core family takes fp16, bf16 or tf32");
  const bool tf32 = dtype == DType::kTf32;
  // Vectors per block: the MMA's K (m16n8k8 for fp16 and bf16, m16n8k4 for tf32).
  const VectorBlocks v = build_vector_blocks(a, windows, tf32 ? 4 : 8);
  TensorCoreCode out;
  out.k = v.k;
  out.vectors = v.vectors;
  out.padded = v.padded;
  out.blocks = v.blocks();
  // The windows of the empty rows: eight rows each, no blocks (their rows of C are stored as zeros).
  std::vector<int32_t> rows = v.window_rows, window_block = v.window_block;
  for (size_t i = 0; i < windows.empty_rows.size(); i += 8) {
    for (size_t j = i; j < i + 8; ++j) rows.push_back(j < windows.empty_rows.size() ? windows.empty_rows[j] : -1);
    window_block.push_back(window_block.back());
  }
  out.windows = static_cast<int32_t>(window_block.size()) - 1;
  SPMMC_CHECK(out.windows >= 1 && out.blocks >= 1, "the tensor-core family needs a matrix with non-zeros");
  const auto number = [](int32_t x) { return std::to_string(x); };
  // fp16 and bf16: the columns as 4 pairs per block (lane 4g + t loads vectors 2t and 2t + 1); tf32:
  // 4 columns per block (lane 4g + t loads vector t).
  const std::string cols =
      tf32 ? joined_items(v.block_cols.size(), 16, [&](size_t i) { return number(v.block_cols[i]); })
           : joined_items(v.block_cols.size() / 2, 8, [&](size_t i) {
               return fmt::format("{{{}, {}}}", v.block_cols[2 * i], v.block_cols[2 * i + 1]);
             });
  // fp16 and bf16: lane l's word holds its two values (vectors 2t, 2t + 1 of row g), the first in
  // the low half; tf32: its one value (vector t of row g), a float's bits (A's values are tf32 already).
  const std::string a_bits =
      tf32 ? joined_items(v.values.size(), 8, [&](size_t i) {
               const float value = v.values[i];
               SPMMC_CHECK(round_to_dtype(value, dtype) == value, "A's values are rounded to tf32 before printing");
               uint32_t bits = 0;
               std::memcpy(&bits, &value, sizeof bits);
               return fmt::format("0x{:08x}u", bits);
             })
           : joined_items(v.values.size() / 2, 8, [&](size_t i) {
               const uint32_t lo = to_half_bits(v.values[2 * i], dtype), hi = to_half_bits(v.values[2 * i + 1], dtype);
               return fmt::format("0x{:08x}u", lo | (hi << 16));
             });
  std::map<std::string, std::string> values = {{"HEADER_COMMENT", ""},
                                               {"WINDOWS", std::to_string(out.windows)},
                                               {"WINDOW_BLOCK", joined_items(window_block.size(), 16, [&](size_t i) { return number(window_block[i]); })},
                                               {"WINDOW_ROWS", joined_items(rows.size(), 16, [&](size_t i) { return number(rows[i]); })},
                                               {"COLS", cols},
                                               {"A_BITS", a_bits}};
  if (!tf32) values["MMA"] = dtype == DType::kFp16 ? "SPMMC_MMA_M16N8K8_F16" : "SPMMC_MMA_M16N8K8_BF16";
  const char* const template_name = tf32 ? "kernel_tensor_core_tf32.cuh" : "kernel_tensor_core.cuh";
  out.code = fill_template(embedded_template(template_name), values, template_name);
  return out;
}

}  // namespace spmmc
