#include "verify/compare_with_weights.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <optional>

#include <fmt/format.h>

#include "compiler/sha256.h"

namespace spmmc {
namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// One store of a row of C by one block.
struct Write {
  const AnalyzedTile* tile;
  const AnalyzedStore* store;
  int64_t block;
};

class Comparison {
 public:
  Comparison(const EmittedKernelAnalysis& code, const Csr& w, const CompareOptions& options, WeightsComparison& out)
      : code_(code), w_(w), options_(options), out_(out) {}

  void run() {
    out_.weights_nnz = w_.nnz();
    if (!code_.analyzed) {
      for (const CodeDiagnostic& d : code_.errors) report(d.where, d.message);
      if (code_.errors.empty()) report({code_.file, 0, 0}, "the code could not be analysed");
      return;
    }
    check_info();
    std::vector<std::vector<Write>> writes(static_cast<size_t>(w_.rows));
    for (const AnalyzedBlock& block : code_.blocks)
      for (int32_t t : block.tiles) {
        const AnalyzedTile& tile = code_.tiles[static_cast<size_t>(t)];
        for (const AnalyzedStore& store : tile.stores) {
          if (store.row < 0 || store.row >= w_.rows) {
            report(store.where, fmt::format("{} stores row {} of C, but {} has {} rows (0-based indices)", tile.function,
                                            store.row, options_.weights_name, w_.rows));
            continue;
          }
          writes[static_cast<size_t>(store.row)].push_back({&tile, &store, block.block});
        }
      }
    for (int32_t r = 0; r < w_.rows; ++r) {
      const int64_t before = out_.total_differences;
      check_row(r, writes[static_cast<size_t>(r)]);
      if (out_.total_differences != before) ++out_.rows_differing;
    }
    if (sha_difference_ < out_.differences.size())
      out_.differences[sha_difference_].message += out_.rows_differing == 0
                                                       ? " (the products match the weights: the info object was edited)"
                                                       : ": the code was generated for other weights, or edited";
    out_.match = out_.total_differences == 0;
  }

 private:
  void report(const CodeLocation& where, std::string message) {
    ++out_.total_differences;
    if (out_.differences.size() < options_.max_reported) out_.differences.push_back({where, std::move(message)});
  }

  CodeLocation whole_file() const { return {code_.file, 0, 0}; }

  void check_count(const InfoField<int64_t>& field, const char* name, int64_t want, const std::string& what) {
    if (!field.value) {
      report(field.where.file.empty() ? code_.info.where : field.where,
             fmt::format("cannot evaluate the info object's {}", name));
    } else if (*field.value != want) {
      report(field.where, fmt::format("the info object says {} = {}, but {}", name, *field.value, what));
    }
  }

  void check_info() {
    const KernelInfoFields& info = code_.info;
    if (!info.found) {
      report(whole_file(), "no spmmc_kernel_info object (what NAME_info() returns) in the code");
      return;
    }
    const std::string& weights = options_.weights_name;
    check_count(info.m, "m", w_.rows, fmt::format("{} has {} rows", weights, w_.rows));
    check_count(info.k, "k", w_.cols, fmt::format("{} has {} columns", weights, w_.cols));
    check_count(info.nnz, "nnz", w_.nnz(), fmt::format("{} has {} non-zeros", weights, w_.nnz()));
    check_count(info.a_tiles, "a_tiles", code_.grid_x, fmt::format("the launch has {} blocks along x", code_.grid_x));
    const std::string hash = weights_sha256(w_);
    if (!info.weights_sha256.value) {
      report(info.where, "cannot read the info object's weights_sha256");
    } else if (*info.weights_sha256.value != hash) {
      sha_difference_ = out_.differences.size();
      report(info.weights_sha256.where, fmt::format("the info object's weights_sha256 is '{}', but {} hashes to {}",
                                                    *info.weights_sha256.value, weights, hash));
    }
  }

