// spmmc inspect FILE [--json]: what a matrix file holds and how it was read.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/formats/read_matrix.h"
#include "compiler/planning/matrix_stats.h"
#include "tools/spmmc/commands.h"

namespace spmmc::cli {
namespace {

// [lo, hi] of power-of-two histogram bucket k (see MatrixStats::row_length_histogram).
std::pair<int64_t, int64_t> bucket_range(size_t k) {
  if (k == 0) return {0, 0};
  return {int64_t{1} << (k - 1), (int64_t{1} << k) - 1};
}

nlohmann::ordered_json summary_json(const LengthSummary& s) {
  return {{"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"std", s.std}, {"cov", s.cov},
          {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"empty", s.empty}};
}

nlohmann::ordered_json inspect_json(const std::string& path, const LoadedMatrix& m, const MatrixStats& s) {
  nlohmann::ordered_json histogram = nlohmann::ordered_json::array();
  for (size_t k = 0; k < s.row_length_histogram.size(); ++k) {
    const auto [lo, hi] = bucket_range(k);
    histogram.push_back({{"min", lo}, {"max", hi}, {"rows", s.row_length_histogram[k]}});
  }
  const ReadReport& r = m.report;
  nlohmann::ordered_json values = {{"origin", r.values_origin},
                                   {"stored_entries", r.stored_entries},
                                   {"explicit_zeros_dropped", r.explicit_zeros_dropped},
                                   {"duplicates_summed", r.duplicates_summed},
                                   {"mirrored_entries", r.mirrored_entries},
                                   {"pruned_by_threshold", r.pruned_by_threshold},
                                   {"min_abs", s.min_abs_value},
                                   {"max_abs", s.max_abs_value}};
  nlohmann::ordered_json j = {{"schema", "spmmc.inspect/1"},
                              {"file", path},
                              {"format", r.format},
                              {"detail", r.detail}};
  if (!r.tensor.empty()) j["tensor"] = r.tensor;
  j["rows"] = s.rows;
  j["cols"] = s.cols;
  j["nnz"] = s.nnz;
  j["density"] = s.density;
  j["sparsity"] = s.sparsity;
  j["values"] = values;
  j["row_lengths"] = summary_json(s.row_lengths);
  j["col_lengths"] = summary_json(s.col_lengths);
  j["row_length_histogram"] = histogram;
  j["load_seconds"] = r.load_seconds;
  return j;
}

std::string summary_text(const LengthSummary& s) {
  return fmt::format("min {}  p50 {}  p90 {}  p99 {}  max {}   mean {:.2f} ± {:.2f} (cov {:.3f}); {} empty", s.min,
                     s.p50, s.p90, s.p99, s.max, s.mean, s.std, s.cov, s.empty);
}

std::string inspect_text(const std::string& path, const LoadedMatrix& m, const MatrixStats& s) {
  const ReadReport& r = m.report;
  std::string out;
  out += fmt::format("{:<14}{}\n", "file", path);
  out += fmt::format("{:<14}{}{}{}\n", "format", r.format, r.detail.empty() ? "" : " (" + r.detail + ")",
                     r.tensor.empty() ? "" : ", tensor '" + r.tensor + "'");
  out += fmt::format("{:<14}{} x {}\n", "shape", s.rows, s.cols);
  out += fmt::format("{:<14}{}   density {:.6f}, sparsity {:.6f}\n", "nnz", s.nnz, s.density, s.sparsity);
  out += fmt::format("{:<14}{}\n", "values", r.values_origin);
  out += fmt::format("{:<14}{} stored; {} explicit zeros dropped, {} duplicates summed, {} mirrored, {} pruned by threshold\n",
                     "entries", r.stored_entries, r.explicit_zeros_dropped, r.duplicates_summed, r.mirrored_entries,
                     r.pruned_by_threshold);
  if (s.nnz > 0) out += fmt::format("{:<14}{:.6g} .. {:.6g}\n", "|value|", s.min_abs_value, s.max_abs_value);
  out += fmt::format("{:<14}{}\n", "row length", summary_text(s.row_lengths));
  out += fmt::format("{:<14}{}\n", "column length", summary_text(s.col_lengths));
  out += "row-length histogram\n";
  int64_t widest = 1;
  for (int64_t count : s.row_length_histogram) widest = std::max(widest, count);
  // Bucket 0 (empty rows) always shows; empty buckets below the first non-empty one do not.
  size_t first = 1;
  while (first < s.row_length_histogram.size() && s.row_length_histogram[first] == 0) ++first;
  for (size_t k = 0; k < s.row_length_histogram.size(); ++k) {
    if (k > 0 && k < first) continue;
    const auto [lo, hi] = bucket_range(k);
    const int64_t count = s.row_length_histogram[k];
    const std::string range = lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi);
    out += fmt::format("  {:>13}  {:>9}  {}\n", range, count, std::string(static_cast<size_t>(40 * count / widest), '#'));
  }
  out += fmt::format("{:<14}{:.1f} ms\n", "load time", r.load_seconds * 1e3);
  return out;
}

int run_inspect(const Args& args) {
  const std::string& path = args.positional.at(0);
  const LoadedMatrix m = read_matrix_file(path, read_options_from(args));
  const MatrixStats s = compute_matrix_stats(m.csr);
  if (args.has("--json")) {
    std::fputs((inspect_json(path, m, s).dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(inspect_text(path, m, s).c_str(), stdout);
  }
  return 0;
}

}  // namespace

Command inspect_command() {
  Command c;
  c.name = "inspect";
  c.summary = "read a matrix file and print its shape, sparsity and row-length distribution";
  c.usage = "spmmc inspect FILE [options]";
  c.description =
      "Reads FILE (.mtx, .smtx, .npy, .npz, .safetensors) and reports its shape, non-zeros, sparsity,\n"
      "row- and column-length distributions, empty rows and columns, how values were obtained and\n"
      "how long loading took. --json prints the same as a JSON object (schema spmmc.inspect/1,\n"
      "documented in docs/input-formats.md).";
  c.options = read_option_specs();
  c.options.push_back({"--json", "", "print JSON instead of text"});
  c.min_positional = c.max_positional = 1;
  c.run = run_inspect;
  return c;
}

}  // namespace spmmc::cli
