// spmmc verify of half-precision files (spmmc compile --dtype fp16|bf16, issue 26): kernels with
// 1, 2 and 4 columns per thread and the generic family match their weights rounded to the dtype;
// a weight that is not the rounded one, a conversion of the other dtype (or a bfloat16 lower half
// that is not 0, a rounding other than to nearest even, a sum stored unconverted, an access of the
// other element size, the row stride of float32) and an info object or header whose dtype is not
// the kernels' element type are each refused at their file:line:column. The files are written by
// the spmmc binary; the verification runs in-process (and through the CLI for the exit codes).
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/common/dtype.h"
#include "compiler/formats/write_matrix.h"
#include "tests/test_util.h"
#include "tests/verify/verify_test_util.h"

namespace spmmc {
namespace {

namespace fs = std::filesystem;
using test::run_spmmc;

// A(4, 0) = 0.1: neither a float16 nor a bfloat16 (its rounded immediates differ from its float).
constexpr float kTenth = 0.1f;
// A(3, 5) = 1e-9: below half of float16's smallest subnormal (2^-25): dropped in fp16, kept in bf16.
constexpr float kTiny = 1e-9f;

// 48 x 40, row 10 empty; values of many magnitudes, most of them not representable in either half
// precision.
Csr half_weights() {
  return test::make_matrix(48, 40, [](int32_t r, int32_t c) -> float {
    if (r == 4 && c == 0) return kTenth;
    if (r == 3 && c == 5) return kTiny;
    if (r == 10 || (r * 7 + c * 13) % 5 != 0) return 0.0f;
    return static_cast<float>((r * 31 + c * 17) % 97 - 48) / 7.3f;
  });
}

struct HalfFile {
  test::TempDir dir;
  fs::path weights, cu, h;
  Csr a;
  DType dtype = DType::kFp16;
  nlohmann::json report;

