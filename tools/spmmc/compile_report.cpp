#include "tools/spmmc/compile_report.h"

#include <algorithm>
#include <filesystem>

#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/planning/choose_tile.h"
#include "compiler/planning/constraints.h"
#include "compiler/planning/matrix_stats.h"
#include "tools/spmmc/json_fields.h"

namespace spmmc::cli {

using Json = nlohmann::ordered_json;

Json compile_report(const CompiledLayer& l) {
  const CompileOptions& o = l.options;
  const FamilyChoice& f = l.family;
  const MatrixStats stats = compute_matrix_stats(l.matrix.csr);
  Json variants = Json::array();  // as NAME_info()->variants lists them
  for (const EmittedKernel::Variant& v : l.kernel.variants)
    variants.push_back({{"kernel", v.kernel}, {"n_min", v.n_min}, {"n_max", v.n_max}, {"needs", v.needs}});
  Json report = {
      {"schema", "spmmc.compile/1"},
      {"name", o.name},
      {"spmmc_version", SPMMC_VERSION},
      {"input",
       {{"file", std::filesystem::path(o.path).filename().string()},
        {"format", l.matrix.report.format},
        {"values", l.matrix.report.values_origin},
        {"rows", l.matrix.csr.rows},
        {"cols", l.matrix.csr.cols},
        {"nnz", l.matrix.csr.nnz()},
        {"sparsity", stats.sparsity},
        {"empty_rows", stats.row_lengths.empty},
        {"empty_cols", stats.col_lengths.empty},
        {"row_length_mean", stats.row_lengths.mean},
        {"row_length_cov", stats.row_lengths.cov},
        {"weights_sha256", l.weights_sha256}}},
      {"options",
       {{"n", o.plan.n},
        {"batch_sizes", o.batch_sizes.points},
        {"target", o.target.name},
        {"arch", o.target.arch},
        {"reorder", std::string(reorder_method_name(o.plan.reorder))},
        {"th_row", o.plan.constraints.max_row_cov},
        {"th_col", o.plan.constraints.max_col_waste},
        {"tune", o.tune},
        {"tune_auto", o.tune_auto},
        {"dtype", dtype_name(o.dtype)}}},
      {"plan",
       {{"all", l.plan.remaining[0]},
        {"after_register", l.plan.remaining[1]},
        {"after_hardware", l.plan.remaining[2]},
        {"after_balance", l.plan.remaining[3]}}},
      {"choice",
       {{"m1", l.tile.chosen->tile.m1},
        {"n1", l.tile.chosen->tile.n1},
        {"cols_per_thread", l.tile.chosen->tile.cols_per_thread},
        {"threads_per_block", l.tile.chosen->tile.threads_per_block()},
        {"min_blocks_per_sm", l.tile.chosen->tile.min_blocks_per_sm},
        {"family", f.name()},
        {"family_why", f.why},
        {"why", l.tile.why},
        {"constraints", l.tile.chosen->verdict.accepted() ? "all passed" : l.tile.chosen->verdict.reason},
        {"registers_per_thread_estimate", estimate_registers_per_thread(l.tile.chosen->tile, o.plan.constraints)},
        // the tile's reuse of B in its unrolled code: the family rule's measure (compiler/planning/choose_tile.h)
        {"products_per_b_load", products_per_b_load(*l.tile.chosen, l.matrix.csr.nnz())},
        {"reordering", {{"before", tiling_json(l.rows_plan.before)}, {"after", tiling_json(l.rows_plan.after)}}}}},
      {"kernel",
       {{"layout", {{"b", "row-major K x n"}, {"c", "row-major M x n"}, {"dtype", dtype_info_name(o.dtype)}}},
        {"tiles", l.kernel.tiles},
        {"kernels", l.kernel.kernel_symbols.size()},
        {"fmas_per_kernel", f.fmas_per_kernel},
        {"k_parts", o.k_parts},
        {"loads_ahead", f.unrolled ? o.loads_ahead : 0},
        {"k_part_begin", l.kernel.k_part_begin},
        {"generic_below_n", l.small_n.generic_below_n},
        {"generic_below_why", l.small_n.why},
        {"variants", variants},
        {"fmas", l.kernel.fmas},
        {"loads_per_thread", l.kernel.loads},
        {"stores_per_thread", l.kernel.stores},
        {"source_bytes", l.kernel.cu.size()},
        // where A's arrays travel (--arrays): initialised device constants, or host bytes copied at the first call
        {"arrays", o.host_arrays ? Json{{"where", "host"}, {"bytes", l.kernel.host_array_bytes}, {"why", o.arrays_why}}
                                 : Json{{"where", "device"}, {"why", o.arrays_why}}},
        {"estimate", !f.unrolled ? Json(nullptr) : Json{{"source_bytes", f.estimate.source_bytes}, {"nvcc_seconds", f.estimate.nvcc_seconds}}},
        {"size_limit", {{"max_nvcc_seconds", o.limits.max_nvcc_seconds}}}}},
      {"build", {{"nvcc_options", l.kernel.nvcc_options}, {"options_file", o.name + ".nvcc-options"}}},
  };
  // n = 1 by a lane per product of each piece: where the file lists that variant
  const bool spmv = std::any_of(l.kernel.variants.begin(), l.kernel.variants.end(),
                                [](const EmittedKernel::Variant& v) { return v.kernel == "balanced-spmv"; });
  if (f.balanced)
    report["kernel"]["balanced"] = {{"piece_length", l.family.piece_length},
                                    {"warps_per_block", kBalancedWarps},
                                    {"pieces_per_warp", f.balanced_groups},
                                    {"blocks", l.kernel.balanced_blocks},
                                    {"rows_cut", l.kernel.balanced_rows_cut},
                                    {"spmv", spmv}};
  // The balanced kernel as the small-n path (docs/design/small-n.md); null where the file has none, and
  // why (absent where the family is one the path is not for).
  report["kernel"]["balanced_path"] =
      l.small_n.balanced_below_n > l.small_n.balanced_from_n
          ? Json{{"from_n", l.small_n.balanced_from_n},
                 {"below_n", l.small_n.balanced_below_n},
                 {"piece_length", l.small_n.piece_length},
                 {"warps_per_block", kBalancedWarps},
                 {"pieces_per_warp", 1},
                 // below this n two pieces per warp (0: none)
                 {"pairs_below_n", l.small_n.balanced_pairs_below_n},
                 // from this n one column per lane goes on to the generic path (below_n: never)
                 {"v1_below_n", l.small_n.balanced_v1_below_n},
                 {"blocks", l.kernel.balanced_blocks},
                 {"rows_cut", l.kernel.balanced_rows_cut},
                 {"spmv", spmv}}
          : Json(nullptr);
  if (!l.small_n.balanced_why.empty()) report["kernel"]["balanced_path_why"] = l.small_n.balanced_why;
  // Its second table for uneven rows (docs/design/small-n.md, *Uneven rows from n = 512*); null where none.
  report["kernel"]["balanced_mid"] = l.small_n.balanced_mid_below_n > l.small_n.balanced_mid_from_n
                                         ? Json{{"from_n", l.small_n.balanced_mid_from_n},
                                                {"below_n", l.small_n.balanced_mid_below_n},
                                                {"piece_length", l.small_n.mid_piece_length},
                                                {"blocks", l.kernel.balanced_mid_blocks},
                                                {"rows_cut", l.kernel.balanced_mid_rows_cut}}
                                         : Json(nullptr);
  if (!l.small_n.balanced_mid_why.empty()) report["kernel"]["balanced_mid_why"] = l.small_n.balanced_mid_why;
  if (f.tensor_core)  // the 8 x 1 vectors of the windows (FlashSparse's format; docs/design/precision.md)
    report["kernel"]["tensor_core"] = {{"mma", o.tf32 ? "m16n8k4.tf32" : o.dtype == DType::kFp16 ? "m16n8k8.f16" : "m16n8k8.bf16"},
                                       {"k", l.kernel.tensor_core.k},
                                       {"windows", l.kernel.tensor_core.windows},
                                       {"window_rows", f.windows.m1},
                                       {"reorder", std::string(reorder_method_name(f.window_method))},
                                       {"vectors", l.kernel.tensor_core.vectors},
                                       {"padding_vectors", l.kernel.tensor_core.padded},
                                       {"blocks", l.kernel.tensor_core.blocks},
                                       {"kernel", l.kernel.tensor_core.chunk_rows > 0 ? "staged" : "direct"},
                                       {"chunk_rows", l.kernel.tensor_core.chunk_rows > 0 ? Json(l.kernel.tensor_core.chunk_rows) : Json(nullptr)},
                                       {"staged_from_n", l.kernel.tensor_core.chunk_rows > 0 ? Json(l.kernel.tensor_core.staged_from_n) : Json(nullptr)},
                                       {"nnz_per_vector", static_cast<double>(l.matrix.csr.nnz()) / static_cast<double>(l.kernel.tensor_core.vectors)}};
  if (o.dtype != DType::kFp32)  // what rounding A to the dtype did (docs/design/precision.md)
    report["input"]["rounded_to_dtype"] = {{"dtype", dtype_name(o.dtype)},
                                           {"values_changed", l.rounding.changed},
                                           {"values_to_zero", l.rounding.to_zero},
                                           {"max_relative_change", l.rounding.max_relative_change}};
  if (!l.tile.tuning.is_null()) {
    report["tuning"] = l.tile.tuning;
    if (o.reproducible) report["tuning"].erase("seconds");
  }
  if (!l.sgemm.json.is_null()) report["sgemm"] = l.sgemm.json;
  if (f.reduced && !f.reduced->choice.dense.is_null()) report["dense_gemm"] = f.reduced->choice.dense;
  // What tuning gained over the heuristic (--tune none), measured where a GPU timed both.
  if (!l.versus.json.is_null()) report["versus_heuristic"] = l.versus.json;
  return report;
}

}  // namespace spmmc::cli
