// spmmc verify NAME.cu --against WEIGHTS: checks an emitted kernel against the weights it claims,
// from its Clang AST (verify/): read -> analyse the code -> compare.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/dtype.h"
#include "compiler/formats/read_matrix.h"
#include "tools/spmmc/commands.h"
#include "verify/analyze_emitted_kernel.h"
#include "verify/compare_with_weights.h"

namespace spmmc::cli {
namespace {

using Json = nlohmann::ordered_json;

struct Range {
  int64_t min = 0, max = 0, sum = 0;
};

Range range_of(const std::vector<AnalyzedTile>& tiles, int64_t AnalyzedTile::*field) {
  Range r;
  if (tiles.empty()) return r;
  r.min = std::numeric_limits<int64_t>::max();
  r.max = std::numeric_limits<int64_t>::min();
  for (const AnalyzedTile& t : tiles) {
    r.min = std::min(r.min, t.*field);
    r.max = std::max(r.max, t.*field);
    r.sum += t.*field;
  }
  return r;
}

std::string range_text(const char* what, const Range& r, size_t tiles) {
  return fmt::format("{} {} ({}..{}, mean {:.1f})", what, r.sum, r.min, r.max,
                     tiles ? static_cast<double>(r.sum) / static_cast<double>(tiles) : 0.0);
}

// Distinct rows of C a tile stores (its stores are per lane).
size_t rows_of(const AnalyzedTile& t) {
  std::vector<int64_t> rows;
  for (const AnalyzedStore& s : t.stores) rows.push_back(s.row);
  std::sort(rows.begin(), rows.end());
  return static_cast<size_t>(std::unique(rows.begin(), rows.end()) - rows.begin());
}

Json location_json(const CodeLocation& where) {
  return {{"file", where.file}, {"line", where.line}, {"column", where.column}};
}

Json verify_json(const std::string& cu, const std::string& weights, const Csr& a, const EmittedKernelAnalysis& code,
                 const WeightsComparison& result, double read_seconds, double compare_seconds) {
  Json differences = Json::array();
  for (const CodeDiagnostic& d : result.differences) {
    Json j = location_json(d.where);
    j["message"] = d.message;
    differences.push_back(j);
  }
  Json tiles = Json::array();
  for (const AnalyzedTile& t : code.tiles)
    tiles.push_back({{"function", t.function},
                     {"line", t.where.line},
                     {"blocks", t.blocks},
                     {"rows", rows_of(t)},
                     {"statements", t.statements},
                     {"loads", t.loads},
                     {"fmas", t.fmas},
                     {"dead_loads", t.dead_loads}});
  // The unrolled kernels in launch order: the function each launch j names (spmmc_kernels[j]),
  // its blocks along x (spmmc_kernel_tiles[j]), the number of case labels of its dispatch and
  // whether it waits for its predecessor (null when the launch names no unrolled kernel).
  Json kernels = Json::array();
  for (const KernelLaunch& l : code.launch.launches) {
    const AnalyzedKernel* k =
        l.kernel >= 0 && static_cast<size_t>(l.kernel) < code.kernels.size() ? &code.kernels[static_cast<size_t>(l.kernel)] : nullptr;
    kernels.push_back({{"function", l.function},
                       {"line", k ? k->where.line : 0},
                       {"grid_x", l.grid_x},
                       {"cases", k ? Json(k->cases.size()) : Json(nullptr)},
                       {"waits_for_previous", k ? Json(k->waits_for_previous) : Json(nullptr)}});
  }
  const KernelInfoFields& info = code.info;
  Json info_json = {{"found", info.found}};
  const auto put = [&](const char* name, const auto& field) {
    if (field.value) info_json[name] = *field.value;
    else info_json[name] = nullptr;
  };
  put("name", info.name);
  put("m", info.m);
  put("k", info.k);
  put("nnz", info.nnz);
  put("m1", info.m1);
  put("n1", info.n1);
  put("cols_per_thread", info.cols_per_thread);
  put("a_tiles", info.a_tiles);
  put("weights_sha256", info.weights_sha256);
  return {
      {"schema", "spmmc.verify/1"},
      {"file", cu},
      {"weights", weights},
      {"match", result.match},
      {"parsed", code.parsed},
      {"analyzed", code.analyzed},
      {"dtype", dtype_name(code.dtype)},
      {"family", code.tensor_core ? "tensor-core" : code.balanced ? "balanced" : code.generic_only ? "generic" : "unrolled"},
      // The weights as compared: rounded to the code's dtype (compare_with_weights).
      {"weights_shape", {{"rows", a.rows}, {"cols", a.cols}, {"nnz", result.weights_nnz}, {"sha256", result.weights_sha256}}},
      {"kernel", code.kernel},  // the first kernel launched (compatibility: see "kernels")
      {"entry_point", code.entry_point},
      {"grid_x", code.grid_x},  // blocks along x over all launches
      {"kernels", kernels},
      {"columns",
       {{"cols_per_thread", code.columns.cols_per_thread},
        {"n1", code.columns.n1},
        {"threads", code.columns.threads},
        {"max_threads", code.columns.max_threads}}},
      {"generic_path",
       {{"row_ptr", code.generic.row_ptr.values.size()},
        {"col_idx", code.generic.col_idx.values.size()},
        {"weight_bits", code.generic.weight_bits.values.size()}}},
      // The balanced family's pieces as checked (null for the other families): the rows they cover as
      // they must, the pieces of those rows, the rows cut into several, and the launch's blocks and slots.
      {"balanced", code.balanced ? Json{{"rows", result.balanced_rows},
                                        {"pieces", result.balanced_pieces},
                                        {"cut_rows", result.balanced_cut_rows},
                                        {"blocks", code.balanced_path.blocks.field.value.value_or(0)},
                                        {"slots", code.balanced_path.slots.field.value.value_or(0)}}
                                 : Json(nullptr)},
      // The tensor-core family's A as rebuilt from its arrays (null for the other families).
      {"tensor_core", code.tensor_core ? Json{{"k", code.dtype == DType::kTf32 ? 4 : 8},
                                              {"windows", result.tc_windows},
                                              {"window_rows", result.tc_rows},  // spmmc_tc_rows: 8 or 16
                                              {"blocks", result.tc_blocks},
                                              {"vectors", result.tc_vectors},
                                              {"padding_vectors", result.tc_padding},
                                              // The staged form's chunks of B's rows (null: the direct kernel only).
                                              {"chunks", code.tc.chunk_block.found && code.tc.chunks.field.value
                                                             ? Json(*code.tc.chunks.field.value)
                                                             : Json(nullptr)},
                                              {"chunk_rows", code.tc.chunk_block.found && code.tc.chunk_rows.field.value
                                                                 ? Json(*code.tc.chunk_rows.field.value)
                                                                 : Json(nullptr)}}
                                       : Json(nullptr)},
      {"info", info_json},
      {"code_nnz", result.code_nnz},
      {"rows_written", result.rows_written},
      {"total_differences", result.total_differences},
      {"rows_differing", result.rows_differing},
      {"differences", differences},
      {"notes", code.notes},
      {"totals",
       {{"tiles", code.tiles.size()},
        {"statements", range_of(code.tiles, &AnalyzedTile::statements).sum},
        {"loads", range_of(code.tiles, &AnalyzedTile::loads).sum},
        {"fmas", range_of(code.tiles, &AnalyzedTile::fmas).sum},
        {"dead_loads", range_of(code.tiles, &AnalyzedTile::dead_loads).sum}}},
      {"tiles", tiles},
      {"source_bytes", code.source_bytes},
      {"seconds",
       {{"read_weights", read_seconds},
        {"parse", code.parse_seconds},
        {"analyze", code.analyze_seconds},
        {"compare", compare_seconds}}},
  };
}

void print_per_tile(const EmittedKernelAnalysis& code) {
  std::printf("%-14s %8s %6s %10s %8s %8s %10s\n", "tile", "blocks", "rows", "statements", "loads", "fmas", "dead_loads");
  for (const AnalyzedTile& t : code.tiles) {
    std::string blocks;
    for (size_t i = 0; i < t.blocks.size(); ++i) blocks += (i ? "," : "") + std::to_string(t.blocks[i]);
    std::printf("%-14s %8s %6zu %10lld %8lld %8lld %10lld\n", t.function.c_str(), blocks.c_str(), rows_of(t),
                static_cast<long long>(t.statements), static_cast<long long>(t.loads), static_cast<long long>(t.fmas),
                static_cast<long long>(t.dead_loads));
  }
}

int run_verify(const Args& args) {
  using Clock = std::chrono::steady_clock;
  const std::string& cu = args.positional.at(0);
  const auto against = args.get("--against");
  if (!against) fail_usage("spmmc verify needs --against WEIGHTS (the matrix file the kernel was compiled from)");
  CompareOptions options;
  options.weights_name = std::filesystem::path(*against).filename().string();
  options.max_reported = static_cast<size_t>(args.get_int("--max-errors", 10, 1, 1000000));

  auto start = Clock::now();
  const LoadedMatrix m = read_matrix_file(*against, read_options_from(args));
  const double read_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const EmittedKernelAnalysis code = analyze_emitted_kernel(cu);
  start = Clock::now();
  const WeightsComparison result = compare_with_weights(code, m.csr, options);
  const double compare_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  for (const CodeDiagnostic& d : result.differences) print_error(d.where.str(), d.message);
  if (result.total_differences > static_cast<int64_t>(result.differences.size()))
    std::fprintf(stderr, "spmmc verify: %lld more difference%s not shown (--max-errors)\n",
                 static_cast<long long>(result.total_differences - static_cast<int64_t>(result.differences.size())),
                 result.total_differences - static_cast<int64_t>(result.differences.size()) == 1 ? "" : "s");
  for (const std::string& note : code.notes) std::fprintf(stderr, "note: %s\n", note.c_str());

  if (args.has("--json")) {
    std::fputs((verify_json(cu, *against, m.csr, code, result, read_seconds, compare_seconds).dump(2) + "\n").c_str(),
               stdout);
  } else {
    if (args.has("--per-tile") && code.analyzed) print_per_tile(code);
    const size_t tiles = code.tiles.size();
    // The tensor-core windows' height (spmmc_tc_rows; "?" where the file's is missing or not 8 or 16).
    const std::string tc_rows = result.tc_rows > 0 ? std::to_string(result.tc_rows) : std::string("?");
    const std::string stats =
        code.analyzed && code.tensor_core
            ? fmt::format("; the tensor-core family ({} windows of {} rows, {} blocks of {} {} x 1 vectors: {} vectors and {} "
                          "padding{}; and the generic path's CSR arrays; checked element by element)",
                          result.tc_windows, tc_rows, result.tc_blocks, code.dtype == DType::kTf32 ? 4 : 8, tc_rows,
                          result.tc_vectors, result.tc_padding,
                          code.tc.chunk_block.found && code.tc.chunks.field.value
                              ? fmt::format(", the staged kernel's {} chunk{} of B's rows", *code.tc.chunks.field.value,
                                            *code.tc.chunks.field.value == 1 ? "" : "s")
                              : std::string())
        : code.analyzed && code.balanced
            ? fmt::format("; the balanced family (A's CSR arrays and its {} pieces in {} blocks of {} slots, {} row{} cut; "
                          "checked element by element)",
                          result.balanced_pieces, code.balanced_path.blocks.field.value.value_or(0),
                          code.balanced_path.slots.field.value.value_or(0), result.balanced_cut_rows,
                          result.balanced_cut_rows == 1 ? "" : "s")
        : code.analyzed && code.generic_only ? std::string("; the generic family (A's CSR arrays, checked element by element)")
        : code.analyzed ? fmt::format("; {} tile functions, {} column{} per thread, {}, {}, {}", tiles,
                                    code.columns.cols_per_thread, code.columns.cols_per_thread == 1 ? "" : "s",
                                    range_text("statements", range_of(code.tiles, &AnalyzedTile::statements), tiles),
                                    range_text("loads", range_of(code.tiles, &AnalyzedTile::loads), tiles),
                                    range_text("FMAs", range_of(code.tiles, &AnalyzedTile::fmas), tiles))
                      : std::string();
    const std::string timing = fmt::format("; parsed in {:.2f} s, analysed in {:.2f} s", code.parse_seconds,
                                           code.analyze_seconds + compare_seconds);
    if (result.match) {
      std::printf("spmmc verify: %s matches %s: %d x %d, %lld non-zeros%s%s%s\n", cu.c_str(), options.weights_name.c_str(),
                  m.csr.rows, m.csr.cols, static_cast<long long>(result.weights_nnz),
                  code.dtype == DType::kFp32 ? "" : fmt::format(" (rounded to {})", dtype_name(code.dtype)).c_str(), stats.c_str(),
                  timing.c_str());
    } else if (!code.parsed) {
      std::printf("spmmc verify: %s does not parse (%lld error%s above)\n", cu.c_str(),
                  static_cast<long long>(code.errors.size()), code.errors.size() == 1 ? "" : "s");
    } else if (!code.analyzed) {
      std::printf("spmmc verify: %s is not code the verifier recognises (%lld error%s above)\n", cu.c_str(),
                  static_cast<long long>(code.errors.size()), code.errors.size() == 1 ? "" : "s");
    } else {
      std::printf("spmmc verify: %s does not match %s: %lld difference%s, %lld row%s of C differing; %lld non-zeros in %s, "
                  "%lld in the code%s\n",
                  cu.c_str(), options.weights_name.c_str(), static_cast<long long>(result.total_differences),
                  result.total_differences == 1 ? "" : "s", static_cast<long long>(result.rows_differing),
                  result.rows_differing == 1 ? "" : "s", static_cast<long long>(result.weights_nnz),
                  options.weights_name.c_str(), static_cast<long long>(result.code_nnz), stats.c_str());
    }
  }
  return static_cast<int>(result.match ? ExitCode::kOk : ExitCode::kDataError);
}

}  // namespace

Command verify_command() {
  Command c;
  c.name = "verify";
  c.summary = "check an emitted NAME.cu against the weights it was compiled from (Clang AST)";
  c.usage = "spmmc verify NAME.cu --against WEIGHTS [options]";
  c.description =
      "Parses NAME.cu with Clang as CUDA device code (no CUDA headers: a small built-in prelude stands in;\n"
      "NAME.h is read from beside it when there) and reconstructs, from the AST and each tile's inline PTX,\n"
      "every (row, column, value) the unrolled kernels multiply, for each of a thread's V columns, and the\n"
      "row of C each sum is stored to. Checks them against WEIGHTS, read with the same options as 'spmmc\n"
      "compile': every non-zero exactly once with the same float bits, in the right row and lane, in column\n"
      "order; every row of C written exactly once (empty rows store +0); every tile dispatched by exactly one\n"
      "case of one kernel, the launch tables, every kernel after the first waiting for its predecessor; the\n"
      "thread-to-column mapping; the generic path's CSR arrays; and NAME_info()'s m, k, nnz, m1, n1,\n"
      "cols_per_thread, a_tiles, name and weights_sha256. Files of the tensor-core family (--dtype\n"
      "fp16|bf16|tf32) have A rebuilt from their windows (of 8 or 16 rows), vectors and values (half precision\n"
      "or tf32), each row of A in one window; there tf32 files must round B with cvt.rna.tf32.f32 (tf32 files\n"
      "of the CUDA-core families are float32's code with A rounded to tf32).\n"
      "Reports per tile function the PTX instructions, global loads and FMAs, and (--json) the kernels in\n"
      "launch order. Indices in messages are 0-based, as in the code. Exit 0 on a match; 65 when the code\n"
      "differs, does not parse or is not recognised (the first differences are named, file:line:column); 66\n"
      "when a file is missing. See docs/verify.md.";
  c.options = {
      {"--against", "WEIGHTS", "the matrix file the kernel claims to compute (required)"},
      {"--json", "", "print a JSON report (schema spmmc.verify/1) instead of the summary"},
      {"--per-tile", "", "print the statements, loads and FMAs of every tile function"},
      {"--max-errors", "N", "differences to name in detail (default 10; all are counted)"},
  };
  for (auto& o : read_option_specs()) c.options.push_back(o);
  c.min_positional = c.max_positional = 1;
  c.run = run_verify;
  return c;
}

}  // namespace spmmc::cli