  std::string text() const { return test::read_file(cu); }
  // `text` written as a copy beside NAME.cu (NAME.h stays the header it includes), verified in-process.
  test::Verified verify(const std::string& text) const {
    const fs::path copy = cu.parent_path() / "layer0_edited.cu";
    test::write_file(copy, text);
    return test::verify_file(copy, a);
  }
};

// `tile` "MxNxV" for the unrolled family, "generic" for the generic family.
void compile_half(HalfFile& f, DType dtype, const std::string& tile) {
  f.dtype = dtype;
  f.a = half_weights();
  f.weights = f.dir.path / "a.mtx";
  write_matrix(f.a, f.weights.string(), MatrixFormat::kMatrixMarket, "tests/verify/half_precision_test.cpp");
  std::vector<std::string> args = {"compile", f.weights.string(), "--n", "64", "--name", "layer0", "--dtype",
                                   dtype_name(dtype), "-o", (f.dir.path / "out").string(), "--quiet", "--reproducible"};
  if (tile == "generic") {
    args.insert(args.end(), {"--family", "generic"});
  } else {
    args.insert(args.end(), {"--tile", tile});
  }
  const auto r = run_spmmc(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  f.cu = f.dir.path / "out" / "layer0.cu";
  f.h = f.dir.path / "out" / "layer0.h";
  f.report = nlohmann::json::parse(test::read_file(f.dir.path / "out" / "layer0.json"));
}

// The 0fHHHHHHHH immediate of A's value `v` rounded to `dtype`.
std::string rounded_immediate(float v, DType dtype) { return test::ptx_float(round_to_dtype(v, dtype)); }

TEST_CASE("verify dtype: fp16 and bf16 kernels of 1 2 and 4 columns per thread and the generic family match",
          "[verify][dtype]") {
  for (const DType dtype : {DType::kFp16, DType::kBf16})
    for (const auto& [tile, lanes] : std::vector<std::pair<std::string, int>>{
             {"8x64", 1}, {"8x128x2", 2}, {"16x256x4", 4}, {"generic", 0}}) {
      INFO(dtype_name(dtype) << " --tile " << tile);
      HalfFile f;
      compile_half(f, dtype, tile);
      const test::Verified v = test::verify_file(f.cu, f.a);
      for (const auto& e : v.code.errors) INFO(e.where.str() << ": " << e.message);
      INFO(v.messages);
      REQUIRE(v.code.analyzed);
      CHECK(v.result.match);
      CHECK(v.code.dtype == dtype);
      CHECK(v.code.dtype_from_info);
      CHECK(v.code.generic_only == (lanes == 0));
      // The reference is A rounded to the dtype: float16 drops the 1e-9, bfloat16 keeps it.
      const int64_t kept = f.a.nnz() - (dtype == DType::kFp16 ? 1 : 0);
      CHECK(v.result.weights_nnz == kept);
      CHECK(v.result.code_nnz == kept);
      CHECK(f.report["input"]["nnz"] == kept);
      if (lanes > 0) {
        CHECK(v.code.columns.cols_per_thread == lanes);
        CHECK(v.result.rows_written == 48);
        // A(4, 0) is multiplied with its rounded value, which is not 0.1f.
        bool found = false;
        for (const AnalyzedTile& t : v.code.tiles)
          for (const AnalyzedStore& s : t.stores)
            for (const AnalyzedProduct& p : s.products)
              if (s.row == 4 && p.column == 0) {
                CHECK(p.value == round_to_dtype(kTenth, dtype));
                found = true;
              }
        CHECK(found);
        CHECK(round_to_dtype(kTenth, dtype) != kTenth);
      }
      // The CLI agrees: exit 0, a one-line summary.
      const auto r = run_spmmc({"verify", f.cu.string(), "--against", f.weights.string()});
      INFO(r.err);
      CHECK(r.exit_code == 0);
      CHECK_THAT(r.out, Catch::StartsWith("spmmc verify: " + f.cu.string() + " matches a.mtx: 48 x 40, "));
    }
}

TEST_CASE("verify dtype: without NAME.h beside it the prelude stands in for the half-precision types too",
          "[verify][dtype]") {
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    INFO(dtype_name(dtype));
    HalfFile f;
    compile_half(f, dtype, "8x128x2");
    fs::remove(f.h);
    const test::Verified v = test::verify_file(f.cu, f.a);
    INFO(v.messages);
    CHECK(v.result.match);
    REQUIRE(v.code.notes.size() == 1);
    CHECK_THAT(v.code.notes[0], Catch::Contains("layer0.h is not beside"));
  }
}

TEST_CASE("verify dtype rejects: a weight other than the one rounded to the dtype", "[verify][dtype][corrupt]") {
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    INFO(dtype_name(dtype));
    HalfFile f;
    compile_half(f, dtype, "8x128x2");
    const std::string cu = f.text();
    // A(4, 0)'s immediate (lane 0) as the float32 0.1 rather than the dtype's, then as the next
    // value of the dtype.
    const std::string rounded = rounded_immediate(kTenth, dtype);
    const size_t at = cu.find("," + rounded + ",");
    REQUIRE(at != std::string::npos);
    const float next = dtype == DType::kFp16 ? 0x1.99cp-4f : 0x1.9cp-4f;  // one ulp of the dtype above
    REQUIRE(round_to_dtype(next, dtype) == next);
    REQUIRE(next != round_to_dtype(kTenth, dtype));
    for (const float wrong : {kTenth, next}) {
      INFO("the weight " << hex_float(wrong));
      const std::string text = cu.substr(0, at + 1) + test::ptx_float(wrong) + cu.substr(at + 1 + rounded.size());
      const test::Verified v = f.verify(text);
      INFO(v.messages);
      REQUIRE(v.code.analyzed);
      CHECK_FALSE(v.result.match);
      REQUIRE(v.result.differences.size() == 1);
      const CodeDiagnostic& d = v.result.differences[0];
      CHECK(d.message == fmt::format("A(4, 0) is {} in the code but {} in weights.mtx rounded to {} (lane 0)",
                                     hex_float(wrong), hex_float(round_to_dtype(kTenth, dtype)), dtype_name(dtype)));
      const size_t fma = text.rfind("fma.rn.f32", at);
      CHECK(d.where.line == test::line_of(text, fma));
      CHECK(d.where.column == test::column_of(text, fma));
    }
  }
}

TEST_CASE("verify dtype rejects: a generic-path weight other than the one rounded to the dtype",
          "[verify][dtype][corrupt]") {
  for (const DType dtype : {DType::kFp16, DType::kBf16}) {
    INFO(dtype_name(dtype));
    HalfFile f;
    compile_half(f, dtype, "generic");
    const std::string cu = f.text();
    const uint32_t rounded = static_cast<uint32_t>(std::stoul(rounded_immediate(kTenth, dtype).substr(2), nullptr, 16));
    const std::string spelled = fmt::format("0x{:08x}u", rounded);
    const size_t at = cu.find(spelled, cu.find("spmmc_weight_bits[] = {"));
    REQUIRE(at != std::string::npos);
    const std::string text = cu.substr(0, at) + "0x3dcccccdu" + cu.substr(at + spelled.size());  // 0.1f itself
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    CHECK_THAT(v.messages, Catch::Contains(fmt::format("is 0x3dcccccd ({}), but A(4, 0) is {} (0x{:08x}) in weights.mtx "
                                                       "rounded to {}",
                                                       hex_float(kTenth), hex_float(round_to_dtype(kTenth, dtype)),
                                                       rounded, dtype_name(dtype))));
    CHECK(v.result.differences[0].where.line == test::line_of(text, at));
    CHECK(v.result.differences[0].where.column == test::column_of(text, at));
  }
}

TEST_CASE("verify dtype rejects: a conversion of the other dtype, a lower half not 0, another rounding",
          "[verify][dtype][corrupt]") {
  // Where the error must be: the edit itself, the instruction that contains the edit, the first
  // `at` after the edit, or the first tile call of the dispatch.
  enum class Place { kEdit, kInstruction, kAfter, kDispatch };
  struct Case {
    DType dtype;
    std::string name, from, to, message;
    Place place = Place::kEdit;
    std::string at;  // kInstruction: the instruction's opcode; kAfter: the text
  };
  const std::vector<Case> cases = {
      {DType::kBf16, "cvt.f32.f16 in a bf16 file", "mov.b32 x0,{z,h0};", "cvt.f32.f16 x0,h0;",
       "cvt.f32.f16 reads the element as float16, but the file's elements are bfloat16 (2-byte elements): expected "
       "mov.b32 x,{z,h} with z = 0", Place::kEdit, ""},
      {DType::kFp16, "mov.b32 {z,h} in an fp16 file", "cvt.f32.f16 x0,h0;", "mov.b32 x0,{z,h0};",
       "mov.b32 x,{lo,hi} reads bfloat16 bits as a float, but the file's elements are float16 (2-byte elements): "
       "expected cvt.f32.f16 x,h", Place::kEdit, ""},
      {DType::kFp16, "cvt.f32.bf16 in an fp16 file", "cvt.f32.f16 x0,h0;", "cvt.f32.bf16 x0,h0;",
       "cvt.f32.bf16 reads the element as bfloat16, but the file's elements are float16", Place::kEdit, ""},
      {DType::kBf16, "a lower half z that is not 0", "mov.b16 z,0;", "mov.b16 z,0x3f80;",
       "the low half 'z' is 0x3f80, not 0: the float is not the bfloat16's value in 'mov.b32 x0,{z,h0};'",
       Place::kAfter, "mov.b32 x0,{z,h0};"},
      {DType::kBf16, "the element in the lower half", "mov.b32 x0,{z,h0};", "mov.b32 x0,{h0,z};",
       "the element 'h0' is in the low half", Place::kEdit, ""},
      {DType::kFp16, "a store rounded to bf16 in an fp16 file", "cvt.rn.f16.f32 o0,a0;", "cvt.rn.bf16.f32 o0,a0;",
       "cvt.rn.bf16.f32 rounds to bfloat16, but the file's elements are float16 (2-byte elements): expected "
       "cvt.rn.f16.f32", Place::kEdit, ""},
      {DType::kBf16, "a store rounded toward zero", "cvt.rn.bf16.f32 o0,a0;", "cvt.rz.bf16.f32 o0,a0;",
       "cvt.rz.bf16.f32 does not round to nearest even, as the generic path (__float2bfloat16_rn) and the CPU "
       "reference do: expected cvt.rn.bf16.f32", Place::kEdit, ""},
      {DType::kFp16, "a sum stored unconverted", "],{o0,o1};", "],{a0,a1};",
       "the sum in 'a0' is stored unconverted, but C's elements are float16 (2-byte elements): expected cvt.rn.f16.f32 "
       "o,a0", Place::kInstruction, "st.global.v2.b16"},
      {DType::kFp16, "a float32 load", "ld.global.nc.v2.b16 {h0,h1},[p0];", "ld.global.nc.v2.f32 {x0,x1},[p0];",
       "a 4-byte access (.f32), but B's and C's elements are float16 (2-byte elements): expected .b16 accesses",
       Place::kEdit, ""},
      {DType::kBf16, "an element of B stored to C", "],{o0,o1};", "],{h0,h1};",
       "the value stored to row", Place::kInstruction, "st.global.v2.b16"},
      {DType::kFp16, "the row stride of float32", "static_cast<unsigned>(sizeof(spmmc_elem))", "4u",
       "unrecognised arguments of spmmc_tile_0: the row stride is 4*n bytes, but B's and C's rows are n * 2 bytes "
       "(n 2-byte float16 elements)", Place::kDispatch, ""},
  };
  HalfFile fp16, bf16;
  compile_half(fp16, DType::kFp16, "8x128x2");
  compile_half(bf16, DType::kBf16, "8x128x2");
  for (const Case& c : cases) {
    INFO(c.name);
    const HalfFile& f = c.dtype == DType::kFp16 ? fp16 : bf16;
    const std::string cu = f.text();
    const size_t edit = cu.find(c.from);
    REQUIRE(edit != std::string::npos);
    const std::string text = cu.substr(0, edit) + c.to + cu.substr(edit + c.from.size());
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK(v.code.parsed);
    CHECK_FALSE(v.code.analyzed);
    CHECK_FALSE(v.result.match);
    REQUIRE_FALSE(v.code.errors.empty());
    CHECK_THAT(v.code.errors[0].message, Catch::Contains(c.message));
    // At the instruction itself (inside the PTX literal) or the C++ expression.
    size_t at = edit;
    if (c.place == Place::kInstruction) at = text.rfind(c.at, edit);
    if (c.place == Place::kAfter) at = text.find(c.at, edit);
    if (c.place == Place::kDispatch) at = text.find("spmmc_tile_0(b, c, ld)", text.find("switch (blockIdx.x)"));
    REQUIRE(at != std::string::npos);
    CHECK(v.code.errors[0].where.file == (f.cu.parent_path() / "layer0_edited.cu").string());
    CHECK(v.code.errors[0].where.line == test::line_of(text, at));
    CHECK(v.code.errors[0].where.column == test::column_of(text, at));
  }
}

TEST_CASE("verify dtype rejects: an info object or a header whose dtype is not the kernels' elements",
          "[verify][dtype][corrupt]") {
  HalfFile f;
  compile_half(f, DType::kFp16, "8x128x2");
  const std::string cu = f.text();
  const size_t dtype_at = cu.find("\"float16\",");
  REQUIRE(dtype_at != std::string::npos);
  SECTION("the info object says bfloat16: every kernel's and the entry point's B is an error at its parameter") {
    const std::string text = cu.substr(0, dtype_at) + "\"bfloat16\"," + cu.substr(dtype_at + 10);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    CHECK(v.code.parsed);
    CHECK_FALSE(v.code.analyzed);
    // layer0_kernel_0, the six generic kernels, the warp per row of four columns 32 apart a lane, the entry point
    REQUIRE(v.code.errors.size() == 9);
    const std::string info_place =
        fmt::format("{}:{}:{}", v.code.file, test::line_of(text, dtype_at), test::column_of(text, dtype_at));
    CHECK(v.code.errors[0].message ==
          "the parameter B of layer0_kernel_0 points to __half (float16) elements, but the info object says dtype = "
          "'bfloat16' (at " + info_place + "): B's and C's elements are __nv_bfloat16 (bfloat16)");
    const size_t kernel = test::kernel_start(text, "layer0_kernel_0");
    const size_t b = text.find("B,", kernel);
    CHECK(v.code.errors[0].where.line == test::line_of(text, b));
    CHECK(v.code.errors[0].where.column == test::column_of(text, b));
    CHECK_THAT(v.code.errors[8].message,
               Catch::StartsWith("the parameter B of layer0 points to __half (float16) elements"));
  }
  SECTION("the info object names no dtype: the kernels' __half stands, the info object is the difference") {
    const std::string text = cu.substr(0, dtype_at) + "\"float64\"," + cu.substr(dtype_at + 10);
    const test::Verified v = f.verify(text);
    INFO(v.messages);
    REQUIRE(v.code.analyzed);
    CHECK(v.code.dtype == DType::kFp16);
    CHECK_FALSE(v.code.dtype_from_info);
    REQUIRE(v.result.differences.size() == 1);
    CHECK(v.result.differences[0].message == "the info object says dtype = 'float64', but the code is 'float16' (A's "
                                             "weights are immediates, B and C row-major float16 (__half))");
    CHECK(v.result.differences[0].where.line == test::line_of(text, dtype_at));
  }
  SECTION("the header declares the entry point with bfloat16: Clang's error names both places") {
    std::string h = test::read_file(f.h);
    h = test::replace_first(h, "#include <cuda_fp16.h>\n", "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n");
    h = test::replace_first(h, "layer0(const __half* B, __half* C,", "layer0(const __nv_bfloat16* B, __nv_bfloat16* C,");
    test::write_file(f.h, h);
    const test::Verified v = f.verify(cu);
    INFO(v.messages);
    CHECK_FALSE(v.code.parsed);
    REQUIRE_FALSE(v.code.errors.empty());
    const size_t definition = cu.find("extern \"C\" cudaError_t layer0(");
    CHECK(v.code.errors[0].where.line == test::line_of(cu, definition));
    CHECK_THAT(v.code.errors[0].message, Catch::StartsWith("conflicting types for 'layer0'"));
    const size_t declaration = h.find("layer0(const __nv_bfloat16*");
    CHECK_THAT(v.code.errors[0].message,
               Catch::Contains(fmt::format("layer0.h:{}:{})", test::line_of(h, declaration),
                                           test::column_of(h, declaration))));
  }
  SECTION("the CLI exits 65 naming the place") {
    const fs::path bad = f.cu.parent_path() / "layer0_bad.cu";
    test::write_file(bad, cu.substr(0, dtype_at) + "\"bfloat16\"," + cu.substr(dtype_at + 10));
    const auto r = run_spmmc({"verify", bad.string(), "--against", f.weights.string()});
    CHECK(r.exit_code == 65);
    const int64_t kernel_line = test::line_of(cu, test::kernel_start(cu, "layer0_kernel_0"));
    CHECK_THAT(r.err, Catch::Contains(fmt::format("{}:{}:", bad.string(), kernel_line)));
    CHECK_THAT(r.err, Catch::Contains("error: the parameter B of layer0_kernel_0 points to __half (float16) elements"));
  }
}

// Every function the dtype templates call is declared by the prelude (cuda_runtime.h and the
// dtype's header), so that a template change cannot make verify fail to parse emitted files.
TEST_CASE("verify dtype: the prelude declares what the dtype templates call", "[verify][dtype]") {
  const std::string source = SPMMC_SOURCE_DIR;
  const std::string runtime = test::read_file(source + "/verify/prelude/cuda_runtime.h");
  for (const auto& [tmpl, header] : std::vector<std::pair<std::string, std::string>>{
           {"dtype_fp32.cuh", ""}, {"dtype_fp16.cuh", "cuda_fp16.h"}, {"dtype_bf16.cuh", "cuda_bf16.h"}}) {
    INFO(tmpl);
    const std::string text = test::read_file(source + "/codegen/templates/" + tmpl);
    const std::string prelude = runtime + (header.empty() ? "" : test::read_file(source + "/verify/prelude/" + header));
    const std::regex call(R"(\b((?:__|make_)\w+)\s*\()");
    std::set<std::string> called;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it)
      if ((*it)[1] != "__launch_bounds__" && (*it)[1] != "__attribute__") called.insert((*it)[1]);
    CHECK_FALSE(called.empty());
    for (const std::string& name : called) {
      INFO(name);
      CHECK(std::regex_search(prelude, std::regex("\\b" + name + "\\(")));
    }
  }
}

}  // namespace
}  // namespace spmmc
