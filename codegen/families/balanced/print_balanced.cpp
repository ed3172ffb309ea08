#include "codegen/families/balanced/print_balanced.h"

#include <cstdint>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "codegen/embedded_templates.h"
#include "codegen/fill_template.h"
#include "compiler/common/diagnostics.h"

namespace spmmc {

namespace {

template <class T, class F>
std::string joined(const std::vector<T>& values, F&& print) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i % 16 == 0 ? ",\n" : ", ";
    out += print(values[i]);
  }
  return out;
}

}  // namespace

std::string print_balanced(const Csr& a, const BalancedSchedule& schedule, const BalancedPrint& how) {
  SPMMC_CHECK(how.pairs_below_n == 0 || (schedule.groups == 1 && schedule.warps % 2 == 0),
              "the pairs kernel needs a schedule of one piece per warp and an even number of warps");
  const auto number = [](int32_t x) { return std::to_string(x); };
  // An array's values as printed ("0" where it has none), or the placeholder with its bytes set aside.
  const auto values = [&](const char* name, const auto& elements, auto print) {
    return values_or_aside(how.aside, name, elements,
                           [&] { return elements.empty() ? std::string("0") : joined(elements, print); });
  };
  const std::string csr =
      !how.csr_arrays ? std::string()
                  : fill_template(embedded_template("balanced_csr.cuh"),
                                  {{"HEADER_COMMENT", ""},
                                   {"M", std::to_string(a.rows)},
                                   {"ROW_PTR", values("spmmc_row_ptr", a.row_ptr, number)},
                                   // an empty A: one unused entry (CUDA has no arrays of zero elements)
                                   {"COL_IDX", values("spmmc_col_idx", a.col_idx, number)},
                                   {"WEIGHT_BITS", values_or_aside(how.aside, "spmmc_weight_bits", a.values, [&] {
                                      return a.values.empty() ? std::string("0u") : joined(a.values, [](float x) {
                                        uint32_t bits = 0;
                                        std::memcpy(&bits, &x, sizeof bits);
                                        return fmt::format("0x{:08x}u", bits);
                                      });
                                    })}},
                                  "balanced_csr.cuh");
  // The table of pieces (int4s): row, first product, end, and the slot of the row's sum for its pieces.
  const auto table = [&](const char* name, const BalancedSchedule& of) {
    std::vector<int32_t> piece_fields;
    piece_fields.reserve(of.slots.size() * 4);
    for (const BalancedPiece& p : of.slots)
      piece_fields.insert(piece_fields.end(), {p.row, p.begin, p.end, p.first + of.slots_per_block() * p.pieces});
    return values_or_aside(how.aside, name, piece_fields, [&] {
      std::string out;
      for (size_t i = 0; i < piece_fields.size(); i += 4)
        out += fmt::format("{}{{{}, {}, {}, {}}}", i == 0 ? "" : i % 64 == 0 ? ",\n" : ", ", piece_fields[i],
                           piece_fields[i + 1], piece_fields[i + 2], piece_fields[i + 3]);
      return out;
    });
  };
  const std::string pieces = table("spmmc_piece", schedule);
  SPMMC_CHECK(how.mid == nullptr || (how.mid->groups == 1 && schedule.groups == 1 && how.mid->warps == schedule.warps),
              "the balanced path's second table: one piece per warp, the warps per block of the first");
  return fill_template(
      embedded_template("kernel_balanced.cuh"),
      {{"HEADER_COMMENT", ""},
       {"CSR_ARRAYS", csr},
       {"WARPS", std::to_string(schedule.warps)},
       {"GROUPS", std::to_string(schedule.groups)},
       // two blocks per SM asked only with several pieces per warp (kernel_balanced.cuh says why)
       {"BOUNDS", schedule.groups > 1 ? "__launch_bounds__(32 * spmmc_balanced_warps, 2)"
                                      : "__launch_bounds__(32 * spmmc_balanced_warps)"},
       {"BLOCKS", std::to_string(schedule.blocks())},
       {"PIECE_LENGTH", std::to_string(schedule.piece_length)},
       {"PAIRS_BELOW", std::to_string(how.pairs_below_n)},
       {"SPMV", how.spmv ? "1" : "0"},
       {"PIECES", pieces},
       {"MID", how.mid ? "1" : "0"},
       {"MID_TABLE", !how.mid ? std::string()
                              : fmt::format("constexpr int spmmc_balanced_mid_blocks = {};  // its grid.x\n"
                                            "constexpr int spmmc_balanced_mid_piece_length = {};\n"
                                            "__device__ const int4 spmmc_piece_mid[] = {{{}}};\n",
                                            how.mid->blocks(), how.mid->piece_length, table("spmmc_piece_mid", *how.mid))}},
      "kernel_balanced.cuh");
}

}  // namespace spmmc
