// A's arrays on the host (spmmc compile --arrays host, codegen/arrays_on_host.h): the bytes of every
// array as it was printed, and files of the three families that take it run on the CPU through
// tests/cuda_emulation bit for bit as their device-constant form, copying the arrays once per
// context (again after a reset) with the caller's capture mode restored.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/arrays_on_host.h"
#include "codegen/families/balanced/balanced_schedule.h"
#include "compiler/common/csr.h"
#include "compiler/common/diagnostics.h"
#include "compiler/formats/write_matrix.h"
#include "tests/codegen/emitted_kernel_util.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;
using namespace spmmc;

namespace {

// The bytes of the C string literals in `text` (pieces separated by commas), as a compiler reads
// them: three-digit octal escapes and plain characters; and the size of each comma-separated piece.
std::vector<unsigned char> literal_bytes(const std::string& text, std::vector<size_t>& pieces) {
  std::vector<unsigned char> bytes;
  pieces.assign(1, 0);
  bool inside = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!inside) {
      if (c == '"') inside = true;
      else if (c == ',') pieces.push_back(0);
      continue;
    }
    if (c == '"') {
      inside = false;
    } else if (c == '\\') {  // an octal escape: one to three digits
      int value = 0, digits = 0;
      for (; digits < 3 && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '7'; ++digits, ++i)
        value = value * 8 + (text[i + 1] - '0');
      REQUIRE(digits > 0);
      bytes.push_back(static_cast<unsigned char>(value));
      ++pieces.back();
    } else {
      bytes.push_back(static_cast<unsigned char>(c));
      ++pieces.back();
    }
  }
  return bytes;
}

// The initialiser of `NAME_host` in `code`: the text between its braces.
std::string host_initialiser(const std::string& code, const std::string& name) {
  const size_t at = code.find("const char* const " + name + "_host[] = {");
  REQUIRE(at != std::string::npos);
  // Every '"' in the bytes is escaped: the first '"' followed by "};" ends the initialiser.
  const size_t open = code.find('{', at), close = code.find("\"};", open) + 1;
  return code.substr(open + 1, close - open - 1);
}

std::vector<unsigned char> little_endian(const std::vector<uint32_t>& values) {
  std::vector<unsigned char> bytes;
  for (const uint32_t v : values)
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<unsigned char>(v >> shift));
  return bytes;
}

}  // namespace

TEST_CASE("arrays on the host: each array's bytes, its declaration without values, the rest as it was", "[codegen][arrays]") {
  std::string big = "__device__ const unsigned spmmc_weight_bits[] = {";
  std::vector<uint32_t> big_values;
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {  // 80 000 bytes: three pieces
    big_values.push_back(static_cast<uint32_t>(rng()));
    big += (i ? ", " : "") + fmt::format("0x{:08x}u", big_values.back()) + (i % 8 == 7 ? "\n" : "");
  }
  big += "};\n";
  const std::string code = "constexpr int spmmc_rows = 3;\n"
                           "[[maybe_unused]] __device__ const int spmmc_row_ptr[] = {0, 2,\n 3, -1};\n" +
                           big +
                           "alignas(8) __device__ const int spmmc_generic_span[] = {0, 2};  // pairs\n"
                           "__device__ const int4 spmmc_piece[] = {{-1, 0, 0, 16}, {3, 4}};\n"
                           "__device__ __forceinline__ int spmmc_first() { return spmmc_row_ptr[0]; }\n";
  const HostArrays h = move_arrays_to_host(code);
  CHECK(h.arrays == std::vector<std::string>{"spmmc_row_ptr", "spmmc_weight_bits", "spmmc_generic_span", "spmmc_piece"});
  CHECK(h.bytes == 16 + 80000 + 8 + 32);
  // The declarations keep their attributes and what followed them on their line; other code is kept.
  CHECK_THAT(h.code, Catch::StartsWith("constexpr int spmmc_rows = 3;\n[[maybe_unused]] __device__ int spmmc_row_ptr[4];\n"));
  CHECK_THAT(h.code, Catch::Contains("\n__device__ unsigned spmmc_weight_bits[20000];\n"));
  CHECK_THAT(h.code, Catch::Contains("\nalignas(8) __device__ int spmmc_generic_span[2];  // pairs\n"));
  CHECK_THAT(h.code, Catch::Contains("\n__device__ int4 spmmc_piece[2];\n"));
  CHECK_THAT(h.code, Catch::EndsWith("__device__ __forceinline__ int spmmc_first() { return spmmc_row_ptr[0]; }\n"));
  CHECK(h.code.find("__device__ const") == std::string::npos);
  std::vector<size_t> pieces;
  CHECK(literal_bytes(host_initialiser(h.code, "spmmc_row_ptr"), pieces) ==
        little_endian({0, 2, 3, static_cast<uint32_t>(-1)}));
  CHECK(literal_bytes(host_initialiser(h.code, "spmmc_weight_bits"), pieces) == little_endian(big_values));
  CHECK(pieces == std::vector<size_t>{32768, 32768, 14464});  // MSVC's limit on one literal: 64 KB
  CHECK(literal_bytes(host_initialiser(h.code, "spmmc_generic_span"), pieces) == little_endian({0, 2}));
  // int4: members left out are zeros, as C++ initialises them.
  CHECK(literal_bytes(host_initialiser(h.code, "spmmc_piece"), pieces) ==
        little_endian({static_cast<uint32_t>(-1), 0, 0, 16, 3, 4, 0, 0}));
  // The copy's table names each array with its bytes and size.
  const std::string upload = print_host_array_upload(h.arrays);
  CHECK_THAT(upload, Catch::Contains("{&spmmc_weight_bits, spmmc_weight_bits_host, sizeof(spmmc_weight_bits)},"));
  CHECK_THAT(upload, Catch::Contains("cudaError_t spmmc_upload_arrays()"));
  // A malformed initialiser is the emitter's bug.
  CHECK_THROWS_AS(move_arrays_to_host("__device__ const int spmmc_x[] = {1, 2, x};\n"), InternalError);
  CHECK_THROWS_AS(move_arrays_to_host("__device__ const int spmmc_x[] = {1, 2\n"), InternalError);
}

