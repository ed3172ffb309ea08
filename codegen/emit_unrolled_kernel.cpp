#include "codegen/emit_unrolled_kernel.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "codegen/arrays_on_host.h"
#include "codegen/embedded_templates.h"
#include "codegen/fill_template.h"
#include "codegen/generic_launch.h"
#include "codegen/families/balanced/balanced_launch.h"
#include "codegen/families/balanced/print_balanced.h"
#include "codegen/kernel_program.h"
#include "codegen/print_tensor_core.h"
#include "codegen/print_tile_ptx.h"
#include "codegen/tensor_core_launch.h"
#include "compiler/common/diagnostics.h"
#include "compiler/planning/tiling_stats.h"

namespace spmmc {
namespace {

// "a, b, c" of `values` formatted by `format_one`, wrapped every 16 values.
template <typename T, typename F>
std::string joined(const std::vector<T>& values, F format_one) {
  const std::string out = joined_items(values.size(), 16, [&](size_t i) { return format_one(values[i]); });
  return out.empty() ? std::string("0") : out;
}

std::string comment_lines(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out += line.empty() ? "//\n" : "// " + line + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string float_literal(float v) {
  SPMMC_CHECK(std::isfinite(v), "weights must be finite");
  return fmt::format("{:a}f", v);
}

bool is_c_identifier(const std::string& name) {
  // Keywords of C and of C++ (the .cu is C++, the header is both): not identifiers.
  static const std::set<std::string> kKeywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "restrict", "return",
      "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  if (kKeywords.count(name)) return false;
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
  if (name.rfind("__", 0) == 0) return false;
  if (name.size() >= 2 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))) return false;
  return true;
}

namespace {

// What a balanced kernel of four columns per lane needs of a call (NAME_info()'s `needs`).
constexpr const char* kBalancedV4Needs = "n % 4 == 0; B and C aligned to 16 bytes";

// The balanced kernels as NAME_info()'s variants (kernel_balanced.cuh's launch): the pairs kernel from
// `from_n` below `pairs_below_n` (0: none), then V = 4 from 4 x `lanes` columns, 2 from 2 x `lanes`, 1
// from 1, each from no lower than `from_n` and `pairs_below_n`, up to `last_n` (V = 1 up to `v1_last_n`
// where that is not negative and lower); a variant whose range is empty is left out. The balanced family's
// (from 1, no end) and the small-n path's.
std::vector<EmittedKernel::Variant> balanced_variants(int64_t lanes, int64_t from_n, int64_t last_n, int64_t pairs_below_n = 0,
                                                      int64_t v1_last_n = -1) {
  std::vector<EmittedKernel::Variant> out;
  if (pairs_below_n > from_n) out.push_back({"balanced-pairs-v1", from_n, std::min(pairs_below_n - 1, last_n), ""});
  from_n = std::max(from_n, pairs_below_n);
  for (const auto& [v, needs] : {std::make_pair(int64_t{4}, kBalancedV4Needs),
                                 std::make_pair(int64_t{2}, "n % 2 == 0; B and C aligned to 8 bytes"), std::make_pair(int64_t{1}, "")}) {
    const int64_t first = std::max(v == 1 ? 1 : v * lanes, from_n);
    const int64_t last = v == 1 && v1_last_n >= 0 ? std::min(last_n, v1_last_n) : last_n;
    if (first <= last) out.push_back({fmt::format("balanced-v{}", v), first, last, needs});
  }
  return out;
}

// NAME_info()'s name of spmmc_balanced_spmv, the balanced kernel at n = 1 (a lane per product).
constexpr const char* kBalancedSpmvVariant = "balanced-spmv";

// The order in which the generic kernel takes the rows: the A-tiles' rows (rows that share columns
// run in one block and share the rows of B they load through L1), the tiles with the most
// non-zeros first (the longest blocks start first, so the last wave's tail is short), then the
// empty rows; a permutation of 0 .. rows-1 (checked: the kernel writes each row of C once).
std::vector<int32_t> generic_row_order(const Csr& a, const RowTiling& tiling) {
  const std::vector<int32_t> tile_nnz = measure_tiling(a, tiling).nnz_per_tile;
  std::vector<int32_t> tiles(tile_nnz.size());
  for (size_t t = 0; t < tiles.size(); ++t) tiles[t] = static_cast<int32_t>(t);
  std::stable_sort(tiles.begin(), tiles.end(),
                   [&](int32_t x, int32_t y) { return tile_nnz[static_cast<size_t>(x)] > tile_nnz[static_cast<size_t>(y)]; });
  std::vector<int32_t> order;
  order.reserve(static_cast<size_t>(a.rows));
  for (const int32_t t : tiles)
    order.insert(order.end(), tiling.rows.begin() + tiling.tile_ptr[static_cast<size_t>(t)],
                 tiling.rows.begin() + tiling.tile_ptr[static_cast<size_t>(t) + 1]);
  order.insert(order.end(), tiling.empty_rows.begin(), tiling.empty_rows.end());
  std::vector<char> seen(static_cast<size_t>(a.rows), 0);
  for (int32_t row : order) {
    SPMMC_CHECK(row >= 0 && row < a.rows && !seen[static_cast<size_t>(row)], "the row tiling is not a partition of A's rows");
    seen[static_cast<size_t>(row)] = 1;
  }
  SPMMC_CHECK(order.size() == static_cast<size_t>(a.rows), "the row tiling is not a partition of A's rows");
  return order;
}

}  // namespace

std::vector<std::string> unrolled_nvcc_options() {
  return {"-Xptxas", fmt::format("-O{}", kUnrolledPtxasLevel), "--split-compile", kUnrolledSplitCompile};
}

std::vector<std::string> unrolled_nvrtc_options() { return {fmt::format("--ptxas-options=-O{}", kUnrolledPtxasLevel)}; }

EmittedKernel emit_unrolled_kernel(const Csr& a, const RowTiling& tiling, const TileCandidate& tile,
                                   const EmitOptions& options) {
  SPMMC_CHECK(is_c_identifier(options.name), "the kernel name must be a C identifier");
  SPMMC_CHECK(!(options.generic_only && options.tensor_core), "one family: generic or tensor-core");
  SPMMC_CHECK(options.generic_below_n >= 0, "generic_below_n must not be negative");
  SPMMC_CHECK(!options.balanced || (options.generic_only && (options.dtype == DType::kFp32 || options.dtype == DType::kTf32)),
              "the balanced family: a generic-only file of float32 (or tf32) values");
  // The balanced kernel as the small-n path of an unrolled or generic file (never the balanced family's
  // or the tensor-core family's).
  const bool small_n_balanced = options.balanced_below_n > options.balanced_from_n;
  // (its one column per lane: to the path's end unless balanced_v1_below_n ends it sooner)
  const int64_t balanced_v1_below = options.balanced_v1_below_n > 0 ? std::min(options.balanced_v1_below_n, options.balanced_below_n)
                                                                     : options.balanced_below_n;
  SPMMC_CHECK(!small_n_balanced || (options.balanced_from_n >= 1 && !options.balanced && !options.tensor_core &&
                                    (options.dtype == DType::kFp32 || options.dtype == DType::kTf32)),
              "the balanced small-n path: n from 1, in a float32 (or tf32) file of the unrolled or generic family");
  SPMMC_CHECK(!options.balanced_spmv || options.balanced || small_n_balanced,
              "n = 1 by the balanced kernel needs the balanced family or its small-n path");
  // The generic and tensor-core families have no unrolled code.
  const bool no_unrolled = options.generic_only || options.tensor_core;
  SPMMC_CHECK(!no_unrolled || options.k_parts == 1, "only the unrolled family has a split along K");
  // The code's element type: a tf32 file of a CUDA-core family is float32's code (A rounded to tf32,
  // B multiplied as it is given: docs/design/precision.md); its info still says tfloat32.
  const DType code_dtype = options.dtype == DType::kTf32 && !options.tensor_core ? DType::kFp32 : options.dtype;
  SPMMC_CHECK(code_dtype == DType::kFp32 || options.k_parts == 1, "the split along K needs float32 B and C");
  // The generic family has no unrolled code: an empty program (no tiles, no kernels), K whole.
  const KernelProgram program =
      no_unrolled ? KernelProgram{} : build_kernel_program(a, tiling, tile, options.fmas_per_kernel, options.k_parts);
  const std::vector<int32_t> k_part_begin = no_unrolled ? std::vector<int32_t>{0, a.cols} : program.k_part_begin;
  const int32_t v = no_unrolled ? 1 : program.launch.cols_per_thread;
  EmittedKernel k;
  // Accumulating tiles wait for the kernels before them with griddepcontrol.wait (sm_90 and later).
  SPMMC_CHECK(options.k_parts == 1 || has_dependent_launch(options.arch), "the split along K needs a target of sm_90 or later");
  std::string tiles;
  for (size_t id = 0; id < program.tiles.size(); ++id) print_tile_ptx(tiles, static_cast<int32_t>(id), program.tiles[id], v, options.loads_ahead, code_dtype);
  k.k_part_begin = k_part_begin;
  std::string kernels, pointers, tile_counts, declarations;
  for (int32_t j = 0; j < program.kernels(); ++j) {
    const std::string symbol = fmt::format("{}_kernel_{}", options.name, j);
    std::string dispatch;
    for (int32_t x = 0; x < program.tiles_of(j); ++x)
      fmt::format_to(std::back_inserter(dispatch), "      case {}: spmmc_tile_{}(b, c, ld); break;\n", x, program.first_tile(j) + x);
    kernels += fill_template(embedded_template("kernel_group.cuh"),
                             {{"HEADER_COMMENT", ""}, {"KERNEL", symbol}, {"DISPATCH", dispatch}}, "kernel_group.cuh");
    fmt::format_to(std::back_inserter(pointers), "{}reinterpret_cast<const void*>(&{})", j ? ",\n    " : "", symbol);
    fmt::format_to(std::back_inserter(tile_counts), "{}{}", j ? (j % 16 ? ", " : ",\n    ") : "", program.tiles_of(j));
    fmt::format_to(std::back_inserter(declarations),
                   "extern \"C\" __global__ void {}(const {}* __restrict__ B, {}* __restrict__ C, int64_t n);\n", symbol,
                   dtype_c_type(options.dtype), dtype_c_type(options.dtype));
    k.kernel_symbols.push_back(symbol);
    k.kernel_tiles.push_back(program.tiles_of(j));
  }
  k.tiles = static_cast<int32_t>(program.tiles.size());
  k.fmas = program.fmas();
  k.loads = program.loads();
  k.stores = a.rows;
  TensorCoreCode tc;
  if (options.tensor_core) {
    tc = print_tensor_core(a, tiling, options.dtype, options.sm_count, options.tuned_n);
    k.tensor_core = tc;
    k.tensor_core.code.clear();
  }
  if (!no_unrolled) {
    k.nvcc_options = unrolled_nvcc_options();
    k.nvrtc_options = unrolled_nvrtc_options();
  }

  std::string nvcc_flags;
  for (const std::string& o : k.nvcc_options) nvcc_flags += " " + o;
  const std::string build_line = fmt::format(
      "Build: nvcc -O3 -arch={}{} -c {}.cu{}", options.arch, nvcc_flags, options.name,
      k.nvcc_options.empty() ? std::string()
                             : fmt::format(" (ptxas -O{}: as fast as -O3 and about twice as quick to build this code; "
                                           "{}.nvcc-options holds the options for nvcc --options-file)",
                                           kUnrolledPtxasLevel, options.name));
  const std::string comment = comment_lines(options.provenance.empty() ? build_line : options.provenance + "\n" + build_line);
  const std::map<std::string, std::string> header_values = {
      {"HEADER_COMMENT", comment},
      // The name as it is (not upper-cased): layers whose names differ only in case get distinct guards.
      {"GUARD", "SPMMC_" + options.name + "_H"},
      {"KERNEL_INFO", std::string(embedded_template("spmmc_kernel_info.h"))},
      {"NAME", options.name},
      {"INFO_NAME", options.name + "_info"},
      {"DTYPE_INCLUDE", *dtype_header(options.dtype) == '\0' ? "" : fmt::format("#include <{}>\n", dtype_header(options.dtype))},
      {"ELEM", dtype_c_type(options.dtype)},
  };
  k.h = fill_template(embedded_template("kernel.h"), header_values, "kernel.h");
  const std::map<std::string, std::string> device_values = {
      {"HEADER_COMMENT", ""},
      // The generic family's info: M1 = 1, N1 = the generic kernel's 128 threads, V = 1, 0 A-tiles;
      // the tensor-core family's: M1 = a window's rows (8 or 16), N1 = 64 columns per warp (V = 8 per
      // lane of its 8 lanes per row), the windows as A-tiles.
      {"M1", std::to_string(options.tensor_core ? tiling.m1 : options.generic_only ? 1 : program.launch.m1)},
      {"THREADS", std::to_string(options.tensor_core ? 8 : options.generic_only ? 128 : program.launch.threads)},
      {"V", std::to_string(options.tensor_core ? 8 : v)},
      {"MIN_BLOCKS", std::to_string(no_unrolled ? 1 : program.launch.min_blocks_per_sm)},
      {"A_TILES", std::to_string(options.tensor_core ? tc.windows : k.tiles)},
      {"TILE_FUNCTIONS", tiles},
      {"KERNELS", kernels},
  };
  const std::string device_code = fill_template(embedded_template("kernel_device.cuh"), device_values, "kernel_device.cuh");
  // B's and C's element type and the generic path's loads and stores of it (templates/dtype_*.cuh).
  const std::string dtype_template = fmt::format("dtype_{}.cuh", dtype_name(code_dtype));
  const std::string dtype_code = fill_template(embedded_template(dtype_template), {{"HEADER_COMMENT", ""}}, dtype_template);
  std::string generic_code;
  int64_t split_below = kGenericSplitBelow;  // the generic path's (SPMMC_GENERIC_SPLIT_BELOW)
  const bool warp_wide = !options.balanced && generic_warp_wide(a, code_dtype);  // (SPMMC_GENERIC_WARP_WIDE)
  const int64_t warp_strided_from = generic_warp_strided_from(a);                 // (SPMMC_GENERIC_WARP_STRIDED_FROM)
  // Where every form that holds A's arrays loses their values (--arrays host; the NVRTC form alone of a
  // CSR family), the printers set the arrays' bytes aside instead of printing them for
  // move_arrays_to_host to parse back.
  ArraysAside aside;
  const bool print_aside = options.host_arrays || (options.nvrtc_form && options.nvrtc_only && options.generic_only);
  if (options.balanced) {
    const BalancedSchedule schedule = schedule_balanced(a, options.piece_length, kBalancedWarps, options.balanced_groups);
    generic_code = print_balanced(a, schedule, {true, 0, options.balanced_spmv, print_aside ? &aside : nullptr});
    k.balanced_rows_cut = schedule.rows_cut;
    k.balanced_blocks = schedule.blocks();
  } else {
    // A's CSR arrays and the generic kernels: in NAME.cu always; in the NVRTC form of the generic
    // family only (the tuner times it: codegen/generic_launch.h), not in an unrolled candidate's.
    const std::vector<int32_t> generic_order = generic_row_order(a, tiling);
    split_below = generic_split_below(a, options.sm_count);
    std::vector<int32_t> generic_span;  // the products of each slot's row: begin, end
    generic_span.reserve(2 * generic_order.size());
    for (const int32_t row : generic_order) {
      generic_span.push_back(a.row_ptr[static_cast<size_t>(row)]);
      generic_span.push_back(a.row_ptr[static_cast<size_t>(row) + 1]);
    }
    const auto number = [](int32_t x) { return std::to_string(x); };
    ArraysAside* const set_aside = print_aside ? &aside : nullptr;
    const auto ints = [&](const char* array, const std::vector<int32_t>& values) {
      return values_or_aside(set_aside, array, values, [&] { return joined(values, number); });
    };
    const std::map<std::string, std::string> generic_values = {
        {"HEADER_COMMENT", ""},
        {"M", std::to_string(a.rows)},
        {"NNZ", std::to_string(a.nnz())},
        {"K_PARTS", std::to_string(k_part_begin.size() - 1)},
        {"K_PART_BEGIN", joined(k_part_begin, number)},
        {"ROW_PTR", ints("spmmc_row_ptr", a.row_ptr)},
        {"COL_IDX", ints("spmmc_col_idx", a.col_idx)},
        {"GENERIC_ORDER", ints("spmmc_generic_order", generic_order)},
        {"GENERIC_SPAN", ints("spmmc_generic_span", generic_span)},
        // the generic family builds at nvcc's default level, the unrolled files' generic path at -O1
        // (templates/kernel_generic.cuh says what each measured)
        {"WEIGHTS_AHEAD", options.generic_only ? "1" : "0"},
        {"SPLIT_BELOW", std::to_string(split_below)},
        {"WARP_WIDE", warp_wide ? "1" : "0"},
        {"WARP_STRIDED_FROM", std::to_string(warp_strided_from)},
        {"WEIGHT_BITS", values_or_aside(set_aside, "spmmc_weight_bits", a.values, [&] {
           return joined(a.values, [](float x) {
             uint32_t bits = 0;
             std::memcpy(&bits, &x, sizeof bits);
             return fmt::format("0x{:08x}u", bits);
           });
         })},
    };
    generic_code = fill_template(embedded_template("kernel_generic.cuh"), generic_values, "kernel_generic.cuh");
  }
  // The small-n path: the balanced kernel beside the generic path, reading its CSR arrays.
  std::string small_n_code, small_n_variants;
  if (small_n_balanced) {
    const BalancedSchedule schedule = schedule_balanced(a, options.small_n_piece_length, kBalancedWarps, 1);
    const bool mid = options.balanced_mid_below_n > options.balanced_mid_from_n;
    SPMMC_CHECK(!mid || (options.balanced_mid_from_n >= options.balanced_below_n && options.mid_piece_length >= 1),
                "the balanced path's second table: from the path's end on, pieces of at least one product");
    const BalancedSchedule mid_schedule =
        mid ? schedule_balanced(a, options.mid_piece_length, kBalancedWarps, 1) : BalancedSchedule{};
    small_n_code = "// The balanced kernel as the small-n path (spmmc compile chose it, docs/emitted-code.md).\n"
                   "#define SPMMC_SMALL_N_BALANCED 1\n" +
                   print_balanced(a, schedule, {false, options.balanced_pairs_below_n, options.balanced_spmv,
                                                print_aside ? &aside : nullptr, mid ? &mid_schedule : nullptr});
    k.balanced_rows_cut = schedule.rows_cut;
    k.balanced_blocks = schedule.blocks();
    k.balanced_mid_rows_cut = mid_schedule.rows_cut;
    k.balanced_mid_blocks = mid ? mid_schedule.blocks() : 0;
    // One piece per warp: the template's spmmc_balanced_lanes is 32.
    std::vector<EmittedKernel::Variant> path =
        balanced_variants(32, options.balanced_from_n, options.balanced_below_n - 1, options.balanced_pairs_below_n,
                          balanced_v1_below - 1);
    // (the template lists balanced-spmv itself, where SPMMC_BALANCED_SPMV)
    if (options.balanced_spmv) k.variants.push_back({kBalancedSpmvVariant, 1, 1, ""});
    // The second table's kernel: four columns per lane only (from 4 x 32 lanes; the other n go on to the
    // generic path).
    const int64_t mid_first = std::max<int64_t>(options.balanced_mid_from_n, 4 * 32);
    if (mid && mid_first < options.balanced_mid_below_n)
      path.push_back({"balanced-mid-v4", mid_first, options.balanced_mid_below_n - 1, kBalancedV4Needs});
    for (const EmittedKernel::Variant& x : path) {
      k.variants.push_back(x);
      fmt::format_to(std::back_inserter(small_n_variants), "{{\"{}\", {}, {}, \"{}\"}},\n    ", x.kernel, x.n_min, x.n_max,
                     x.needs);
    }
  }
  // A's arrays on the host (--arrays host): in NAME.cu as host bytes (the NVRTC form below declares them
  // without values for the tuner, whatever --arrays).
  std::string host_define, host_upload;
  HostArrays generic, small_n;
  if (options.host_arrays) {
    SPMMC_CHECK(!options.tensor_core, "A's arrays on the host: not the tensor-core family");
    generic = move_arrays_to_host(generic_code, HostBytes::kLiterals, aside);
    small_n = move_arrays_to_host(small_n_code, HostBytes::kLiterals, aside);
    std::vector<std::string> arrays = generic.arrays;
    arrays.insert(arrays.end(), small_n.arrays.begin(), small_n.arrays.end());
    host_define = "// A's arrays travel as host bytes, copied to each device at its first call (spmmc compile --arrays host).\n"
                  "#define SPMMC_HOST_ARRAYS 1\n";
    host_upload = print_host_array_upload(arrays);
    k.host_array_bytes = generic.bytes + small_n.bytes;
  }
  const std::map<std::string, std::string> kernel_values = {
      {"HEADER_COMMENT", comment},
      {"HOST_ARRAYS_DEFINE", host_define},
      {"HOST_ARRAYS", host_upload},
      {"HEADER", "\"" + options.name + ".h\""},
      {"GENERIC_ONLY", options.balanced ? "// The balanced family (spmmc compile chose it, docs/emitted-code.md): A's CSR arrays, its pieces and\n"
                                          "// the balanced kernel only; the unrolled path below is compiled out.\n"
                                          "#define SPMMC_BALANCED 1\n"
                                          "#ifndef SPMMC_GENERIC_ONLY\n#define SPMMC_GENERIC_ONLY 1\n#endif\n"
                       : options.generic_only ? "// The generic family (spmmc compile chose it, docs/emitted-code.md): A's CSR arrays and the generic\n"
                                              "// kernel only; the unrolled path below is compiled out.\n"
                                              "#ifndef SPMMC_GENERIC_ONLY\n#define SPMMC_GENERIC_ONLY 1\n#endif\n"
                       : options.tensor_core ? "// The tensor-core family (spmmc compile chose it, docs/emitted-code.md): A's vectors and the\n"
                                               "// tensor-core kernel, with A's CSR arrays and the generic kernel for the calls it does not take;\n"
                                               "// the unrolled path below is compiled out.\n"
                                               "#define SPMMC_TENSOR_CORE 1\n"
                                               "#ifndef SPMMC_GENERIC_ONLY\n#define SPMMC_GENERIC_ONLY 1\n#endif\n"
                                             : ""},
      {"DTYPE_CODE", dtype_code},
      {"DEVICE_CODE", device_code},
      {"GENERIC_CODE", options.host_arrays ? generic.code : generic_code},
      {"SMALL_N_CODE", options.host_arrays ? small_n.code : small_n_code},
      {"BALANCED_FROM_N", std::to_string(options.balanced_from_n)},
      {"BALANCED_BELOW_N", std::to_string(options.balanced_below_n)},
      {"BALANCED_V1_BELOW_N", std::to_string(balanced_v1_below)},
      {"BALANCED_MID_FROM_N", std::to_string(options.balanced_mid_from_n)},
      {"BALANCED_MID_BELOW_N", std::to_string(options.balanced_mid_below_n)},
      {"SMALL_N_VARIANTS", small_n_variants},
      {"TENSOR_CORE_CODE", tc.code},
      {"DTYPE", dtype_info_name(options.dtype)},
      // Compiled out in the generic family (no kernels): a table of one null entry.
      {"KERNEL_COUNT", std::to_string(std::max(program.kernels(), 1))},
      {"KERNEL_POINTERS", no_unrolled ? "nullptr" : pointers},
      {"KERNEL_TILES", no_unrolled ? "0" : tile_counts},
      {"A_FORMAT", options.tensor_core    ? "vector-blocks-constants"
                   : options.balanced   ? "csr-pieces-constants"
                   : options.generic_only ? "csr-constants"
                                          : "unrolled-constants"},
      {"NAME", options.name},
      {"INFO_NAME", options.name + "_info"},
      {"K", std::to_string(a.cols)},
      {"NNZ", std::to_string(a.nnz())},
      {"ARCH", options.arch},
      {"REORDER", std::string(reorder_method_name(tiling.method))},
      {"SHA256", options.weights_sha256},
      {"VERSION", SPMMC_VERSION},
      {"GENERIC_BELOW_N", std::to_string(options.generic_only ? 0 : options.generic_below_n)},
  };
  if (options.nvrtc_form) {
    // The kernels the tuner looks up by name: the generic or balanced family's, or the tensor-core
    // family's (the staged one where the file has its tables).
    std::vector<const char*> symbols;
    if (options.balanced) symbols.assign(std::begin(kBalancedKernels), std::end(kBalancedKernels));
    else if (options.generic_only) {
      symbols.assign(std::begin(kGenericKernels), std::end(kGenericKernels));
      symbols.push_back(kGenericKernelWarpStrided);
    }
    if (options.generic_only && warp_wide) symbols.insert(symbols.end(), {kGenericKernelWarpWide, kGenericKernelWarpWideStrided});
    if (options.tensor_core) symbols.push_back(kTensorCoreKernel);
    if (options.tensor_core && tc.chunk_rows > 0) symbols.push_back(kTensorCoreStagedKernel);
    for (const char* symbol : symbols)
      fmt::format_to(std::back_inserter(declarations),
                     "extern \"C\" __global__ void {}(const {}* __restrict__ B, {}* __restrict__ C, int64_t n);\n", symbol,
                     dtype_c_type(options.dtype), dtype_c_type(options.dtype));
    // The generic and balanced families' arrays without values: NVRTC then compiles a small file
    // whatever A (the values as constants took it 50 s and 2.7 GB at 2M non-zeros, docs/design/tuning.md),
    // and the tuner copies them into the module (as --arrays host's entry point does).
    std::string nvrtc_generic;
    if (options.generic_only) {
      HostArrays stripped = move_arrays_to_host(generic_code, HostBytes::kValues, aside);
      nvrtc_generic = std::move(stripped.code);
      k.nvrtc_arrays = std::make_shared<const std::vector<ArrayValues>>(std::move(stripped.values));
    }
    k.nvrtc_cu = fill_template(embedded_template("kernel_nvrtc.cu"),
                               {{"HEADER_COMMENT", comment},
                                {"DTYPE_CODE", dtype_code},
                                {"KERNEL_DECLARATIONS", declarations},
                                // the tensor-core family has no unrolled code (its info's tile fields describe windows)
                                {"DEVICE_CODE", options.tensor_core ? std::string() : device_code},
                                {"DTYPE_INCLUDE", header_values.at("DTYPE_INCLUDE")},
                                {"GENERIC_CODE", nvrtc_generic},
                                {"TENSOR_CORE_CODE", tc.code}},
                               "kernel_nvrtc.cu");
  }
  if (!(options.nvrtc_form && options.nvrtc_only)) k.cu = fill_template(embedded_template("kernel.cu"), kernel_values, "kernel.cu");
  // The table the template's spmmc_variants holds with the file's values (its defaults of
  // SPMMC_GENERIC_SPLIT_BELOW, SPMMC_GENERIC_V4_FROM and SPMMC_GENERIC_WARP_FROM: codegen/generic_launch.h).
  constexpr int64_t any_n = std::numeric_limits<int64_t>::max();
  const int64_t below = options.generic_only ? 0 : options.generic_below_n;
  if (options.tensor_core && tc.staged_from_n > 0)
    k.variants.push_back({"tensor-core-staged", std::max(tc.staged_from_n, below), tc.staged_max_n,
                          "n % 8 == 0; B and C aligned to 16 bytes"});
  if (options.tensor_core)
    k.variants.push_back({"tensor-core", std::max<int64_t>(below, 1), any_n, "n % 8 == 0; B and C aligned to 16 bytes"});
  else if (!options.generic_only)
    k.variants.push_back({"unrolled", std::max<int64_t>(below, 1), (int64_t{1} << 32) / dtype_bytes(options.dtype) - 1,
                          "n % cols_per_thread == 0; B and C aligned to cols_per_thread elements"});
  if (options.balanced) {
    const int64_t lanes = 32 / options.balanced_groups;  // the template's spmmc_balanced_lanes
    if (options.balanced_spmv) k.variants.push_back({kBalancedSpmvVariant, 1, 1, ""});
    for (const EmittedKernel::Variant& x : balanced_variants(lanes, options.balanced_spmv ? 2 : 1, any_n))
      k.variants.push_back(x);
    return k;
  }
  if (split_below > 1) k.variants.push_back({"generic-split", 1, split_below - 1, ""});
  if (warp_wide) k.variants.push_back({"generic-warp-wide", kGenericWarpFrom, kGenericWarpMaxN, kGenericWarpWideNeeds});
  k.variants.push_back({"generic-warp", kGenericWarpFrom, kGenericWarpMaxN, kGenericWarpNeeds});
  if (warp_wide)
    k.variants.push_back({"generic-warp-wide-strided", warp_strided_from, kGenericWarpMaxN, kGenericWarpWideStridedNeeds});
  k.variants.push_back({"generic-warp-strided", warp_strided_from, kGenericWarpMaxN, ""});
  k.variants.push_back({"generic-v4", std::min(kGenericV4WideFrom, kGenericV4From), any_n, kGenericV4Needs});
  k.variants.push_back({"generic-v1", split_below, any_n, ""});
  return k;
}

EmitOptions csr_nvrtc_form_options(std::string name, std::string arch) {
  EmitOptions emit;
  emit.name = std::move(name);
  emit.arch = std::move(arch);
  emit.nvrtc_form = true;
  emit.nvrtc_only = true;
  emit.generic_only = true;
  return emit;
}

}  // namespace spmmc
