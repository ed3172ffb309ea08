#include "verify/compare_with_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"
#include "compiler/common/dtype.h"
#include "compiler/common/sha256.h"

namespace spmmc {
namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

uint32_t bits_of(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float float_of(uint32_t bits) {
  float f = 0.0f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The tensor-core family's shape (kernel_tensor_core.cuh, the m16n8k8 MMA; and
// kernel_tensor_core_tf32.cuh, m16n8k4): windows of spmmc_tc_rows rows (8, or 16 in fp16 and bf16:
// H = spmmc_tc_rows / 8 halves of 8 rows, an MMA each), blocks of 8 vectors (fp16, bf16) or 4
// (tf32), 32 lanes per warp each holding one word of a block's values per half (two 16-bit values,
// or one tf32 value), 64 columns of C per warp, 8 per lane.
constexpr int64_t kTcHalfRows = 8;  // rows of a window per MMA (its N)
constexpr int64_t kTcWordsPerBlock = 32;  // per half
constexpr int64_t kTcColsPerWarp = 64;
constexpr int64_t kTcColsPerLane = 8;

// The value of 16 bits of a half-precision dtype, decoded here rather than with
// compiler/common/dtype.h's from_half_bits, which the emitter's encoding shares a file with:
// float16 is 1 sign, 5 exponent (bias 15) and 10 fraction bits, bfloat16 the top half of a float.
float half_value(uint32_t bits, DType d) {
  if (d == DType::kBf16) {
    const uint32_t word = bits << 16;
    float f = 0.0f;
    std::memcpy(&f, &word, sizeof f);
    return f;
  }
  const bool negative = (bits & 0x8000u) != 0;
  const int exponent = static_cast<int>((bits >> 10) & 0x1fu);
  const uint32_t fraction = bits & 0x3ffu;
  float magnitude = 0.0f;
  if (exponent == 0x1f)
    magnitude = fraction ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(fraction), -24);  // subnormal: fraction x 2^-24
  else
    magnitude = std::ldexp(static_cast<float>(fraction | 0x400u), exponent - 25);  // 1.fraction x 2^(e - 15)
  return negative ? -magnitude : magnitude;
}

// One store of a lane of a row of C by one block.
struct Write {
  const AnalyzedTile* tile;
  const AnalyzedStore* store;
  const AnalyzedBlock* block;
};

// "1 time", "2 times".
std::string times_text(size_t n) { return fmt::format("{} time{}", n, n == 1 ? "" : "s"); }

std::string lanes_text(const std::vector<int32_t>& lanes) {
  std::string out = lanes.size() == 1 ? "lane " : "lanes ";
  for (size_t i = 0; i < lanes.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", lanes[i]);
  return out;
}

class Comparison {
 public:
  Comparison(const EmittedKernelAnalysis& code, const Csr& w, const CompareOptions& options, WeightsComparison& out)
      : code_(code), w_(w), options_(options), out_(out) {}

  void run() {
    out_.weights_nnz = w_.nnz();
    out_.weights_sha256 = weights_sha256(w_);
    if (!code_.analyzed) {
      for (const CodeDiagnostic& d : code_.errors) report(d.where, d.message);
      if (code_.errors.empty()) report({code_.file, 0, 0}, "the code could not be analysed");
      return;
    }
    lanes_ = code_.columns.found ? std::max<int64_t>(1, code_.columns.cols_per_thread) : 1;
    if (code_.tensor_core) {  // the tensor-core family: A rebuilt from its arrays, and the generic path beside it
      check_info();
      check_generic_path();
      check_tensor_core();
      if (sha_difference_ < out_.differences.size())
        out_.differences[sha_difference_].message += out_.total_differences == 1
                                                         ? " (the arrays match the weights: the info object was edited)"
                                                         : ": the code was generated for other weights, or edited";
      out_.match = out_.total_differences == 0;
      return;
    }
    if (code_.balanced) {  // the balanced family: the info object, the CSR arrays and the pieces its kernels run
      check_info();
      check_generic_path();
      check_balanced(code_.balanced_path);
      out_.match = out_.total_differences == 0;
      return;
    }
    if (code_.generic_only) {  // the generic family: the info object and the arrays the generic kernel reads
      check_info();
      check_generic_path();
      if (code_.balanced_path.pieces.found) check_balanced(code_.balanced_path);  // its balanced small-n path's pieces
      if (code_.balanced_mid.pieces.found) check_balanced_mid();                   // and its second table's
      out_.code_nnz = static_cast<int64_t>(code_.generic.col_idx.values.size());
      out_.match = out_.total_differences == 0;
      return;
    }
    check_info();
    check_launches();
    check_dispatch();
    for (const AnalyzedKernel& kernel : code_.kernels) check_columns(kernel);
    check_generic_path();
    if (code_.balanced_path.pieces.found) check_balanced(code_.balanced_path);  // the balanced small-n path's pieces
    if (code_.balanced_mid.pieces.found) check_balanced_mid();                   // and its second table's
    check_tiles();
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
          if (store.lane < 0 || store.lane >= lanes_) {
            report(store.where, fmt::format("{} stores C({}, col + {}), but a thread has {} column{} (col .. col + {}): it "
                                            "writes another thread's column",
                                            tile.function, store.row, store.lane, lanes_, lanes_ == 1 ? "" : "s",
                                            lanes_ - 1));
            continue;
          }
          writes[static_cast<size_t>(store.row)].push_back({&tile, &store, &block});
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

  // " (lane 1)" when a message concerns some lanes of a thread's columns only.
  std::string lane_suffix(const std::vector<int32_t>& lanes, size_t present) const {
    if (lanes_ == 1 || lanes.size() == present) return {};
    return " (" + lanes_text(lanes) + ")";
  }

  // ---- whole-file checks -----------------------------------------------------------------------

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
    if (code_.tensor_core) {
      // The tensor-core family's shape (kernel_tensor_core.cuh): a window of spmmc_tc_rows rows per
      // warp, 64 columns of C per warp, 8 per lane of a row; its A-tiles are the windows the kernel
      // loops over. (A missing or wrong spmmc_tc_rows is reported by check_tc_rows.)
      const InfoField<int64_t>& windows = code_.tc.windows.field;
      if (windows.value)
        check_count(info.a_tiles, "a_tiles", *windows.value,
                    fmt::format("the tensor-core kernel has {} windows (spmmc_tc_windows)", *windows.value));
      if (const std::optional<int64_t> rows = tc_rows_constant())
        check_count(info.m1, "m1", *rows,
                    fmt::format("a window of the tensor-core family has {} rows (spmmc_tc_rows)", *rows));
      check_count(info.n1, "n1", kTcColsPerWarp, "a warp of the tensor-core kernel computes 64 columns of C");
      check_count(info.cols_per_thread, "cols_per_thread", kTcColsPerLane,
                  "each lane of the tensor-core kernel stores 8 adjacent columns of its rows");
    } else if (code_.generic_only || code_.balanced) {
      check_count(info.a_tiles, "a_tiles", 0,
                  code_.balanced ? "the balanced family has no A-tiles" : "the generic family has no A-tiles");
    } else {
      check_count(info.a_tiles, "a_tiles", code_.grid_x,
                  fmt::format("the launches have {} blocks along x in all", code_.grid_x));
    }
    if (code_.columns.found) {
      check_count(info.cols_per_thread, "cols_per_thread", code_.columns.cols_per_thread,
                  fmt::format("each thread of {} computes {} column{} (threadIdx.x * {})", code_.kernel,
                              code_.columns.cols_per_thread, code_.columns.cols_per_thread == 1 ? "" : "s",
                              code_.columns.cols_per_thread));
      check_count(info.n1, "n1", code_.columns.n1,
                  fmt::format("a block of {} computes {} columns per B-tile", code_.kernel, code_.columns.n1));
    }
    if (info.m1.value) {
      for (const AnalyzedTile& tile : code_.tiles) {
        std::set<int64_t> rows;
        for (const AnalyzedStore& s : tile.stores) rows.insert(s.row);
        if (static_cast<int64_t>(rows.size()) > *info.m1.value) {
          report(info.m1.where, fmt::format("the info object says m1 = {}, but {} stores {} rows", *info.m1.value,
                                            tile.function, rows.size()));
          break;
        }
      }
    }
    if (!info.name.value) {
      report(info.where, "cannot read the info object's name");
    } else if (!code_.entry_point.empty() && *info.name.value != code_.entry_point) {
      report(info.name.where, fmt::format("the info object's name is '{}', but the entry point (that launches the "
                                          "unrolled kernels) is '{}'",
                                          *info.name.value, code_.entry_point));
    }
    // What the analysis assumed: A compiled in, B and C row-major (row r at r x n), elements of
    // the type the kernels take (the info object's dtype when it names one, else the code's).
    const char* dtype = dtype_info_name(code_.dtype);
    const std::pair<const InfoField<std::string>*, std::pair<const char*, const char*>> described[] = {
        {&info.a_format,
         {"a_format", code_.tensor_core    ? "vector-blocks-constants"
                      : code_.balanced     ? "csr-pieces-constants"
                      : code_.generic_only ? "csr-constants"
                                           : "unrolled-constants"}},
        {&info.b_layout, {"b_layout", "row-major"}},
        {&info.c_layout, {"c_layout", "row-major"}},
        {&info.dtype, {"dtype", dtype}}};
    for (const auto& [field, what] : described) {
      if (!field->value)
        report(field->where.file.empty() ? info.where : field->where,
               fmt::format("cannot read the info object's {}", what.first));
      else if (*field->value != what.second)
        report(field->where, fmt::format("the info object says {} = '{}', but the code is '{}' (A's weights are {}, B "
                                         "and C row-major {}{})",
                                         what.first, *field->value, what.second,
                                         code_.tensor_core    ? fmt::format("{} x 1 vector blocks",
                                                                            tc_rows_constant().value_or(kTcHalfRows))
                                         : code_.balanced     ? "CSR arrays cut into pieces"
                                         : code_.generic_only ? "CSR arrays"
                                                              : "immediates",
                                         dtype,
                                         code_.dtype == DType::kFp32 ? ""
                                                                     : fmt::format(" ({})", dtype_c_type(code_.dtype))));
    }
    const std::string& hash = out_.weights_sha256;
    if (!info.weights_sha256.value) {
      report(info.where, "cannot read the info object's weights_sha256");
    } else if (*info.weights_sha256.value != hash) {
      sha_difference_ = out_.differences.size();
      report(info.weights_sha256.where, fmt::format("the info object's weights_sha256 is '{}', but {} hashes to {}",
                                                    *info.weights_sha256.value, weights, hash));
    }
  }

  // The launches against the kernels: COUNT is the number of unrolled kernels, the kernel table
  // names each once, and launch j has as many blocks along x as its kernel has cases; the blocks
  // add up to spmmc_a_tiles; a kernel launched after another waits for it before it ends.
  void check_launches() {
    const LaunchTable& t = code_.launch;
    if (t.count != static_cast<int64_t>(code_.kernels.size()))
      report(t.count_where, fmt::format("{} is {}, but the file has {} unrolled kernel{} (__global__ functions with a "
                                        "switch (blockIdx.x))",
                                        t.count_name, t.count, code_.kernels.size(), code_.kernels.size() == 1 ? "" : "s"));
    std::vector<std::vector<size_t>> launches_of(code_.kernels.size());
    int64_t blocks = 0;
    for (size_t j = 0; j < t.launches.size(); ++j) {
      const KernelLaunch& launch = t.launches[j];
      blocks += launch.grid_x;
      if (launch.kernel < 0) {
        report(launch.where, fmt::format("{}[{}] is {}, not an unrolled kernel (a __global__ function with a switch "
                                         "(blockIdx.x))",
                                         t.kernels_name, j, launch.function.empty() ? "null" : launch.function));
        continue;
      }
      const AnalyzedKernel& kernel = code_.kernels[static_cast<size_t>(launch.kernel)];
      auto& earlier = launches_of[static_cast<size_t>(launch.kernel)];
      if (!earlier.empty())
        report(launch.where, fmt::format("{}[{}] launches {} again (as {}[{}] at {}): its tiles run {}", t.kernels_name, j,
                                         kernel.function, t.kernels_name, earlier[0], t.launches[earlier[0]].where.str(),
                                         times_text(earlier.size() + 1)));
      earlier.push_back(j);
      check_launch_blocks(j, launch, kernel);
      if (j > 0 && !kernel.waits_for_previous)
        report(kernel.where, fmt::format("{} ({}[{}]) has no SPMMC_WAIT_FOR_PREVIOUS_KERNEL(): launched while {}[{}] runs, "
                                         "it may end first, and what the stream runs next may read C before all of it "
                                         "is written",
                                         kernel.function, t.kernels_name, j, t.kernels_name, j - 1));
    }
    for (size_t k = 0; k < code_.kernels.size(); ++k)
      if (launches_of[k].empty())
        report(code_.kernels[k].where, fmt::format("{} is not in {}: it is never launched", code_.kernels[k].function,
                                                   t.kernels_name));
    if (!t.a_tiles.value)
      report(t.a_tiles.where.file.empty() ? whole_file() : t.a_tiles.where, "cannot evaluate spmmc_a_tiles");
    else if (*t.a_tiles.value != blocks)
      report(t.a_tiles.where, fmt::format("spmmc_a_tiles is {}, but {} adds up to {} blocks along x", *t.a_tiles.value,
                                          t.tiles_name, blocks));
  }

  // Launch j's blocks along x against its kernel's case labels 0 .. cases - 1.
  void check_launch_blocks(size_t j, const KernelLaunch& launch, const AnalyzedKernel& kernel) {
    const auto cases = static_cast<int64_t>(kernel.cases.size());
    if (launch.grid_x == cases) return;
    report(launch.tiles_where,
           fmt::format("{}[{}] is {}, but {} ({}[{}]) has {} case{} in its switch (blockIdx.x): {}", code_.launch.tiles_name,
                       j, launch.grid_x, kernel.function, code_.launch.kernels_name, j, cases, cases == 1 ? "" : "s",
                       launch.grid_x < cases ? "the tiles of the last cases never run" : "some blocks run no tile"));
  }

  // Every tile function dispatched by exactly one case of exactly one kernel (a case runs the
  // tiles from its label to the next break).
  void check_dispatch() {
    struct Dispatch {
      const AnalyzedKernel* kernel;
      const AnalyzedCase* label;
    };
    std::vector<std::vector<Dispatch>> by_tile(code_.tiles.size());
    for (const AnalyzedKernel& kernel : code_.kernels)
      for (const AnalyzedCase& c : kernel.cases)
        for (int32_t t : c.tiles) by_tile[static_cast<size_t>(t)].push_back({&kernel, &c});
    for (size_t t = 0; t < by_tile.size(); ++t) {
      const auto& ds = by_tile[t];
      for (size_t i = 1; i < ds.size(); ++i)
        report(ds[i].label->where,
               fmt::format("{} is dispatched {}: by case {} of {} here and by case {} of {} at {}", code_.tiles[t].function,
                           times_text(ds.size()), ds[i].label->label, ds[i].kernel->function, ds[0].label->label,
                           ds[0].kernel->function, ds[0].label->where.str()));
    }
    for (const AnalyzedTile& tile : code_.uncalled_tiles)
      report(tile.where, fmt::format("{} is defined but dispatched by no case of any unrolled kernel", tile.function));
  }

  // The thread's columns in `kernel`: the B-tiles, the block and the lanes cover every column of
  // C once; V is the same in every kernel (the tiles' lanes are checked against it).
  void check_columns(const AnalyzedKernel& kernel) {
    const ColumnMapping& c = kernel.columns;
    if (!c.found) return;
    if (code_.columns.found && c.cols_per_thread != code_.columns.cols_per_thread)
      report(c.where, fmt::format("each thread of {} computes {} column{}, but of {} {}", kernel.function,
                                  c.cols_per_thread, c.cols_per_thread == 1 ? "" : "s", code_.kernel,
                                  code_.columns.cols_per_thread));
    if (c.b_tile_columns != c.n1)
      report(c.where, fmt::format("the loop counts B-tiles of {} columns, but col advances {} per B-tile: {}",
                                  c.b_tile_columns, c.n1,
                                  c.b_tile_columns > c.n1 ? "the last columns of C are never computed"
                                                          : "blocks compute B-tiles past the end of C"));
    if (c.threads < 1 || c.threads > 1024)
      report(c.launch_where, fmt::format("the launch has {} threads per block (CUDA allows 1 to 1024)", c.threads));
    else if (c.threads * c.cols_per_thread != c.n1)
      report(c.launch_where,
             fmt::format("the launch has blocks of {} threads of {} column{} each ({} columns), but col advances {} per "
                         "B-tile in {}: {}",
                         c.threads, c.cols_per_thread, c.cols_per_thread == 1 ? "" : "s", c.threads * c.cols_per_thread,
                         c.n1, kernel.function,
                         c.threads * c.cols_per_thread < c.n1 ? "some columns of C are never computed"
                                                              : "threads of neighbouring B-tiles compute the same columns"));
    if (c.max_threads > 0 && c.threads > c.max_threads)
      report(c.launch_where, fmt::format("the launch has {} threads per block, more than {}'s __launch_bounds__({}): it "
                                         "would fail to launch",
                                         c.threads, kernel.function, c.max_threads));
    if (!c.guarded)
      report(c.where, fmt::format("no `if (col >= n) continue;` before the dispatch of {}: threads past the last column "
                                  "would read and write outside B and C",
                                  kernel.function));
  }

  // One array of the generic path against what the weights give, element by element.
  void check_array(const char* name, const IntegerArray& array, const std::vector<int64_t>& want, const char* what,
                   const std::function<std::string(size_t)>& describe,
                   const std::function<std::string(int64_t)>& spell) {
    if (!array.found) {
      report(whole_file(), fmt::format("no {} ({} of the generic path) in the code", name, what));
      return;
    }
    const bool placeholder = want.empty() && array.values.size() == 1;  // C++ has no empty arrays
    if (!placeholder && array.values.size() != want.size()) {
      report(array.where, fmt::format("{} has {} elements, but {} needs {} ({})", name, array.values.size(),
                                      options_.weights_name, want.size(), what));
      return;
    }
    if (placeholder) return;
    size_t first = want.size(), differing = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (array.values[i] != want[i]) {
        if (first == want.size()) first = i;
        ++differing;
      }
    if (!differing) return;
    const CodeLocation where{code_.file, array.lines[first], array.columns[first]};
    report(where, fmt::format("{}[{}] is {}, but {} in {}{}", name, first, spell(array.values[first]), describe(first),
                              options_.weights_name,
                              differing > 1 ? fmt::format(" ({} elements of {} differ)", differing, name) : ""));
  }

  // The row of non-zero p of the weights.
  int32_t row_of(size_t p) const {
    const auto it = std::upper_bound(w_.row_ptr.begin(), w_.row_ptr.end(), static_cast<int32_t>(p));
    return static_cast<int32_t>(it - w_.row_ptr.begin()) - 1;
  }

  // The order the generic kernel takes the rows in (absent in files from before it): each row of C
  // exactly once, or some rows would never be written (and others twice). The first wrong element
  // is reported. True where the order is such a permutation.
  bool check_generic_order() {
    const GenericPath& g = code_.generic;
    if (!g.order.found || w_.rows == 0) return false;
    std::vector<int64_t> slot_of(static_cast<size_t>(w_.rows), -1);
    const std::vector<int64_t>& order = g.order.values;
    for (size_t i = 0; i < order.size(); ++i) {
      const int64_t row = order[i];
      const CodeLocation at{code_.file, g.order.lines[i], g.order.columns[i]};
      if (row < 0 || row >= w_.rows) {
        report(at, fmt::format("spmmc_generic_order[{}] is {}, but {} has rows 0 to {}", i, row, options_.weights_name,
                               w_.rows - 1));
        return false;
      }
      if (slot_of[static_cast<size_t>(row)] >= 0) {
        report(at, fmt::format("spmmc_generic_order[{}] is row {} again (also element {}): the generic kernel would "
                               "write it twice and leave a row of C unwritten",
                               i, row, slot_of[static_cast<size_t>(row)]));
        return false;
      }
      slot_of[static_cast<size_t>(row)] = static_cast<int64_t>(i);
    }
    if (order.size() != static_cast<size_t>(w_.rows)) {
      const auto missing = std::find(slot_of.begin(), slot_of.end(), -1) - slot_of.begin();
      report(g.order.where, fmt::format("spmmc_generic_order has {} elements, but {} has {} rows: row {} of C is never "
                                        "written by the generic kernel",
                                        order.size(), options_.weights_name, w_.rows, missing));
      return false;
    }
    return true;
  }

  // Where each slot's row begins and ends (absent in files from before it), against the weights'
  // rows in the file's order: the generic kernels read a row's products from these pairs.
  void check_generic_span(bool order_valid) {
    const GenericPath& g = code_.generic;
    if (!g.span.found || !order_valid) return;
    std::vector<int64_t> want;
    for (const int64_t row : g.order.values) {
      want.push_back(w_.row_ptr[static_cast<size_t>(row)]);
      want.push_back(w_.row_ptr[static_cast<size_t>(row) + 1]);
    }
    check_array("spmmc_generic_span", g.span, want, "where each slot's row begins and ends", [&](size_t i) {
      return fmt::format("slot {} is row {} of A, which {} at {}", i / 2, g.order.values[i / 2], i % 2 ? "ends" : "begins",
                         want[i]);
    }, [](int64_t v) { return std::to_string(v); });
  }

  void check_generic_path() {
    const GenericPath& g = code_.generic;
    // The ranges of K: 0 = b0 < b1 < ... < bS = K (absent in files from before the split).
    const std::vector<int64_t>& b = g.k_part_begin.values;
    if (g.k_part_begin.found) {
      bool valid = b.size() >= 2 && b.front() == 0 && b.back() == w_.cols;
      for (size_t i = 1; valid && i < b.size(); ++i) valid = b[i] > b[i - 1];
      if (!valid)
        report(g.k_part_begin.where, fmt::format("spmmc_k_part_begin is not a split of K: it must rise from 0 to {} (the "
                                                 "columns of {})",
                                                 w_.cols, options_.weights_name));
    }
    check_generic_span(check_generic_order());
    const auto decimal = [](int64_t v) { return std::to_string(v); };
    std::vector<int64_t> row_ptr(w_.row_ptr.begin(), w_.row_ptr.end());
    check_array("spmmc_row_ptr", g.row_ptr, row_ptr, "the offsets of A's rows", [&](size_t i) {
      return i == 0 ? std::string("the first row starts at 0")
                    : fmt::format("row {} of A ends at {}", i - 1, w_.row_ptr[i]);
    }, decimal);
    std::vector<int64_t> col_idx(w_.col_idx.begin(), w_.col_idx.end());
    check_array("spmmc_col_idx", g.col_idx, col_idx, "the columns of A's non-zeros", [&](size_t i) {
      return fmt::format("non-zero {} is A({}, {})", i, row_of(i), w_.col_idx[i]);
    }, decimal);
    std::vector<int64_t> bits;
    for (float v : w_.values) bits.push_back(bits_of(v));
    check_array("spmmc_weight_bits", g.weight_bits, bits, "the bits of A's non-zeros", [&](size_t i) {
      return fmt::format("A({}, {}) is {} (0x{:08x})", row_of(i), w_.col_idx[i], hex_float(w_.values[i]), bits_of(w_.values[i]));
    }, [](int64_t v) {
      const auto word = static_cast<uint32_t>(v);
      float f = 0.0f;
      std::memcpy(&f, &word, sizeof f);
      return fmt::format("0x{:08x} ({})", word, hex_float(f));
    });
  }

  // ---- the balanced family ---------------------------------------------------------------------

  // A constant of the balanced family, reported where it is missing or cannot be evaluated.
  std::optional<int64_t> balanced_constant(const IntegerConstant& c, const char* name) {
    if (!c.found) {
      report(whole_file(), fmt::format("no {} (a constant of the balanced family) in the code", name));
      return std::nullopt;
    }
    if (!c.field.value) report(c.field.where, fmt::format("cannot evaluate {}", name));
    return c.field.value;
  }

  // The balanced family's schedule (kernel_balanced.cuh): slot s of block b runs spmmc_piece[b S + s] =
  // {row, begin, end, first + S pieces} (S = spmmc_balanced_slots): it sums products [begin, end) of
  // the CSR arrays (checked against the weights by check_generic_path) for row `row` of C, and a row of
  // several pieces is the sum of slots first .. first + pieces - 1 of its block, added in that order
  // in the block's shared memory. So S = warps x groups (1, 2 or 4 groups), the table is blocks x S
  // long (the launch's grid.x), every row of A (an empty one too: it stores +0) has pieces in exactly
  // one block, in consecutive slots from `first`, each saying the same first and count, and together
  // its products [row_ptr[r], row_ptr[r + 1]) in order, each once; a slot of row -1 is idle.
  void check_balanced(const BalancedPath& b, const std::string& table = "spmmc_piece",
                      const std::string& blocks_name = "spmmc_balanced_blocks") {
    // the messages name this table and its blocks (the path's second table: spmmc_piece_mid) as {table}, {blocks}
    const auto say = [&](std::string_view format, const auto&... args) {
      return fmt::format(fmt::runtime(format), args..., fmt::arg("table", table), fmt::arg("blocks", blocks_name));
    };
    const std::optional<int64_t> warps = balanced_constant(b.warps, "spmmc_balanced_warps");
    const std::optional<int64_t> groups = balanced_constant(b.groups, "spmmc_balanced_groups");
    const std::optional<int64_t> slots = balanced_constant(b.slots, "spmmc_balanced_slots");
    const std::optional<int64_t> blocks = balanced_constant(b.blocks, blocks_name.c_str());
    if (!warps || !groups || !slots || !blocks) return;
    bool valid = true;
    const auto refuse = [&](const CodeLocation& at, std::string message) {
      report(at, std::move(message));
      valid = false;
    };
    if (*groups != 1 && *groups != 2 && *groups != 4)
      refuse(b.groups.field.where, fmt::format("spmmc_balanced_groups is {}, but a warp runs 1, 2 or 4 pieces (lane "
                                               "groups of 32, 16 or 8 lanes)", *groups));
    if (*warps < 1 || *warps > 32)
      refuse(b.warps.field.where, fmt::format("spmmc_balanced_warps is {}, but a block has 1 to 32 warps", *warps));
    if (valid && *slots != *warps * *groups)
      refuse(b.slots.field.where, fmt::format("spmmc_balanced_slots is {}, but {} warps of {} piece{} each run {}: the "
                                              "kernel would read the pieces of other slots",
                                              *slots, *warps, *groups, *groups == 1 ? "" : "s", *warps * *groups));
    if (*blocks < 1) refuse(b.blocks.field.where, say("{blocks} is {}: no block would run", *blocks));
    if (!b.pieces.found) {
      report(whole_file(), say("no {table} (the balanced family's pieces) in the code"));
      return;
    }
    if (!valid) return;
    const auto S = static_cast<size_t>(*slots);
    const size_t count = b.pieces.values.size() / 4;
    if (count != static_cast<size_t>(*blocks) * S) {
      report(b.pieces.where, say("{table} has {} elements, but the kernels run {} blocks of {} slots "
                                 "({blocks} x spmmc_balanced_slots = {}): {}",
                                 count, *blocks, S, *blocks * *slots,
                                 count < static_cast<size_t>(*blocks) * S ? "slots past its end would read beyond it"
                                                                          : "the pieces past the last block never run"));
      return;
    }
    const std::vector<int64_t>& v = b.pieces.values;
    const auto at = [&](size_t piece, size_t member) { return element_at(b.pieces, 4 * piece + member); };
    std::vector<std::vector<size_t>> of_row(static_cast<size_t>(w_.rows));
    for (size_t i = 0; i < count; ++i) {
      const int64_t row = v[4 * i], begin = v[4 * i + 1], end = v[4 * i + 2], w = v[4 * i + 3];
      if (row == -1) continue;
      if (row < 0 || row >= w_.rows) {
        report(at(i, 0), say("{table}[{}] is a piece of row {}, but {} has rows 0 to {} (-1: an idle slot)", i,
                             row, options_.weights_name, w_.rows - 1));
        continue;
      }
      const int64_t lo = w_.row_ptr[static_cast<size_t>(row)], hi = w_.row_ptr[static_cast<size_t>(row) + 1];
      if (begin < lo || end > hi || begin > end) {
        report(at(i, 1), say("{table}[{}] sums products [{}, {}) into row {} of C, but row {} of A is products "
                             "[{}, {}) in {}",
                             i, begin, end, row, row, lo, hi, options_.weights_name));
        continue;
      }
      if (w < *slots) {
        report(at(i, 3), say("{table}[{}].w is {}: first + {} x pieces with no pieces (a row has at least one)",
                             i, w, S));
        continue;
      }
      of_row[static_cast<size_t>(row)].push_back(i);
    }
    for (int32_t r = 0; r < w_.rows; ++r) {
      const std::vector<size_t>& list = of_row[static_cast<size_t>(r)];
      const int64_t lo = w_.row_ptr[static_cast<size_t>(r)], hi = w_.row_ptr[static_cast<size_t>(r) + 1];
      if (list.empty()) {
        report(b.pieces.where, say("row {} of A ({} products in {}) is in no piece of {table}: row {} of C is "
                                   "never written",
                                   r, hi - lo, options_.weights_name, r));
        continue;
      }
      const size_t head = list.front(), block = head / S;
      const int64_t w = v[4 * head + 3];
      const auto first = static_cast<size_t>(w % *slots), pieces = static_cast<size_t>(w / *slots);
      bool same = true;
      for (const size_t i : list) {
        if (i / S != block) {
          report(at(i, 0), say("{table}[{}] is a piece of row {} in block {}, but {table}[{}], another, is "
                               "in block {}: a row's pieces are added in the shared memory of one block",
                               i, r, i / S, head, block));
          same = false;
          break;
        }
        if (v[4 * i + 3] != w) {
          report(at(i, 3), say("{table}[{}] says its row {} has {} pieces from slot {}, but {table}[{}] "
                               "says {} from slot {}",
                               i, r, v[4 * i + 3] / *slots, v[4 * i + 3] % *slots, head, pieces, first));
          same = false;
          break;
        }
      }
      if (!same) continue;
      if (list.size() != pieces) {
        report(at(head, 3), say("row {} of A has {} pieces in {table}, but they say {} ({table}[{}].w = "
                                "{}): {}",
                                r, list.size(), pieces, head, w,
                                list.size() > pieces ? "the sum of the last to finish would leave some out, or "
                                                       "the row would be stored twice"
                                                     : "the last piece never arrives and the row is never stored"));
        continue;
      }
      bool placed = first + pieces <= S;
      for (size_t q = 0; placed && q < pieces; ++q)
        if (list[q] != block * S + first + q) {
          report(at(list[q], 0), say("{table}[{}] is piece {} of row {}, but it is slot {} of block {}, not "
                                     "slot {} (the row's sum adds slots {} to {} in order)",
                                     list[q], q, r, list[q] % S, block, first + q, first, first + pieces - 1));
          placed = false;
        }
      if (!placed) {
        if (first + pieces > S)
          report(at(head, 3), say("{table}[{}] says row {} has {} pieces from slot {}, but a block has {} slots",
                                  head, r, pieces, first, S));
        continue;
      }
      int64_t next = lo;
      bool covered = true;
      for (size_t q = 0; covered && q < pieces; ++q) {
        const size_t i = list[q];
        if (v[4 * i + 1] != next) {
          report(at(i, 1), say("{table}[{}], piece {} of row {}, begins at product {}, but the row's {} at {}: "
                               "{}",
                               i, q, r, v[4 * i + 1], q == 0 ? "first product is" : "piece before it ends",
                               next,
                               v[4 * i + 1] > next ? fmt::format("products [{}, {}) are never multiplied", next,
                                                                 v[4 * i + 1])
                                                   : fmt::format("products [{}, {}) are multiplied twice",
                                                                 v[4 * i + 1], next)));
          covered = false;
        }
        next = v[4 * i + 2];
      }
      if (covered && next != hi) {
        report(at(list.back(), 2), say("row {}'s last piece, {table}[{}], ends at product {}, but row {} of A "
                                       "ends at {} in {}: products [{}, {}) are never multiplied",
                                       r, list.back(), next, r, hi, options_.weights_name, next, hi));
        covered = false;
      }
      if (!covered) continue;
      out_.code_nnz += hi - lo;
      ++out_.rows_written;
      ++out_.balanced_rows;
      out_.balanced_pieces += static_cast<int64_t>(pieces);
      if (pieces > 1) ++out_.balanced_cut_rows;
    }
  }
  // The balanced path's second table (spmmc_piece_mid, spmmc_balanced_mid_blocks; docs/design/small-n.md,
  // *Uneven rows from n = 512*): the same rules, in blocks of the path's warps of one piece each.
  void check_balanced_mid() {
    BalancedPath mid = code_.balanced_mid;
    mid.warps = code_.balanced_path.warps;
    mid.groups = code_.balanced_path.groups;
    mid.slots = code_.balanced_path.slots;
    check_balanced(mid, "spmmc_piece_mid", "spmmc_balanced_mid_blocks");
  }


  // ---- the tensor-core family ------------------------------------------------------------------

  CodeLocation element_at(const IntegerArray& array, size_t i) const {
    return {code_.file, array.lines[i], array.columns[i]};
  }

  // Vectors per block: the MMA's K (8: m16n8k8 for fp16 and bf16; 4: m16n8k4 for tf32).
  int64_t tc_block_vectors() const { return code_.dtype == DType::kTf32 ? 4 : 8; }

  // spmmc_tc_rows where it is a window height the kernels have (8, or 16 in fp16 and bf16); none
  // where it is missing, cannot be evaluated or is another (check_tc_rows reports those).
  std::optional<int64_t> tc_rows_constant() const {
    const IntegerConstant& c = code_.tc.rows;
    if (!c.found || !c.field.value) return std::nullopt;
    const int64_t rows = *c.field.value;
    if (rows == kTcHalfRows || (rows == 2 * kTcHalfRows && code_.dtype != DType::kTf32)) return rows;
    return std::nullopt;
  }

  // Words of spmmc_tc_a per lane and block: one per 8 rows of a window (H = spmmc_tc_rows / 8).
  int64_t tc_halves() const { return tc_rows_ / kTcHalfRows; }
  int64_t tc_words_per_block() const { return kTcWordsPerBlock * tc_halves(); }

  // "spmmc_tc_cols[13].y": vector v (8 per block) is the x or y of pair v / 2; in tf32
  // "spmmc_tc_cols[13]", one element per vector.
  std::string cols_element(size_t v) const {
    if (!code_.tc.cols_are_pairs) return fmt::format("spmmc_tc_cols[{}]", v);
    return fmt::format("spmmc_tc_cols[{}].{}", v / 2, v % 2 ? "y" : "x");
  }

  // "spmmc_tc_a[37], high half (block 1, lane 5)": where value (g, j) of block b is; with windows
  // of 16 rows "spmmc_tc_a[75], high half (block 1, lane 5, word 1)", lane l's word h (rows 8h ..
  // 8h + 7 of the window); in tf32 "spmmc_tc_a[37] (block 1, lane 5)", a whole word.
  std::string a_element(size_t word, int half) const {
    const auto per_block = static_cast<size_t>(tc_words_per_block()), halves = static_cast<size_t>(tc_halves());
    const size_t block = word / per_block, lane = word % per_block / halves;
    const std::string place = halves == 1 ? fmt::format("block {}, lane {}", block, lane)
                                          : fmt::format("block {}, lane {}, word {}", block, lane, word % halves);
    if (code_.dtype == DType::kTf32) return fmt::format("spmmc_tc_a[{}] ({})", word, place);
    return fmt::format("spmmc_tc_a[{}], {} half ({})", word, half ? "high" : "low", place);
  }

  // The bits of a value as the file holds them, for messages: 0x3c00 (16-bit), 0x3f800000 (tf32).
  std::string bits_text(uint32_t bits) const {
    return code_.dtype == DType::kTf32 ? fmt::format("0x{:08x}", bits) : fmt::format("0x{:04x}", bits);
  }

  // One value of A the tensor-core arrays hold: A(row, col) = value, at spmmc_tc_a[word]'s half.
  struct TcEntry {
    int64_t g = 0;    // the window's row slot (0 .. spmmc_tc_rows - 1)
    int64_t col = 0;
    float value = 0.0f;
    uint32_t bits = 0;
    size_t word = 0;
    int half = 0;
  };

  // The constants the tensor-core kernel's launch and lane mapping are built on: its blocks of
  // spmmc_tc_warps warps (32 threads each: the kernel takes threadIdx.x / 32 as the warp, so other
  // block sizes would skip or repeat windows) and 64 columns of C per warp (8 lanes of 8 columns
  // per row of the MMA's output: another step would leave columns out or compute them twice).
  void check_tc_launch_constants() {
    const TensorCorePath& tc = code_.tc;
    const auto value = [&](const IntegerConstant& c, const char* name) -> std::optional<int64_t> {
      if (!c.found) report(whole_file(), fmt::format("no {} (a constant of the tensor-core kernel) in the code", name));
      else if (!c.field.value) report(c.where, fmt::format("cannot evaluate {}", name));
      return c.found ? c.field.value : std::nullopt;
    };
    const std::optional<int64_t> warps = value(tc.warps, "spmmc_tc_warps");
    const std::optional<int64_t> threads = value(tc.threads, "spmmc_tc_threads");
    const std::optional<int64_t> cols = value(tc.cols_per_warp, "spmmc_tc_cols_per_warp");
    if (warps && *warps < 1)
      report(tc.warps.field.where, fmt::format("spmmc_tc_warps is {}, but a block of the tensor-core kernel needs at "
                                               "least one warp",
                                               *warps));
    if (warps && threads && *threads != 32 * *warps)
      report(tc.threads.field.where,
             fmt::format("spmmc_tc_threads is {}, but a block of spmmc_tc_warps = {} warps has {} threads: the "
                         "tensor-core kernel takes window blockIdx.y * {} + threadIdx.x / 32, so windows would be {}",
                         *threads, *warps, 32 * *warps, *warps, *threads < 32 * *warps ? "skipped" : "computed twice"));
    if (cols && *cols != kTcColsPerWarp)
      report(tc.cols_per_warp.field.where,
             fmt::format("spmmc_tc_cols_per_warp is {}, but a warp of the tensor-core kernel computes {} columns of C "
                         "(8 lanes of 8 columns per row of the {} MMAs): columns of C would be {}",
                         *cols, kTcColsPerWarp, code_.dtype == DType::kTf32 ? "m16n8k4" : "m16n8k8",
                         *cols > kTcColsPerWarp ? "never computed" : "computed twice"));
  }

  // The windows' height, spmmc_tc_rows (every tensor-core file has it): 8, or 16 in fp16 and bf16
  // (two m16n8k8 MMAs of 8 rows per block, each with its word of spmmc_tc_a per lane); tf32's
  // m16n8k4 kernel has windows of 8. Where the file has spmmc_tc_halves (the fp16 and bf16 kernel's
  // words per lane and block, which it indexes spmmc_tc_a by) it is spmmc_tc_rows / 8. Sets tc_rows_;
  // false (after a report) where the arrays cannot be read by it.
  bool check_tc_rows() {
    const TensorCorePath& tc = code_.tc;
    const bool tf32 = code_.dtype == DType::kTf32;
    if (!tc.rows.found) {
      report(whole_file(), "no spmmc_tc_rows (the rows of A per window of the tensor-core family, 8 or 16) in the code");
      return false;
    }
    if (!tc.rows.field.value) {
      report(tc.rows.where, "cannot evaluate spmmc_tc_rows");
      return false;
    }
    const int64_t rows = *tc.rows.field.value;
    if (!tc_rows_constant()) {
      report(tc.rows.field.where,
             tf32 ? fmt::format("spmmc_tc_rows is {}, but the tf32 kernel's windows have 8 rows (one m16n8k4 MMA per block: "
                                "its N, a word of spmmc_tc_a per lane)",
                                rows)
                  : fmt::format("spmmc_tc_rows is {}, but a window of the tensor-core kernel has 8 or 16 rows (one or two "
                                "m16n8k8 MMAs of 8 rows per block, a word of spmmc_tc_a per lane each)",
                                rows));
      return false;
    }
    tc_rows_ = rows;
    out_.tc_rows = rows;
    if (tc.halves.found) {
      if (!tc.halves.field.value) {
        report(tc.halves.where, "cannot evaluate spmmc_tc_halves");
        return false;
      }
      const int64_t halves = *tc.halves.field.value;
      if (halves != tc_halves()) {
        report(tc.halves.field.where,
               fmt::format("spmmc_tc_halves is {}, but windows of spmmc_tc_rows = {} rows have {} halves of 8 rows (an MMA "
                           "and a word of spmmc_tc_a per lane each): the tensor-core kernel would read spmmc_tc_a as {} "
                           "words per block, not {}",
                           halves, rows, tc_halves(), kTcWordsPerBlock * halves, tc_words_per_block()));
        return false;
      }
    }
    return true;
  }

  // The arrays' sizes agree with each other, with spmmc_tc_windows and spmmc_tc_rows, and
  // spmmc_tc_window_block splits the blocks into the windows in order. False (after one report)
  // where they do not: the arrays cannot then be read as windows of blocks.
  bool check_tc_shape() {
    const TensorCorePath& tc = code_.tc;
    bool found = true;
    const std::pair<const IntegerArray*, std::pair<const char*, const char*>> arrays[] = {
        {&tc.window_block, {"spmmc_tc_window_block", "the first block of each window"}},
        {&tc.window_rows, {"spmmc_tc_window_rows", "the spmmc_tc_rows rows of each window"}},
        {&tc.cols, {"spmmc_tc_cols", "the columns of each block's vectors"}},
        {&tc.a, {"spmmc_tc_a", "A's values, 32 words per block and 8 rows of a window"}}};
    for (const auto& [array, what] : arrays)
      if (!array->found) {
        report(whole_file(), fmt::format("no {} ({} of the tensor-core family) in the code", what.first, what.second));
        found = false;
      }
    if (!tc.windows.found) {
      report(whole_file(), "no spmmc_tc_windows (the windows the tensor-core kernel loops over) in the code");
      found = false;
    } else if (!tc.windows.field.value) {
      report(tc.windows.where, "cannot evaluate spmmc_tc_windows");
      found = false;
    }
    if (!found || !check_tc_rows()) return false;
    const std::vector<int64_t>& first = tc.window_block.values;
    if (first.size() < 2) {
      report(tc.window_block.where, fmt::format("spmmc_tc_window_block has {} element{}, but a window needs two (its "
                                                "first block and the next window's)",
                                                first.size(), first.size() == 1 ? "" : "s"));
      return false;
    }
    const int64_t windows = static_cast<int64_t>(first.size()) - 1;
    if (*tc.windows.field.value != windows) {
      report(tc.windows.field.where,
             fmt::format("spmmc_tc_windows is {}, but spmmc_tc_window_block has {} elements ({} windows): the "
                         "tensor-core kernel would {}",
                         *tc.windows.field.value, first.size(), windows,
                         *tc.windows.field.value < windows ? "never compute the last windows"
                                                           : "read past the end of the windows' arrays"));
      return false;
    }
    if (static_cast<int64_t>(tc.window_rows.values.size()) != tc_rows_ * windows) {
      report(tc.window_rows.where, fmt::format("spmmc_tc_window_rows has {} elements, but {} windows of spmmc_tc_rows = {} "
                                               "rows need {}",
                                               tc.window_rows.values.size(), windows, tc_rows_, tc_rows_ * windows));
      return false;
    }
    const int64_t k = tc_block_vectors();
    if (tc.cols.values.size() % static_cast<size_t>(k) != 0) {
      report(tc.cols.where,
             tc.cols_are_pairs
                 ? fmt::format("spmmc_tc_cols has {} pairs, not 4 per block (8 columns: one per {} x 1 vector)",
                               tc.cols.values.size() / 2, tc_rows_)
                 : fmt::format("spmmc_tc_cols has {} elements, not 4 per block (one per 8 x 1 vector of the m16n8k4 MMA)",
                               tc.cols.values.size()));
      return false;
    }
    const int64_t blocks = static_cast<int64_t>(tc.cols.values.size()) / k;
    if (static_cast<int64_t>(tc.a.values.size()) != tc_words_per_block() * blocks) {
      report(tc.a.where, fmt::format("spmmc_tc_a has {} elements, but the {} blocks of spmmc_tc_cols need {} ({})",
                                     tc.a.values.size(), blocks, tc_words_per_block() * blocks,
                                     tc_halves() == 1 ? std::string("32 words per block, one per lane")
                                                      : fmt::format("{} words per block, {} per lane: one per 8 rows of "
                                                                    "the windows of spmmc_tc_rows = {}",
                                                                    tc_words_per_block(), tc_halves(), tc_rows_)));
      return false;
    }
    for (size_t w = 0; w < first.size(); ++w) {
      const bool wrong = w == 0 ? first[0] != 0 : first[w] < first[w - 1] || first[w] > blocks;
      if (!wrong && (w + 1 < first.size() || first[w] == blocks)) continue;
      report(element_at(tc.window_block, w),
             w == 0 ? fmt::format("spmmc_tc_window_block[0] is {}, but the first window starts at block 0", first[0])
             : first[w] < first[w - 1]
                 ? fmt::format("spmmc_tc_window_block[{}] is {}, below spmmc_tc_window_block[{}] = {}: the windows' "
                               "blocks must follow each other in order",
                               w, first[w], w - 1, first[w - 1])
                 : fmt::format("spmmc_tc_window_block[{}] is {}, but spmmc_tc_cols and spmmc_tc_a hold {} blocks{}", w,
                               first[w], blocks,
                               w + 1 == first.size() ? " (the last element ends the last window's blocks)" : ""));
      return false;
    }
    out_.tc_windows = windows;
    out_.tc_blocks = blocks;
    return true;
  }

  // The staged form's constants and chunk table (spmmc_tc_staged_kernel): A's columns, chunks of
  // spmmc_tc_chunk_rows rows of B covering them, blocks of 32 threads per window, and
  // spmmc_tc_chunk_block splitting each window's blocks by chunk, every vector of a block within its
  // chunk's rows (the kernel reads the block's rows of B from the chunk's copy in shared memory: a
  // column outside it would read another row of B, or past the copy), and no window with more
  // blocks in a chunk than spmmc_tc_chunk_blocks (the kernel's buffers of a window's words of A and
  // offsets for a chunk hold that many).
  void check_tc_chunks() {
    const TensorCorePath& tc = code_.tc;
    const std::pair<const IntegerConstant*, const char*> constants[] = {{&tc.k, "spmmc_tc_k"},
                                                                        {&tc.chunk_rows, "spmmc_tc_chunk_rows"},
                                                                        {&tc.chunks, "spmmc_tc_chunks"},
                                                                        {&tc.chunk_blocks, "spmmc_tc_chunk_blocks"},
                                                                        {&tc.staged_warps, "spmmc_tc_staged_warps"},
                                                                        {&tc.staged_threads, "spmmc_tc_staged_threads"},
                                                                        {&tc.keyed, "spmmc_tc_keyed"}};
    if (!tc.chunk_block.found) {
      for (const auto& [table, name] : {std::make_pair(&tc.offsets, "spmmc_tc_offsets"), std::make_pair(&tc.keys, "spmmc_tc_keys")})
        if (table->found)
          report(table->where, fmt::format("{} (a table of the staged tensor-core kernel) without spmmc_tc_chunk_block, its "
                                           "chunk table",
                                           name));
      for (const auto& [c, name] : constants)
        if (c->found)
          report(c->where, fmt::format("{} (a constant of the staged tensor-core kernel) without spmmc_tc_chunk_block, its "
                                       "chunk table",
                                       name));
      return;
    }
    bool evaluated = true;
    for (const auto& [c, name] : constants) {
      if (!c->found) report(whole_file(), fmt::format("spmmc_tc_chunk_block without {} (a constant of the staged tensor-core "
                                                      "kernel)",
                                                      name));
      else if (!c->field.value) report(c->where, fmt::format("cannot evaluate {}", name));
      evaluated = evaluated && c->found && c->field.value;
    }
    if (!evaluated) return;
    const int64_t k = *tc.k.field.value, rows = *tc.chunk_rows.field.value, chunks = *tc.chunks.field.value;
    const int64_t warps = *tc.staged_warps.field.value, threads = *tc.staged_threads.field.value;
    if (k != w_.cols) {
      report(tc.k.field.where, fmt::format("spmmc_tc_k is {}, but {} has {} columns: the staged kernel would copy {} rows of B",
                                           k, options_.weights_name, w_.cols, k < w_.cols ? "too few" : "too many"));
      return;
    }
    if (rows < 1 || chunks != (k + rows - 1) / rows) {
      report(tc.chunks.field.where, fmt::format("spmmc_tc_chunks is {}, but {} columns in chunks of spmmc_tc_chunk_rows = {} "
                                                "rows make {}",
                                                chunks, k, rows, rows < 1 ? 0 : (k + rows - 1) / rows));
      return;
    }
    // A window's vectors in a chunk are distinct rows of it, 8 to a block: at most ceil(rows / 8)
    // blocks (the template's static_assert), and the buffers hold at least one.
    const int64_t chunk_blocks = *tc.chunk_blocks.field.value, most_blocks = (rows + 7) / 8;
    if (chunk_blocks < 1 || chunk_blocks > most_blocks) {
      report(tc.chunk_blocks.field.where,
             chunk_blocks < 1
                 ? fmt::format("spmmc_tc_chunk_blocks is {}, but the staged kernel's buffers of a window's words of A and "
                               "offsets for a chunk hold spmmc_tc_chunk_blocks blocks, at least one",
                               chunk_blocks)
                 : fmt::format("spmmc_tc_chunk_blocks is {}, but a window has at most {} blocks in a chunk of "
                               "spmmc_tc_chunk_rows = {} rows (its vectors there are distinct rows of the chunk, 8 to a "
                               "block)",
                               chunk_blocks, most_blocks, rows));
      return;
    }
    if (warps < 1 || threads != 32 * warps) {
      report(tc.staged_threads.field.where,
             fmt::format("spmmc_tc_staged_threads is {}, but a block of spmmc_tc_staged_warps = {} warps has {} threads: the "
                         "staged kernel takes window blockIdx.y * {} + threadIdx.x / 32",
                         threads, warps, 32 * warps, warps));
      if (warps < 1) return;
    }
    const std::vector<int64_t>& at = tc.chunk_block.values;
    const std::vector<int64_t>& first = tc.window_block.values;
    const int64_t windows = out_.tc_windows, blocks = out_.tc_blocks, per = tc_block_vectors();
    if (!tc.offsets.found) {
      report(whole_file(), "spmmc_tc_chunk_block without spmmc_tc_offsets (where the staged tensor-core kernel finds each "
                           "block's rows of B in shared memory)");
      return;
    }
    if (!tc.keys.found) {
      report(whole_file(), "spmmc_tc_chunk_block without spmmc_tc_keys (how the staged tensor-core kernel places each row of "
                           "B in shared memory)");
      return;
    }
    const int64_t groups = warps < 1 ? 0 : (windows + warps - 1) / warps;
    if (static_cast<int64_t>(tc.keys.values.size()) != groups * chunks * rows) {
      report(tc.keys.where, fmt::format("spmmc_tc_keys has {} elements, but {} groups of spmmc_tc_staged_warps = {} windows "
                                        "with {} chunks of {} rows need {}",
                                        tc.keys.values.size(), groups, warps, chunks, rows, groups * chunks * rows));
      return;
    }
    const int64_t keyed = *tc.keyed.field.value;
    if (keyed != 0 && keyed != 1) {
      report(tc.keyed.field.where, fmt::format("spmmc_tc_keyed is {}, but it is 1 (the staged kernel's copy reads "
                                               "spmmc_tc_keys) or 0 (it takes each row's residue mod 8)",
                                               keyed));
      return;
    }
    for (size_t i = 0; i < tc.keys.values.size(); ++i) {
      const int64_t r = static_cast<int64_t>(i) % rows;
      if (keyed == 0 && tc.keys.values[i] != (r & 7)) {
        report(element_at(tc.keys, i),
               fmt::format("spmmc_tc_keys[{}] (row {} of chunk {}, group {}) is {}, but spmmc_tc_keyed is 0: the staged "
                           "kernel places that row by its residue mod 8, {}, where spmmc_tc_offsets looks for it by its key",
                           i, r, static_cast<int64_t>(i) / rows % chunks, static_cast<int64_t>(i) / rows / chunks,
                           tc.keys.values[i], r & 7));
        return;
      }
      if (tc.keys.values[i] < 0 || tc.keys.values[i] > 7) {
        report(element_at(tc.keys, i), fmt::format("spmmc_tc_keys[{}] is {}, but a key is 0 to 7 (which of a row's eight "
                                                   "16-byte pieces comes first in shared memory)",
                                                   i, tc.keys.values[i]));
        return;
      }
    }
    if (static_cast<int64_t>(tc.offsets.values.size()) != blocks * per) {
      report(tc.offsets.where, fmt::format("spmmc_tc_offsets has {} elements, but the {} blocks need {} (one per vector)",
                                           tc.offsets.values.size(), blocks, blocks * per));
      return;
    }
    if (static_cast<int64_t>(at.size()) != windows * chunks + 1) {
      report(tc.chunk_block.where, fmt::format("spmmc_tc_chunk_block has {} elements, but {} windows of {} chunks need {}",
                                               at.size(), windows, chunks, windows * chunks + 1));
      return;
    }
    for (int64_t w = 0; w < windows; ++w) {
      const size_t first_chunk = static_cast<size_t>(w * chunks);
      if (at[first_chunk] != first[static_cast<size_t>(w)]) {
        report(element_at(tc.chunk_block, first_chunk),
               fmt::format("spmmc_tc_chunk_block[{}] (window {}, chunk 0) is {}, but the window's blocks begin at "
                           "spmmc_tc_window_block[{}] = {}",
                           first_chunk, w, at[first_chunk], w, first[static_cast<size_t>(w)]));
        return;
      }
      for (int64_t c = 0; c < chunks; ++c) {
        const size_t j = static_cast<size_t>(w * chunks + c);
        if (at[j + 1] < at[j] || at[j + 1] > blocks) {
          report(element_at(tc.chunk_block, j + 1),
                 fmt::format("spmmc_tc_chunk_block[{}] is {}, but it must lie between the element before it ({}) and the "
                             "{} blocks",
                             j + 1, at[j + 1], at[j], blocks));
          return;
        }
        if (at[j + 1] - at[j] > chunk_blocks) {
          report(tc.chunk_blocks.field.where,
                 fmt::format("spmmc_tc_chunk_blocks is {}, but window {} has {} blocks in chunk {} (blocks {} to {}: "
                             "spmmc_tc_chunk_block[{}] .. [{}]): the staged kernel copies a window's words of A and "
                             "offsets for a chunk into shared-memory buffers of spmmc_tc_chunk_blocks blocks, and this "
                             "copy would overflow them",
                             chunk_blocks, w, at[j + 1] - at[j], c, at[j], at[j + 1] - 1, j, j + 1));
          return;
        }
        for (int64_t b = at[j]; b < at[j + 1]; ++b)
          for (int64_t v = 0; v < per; ++v) {
            const size_t i = static_cast<size_t>(b * per + v);
            const int64_t col = tc.cols.values[i];
            // A column outside A is reported by check_tensor_core's own check of the columns.
            if (col < 0 || col >= w_.cols) continue;
            if (col >= c * rows && col < (c + 1) * rows) {
              // Its offset in the chunk's copy (16-byte pieces of a row swizzled by the row's key for the
              // window's group and the chunk).
              const int64_t r = col - c * rows, key_at = (w / warps * chunks + c) * rows + r;
              const int64_t key = tc.keys.values[static_cast<size_t>(key_at)], want = 16 * (8 * r + key);
              if (tc.offsets.values[i] == want) continue;
              report(element_at(tc.offsets, i),
                     fmt::format("spmmc_tc_offsets[{}] (vector {} of block {}, window {}) is {}, but its column {} is row {} "
                                 "of chunk {}, of key {} (spmmc_tc_keys[{}]), at byte {} of the chunk's copy: the staged "
                                 "kernel would read another row of B",
                                 i, v, b, w, tc.offsets.values[i], col, r, c, key, key_at, want));
              return;
            }
            report(element_at(tc.cols, i),
                   fmt::format("{} (vector {} of block {}, window {}) is column {}, but spmmc_tc_chunk_block puts the block "
                               "in chunk {} (rows {} to {} of B): the staged kernel would read another row of B",
                               cols_element(i), v, b, w, col, c, c * rows,
                               std::min((c + 1) * rows, k) - 1));
            return;
          }
      }
    }
    if (at.back() != blocks)
      report(element_at(tc.chunk_block, at.size() - 1),
             fmt::format("spmmc_tc_chunk_block's last element is {}, but the windows' blocks end at {}", at.back(), blocks));
  }

  // A rebuilt from the tensor-core arrays against the weights (rounded to the dtype): every row of A
  // in exactly one window (rows with non-zeros in a window with blocks), every column within K,
  // a window's vectors of distinct columns (a repeated column is padding: all its values zero),
  // and every value, decoded from its 16 bits as the dtype's (tf32: a float's 32 bits), A's value
  // there, bit for bit.
  void check_tensor_core() {
    check_tc_launch_constants();
    if (!check_tc_shape()) return;
    check_tc_chunks();
    const TensorCorePath& tc = code_.tc;
    const std::string& weights = options_.weights_name;
    const std::vector<int64_t>& first = tc.window_block.values;
    const std::vector<int64_t>& rows = tc.window_rows.values;
    const std::vector<int64_t>& cols = tc.cols.values;
    const int64_t windows = out_.tc_windows;
    const int64_t k = tc_block_vectors();
    const bool tf32 = code_.dtype == DType::kTf32;

    // The rows: each of A's exactly once, -1 for none.
    std::vector<int64_t> slot_of(static_cast<size_t>(w_.rows), -1);  // the element of spmmc_tc_window_rows
    std::vector<bool> valid_slot(rows.size(), false);
    const int64_t height = tc_rows_, halves = tc_halves(), per_block = tc_words_per_block();
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t r = rows[i], w = static_cast<int64_t>(i) / height;
      if (r == -1) continue;
      if (r < 0 || r >= w_.rows) {
        report(element_at(tc.window_rows, i),
               fmt::format("spmmc_tc_window_rows[{}] (row {} of window {}) is {}, but {} has rows 0 to {} (-1: none)", i,
                           static_cast<int64_t>(i) % height, w, r, weights, w_.rows - 1));
        continue;
      }
      const int64_t before = slot_of[static_cast<size_t>(r)];
      if (before >= 0) {
        report(element_at(tc.window_rows, i),
               before / height == w
                   ? fmt::format("spmmc_tc_window_rows[{}] is row {} again in window {} (also element {}): the "
                                 "tensor-core kernel would store two rows of its output to row {} of C",
                                 i, r, w, before, r)
                   : fmt::format("spmmc_tc_window_rows[{}] (window {}) is row {} again (also element {}, window {}): the "
                                 "tensor-core kernel would write row {} of C twice",
                                 i, w, r, before, before / height, r));
        continue;
      }
      slot_of[static_cast<size_t>(r)] = static_cast<int64_t>(i);
      valid_slot[i] = true;
    }
    for (int32_t r = 0; r < w_.rows; ++r)
      if (slot_of[static_cast<size_t>(r)] < 0) {
        report(tc.window_rows.where,
               fmt::format("row {} of A is in no window (spmmc_tc_window_rows): the tensor-core kernel never writes row {} "
                           "of C{}",
                           r, r,
                           w_.row_length(r) ? fmt::format(" (row {} of A has {} non-zeros in {})", r, w_.row_length(r), weights)
                                            : std::string()));
        ++out_.rows_differing;
      }

    // The columns: within K, padding vectors included (the kernel loads B's row for every vector).
    std::vector<bool> valid_col(cols.size(), false);
    for (int64_t w = 0; w < windows; ++w)
      for (int64_t b = first[static_cast<size_t>(w)]; b < first[static_cast<size_t>(w) + 1]; ++b)
        for (int64_t j = 0; j < k; ++j) {
          const size_t v = static_cast<size_t>(b * k + j);
          if (cols[v] >= 0 && cols[v] < w_.cols) {
            valid_col[v] = true;
            continue;
          }
          report(element_at(tc.cols, v),
                 fmt::format("{} (vector {} of block {}, window {}) is {}, but B has {} rows (A has {} columns in {}): "
                             "the tensor-core kernel would load outside B",
                             cols_element(v), j, b, w, cols[v], w_.cols, w_.cols, weights));
        }

    // The values, vector by vector: lane 4g + t's word h (of H = spmmc_tc_rows / 8, at
    // 32 H b + H (4g + t) + h) holds vectors 2t (low half) and 2t + 1 (high half) for the window's
    // row 8h + g; in tf32 (H = 1) vector t, the whole word a float's bits.
    std::vector<std::vector<TcEntry>> by_row(static_cast<size_t>(w_.rows));
    for (int64_t w = 0; w < windows; ++w) {
      // Column -> the window's first vector with a non-zero value for it, and the row slots that
      // have one in some vector of that column.
      std::map<int64_t, std::pair<size_t, uint32_t>> holder;
      for (int64_t b = first[static_cast<size_t>(w)]; b < first[static_cast<size_t>(w) + 1]; ++b)
        for (int64_t j = 0; j < k; ++j) {
          const size_t v = static_cast<size_t>(b * k + j);
          const int half = tf32 ? 0 : static_cast<int>(j % 2);
          std::vector<TcEntry> values;  // the vector's non-zero values
          for (int64_t g = 0; g < height; ++g) {
            const int64_t lane = 4 * (g % kTcHalfRows) + (tf32 ? j : j / 2);
            const size_t word = static_cast<size_t>(b * per_block + halves * lane + g / kTcHalfRows);
            const auto whole = static_cast<uint32_t>(static_cast<uint64_t>(tc.a.values[word]));
            const uint32_t bits = tf32 ? whole : (whole >> (16 * half)) & 0xffffu;
            const float value = tf32 ? float_of(bits) : half_value(bits, code_.dtype);
            if (value == 0.0f) continue;  // +0 or -0: no entry (a product that adds nothing)
            values.push_back({g, cols[v], value, bits, word, half});
          }
          if (values.empty()) {
            ++out_.tc_padding;
            continue;
          }
          ++out_.tc_vectors;
          if (!valid_col[v]) continue;
          auto [it, fresh] = holder.emplace(cols[v], std::make_pair(v, 0u));
          uint32_t& held = it->second.second;
          if (!fresh) {
            // A window's vectors are its distinct columns: a repeat is padding, all zeros. Its values
            // for rows the column's first vector leaves zero still count as A's (so that they are not
            // also reported missing); those for rows it holds already would be summed twice.
            const auto twice = std::find_if(values.begin(), values.end(), [&](const TcEntry& e) { return held >> e.g & 1u; });
            const TcEntry& e = twice != values.end() ? *twice : values.front();
            report(element_at(tc.cols, v),
                   fmt::format("{} (vector {} of block {}) is column {} again in window {} (also {}): a repeated column "
                               "must be a padding vector of zeros, but {} is {} ({}, row {} of the window){}",
                               cols_element(v), j, b, cols[v], w, cols_element(it->second.first),
                               a_element(e.word, e.half), bits_text(e.bits), hex_float(e.value), e.g,
                               twice != values.end()
                                   ? fmt::format(": the kernel would sum column {} of that row twice", cols[v])
                                   : std::string()));
          }
          for (const TcEntry& e : values) {
            const size_t slot = static_cast<size_t>(w * height + e.g);
            if (held >> e.g & 1u) continue;  // summed twice: reported above
            held |= 1u << e.g;
            if (rows[slot] == -1) {
              report(element_at(tc.a, e.word),
                     fmt::format("{} is {} ({}), a value of column {} for row {} of window {}, which has no row "
                                 "(spmmc_tc_window_rows[{}] is -1): a weight of no row of A",
                                 a_element(e.word, e.half), bits_text(e.bits), hex_float(e.value), cols[v], e.g, w, slot));
              continue;
            }
            if (!valid_slot[slot]) continue;  // a row out of range or repeated: reported above
            by_row[static_cast<size_t>(rows[slot])].push_back(e);
          }
        }
    }

    // Row by row against the weights.
    for (int32_t r = 0; r < w_.rows; ++r) {
      const int64_t slot = slot_of[static_cast<size_t>(r)];
      if (slot < 0) continue;
      ++out_.rows_written;
      const int64_t before = out_.total_differences;
      std::vector<TcEntry>& entries = by_row[static_cast<size_t>(r)];
      out_.code_nnz += static_cast<int64_t>(entries.size());
      const int64_t w = slot / height;
      const CodeLocation row_at = element_at(tc.window_rows, static_cast<size_t>(slot));
      if (first[static_cast<size_t>(w)] == first[static_cast<size_t>(w) + 1] && w_.row_length(r) > 0) {
        report(row_at, fmt::format("row {} of A has {} non-zeros in {}, but its window {} (spmmc_tc_window_rows[{}]) has no "
                                   "blocks (spmmc_tc_window_block[{}] = spmmc_tc_window_block[{}] = {}): the tensor-core "
                                   "kernel stores row {} of C as zeros",
                                   r, w_.row_length(r), weights, w, slot, w, w + 1, first[static_cast<size_t>(w)], r));
        ++out_.rows_differing;
        continue;
      }
      std::stable_sort(entries.begin(), entries.end(), [](const TcEntry& a, const TcEntry& b) { return a.col < b.col; });
      size_t i = 0;
      int32_t p = w_.row_ptr[r];
      const int32_t end = w_.row_ptr[r + 1];
      while (i < entries.size() || p < end) {
        if (p == end || (i < entries.size() && entries[i].col < w_.col_idx[p])) {
          const TcEntry& extra = entries[i++];
          report(element_at(tc.a, extra.word),
                 fmt::format("A({}, {}) = {} is in the code ({} is {}) but not in {}", r, extra.col,
                             hex_float(extra.value), a_element(extra.word, extra.half), bits_text(extra.bits), weights));
          continue;
        }
        if (i == entries.size() || w_.col_idx[p] < entries[i].col) {
          report(row_at, fmt::format("missing: A({}, {}) = {} ({}) is in no vector of window {}, the window of row {} "
                                     "(spmmc_tc_window_rows[{}])",
                                     r, w_.col_idx[p], hex_float(w_.values[p]), weights, w, r, slot));
          ++p;
          continue;
        }
        const TcEntry& e = entries[i++];
        if (!same_bits(e.value, w_.values[p]))
          report(element_at(tc.a, e.word),
                 fmt::format("A({}, {}) is {} in the code ({} is {}) but {} in {}", r, e.col, hex_float(e.value),
                             a_element(e.word, e.half), bits_text(e.bits), hex_float(w_.values[p]), weights));
        ++p;
      }
      if (out_.total_differences != before) ++out_.rows_differing;
    }
  }

  // Loads of the tiles the blocks run: rows within B, lanes within the thread's columns.
  void check_tiles() {
    for (const AnalyzedTile& tile : code_.tiles) {
      if (tile.blocks.empty()) continue;
      for (const AnalyzedLoad& load : tile.load_sites) {
        if (load.row < 0 || load.row >= w_.cols)
          report(load.where, fmt::format("{} loads row {} of B, but B has {} rows (A has {} columns in {})", tile.function,
                                         load.row, w_.cols, w_.cols, options_.weights_name));
        if (load.first_lane + load.lanes > lanes_)
          report(load.where, fmt::format("{} loads B({}, col + {}), but a thread has {} column{} (col .. col + {}): it "
                                         "reads another thread's column",
                                         tile.function, load.row, load.first_lane + load.lanes - 1, lanes_,
                                         lanes_ == 1 ? "" : "s", lanes_ - 1));
      }
    }
  }

  // ---- rows of C ---------------------------------------------------------------------------------

  void check_row(int32_t r, const std::vector<Write>& writes) {
    if (writes.empty()) {
      const auto [where, why] = why_never_written(r);
      report(where, fmt::format("row {} of C is never written{}{}", r,
                                w_.row_length(r) ? fmt::format(" (row {} of A has {} non-zeros)", r, w_.row_length(r))
                                                 : std::string(),
                                why));
      return;
    }
    // Per lane, the stores that set C(r, col + l) and the ones that add to it (later ranges of K).
    std::vector<std::vector<const Write*>> by_lane(static_cast<size_t>(lanes_)), adds(static_cast<size_t>(lanes_));
    for (const Write& w : writes) (w.store->adds ? adds : by_lane)[static_cast<size_t>(w.store->lane)].push_back(&w);
    std::vector<int32_t> present;
    for (int32_t l = 0; l < lanes_; ++l) {
      if (!by_lane[static_cast<size_t>(l)].empty()) {
        present.push_back(l);
        continue;
      }
      if (!adds[static_cast<size_t>(l)].empty()) {
        const Write& add = *adds[static_cast<size_t>(l)].front();
        report(add.store->where, fmt::format("C({}, col + {}) is only added to ({} in {}): no kernel stores it first", r, l,
                                             add.tile->function, block_name(*add.block)));
        continue;
      }
      const Write& any = writes.front();
      report(any.store->where, fmt::format("C({}, col + {}) is never written: {} stores {} of row {} only", r, l,
                                           any.tile->function, lanes_text(lanes_of(writes)), r));
    }
    if (present.empty()) return;
    check_rewrites(r, by_lane, present);
    out_.rows_written += 1;
    // Each lane's value: the store that sets it, then what later ranges add, as one sum.
    std::vector<AnalyzedStore> merged(static_cast<size_t>(lanes_));
    for (int32_t l : present)
      merged[static_cast<size_t>(l)] = sum_of_ranges(r, l, *by_lane[static_cast<size_t>(l)][0], adds[static_cast<size_t>(l)]);
    const std::vector<AnalyzedProduct>& first = merged[static_cast<size_t>(present[0])].products;
    out_.code_nnz += static_cast<int64_t>(first.size());
    // Lanes mixed, and the order of the sums (when the columns are right: a wrong column is
    // reported as such, not also as out of order).
    bool order_reported = false;
    for (int32_t l : present) {
      const AnalyzedStore& store = merged[static_cast<size_t>(l)];
      for (const AnalyzedProduct& p : store.products)
        if (p.lane != l)
          report(p.where, fmt::format("A({}, {}) multiplies B({}, col + {}) into C({}, col + {}): the lanes are mixed", r,
                                      p.column, p.column, p.lane, r, l));
      if (order_reported || !same_columns(r, store.products)) continue;
      for (size_t i = 1; i < store.products.size(); ++i)
        if (store.products[i].column < store.products[i - 1].column) {
          report(store.products[i].where,
                 fmt::format("A({}, {}) is summed into row {} of C after A({}, {}) (at {}): not in column order, so the "
                             "rounding differs from the generic path and the CPU reference{}",
                             r, store.products[i].column, r, r, store.products[i - 1].column,
                             store.products[i - 1].where.str(), lane_suffix({l}, present.size())));
          order_reported = true;
          break;
        }
    }
    // Lanes with the same products (columns and bits, in any order) are compared once.
    std::vector<std::pair<std::vector<std::pair<int64_t, uint32_t>>, std::vector<int32_t>>> groups;
    for (int32_t l : present) {
      std::vector<std::pair<int64_t, uint32_t>> key;
      for (const AnalyzedProduct& p : merged[static_cast<size_t>(l)].products) key.emplace_back(p.column, bits_of(p.value));
      std::sort(key.begin(), key.end());
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
      if (it == groups.end()) groups.push_back({std::move(key), {l}});
      else it->second.push_back(l);
    }
    for (const auto& group : groups)
      compare_products(r, merged[static_cast<size_t>(group.second[0])], lane_suffix(group.second, present.size()));
  }

  // The range of K (spmmc_k_part_begin) column `col` falls in; 0 without ranges.
  int64_t range_of(int64_t col) const {
    const std::vector<int64_t>& b = code_.generic.k_part_begin.values;
    if (b.size() < 3) return 0;
    return static_cast<int64_t>(std::upper_bound(b.begin() + 1, b.end() - 1, col) - (b.begin() + 1));
  }

  // C(r, col + l) set by `set` and added to by `added` (the split along K): the additions must come
  // in later kernels than the store and than each other (the kernels of one range run at once),
  // each after griddepcontrol.wait, and each add one whole range of spmmc_k_part_begin, in range
  // order, as the generic path sums them. Returns the store with all products in that order.
  AnalyzedStore sum_of_ranges(int32_t r, int32_t l, const Write& set, std::vector<const Write*> added) {
    AnalyzedStore out = *set.store;
    if (added.empty() && code_.generic.k_part_begin.values.size() < 3) return out;
    std::stable_sort(added.begin(), added.end(), [](const Write* x, const Write* y) { return x->block->launch < y->block->launch; });
    const std::vector<int64_t>& b = code_.generic.k_part_begin.values;
    const auto check_range = [&](const AnalyzedStore& store, int64_t& last_range, bool first) {
      if (store.products.empty()) return;
      const int64_t lo = range_of(store.products.front().column), hi = range_of(store.products.back().column);
      if (lo != hi || (first ? lo != 0 : lo <= last_range))
        report(store.where, fmt::format("the products {} C({}, col + {}) here span columns {}..{}, {}: the generic path "
                                        "sums the ranges of spmmc_k_part_begin ({}) separately, in order, so the results "
                                        "differ",
                                        first ? "stored to" : "added to", r, l, store.products.front().column,
                                        store.products.back().column,
                                        lo != hi ? fmt::format("ranges {} to {}", lo, hi)
                                                 : fmt::format("range {}, not after range {}", lo, last_range),
                                        b.size() - 1));
      last_range = hi;
    };
    int64_t last_range = 0;
    check_range(out, last_range, true);
    const Write* before = &set;
    for (const Write* w : added) {
      if (b.size() < 3)
        report(w->store->where, fmt::format("{} adds to row {} of C, but the generic path has no ranges of K "
                                            "(spmmc_k_part_begin) to sum the same way",
                                            w->tile->function, r));
      if (w->block->launch <= before->block->launch)
        report(w->store->where, fmt::format("{} in {} adds to C({}, col + {}), which {} in {} writes in the same or a later "
                                            "kernel: the two race",
                                            w->tile->function, block_name(*w->block), r, l, before->tile->function,
                                            block_name(*before->block)));
      if (!w->tile->waits || w->tile->reads_c_early)
        report(w->tile->first_c_read, fmt::format("{} reads C before griddepcontrol.wait: the kernels before it may not "
                                                  "have stored row {} yet",
                                                  w->tile->function, r));
      if (b.size() >= 3) check_range(*w->store, last_range, false);
      out.products.insert(out.products.end(), w->store->products.begin(), w->store->products.end());
      before = w;
    }
    return out;
  }

  // "block 3 of layer0_kernel_1", and which launch when the kernel is launched more than once.
  std::string block_name(const AnalyzedBlock& block) const {
    const std::vector<KernelLaunch>& launches = code_.launch.launches;
    const int32_t kernel = launches[static_cast<size_t>(block.launch)].kernel;
    const auto launched = std::count_if(launches.begin(), launches.end(), [&](const KernelLaunch& l) { return l.kernel == kernel; });
    std::string name = fmt::format("block {} of {}", block.block, code_.kernels[static_cast<size_t>(kernel)].function);
    if (launched > 1) name += fmt::format(" ({}[{}])", code_.launch.kernels_name, block.launch);
    return name;
  }

  static std::vector<int32_t> lanes_of(const std::vector<Write>& writes) {
    std::set<int32_t> lanes;
    for (const Write& w : writes) lanes.insert(w.store->lane);
    return {lanes.begin(), lanes.end()};
  }

  // Lanes written more than once: one message when every lane is written equally often.
  void check_rewrites(int32_t r, const std::vector<std::vector<const Write*>>& by_lane, const std::vector<int32_t>& present) {
    const auto describe = [this](const std::vector<const Write*>& ws) {
      std::string by;
      for (size_t i = 0; i < ws.size() && i < 4; ++i)
        by += fmt::format("{}{} in {} at {}", i ? ", " : "", ws[i]->tile->function, block_name(*ws[i]->block),
                          ws[i]->store->where.str());
      if (ws.size() > 4) by += ", ...";
      return by;
    };
    const size_t times = by_lane[static_cast<size_t>(present[0])].size();
    const bool uniform = present.size() == static_cast<size_t>(lanes_) &&
                         std::all_of(present.begin(), present.end(),
                                     [&](int32_t l) { return by_lane[static_cast<size_t>(l)].size() == times; });
    if (uniform) {
      if (times > 1) {
        const auto& ws = by_lane[static_cast<size_t>(present[0])];
        report(ws[1]->store->where, fmt::format("row {} of C is written {} times ({})", r, times, describe(ws)));
      }
      return;
    }
    for (int32_t l : present) {
      const auto& ws = by_lane[static_cast<size_t>(l)];
      if (ws.size() > 1)
        report(ws[1]->store->where, fmt::format("C({}, col + {}) is written {} times ({})", r, l, ws.size(), describe(ws)));
    }
  }

  // The products of one store against row r of the weights, merged by column.
  void compare_products(int32_t r, const AnalyzedStore& store, const std::string& suffix) {
    std::vector<AnalyzedProduct> products = store.products;
    std::stable_sort(products.begin(), products.end(),
                     [](const AnalyzedProduct& a, const AnalyzedProduct& b) { return a.column < b.column; });
    const int32_t length = w_.row_length(r);
    const std::string& weights = options_.weights_name;
    if (static_cast<int64_t>(products.size()) != length)
      report(store.where, fmt::format("row {} of A has {} non-zero{} in {}, {} in {}{}", r, length, length == 1 ? "" : "s",
                                      weights, products.size(), code_.file, suffix));
    size_t i = 0;
    int32_t p = w_.row_ptr[r];
    const int32_t end = w_.row_ptr[r + 1];
    while (i < products.size() || p < end) {
      if (p == end || (i < products.size() && products[i].column < w_.col_idx[p])) {
        const AnalyzedProduct& extra = products[i++];
        if (extra.column < 0 || extra.column >= w_.cols)
          report(extra.where, fmt::format("A({}, {}) = {}: column {} is outside A, which has {} columns in {}{}", r,
                                          extra.column, hex_float(extra.value), extra.column, w_.cols, weights, suffix));
        else
          report(extra.where, fmt::format("A({}, {}) = {} is in the code but not in {}{}", r, extra.column,
                                          hex_float(extra.value), weights, suffix));
        continue;
      }
      if (i == products.size() || w_.col_idx[p] < products[i].column) {
        report(store.where, fmt::format("missing: A({}, {}) = {} ({}) is never multiplied into row {} of C{}", r,
                                        w_.col_idx[p], hex_float(w_.values[p]), weights, r, suffix));
        ++p;
        continue;
      }
      const AnalyzedProduct& first = products[i];
      if (!same_bits(first.value, w_.values[p]))
        report(first.where, fmt::format("A({}, {}) is {} in the code but {} in {}{}", r, first.column,
                                        hex_float(first.value), hex_float(w_.values[p]), weights, suffix));
      size_t same = i + 1;
      while (same < products.size() && products[same].column == first.column) ++same;
      if (same - i > 1)
        report(products[i + 1].where, fmt::format("A({}, {}) is multiplied into row {} of C {} times (first at {}){}", r,
                                                  first.column, r, same - i, first.where.str(), suffix));
      i = same;
      ++p;
    }
  }

  // True when `products` have exactly the columns of row r of the weights (in any order).
  bool same_columns(int32_t r, const std::vector<AnalyzedProduct>& products) const {
    if (static_cast<int64_t>(products.size()) != w_.row_length(r)) return false;
    std::vector<int64_t> columns;
    for (const AnalyzedProduct& p : products) columns.push_back(p.column);
    std::sort(columns.begin(), columns.end());
    return std::equal(columns.begin(), columns.end(), w_.col_idx.begin() + w_.row_ptr[r]);
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
  int64_t lanes_ = 1;  // V: the thread's columns
  int64_t tc_rows_ = kTcHalfRows;  // the tensor-core family's rows per window (spmmc_tc_rows, once checked)
  size_t sha_difference_ = std::numeric_limits<size_t>::max();  // its index in out_.differences
};

}  // namespace

std::string hex_float(float value) { return fmt::format("{:a}", value); }

WeightsComparison compare_with_weights(const EmittedKernelAnalysis& code, const Csr& weights,
                                       const CompareOptions& options) {
  WeightsComparison out;
  if (!code.analyzed || code.dtype == DType::kFp32) {
    Comparison(code, weights, options, out).run();
    return out;
  }
  // Half precision: spmmc compile rounds A's values to the dtype (dropping those that round to
  // zero) before it emits, hashes and counts them; so is the reference.
  Csr rounded = weights;
  CompareOptions named = options;
  named.weights_name = fmt::format("{} rounded to {}", options.weights_name, dtype_name(code.dtype));
  try {
    round_values_to_dtype(rounded, code.dtype, options.weights_name);
  } catch (const UserError& e) {
    out.weights_nnz = weights.nnz();
    out.weights_sha256 = weights_sha256(weights);
    out.total_differences = 1;
    const CodeLocation& at = code.info.dtype.where;
    out.differences.push_back({at.file.empty() ? CodeLocation{code.file, 0, 0} : at,
                               fmt::format("{} cannot be held in {} (the dtype of {}): {}", options.weights_name,
                                           dtype_info_name(code.dtype), code.file, e.message())});
    return out;
  }
  Comparison(code, rounded, named, out).run();
  return out;
}

}  // namespace spmmc