TEST_CASE("arrays on the host: arrays set aside by the printer take the given bytes, unparsed", "[codegen][arrays]") {
  // The tuner's NVRTC forms print A's arrays as {0} with their bytes aside (ArraysAside): the declaration
  // takes its count from the bytes, the other arrays are parsed as before.
  const std::string code = "__device__ const int spmmc_col_idx[] = {0};\n"
                           "__device__ const int4 spmmc_piece[] = {0};  // pieces\n"
                           "__device__ const int spmmc_k_part_begin[] = {0, 7};\n";
  const ArraysAside aside = {{"spmmc_col_idx", array_bytes(std::vector<int32_t>{5, -2, 9})},
                             {"spmmc_piece", array_bytes(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8})}};
  const HostArrays h = move_arrays_to_host(code, HostBytes::kValues, aside);
  CHECK(h.code == "__device__ int spmmc_col_idx[3];\n__device__ int4 spmmc_piece[2];  // pieces\n"
                  "__device__ int spmmc_k_part_begin[2];\n");
  REQUIRE(h.values.size() == 3);
  CHECK(h.values[0].bytes == little_endian({5, static_cast<uint32_t>(-2), 9}));
  CHECK(h.values[1].bytes == little_endian({1, 2, 3, 4, 5, 6, 7, 8}));
  CHECK(h.values[2].bytes == little_endian({0, 7}));
  CHECK(h.bytes == 12 + 32 + 8);
  // A float array's bits, and an empty array as one zero element (CUDA has no arrays of none).
  CHECK(array_bytes(std::vector<float>{1.5f, -2.0f}) == little_endian({0x3fc00000u, 0xc0000000u}));
  CHECK(array_bytes(std::vector<int32_t>{}) == little_endian({0}));
  // Bytes set aside for an array printed with its values, or not whole elements: the emitter's bug.
  CHECK_THROWS_AS(move_arrays_to_host("__device__ const int spmmc_col_idx[] = {1, 2};\n", HostBytes::kValues, aside),
                  InternalError);
  CHECK_THROWS_AS(move_arrays_to_host("__device__ const int4 spmmc_col_idx[] = {0};\n", HostBytes::kValues, aside),
                  InternalError);
}

