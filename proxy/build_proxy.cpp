#include "proxy/build_proxy.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "codegen/embedded_templates.h"
#include "codegen/emit_unrolled_kernel.h"
#include "codegen/fill_template.h"
#include "codegen/kernel_program.h"
#include "codegen/print_tile_ptx.h"
#include "compiler/common/diagnostics.h"

namespace spmmc {
namespace {

// The columns (ascending) and values (by column, then row) of the medoid's block function.
struct MedoidCode {
  std::vector<int32_t> columns;
  std::vector<float> values;
};

MedoidCode medoid_code(const Csr& a, const RowTiling& tiling, const BlockFunction& f) {
  MedoidCode code;
  if (f.zero_tile) return code;
  std::vector<std::pair<int32_t, float>> entries;
  for (int32_t i = f.first_row_index; i < f.first_row_index + f.rows; ++i) {
    const int32_t row = tiling.rows[i];
    for (int32_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p) entries.emplace_back(a.col_idx[p], a.values[p]);
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [col, value] : entries) {
    if (code.columns.empty() || code.columns.back() != col) code.columns.push_back(col);
    code.values.push_back(value);
  }
  return code;
}

// `count` distinct columns of B: the medoid's, then (when the centroid has more loads than the
// medoid) the lowest columns it does not use.
std::vector<int32_t> proxy_columns(const std::vector<int32_t>& medoid, int64_t count, int32_t k) {
  std::vector<int32_t> cols(medoid.begin(), medoid.begin() + std::min<int64_t>(count, static_cast<int64_t>(medoid.size())));
  for (int32_t c = 0; static_cast<int64_t>(cols.size()) < count; ++c) {
    if (c >= k) {  // more loads than columns cannot happen (centroid loads <= K); repeat to be safe
      cols.push_back(cols[cols.size() % std::max<size_t>(1, medoid.size())]);
      continue;
    }
    if (!std::binary_search(medoid.begin(), medoid.end(), c)) cols.push_back(c);
  }
  return cols;
}

// One proxy block function (Fig. 8d) as a tile of the kernel program: `fn.loads` columns of B
// (one load each), `fn.fmas` FMAs spread evenly over them (Bresenham) and round-robin over the
// `fn.rows` accumulators (at most one per accumulator per column: fn.fmas <= loads x rows), the
// weights the medoid's values in turn; then one store per row (rows 0 .. fn.rows - 1 of the
// block's own part of the output). Printed like a real tile, so the proxy's code is the kernel's.
TileProgram proxy_tile(const ProxyBlockFunction& fn, const std::vector<int32_t>& columns, const std::vector<float>& values) {
  TileProgram t;
  for (int32_t r = 0; r < fn.rows; ++r) t.rows.push_back(r);
  int64_t fma = 0;
  for (int64_t j = 0; j < fn.loads; ++j) {
    TileColumn column{columns[static_cast<size_t>(j)], {}};
    const int64_t until = (j + 1) * fn.fmas / fn.loads;  // totals exactly fn.fmas
    for (; fma < until; ++fma) {
      const float w = values.empty() ? 1.0f : values[static_cast<size_t>(fma) % values.size()];
      column.fmas.push_back({static_cast<int32_t>(fma % fn.rows), w});
    }
    std::sort(column.fmas.begin(), column.fmas.end(), [](const TileFma& x, const TileFma& y) { return x.slot < y.slot; });
    t.columns.push_back(std::move(column));
  }
  return t;
}

}  // namespace

ProxyKernel build_proxy(const Csr& a, const RowTiling& tiling, const ProxyRequest& request) {
  SPMMC_CHECK(a.nnz() > 0, "a proxy needs a matrix with non-zeros");
  SPMMC_CHECK(request.max_threads >= 32 && request.max_threads <= 1024 && request.max_threads % 32 == 0 &&
                  request.min_blocks >= 1 && request.max_clusters >= 1 &&
                  (request.cols_per_thread == 1 || request.cols_per_thread == 2 || request.cols_per_thread == 4),
              "a valid proxy request");
  ProxyKernel p;
  p.nvrtc_options = unrolled_nvrtc_options();
  p.m1 = tiling.m1;
  p.max_threads = request.max_threads;
  p.min_blocks = request.min_blocks;
  p.cols_per_thread = request.cols_per_thread;
  p.name = fmt::format("proxy_m{}_v{}_t{}_b{}.cu", p.m1, p.cols_per_thread, p.max_threads, p.min_blocks);
  const double density = static_cast<double>(a.nnz()) / (static_cast<double>(a.rows) * static_cast<double>(a.cols));
  p.iteration_cap = static_cast<int64_t>(std::floor(300.0 / density));  // 300 / (1 - sparsity)

  p.real_functions = block_functions(a, tiling);
  p.clustering = cluster_block_functions(p.real_functions, request.max_clusters);

  fmt::memory_buffer functions, dispatch;
  for (size_t c = 0; c < p.clustering.clusters.size(); ++c) {
    const BlockCluster& cluster = p.clustering.clusters[c];
    const BlockFunction& medoid = p.real_functions[static_cast<size_t>(cluster.medoid)];
    ProxyBlockFunction fn;
    fn.rows = std::max(1, medoid.rows);
    const int64_t nnc = std::llround(cluster.loads);
    fn.loads = std::min(nnc, p.iteration_cap);
    // The cluster's average FMAs per load, kept over the truncated loop; never fewer than one
    // FMA per load (every real load feeds at least one) nor more than one per row.
    if (fn.loads > 0) {
      fn.fmas = std::llround(cluster.fmas / cluster.loads * static_cast<double>(fn.loads));
      fn.fmas = std::clamp<int64_t>(fn.fmas, fn.loads, fn.loads * fn.rows);
    }
    const MedoidCode code = medoid_code(a, tiling, medoid);
    std::string function;
    print_tile_ptx(function, static_cast<int32_t>(c), proxy_tile(fn, proxy_columns(code.columns, fn.loads, a.cols), code.values),
                   p.cols_per_thread, kDefaultLoadsAhead);
    fmt::format_to(std::back_inserter(functions), "{}", function);
    fmt::format_to(std::back_inserter(dispatch), "      case {0}: spmmc_tile_{0}(b, c, ld); break;\n", c);
    p.functions.push_back(fn);
  }
  for (size_t f = 0; f < p.real_functions.size(); ++f) {
    p.real_loads += p.real_functions[f].loads;
    p.real_fmas += p.real_functions[f].fmas;
    p.proxy_loads += p.functions[static_cast<size_t>(p.clustering.cluster_of[f])].loads;
    p.proxy_fmas += p.functions[static_cast<size_t>(p.clustering.cluster_of[f])].fmas;
  }
  const std::string header = fmt::format(
      "// spmmc proxy for M1 = {}, V = {}, at most {} threads per block, {} block(s) per SM: {} block functions in {} "
      "clusters, NNC_P <= {}.\n",
      p.m1, p.cols_per_thread, p.max_threads, p.min_blocks, p.real_functions.size(), p.clustering.clusters.size(),
      p.iteration_cap);
  p.cu = fill_template(embedded_template("proxy.cu"),
                       {{"HEADER_COMMENT", header},
                        {"M1", std::to_string(p.m1)},
                        {"V", std::to_string(p.cols_per_thread)},
                        {"MAX_THREADS", std::to_string(p.max_threads)},
                        {"MIN_BLOCKS", std::to_string(p.min_blocks)},
                        {"BLOCK_FUNCTIONS", fmt::to_string(functions)},
                        {"DISPATCH", fmt::to_string(dispatch)}},
                       "proxy.cu");
  return p;
}

double proxy_code_share(const ProxyKernel& p) {
  int64_t proxy = 0, real = 0;
  for (const ProxyBlockFunction& f : p.functions) proxy += f.loads + f.fmas;
  for (const BlockFunction& f : p.real_functions) real += f.loads + f.fmas;
  return real > 0 ? static_cast<double>(proxy) / static_cast<double>(real) : 1.0;
}

}  // namespace spmmc