  void check_row(int32_t r, const std::vector<Write>& writes) {
    if (writes.empty()) {
      const auto [where, why] = why_never_written(r);
      report(where, fmt::format("row {} of C is never written{}{}", r,
                                w_.row_length(r) ? fmt::format(" (row {} of A has {} non-zeros)", r, w_.row_length(r))
                                                 : std::string(),
                                why));
      return;
    }
    if (writes.size() > 1) {
      std::string by;
      for (size_t i = 0; i < writes.size() && i < 4; ++i)
        by += fmt::format("{}{} in block {} at {}", i ? ", " : "", writes[i].tile->function, writes[i].block,
                          writes[i].store->where.str());
      if (writes.size() > 4) by += ", ...";
      report(writes[1].store->where, fmt::format("row {} of C is written {} times ({})", r, writes.size(), by));
    }
    const AnalyzedStore& store = *writes[0].store;
    std::vector<AnalyzedProduct> products = store.products;
    out_.code_nnz += static_cast<int64_t>(products.size());
    out_.rows_written += 1;
    std::stable_sort(products.begin(), products.end(),
                     [](const AnalyzedProduct& a, const AnalyzedProduct& b) { return a.column < b.column; });
    const int32_t length = w_.row_length(r);
    if (static_cast<int64_t>(products.size()) != length)
      report(store.where, fmt::format("row {} of A has {} non-zero{} in {}, {} in {}", r, length, length == 1 ? "" : "s",
                                      options_.weights_name, products.size(), code_.file));
    const std::string& weights = options_.weights_name;
    size_t i = 0;
    int32_t p = w_.row_ptr[r];
    const int32_t end = w_.row_ptr[r + 1];
    while (i < products.size() || p < end) {
      if (p == end || (i < products.size() && products[i].column < w_.col_idx[p])) {
        const AnalyzedProduct& extra = products[i++];
        if (extra.column < 0 || extra.column >= w_.cols)
          report(extra.where, fmt::format("A({}, {}) = {}: column {} is outside A, which has {} columns in {}", r,
                                          extra.column, hex_float(extra.value), extra.column, w_.cols, weights));
        else
          report(extra.where, fmt::format("A({}, {}) = {} is in the code but not in {}", r, extra.column,
                                          hex_float(extra.value), weights));
        continue;
      }
      if (i == products.size() || w_.col_idx[p] < products[i].column) {
        report(store.where, fmt::format("missing: A({}, {}) = {} ({}) is never multiplied into row {} of C", r,
                                        w_.col_idx[p], hex_float(w_.values[p]), weights, r));
        ++p;
        continue;
      }
      const AnalyzedProduct& first = products[i];
      if (!same_bits(first.value, w_.values[p]))
        report(first.where, fmt::format("A({}, {}) is {} in the code but {} in {}", r, first.column,
                                        hex_float(first.value), hex_float(w_.values[p]), weights));
      size_t same = i + 1;
      while (same < products.size() && products[same].column == first.column) ++same;
      if (same - i > 1)
        report(products[i + 1].where, fmt::format("A({}, {}) is multiplied into row {} of C {} times (first at {})", r,
                                                  first.column, r, same - i, first.where.str()));
      i = same;
      ++p;
    }
  }

  // True when `products` are exactly row r of the weights (columns and bits, in any order).
  bool holds_row(int32_t r, std::vector<AnalyzedProduct> products) const {
    if (static_cast<int64_t>(products.size()) != w_.row_length(r)) return false;
    std::stable_sort(products.begin(), products.end(),
                     [](const AnalyzedProduct& a, const AnalyzedProduct& b) { return a.column < b.column; });
    for (int32_t p = w_.row_ptr[r], i = 0; p < w_.row_ptr[r + 1]; ++p, ++i)
      if (products[static_cast<size_t>(i)].column != w_.col_idx[p] ||
          !same_bits(products[static_cast<size_t>(i)].value, w_.values[p]))
        return false;
    return true;
  }

  // A likely cause of an unwritten row: a tile function that stores it but no block calls, or
  // a register holding exactly its products that nothing stores.
  std::pair<CodeLocation, std::string> why_never_written(int32_t r) const {
    for (const auto* tiles : {&code_.tiles, &code_.uncalled_tiles})
      for (const AnalyzedTile& tile : *tiles)
        if (tile.blocks.empty())
          for (const AnalyzedStore& store : tile.stores)
            if (store.row == r)
              return {store.where, fmt::format(": {} stores it here, but no block calls {}", tile.function, tile.function)};
    if (w_.row_length(r) > 0)
      for (const AnalyzedTile& tile : code_.tiles)
        for (const UnstoredSum& sum : tile.unstored)
          if (holds_row(r, sum.products))
            return {sum.where, fmt::format(": {} of {} sums its products but is never stored", sum.variable, tile.function)};
    return {whole_file(), {}};
  }

  const EmittedKernelAnalysis& code_;
  const Csr& w_;
  const CompareOptions& options_;
  WeightsComparison& out_;
  size_t sha_difference_ = std::numeric_limits<size_t>::max();  // its index in out_.differences
};

}  // namespace

std::string hex_float(float value) { return fmt::format("{:a}", value); }

WeightsComparison compare_with_weights(const EmittedKernelAnalysis& code, const Csr& weights,
                                       const CompareOptions& options) {
  WeightsComparison out;
  Comparison(code, weights, options, out).run();
  return out;
}

}  // namespace spmmc