TEST_CASE("emitted kernel on the CPU: A's arrays on the host, copied once per context", "[codegen][emulation][arrays]") {
  test::TempDir dir;
  // Uneven rows (a row of 300 products: the balanced small-n path in the unrolled and generic files).
  std::mt19937 rng(3);
  Csr a;
  a.rows = 70;
  a.cols = 400;
  a.row_ptr.push_back(0);
  for (int32_t r = 0; r < a.rows; ++r) {
    const int32_t len = r == 5 ? 300 : static_cast<int32_t>(rng() % 9);
    for (int32_t j = 0; j < len; ++j) {
      a.col_idx.push_back(static_cast<int32_t>((j * 397 + r * 13) % 400));
      a.values.push_back(0.25f + static_cast<float>(rng() % 100) / 64.0f);
    }
    std::sort(a.col_idx.begin() + a.row_ptr.back(), a.col_idx.end());
    a.col_idx.erase(std::unique(a.col_idx.begin() + a.row_ptr.back(), a.col_idx.end()), a.col_idx.end());
    a.values.resize(a.col_idx.size());
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  const fs::path matrix = dir.path / "uneven.mtx";
  write_matrix(a, matrix.string(), MatrixFormat::kMatrixMarket, "arrays_on_host_test");
  for (const char* family : {"generic", "balanced", "unrolled"}) {
    INFO("--family " << family);
    const std::string name = std::string("uneven_") + family;
    const fs::path out = dir.path / family;
    const auto r = test::run_spmmc({"compile", matrix.string(), "--n", "64", "--name", name, "-o", out.string(), "--tune",
                                    "none", "--family", family, "--arrays", "host"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains(std::string(family) == "unrolled" ? "the generic path's arrays: "
                                                                          : "A as CSR host bytes copied at the first call"));
    const auto report = nlohmann::json::parse(test::read_file(out / (name + ".json")));
    CHECK(report["kernel"]["arrays"]["where"] == "host");
    CHECK(report["kernel"]["arrays"]["bytes"].get<int64_t>() > 8 * a.nnz());
    const std::string cu = test::read_file(out / (name + ".cu"));
    CHECK(cu.find("__device__ const int spmmc_col_idx[]") == std::string::npos);
    CHECK_THAT(cu, Catch::Contains("#define SPMMC_HOST_ARRAYS 1"));
    CHECK_THAT(cu, Catch::Contains("--arrays host"));  // the line that regenerates it
    const std::unique_ptr<test::EmulatedKernel> kernel = test::emulate_emitted(out / (name + ".cu"), name);
    using Stats = void (*)(unsigned long long*);
    const auto stats = reinterpret_cast<Stats>(kernel->symbol("spmmc_emulation_upload_stats"));
    const auto reset = reinterpret_cast<void (*)()>(kernel->symbol("spmmc_emulation_reset_device"));
    REQUIRE(stats);
    REQUIRE(reset);
    unsigned long long s[4] = {};
    stats(s);
    CHECK(s[0] == 0);  // nothing before the first call
    const size_t arrays = test::occurrences(cu, "_host, sizeof(");  // the copy's table
    REQUIRE(arrays >= 4);
    // Every path at sizes from 1 up, bit for bit against the references: check_emulated_kernel for the
    // unrolled and generic files, the pieces' order for the balanced family's.
    const bool balanced = std::string(family) == "balanced";
    const auto check = [&](const std::vector<int64_t>& sizes, const std::string& label) {
      if (!balanced) {
        // the paths that read the arrays: the generic one (n = 1 to 3) and the generic family's balanced path
        const test::PathCounts paths = test::check_emulated_kernel(*kernel, a, sizes, label, false);
        CHECK(paths.generic > 0);
        if (std::string(family) == "generic") CHECK(paths.balanced > 0);
        if (std::string(family) == "unrolled") CHECK(paths.unrolled > 0);
        return;
      }
      const BalancedSchedule schedule = schedule_balanced(a, report["kernel"]["balanced"]["piece_length"].get<int32_t>(),
                                                          kBalancedWarps,
                                                          report["kernel"]["balanced"]["pieces_per_warp"].get<int32_t>());
      for (const int64_t n : sizes) {
        INFO(label << ", n = " << n);
        const std::vector<float> b = test::seeded_b(a.cols, n, static_cast<uint64_t>(n));
        std::vector<float> c(static_cast<size_t>(a.rows) * static_cast<size_t>(n), std::nanf(""));
        REQUIRE(kernel->entry(b.data(), c.data(), n, nullptr) == 0);
        const std::vector<float> expected =
            test::balanced_family_spmm(a, schedule, b, n, report["kernel"]["balanced"]["spmv"].get<bool>());
        CHECK(std::memcmp(c.data(), expected.data(), c.size() * sizeof(float)) == 0);
      }
    };
    check({1, 3, 8, 31, 64, 130}, name);
    stats(s);
    CHECK(s[0] == arrays);  // once, for the first call of all those
    CHECK(s[1] == report["kernel"]["arrays"]["bytes"].get<unsigned long long>());
    CHECK(s[3] == 0);       // the thread's capture mode as it was (global)
    // A reset device (a new context, its arrays zeros): copied again at the next call, and right.
    reset();
    check({2, 64}, name + " after a reset");
    stats(s);
    CHECK(s[0] == 2 * arrays);
    CHECK(s[2] == 1 + 65);  // device 0's second context
    // Other devices (the emulation has 65, their memory one): each copies once at its first call, a
    // device that had them does not again, and device 64, past the 64 served, fails the call.
    const auto set_device = reinterpret_cast<int (*)(int)>(kernel->symbol("spmmc_emulation_set_device"));
    REQUIRE(set_device);
    REQUIRE(set_device(1) == 0);
    check({2, 8, 64}, name + " on device 1");
    stats(s);
    CHECK(s[0] == 3 * arrays);
    CHECK(s[2] == 2);  // device 1's context
    REQUIRE(set_device(63) == 0);
    check({3, 8, 64}, name + " on device 63");
    stats(s);
    CHECK(s[0] == 4 * arrays);
    REQUIRE(set_device(0) == 0);
    check({2, 8, 64}, name + " on device 0 again");
    stats(s);
    CHECK(s[0] == 4 * arrays);
    REQUIRE(set_device(64) == 0);
    {
      const std::vector<float> b = test::seeded_b(a.cols, 8, 8);
      std::vector<float> c(static_cast<size_t>(a.rows) * 8, 1.0f);
      CHECK(kernel->entry(b.data(), c.data(), 8, nullptr) == 101);  // cudaErrorInvalidDevice
      CHECK(std::all_of(c.begin(), c.end(), [](float x) { return x == 1.0f; }));
    }
    stats(s);
    CHECK(s[0] == 4 * arrays);
    REQUIRE(set_device(0) == 0);  // the thread's device as the other tests expect it
  }
}
