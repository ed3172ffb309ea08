// The tests' PTX-subset interpreter (tests/cuda_emulation/ptx_subset.h), on which the CPU tests of
// emitted kernels rely: exact semantics of what it runs (fma.rn rounds once, subnormals kept,
// 32 x 32 -> 64-bit addresses, vector accesses, predicates and branches; 16-bit registers, loads
// and stores, the pack and unpack forms of mov, and the conversions between .f32 and .f16 / .bf16,
// bit-exact with the GPU's, shared with the host shims cuda_fp16.h and cuda_bf16.h through
// half_bits.h), and that everything it cannot run faithfully aborts the process with a message
// naming the statement (each checked in a forked child: SIGABRT and the message on stderr), so
// that a test meeting it fails.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/cuda_emulation/cuda_bf16.h"
#include "tests/cuda_emulation/cuda_fp16.h"
#include "tests/cuda_emulation/half_bits.h"
#include "tests/cuda_emulation/ptx_subset.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace emu = spmmc_emulation;

uint64_t address_of(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// Runs `ptx` with %0 = b, %1 = c (64-bit) and %2 = ld (32-bit), as an emitted tile does; b and c
// point to floats or to 16-bit halves.
void run(const std::string& ptx, const void* b, void* c, uint32_t ld) {
  const emu::Program p = emu::parse_ptx(ptx, {64, 64, 32});
  const uint64_t params[3] = {address_of(b), address_of(c), ld};
  emu::execute(p, params);
}

struct ChildResult {
  bool aborted = false;  // died of SIGABRT
  int status = 0;
  std::string err;       // its stderr
};

// Runs `f` in a forked child with stderr captured; the child exits 0 if `f` returns.
template <class F>
ChildResult in_child(F f) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    signal(SIGABRT, SIG_DFL);  // not the test framework's handler: die as a plain abort() does
    close(fds[0]);
    dup2(fds[1], 2);
    f();
    _exit(0);
  }
  close(fds[1]);
  ChildResult r;
  char buffer[4096];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;) r.err.append(buffer, static_cast<size_t>(got));
  close(fds[0]);
  REQUIRE(waitpid(pid, &r.status, 0) == pid);
  r.aborted = WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT;
  return r;
}

TEST_CASE("PTX interpreter: the emitted subset computes exactly", "[codegen][emulation][ptx]") {
  // Two rows of B (ld = 16 bytes: 4 floats per row) and two of C; the thread's first column is 0.
  alignas(16) float b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  alignas(16) float c[8];
  std::fill(std::begin(c), std::end(c), std::numeric_limits<float>::quiet_NaN());
  run("{.reg .f32 a<4>;.reg .f32 x<6>;.reg .b64 p<4>;.reg .pred q;setp.eq.u32 q,%2,0;\n"
      "mov.b32 a0,0f00000000;mov.b32 a1,0f00000000;mov.b32 a2,0f00000000;mov.b32 a3,0f00000000;\n"
      "mad.wide.u32 p0,%2,1,%0;ld.global.nc.v4.f32 {x0,x1,x2,x3},[p0];\n"
      "fma.rn.f32 a0,x0,0f40000000,a0;fma.rn.f32 a1,x1,0f40000000,a1;fma.rn.f32 a2,x2,0fBF000000,a2;fma.rn.f32 a3,x3,0fBF000000,a3;\n"
      "@q bra.uni $Lend;\n"
      "mad.wide.u32 p1,%2,0,%0;ld.global.nc.v2.f32 {x4,x5},[p1];fma.rn.f32 a0,x4,0f3F800000,a0;fma.rn.f32 a1,x5,0f3F800000,a1;\n"
      "mad.wide.u32 p2,%2,1,%1;st.global.v4.f32 [p2],{a0,a1,a2,a3};\n"
      "mad.wide.u32 p3,%2,0,%1;st.global.f32 [p3],a0;st.global.v2.f32 [p3+8],{a2,a3};\n"
      "$Lend:\n}",
      b, c, 16);
  // Row 1: (2 x 5 + 1, 2 x 6 + 2, -0.5 x 7, -0.5 x 8); row 0: a0 at 0, (a2, a3) at 2, 3.
  CHECK(c[4] == 11.0f);
  CHECK(c[5] == 14.0f);
  CHECK(c[6] == -3.5f);
  CHECK(c[7] == -4.0f);
  CHECK(c[0] == 11.0f);
  CHECK(std::isnan(c[1]));
  CHECK(c[2] == -3.5f);
  CHECK(c[3] == -4.0f);

  // The same text with ld = 0 takes the branch: nothing after it runs.
  std::fill(std::begin(c), std::end(c), std::numeric_limits<float>::quiet_NaN());
  run("{.reg .f32 a;.reg .pred q;setp.eq.u32 q,%2,0;mov.f32 a,0f3F800000;@q bra $L;st.global.f32 [%1],a;$L:\n"
      "@!q bra.uni $M;st.global.f32 [%1+4],a;$M:}",
      b, c, 0);
  CHECK(std::isnan(c[0]));
  CHECK(c[1] == 1.0f);
}

TEST_CASE("PTX interpreter: fma.rn.f32 rounds once and keeps subnormals", "[codegen][emulation][ptx]") {
  // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly; a multiply then an add would round the product
  // first and give 2^-11.
  const float x = 1.0f + std::ldexp(1.0f, -12);
  alignas(16) float b[4] = {x, -1.0f, std::numeric_limits<float>::denorm_min(), 0.5f};
  alignas(16) float c[4] = {};
  run("{.reg .f32 r<8>;ld.global.f32 r0,[%0];ld.global.f32 r1,[%0+4];ld.global.f32 r2,[%0+8];ld.global.f32 r3,[%0+12];\n"
      "fma.rn.f32 r4,r0,r0,r1;mul.rn.f32 r5,r0,r0;add.f32 r5,r5,r1;fma.rn.f32 r6,r2,r3,0f00000000;sub.f32 r7,r2,r2;\n"
      "st.global.v4.f32 [%1],{r4,r5,r6,r7};}",
      b, c, 16);
  CHECK(c[0] == std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24));
  CHECK(c[0] == std::fmaf(x, x, -1.0f));
  CHECK(c[1] == std::ldexp(1.0f, -11));
  // denorm_min x 0.5 rounds to even: 0, not the smallest subnormal or a flush of the inputs.
  CHECK(c[2] == 0.0f);
  CHECK(c[3] == 0.0f);
  alignas(16) float d[4] = {std::numeric_limits<float>::denorm_min(), 3.0f, 0.0f, 0.0f};
  run("{.reg .f32 r<3>;ld.global.v2.f32 {r0,r1},[%0];fma.rn.f32 r2,r0,r1,r0;st.global.f32 [%1],r2;}", d, c, 16);
  CHECK(c[0] == 4.0f * std::numeric_limits<float>::denorm_min());  // subnormal in, subnormal out
}

TEST_CASE("PTX interpreter: integer arithmetic, 64-bit addresses, loops", "[codegen][emulation][ptx]") {
  alignas(16) float b[4] = {1, 2, 3, 4};
  alignas(16) float c[4] = {};
  // mad.wide.u32 multiplies 32 x 32 bits into 64: 0x80000000 x 3 = 0x180000000 (no wrap).
  run("{.reg .b64 p;.reg .pred q;.reg .f32 one;mov.f32 one,0f3F800000;mad.wide.u32 p,%2,3,%0;sub.s64 p,p,%0;\n"
      "setp.eq.u64 q,p,0x180000000;@q st.global.f32 [%1],one;setp.ne.u64 q,p,0x180000000;@q st.global.f32 [%1+4],one;}",
      b, c, 0x80000000u);
  CHECK(c[0] == 1.0f);
  CHECK(c[1] == 0.0f);
  // A loop: the sum of the four floats of B, through mul.wide, add.s64 and setp.lt.
  run("{.reg .u32 i;.reg .b64 off,addr;.reg .f32 s,t;.reg .pred more;\n"
      "mov.u32 i,0;mov.f32 s,0f00000000;\n"
      "$Lloop: mul.wide.u32 off,i,4;add.s64 addr,%0,off;ld.global.f32 t,[addr];add.rn.f32 s,s,t;add.u32 i,i,1;\n"
      "setp.lt.u32 more,i,4;@more bra.uni $Lloop;\n"
      "st.global.f32 [%1+8],s;}",
      b, c, 16);
  CHECK(c[2] == 10.0f);
  // Signed comparisons and wrapping: 0 - 1 is -1 as .s32 (less than 0) and 0xffffffff as .u32.
  run("{.reg .s32 m;.reg .pred q;.reg .f32 two;mov.f32 two,0f40000000;sub.s32 m,0,1;setp.lt.s32 q,m,0;@q st.global.f32 [%1],two;\n"
      "setp.hi.u32 q,m,0xfffffffe;@q st.global.f32 [%1+4],two;}",
      b, c, 16);
  CHECK(c[0] == 2.0f);
  CHECK(c[1] == 2.0f);
}

TEST_CASE("PTX interpreter: run_ptx caches by address and counts executions", "[codegen][emulation][ptx]") {
  static const char kText[] = "{.reg .f32 a;.reg .b64 p;ld.global.nc.f32 a,[%0];mad.wide.u32 p,%2,1,%1;st.global.f32 [p],a;}";
  alignas(16) float b[2] = {7.0f, 8.0f};
  alignas(16) float c[4] = {};
  const unsigned long long before = emu::ptx_runs().load();
  emu::run_ptx(kText, b, c, 8);      // row 1 of a 2-column C
  emu::run_ptx(kText, b + 1, c, 4);  // the cached program, other operands
  CHECK(c[2] == 7.0f);
  CHECK(c[1] == 8.0f);
  CHECK(emu::ptx_runs().load() == before + 2);
}

struct BadCase {
  const char* what;
  std::string ptx;
  std::vector<std::string> message;  // parts the message must contain
  uint32_t ld = 16;
};

TEST_CASE("PTX interpreter: what it cannot run faithfully aborts, naming the statement", "[codegen][emulation][ptx]") {
  const std::vector<BadCase> cases = {
      {"unknown opcode", "{.reg .f32 a;mov.f32 a,0f00000000;tanh.approx.f32 a,a;}", {"unknown opcode tanh.approx.f32", "`tanh.approx.f32 a,a;`"}},
      {"unknown modifier", "{.reg .f32 a;mov.f32 a,0f00000000;fma.rz.f32 a,a,a,a;}", {"rounding modifier .rn", "`fma.rz.f32 a,a,a,a;`"}},
      {"undeclared register", "{.reg .f32 a<2>;mov.b32 a0,0f00000000;fma.rn.f32 a0,y0,0f3F800000,a0;}", {"register y0 is not declared", "`fma.rn.f32 a0,y0,0f3F800000,a0;`"}},
      {"register out of range", "{.reg .f32 a<2>;mov.b32 a2,0f00000000;}", {"register a2 is out of range: a<2>", "`mov.b32 a2,0f00000000;`"}},
      {"register out of scope", "{{.reg .f32 a;}mov.b32 a,0f00000000;}", {"register a is not declared"}},
      {"read before write", "{.reg .f32 a<2>;mov.b32 a0,0f00000000;fma.rn.f32 a0,a1,0f3F800000,a0;}", {"register a1 is read before it is written", "`fma.rn.f32 a0,a1,0f3F800000,a0;`"}},
      {"read before write on the taken path", "{.reg .f32 a;.reg .pred q;setp.ne.u32 q,%2,0;@q bra $L;mov.b32 a,0f00000000;$L: st.global.f32 [%1],a;}", {"register a is read before it is written", "`st.global.f32 [%1],a;`"}},
      {"operand out of range", "{.reg .b64 p;mad.wide.u32 p,%2,0,%3;}", {"%3: the asm statement has operands %0..%2", "`mad.wide.u32 p,%2,0,%3;`"}},
      {"operand written", "{mov.b64 %0,0;}", {"%0 is an input operand", "`mov.b64 %0,0;`"}},
      {"operand of the wrong size", "{.reg .b64 p;mad.wide.u32 p,%0,4,%1;}", {"%0 is a 64-bit operand, which does not fit .u32", "`mad.wide.u32 p,%0,4,%1;`"}},
      {"register of the wrong type", "{.reg .b64 p;.reg .f32 x;mad.wide.u32 p,%2,0,%0;ld.global.nc.f32 p,[p];}", {"p is .b64, which does not fit .f32", "`ld.global.nc.f32 p,[p];`"}},
      {"integer literal for a float", "{.reg .f32 a;mov.f32 a,0f00000000;fma.rn.f32 a,a,2,a;}", {"an integer literal for a .f32 operand", "`fma.rn.f32 a,a,2,a;`"}},
      {"branch to a missing label", "{.reg .pred q;setp.eq.u32 q,%2,0;@q bra.uni $Lspmmc_7_end;\n$Lspmmc_3_end:\n}", {"branch to $Lspmmc_7_end, a label not defined in its scope", "`@q bra.uni $Lspmmc_7_end;`"}},
      {"branch into an inner scope", "{.reg .pred q;setp.eq.u32 q,%2,0;@q bra $L;{$L:}}", {"branch to $L, a label not defined in its scope"}},
      {"unbalanced braces", "{.reg .f32 a;mov.b32 a,0f00000000;", {"'{' never closed"}},
      {"a closing brace too many", "{}}", {"'}' closes no '{'"}},
      {"missing semicolon", "{.reg .f32 a;mov.b32 a,0f00000000}", {"unexpected '}'", "`mov.b32 a,0f00000000}"}},
      {"vector without .vN", "{.reg .f32 x<2>;ld.global.nc.f32 {x0,x1},[%0];}", {"must be one register without .v2/.v4", "`ld.global.nc.f32 {x0,x1},[%0];`"}},
      {"vector of the wrong length", "{.reg .f32 x<4>;ld.global.nc.v4.f32 {x0,x1},[%0];}", {"{4 registers} for .v4"}},
      {"shared memory", "{.reg .f32 x;ld.shared.f32 x,[%0];}", {"ld.shared is not emulated", "`ld.shared.f32 x,[%0];`"}},
      {"unknown directive", "{.local .f32 x;}", {"unsupported directive .local"}},
      {"misaligned .v2 load", "{.reg .f32 x<2>;ld.global.nc.v2.f32 {x0,x1},[%0+4];}", {"misaligned access", "not a multiple of 8 bytes", "`ld.global.nc.v2.f32 {x0,x1},[%0+4];`"}},
      {"misaligned .v4 store", "{.reg .f32 a<4>;mov.b32 a0,0f00000000;mov.b32 a1,0f00000000;mov.b32 a2,0f00000000;mov.b32 a3,0f00000000;\n"
                                "st.global.v4.f32 [%1+8],{a0,a1,a2,a3};}", {"misaligned access", "not a multiple of 16 bytes", "`st.global.v4.f32 [%1+8],{a0,a1,a2,a3};`", "line 2"}},
      {"misaligned scalar load", "{.reg .f32 x;.reg .b64 p;mad.wide.u32 p,%2,0,%0;add.s64 p,p,2;ld.global.f32 x,[p];}", {"not a multiple of 4 bytes"}},
  };
  alignas(16) float b[16] = {};
  alignas(16) float c[16] = {};
  for (const BadCase& bad : cases) {
    INFO(bad.what << ": " << bad.ptx);
    const ChildResult r = in_child([&] { run(bad.ptx, b, c, bad.ld); });
    INFO("stderr: " << r.err);
    CHECK(r.aborted);
    CHECK(r.err.find("spmmc_emulation: PTX error") != std::string::npos);
    for (const std::string& part : bad.message) CHECK(r.err.find(part) != std::string::npos);
  }
}

TEST_CASE("PTX interpreter: memory bounds confine loads, ld.nc and stores", "[codegen][emulation][ptx]") {
  // B (8 floats), a gap, then C (8 floats, of which the first 4 are the output).
  struct {
    alignas(16) float b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float gap[16] = {};
    alignas(16) float c[8] = {};
  } memory;
  float* const b = memory.b;
  float* const c = memory.c;
  const std::string store_row = "{.reg .f32 a;.reg .b64 p;mov.f32 a,0f3F800000;mad.wide.u32 p,%2,ROW,%1;st.global.f32 [p],a;}";
  const auto with_row = [&](int row) {
    std::string s = store_row;
    return s.replace(s.find("ROW"), 3, std::to_string(row));
  };
  // Inside: fine, and the bounds are lifted afterwards.
  emu::set_memory_bounds(b, sizeof memory.b, c, 4 * sizeof(float));
  run(with_row(3), b, c, 4);
  emu::set_memory_bounds(nullptr, 0, nullptr, 0);
  CHECK(c[3] == 1.0f);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {with_row(1), {"store to 0x", "outside the output", "`st.global.f32 [p],a;`"}},  // row 1 of ld = 16: past the output
      {"{.reg .f32 a;mov.f32 a,0f00000000;st.global.f32 [%0],a;}", {"inside the read-only input"}},
      {"{.reg .f32 a;ld.global.nc.f32 a,[%1];}", {"ld.nc from 0x", "memory the kernel writes"}},
      {"{.reg .f32 a;.reg .b64 p;mad.wide.u32 p,%2,2,%0;ld.global.f32 a,[p];}", {"load from 0x", "outside the inputs and outputs"}},  // the gap
  };
  for (const auto& [ptx, parts] : cases) {
    INFO(ptx);
    const ChildResult r = in_child([&] {
      emu::set_memory_bounds(b, sizeof memory.b, c, 4 * sizeof(float));
      run(ptx, b, c, 16);
    });
    INFO("stderr: " << r.err);
    CHECK(r.aborted);
    for (const std::string& part : parts) CHECK(r.err.find(part) != std::string::npos);
  }
  // A text the interpreter accepts does not abort in a child either: the harness itself works.
  const ChildResult fine = in_child([&] { run(with_row(1), b, c, 4); });
  CHECK_FALSE(fine.aborted);
  CHECK(WIFEXITED(fine.status));
  CHECK(fine.err.empty());
}

// ---------------------------------------------------------------------------------------------
// Half precision: .f16 (IEEE binary16) and .bf16 (bfloat16) in 16-bit registers.

float f32_of(uint32_t bits) { return emu::f32_from_bits(bits); }
uint32_t bits_of(float f) { return emu::f32_to_bits(f); }

// cvt.rn.f16.f32 and cvt.rn.bf16.f32 of the float at b[0], through the interpreter: the two
// 16-bit results, half first.
std::pair<uint16_t, uint16_t> ptx_to_16_bits(float value) {
  alignas(16) float b[4] = {value};
  alignas(16) uint16_t c[2] = {0x5555, 0x5555};
  run("{.reg .f32 a;.reg .f16 h;.reg .b16 g;ld.global.nc.f32 a,[%0];cvt.rn.f16.f32 h,a;cvt.rn.bf16.f32 g,a;\n"
      "st.global.b16 [%1],h;st.global.b16 [%1+2],g;}",
      b, c, 0);
  return {c[0], c[1]};
}

TEST_CASE("half_bits: float to half and bfloat16 round to nearest even, bit-exact", "[codegen][emulation][ptx]") {
  struct ToHalf {
    float value;
    uint16_t half;
    const char* what;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<ToHalf> to_half = {
      {1.0f, 0x3c00, "1"},
      {-2.5f, 0xc100, "-2.5"},
      {65504.0f, 0x7bff, "the largest half"},
      {65520.0f, 0x7c00, "the midpoint to 2^16: ties to even, up to inf"},
      {std::nextafter(65520.0f, 0.0f), 0x7bff, "just below the midpoint: 65504"},
      {-65520.0f, 0xfc00, "-65520: -inf"},
      {3.0e38f, 0x7c00, "far out of range: inf"},
      {inf, 0x7c00, "inf"},
      {-inf, 0xfc00, "-inf"},
      {-0.0f, 0x8000, "-0 keeps its sign"},
      {0.0f, 0x0000, "0"},
      {1e-8f, 0x0000, "1e-8 < 2^-25: 0"},
      {-1e-8f, 0x8000, "-1e-8: -0"},
      {std::ldexp(1.0f, -24), 0x0001, "2^-24, the smallest subnormal half"},
      {std::ldexp(1.0f, -25), 0x0000, "2^-25, half of it: ties to even, 0"},
      {std::nextafter(std::ldexp(1.0f, -25), 1.0f), 0x0001, "just above 2^-25: the smallest subnormal"},
      {std::ldexp(3.0f, -25), 0x0002, "1.5 x 2^-24: ties to even, 2 x 2^-24"},
      {std::ldexp(1023.0f, -24), 0x03ff, "the largest subnormal half"},
      {std::ldexp(1023.5f, -24), 0x0400, "between the largest subnormal and 2^-14: ties to even, 2^-14"},
      {std::ldexp(1.0f, -14), 0x0400, "2^-14, the smallest normal half"},
      {std::numeric_limits<float>::denorm_min(), 0x0000, "a float subnormal: 0"},
      {0x1.002p0f, 0x3c00, "1 + 2^-11: ties to even, 1"},
      {0x1.006p0f, 0x3c02, "1 + 3 x 2^-11: ties to even, 1 + 2^-9"},
      {std::nextafter(0x1.002p0f, 2.0f), 0x3c01, "just above 1 + 2^-11: 1 + 2^-10"},
      {0.1f, 0x2e66, "0.1"},
      {f32_of(0x7fc00000), 0x7fff, "a quiet NaN: the canonical 0x7fff"},
      {f32_of(0xffc00000), 0x7fff, "a negative NaN: the canonical 0x7fff"},
      {f32_of(0x7f800001), 0x7fff, "a signalling NaN with payload 1: the canonical 0x7fff"},
      {f32_of(0x7fbfe000), 0x7fff, "a NaN whose payload would fill the half's mantissa: the canonical 0x7fff"},
  };
  for (const ToHalf& t : to_half) {
    INFO(t.what << ": " << std::hexfloat << t.value << " (0x" << std::hex << bits_of(t.value) << ")");
    CHECK(emu::float_to_half_bits_rn(t.value) == t.half);
    CHECK(__half_as_ushort(__float2half_rn(t.value)) == t.half);
    CHECK(ptx_to_16_bits(t.value).first == t.half);
  }

  struct ToBf16 {
    uint32_t value;  // float bits
    uint16_t bf16;
    const char* what;
  };
  const std::vector<ToBf16> to_bf16 = {
      {0x3f800000, 0x3f80, "1"},
      {bits_of(3.0e38f), 0x7f62, "3e38 (0x7f61b1e6): rounds up"},
      {0x7f7fffff, 0x7f80, "the largest float rounds to inf"},
      {0x7f7f7fff, 0x7f7f, "just below the midpoint to inf: the largest bfloat16"},
      {0x7f7f8000, 0x7f80, "the midpoint between the largest bfloat16 and inf: ties to even, inf"},
      {0x3f808000, 0x3f80, "1 + 2^-8: ties to even, 1"},
      {0x3f818000, 0x3f82, "1 + 3 x 2^-8: ties to even, 1 + 2^-6"},
      {0x3f808001, 0x3f81, "just above the tie: up"},
      {0xbf818000, 0xbf82, "a negative tie: to even, away from zero here"},
      {0x00018000, 0x0002, "a float subnormal tie: to even, kept subnormal"},
      {0x00007fff, 0x0000, "a float subnormal below half a bfloat16 ulp: 0"},
      {0x80000000, 0x8000, "-0"},
      {0x7f800000, 0x7f80, "inf"},
      {0xff800000, 0xff80, "-inf"},
      {0x7fc00000, 0x7fff, "a quiet NaN: the canonical 0x7fff"},
      {0xffc00001, 0x7fff, "a negative NaN: the canonical 0x7fff"},
      {0x7f800001, 0x7fff, "a NaN that truncation would make inf: the canonical 0x7fff"},
  };
  for (const ToBf16& t : to_bf16) {
    INFO(t.what << ": 0x" << std::hex << t.value);
    CHECK(emu::float_to_bfloat16_bits_rn(f32_of(t.value)) == t.bf16);
    CHECK(__bfloat16_as_ushort(__float2bfloat16_rn(f32_of(t.value))) == t.bf16);
    CHECK(ptx_to_16_bits(f32_of(t.value)).second == t.bf16);
  }
}

TEST_CASE("half_bits: half and bfloat16 to float are exact, for all 65536 bit patterns", "[codegen][emulation][ptx]") {
  // Through the interpreter too: one parsed program, run for each pattern.
  const emu::Program p = emu::parse_ptx(
      "{.reg .b16 h;.reg .f32 x,y;ld.global.nc.b16 h,[%0];cvt.f32.f16 x,h;cvt.f32.bf16 y,h;\n"
      "st.global.v2.f32 [%1],{x,y};}",
      {64, 64, 32});
  alignas(16) uint16_t b[8] = {};
  alignas(16) float c[2] = {};
  const uint64_t params[3] = {address_of(b), address_of(c), 0};
  size_t half_failures = 0, bf16_failures = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    b[0] = h;
    emu::execute(p, params);
    // Half: (-1)^s x m x 2^(e - 25) with the implicit bit for e > 0, 2^-24 x m for e = 0.
    const uint32_t e = (i >> 10) & 0x1f, m = i & 0x3ff;
    const bool nan = e == 31 && m != 0;
    const float magnitude = e == 31 ? std::numeric_limits<float>::infinity()
                            : e == 0 ? std::ldexp(static_cast<float>(m), -24)
                                     : std::ldexp(static_cast<float>(m + 1024), static_cast<int>(e) - 25);
    const float expected = (i & 0x8000) ? -magnitude : magnitude;
    const float x = emu::half_bits_to_float(h);
    bool ok = nan ? bits_of(x) == 0x7fffffffu : bits_of(x) == bits_of(expected);  // NaN: the canonical float NaN
    ok = ok && bits_of(c[0]) == bits_of(x) && bits_of(__half2float(__ushort_as_half(h))) == bits_of(x);
    // The round trip: the same bits, a NaN a NaN (the canonical one).
    ok = ok && emu::float_to_half_bits_rn(x) == (nan ? 0x7fff : h);
    if (!ok && ++half_failures <= 8) FAIL_CHECK("half 0x" << std::hex << i << " -> float 0x" << bits_of(x) << " (interpreter 0x" << bits_of(c[0]) << ")");
    // bfloat16: the bits shifted up, a NaN with its payload; back to the same bits but for NaNs.
    const float y = emu::bfloat16_bits_to_float(h);
    const bool bf16_nan = ((i >> 7) & 0xff) == 0xff && (i & 0x7f) != 0;
    ok = bits_of(y) == i << 16 && bits_of(c[1]) == i << 16 && bits_of(__bfloat162float(__ushort_as_bfloat16(h))) == i << 16 &&
         std::isnan(y) == bf16_nan && emu::float_to_bfloat16_bits_rn(y) == (bf16_nan ? 0x7fff : h);
    if (!ok && ++bf16_failures <= 8) FAIL_CHECK("bfloat16 0x" << std::hex << i << " -> float 0x" << bits_of(y) << " (interpreter 0x" << bits_of(c[1]) << ")");
  }
  CHECK(half_failures == 0);
  CHECK(bf16_failures == 0);
}

TEST_CASE("cuda_fp16.h and cuda_bf16.h: 2-byte types of the GPU's layout", "[codegen][emulation][ptx]") {
  STATIC_REQUIRE(sizeof(__half) == 2);
  STATIC_REQUIRE(alignof(__half) == 2);
  STATIC_REQUIRE(sizeof(__nv_bfloat16) == 2);
  STATIC_REQUIRE(alignof(__nv_bfloat16) == 2);
  STATIC_REQUIRE(std::is_trivially_copyable<__half>::value);
  STATIC_REQUIRE(std::is_trivially_copyable<__nv_bfloat16>::value);
  STATIC_REQUIRE(sizeof(__half[5]) == 10);
  const __half h[3] = {__float2half_rn(1.0f), __float2half_rn(-2.5f), __ushort_as_half(0x7bff)};
  uint16_t raw[3];
  std::memcpy(raw, h, sizeof raw);
  CHECK(raw[0] == 0x3c00);
  CHECK(raw[1] == 0xc100);
  CHECK(raw[2] == 0x7bff);
  CHECK(__half2float(h[2]) == 65504.0f);
  const __nv_bfloat16 g = __float2bfloat16_rn(-3.0f);
  CHECK(__bfloat16_as_ushort(g) == 0xc040);
  CHECK(__bfloat162float(g) == -3.0f);
}

// Half-precision B and C as the emitted tile bodies use them: 16-bit loads (.nc of B, plain of C)
// of 1, 2 and 4 elements, cvt to f32, an FMA with a weight, cvt back, stores of 1, 2 and 4.
TEST_CASE("PTX interpreter: half-precision loads, conversions and stores", "[codegen][emulation][ptx]") {
  // Row 1 of B and of C (ld = 16 bytes: 8 halves a row): element 1 scalar, 2..3 a .v2, 4..7 a .v4.
  const float b_values[8] = {0.0f, 1.0f, -2.5f, 0.1f, 1000.0f, 3.14159f, std::ldexp(1.0f, -20), 65504.0f};
  const float c_values[8] = {0.0f, 0.5f, 7.0f, -0.3f, 2048.0f, -1.0f, std::ldexp(1.0f, -22), 0.0f};
  const float weight = 1.1f;  // 0f3F8CCCCD
  const std::string program =
      "{.reg .b16 h<8>;.reg .b16 g<8>;.reg .b16 o<8>;.reg .b16 z;.reg .f32 x<8>;.reg .f32 a<8>;.reg .b64 p<2>;\n"
      "mov.b16 z,0;\n"
      "mad.wide.u32 p0,%2,1,%0;mad.wide.u32 p1,%2,1,%1;\n"
      "ld.global.nc.b16 h1,[p0+2];ld.global.nc.v2.b16 {h2,h3},[p0+4];ld.global.nc.v4.b16 {h4,h5,h6,h7},[p0+8];\n"
      "ld.global.b16 g1,[p1+2];ld.global.v2.b16 {g2,g3},[p1+4];ld.global.v4.b16 {g4,g5,g6,g7},[p1+8];\n"
      "CONVERT_AND_FMA"
      "st.global.b16 [p1],z;st.global.b16 [p1+2],o1;st.global.v2.b16 [p1+4],{o2,o3};st.global.v4.b16 [p1+8],{o4,o5,o6,o7};\n"
      "}";
  for (const bool bf16 : {false, true}) {
    INFO((bf16 ? "bfloat16" : "half"));
    std::string body;
    for (int i = 1; i < 8; ++i) {
      const std::string n = std::to_string(i), t = bf16 ? "bf16" : "f16";
      body += "cvt.f32." + t + " x" + n + ",h" + n + ";cvt.f32." + t + " a" + n + ",g" + n + ";fma.rn.f32 a" + n + ",x" + n +
              ",0f3F8CCCCD,a" + n + ";cvt.rn." + t + ".f32 o" + n + ",a" + n + ";\n";
    }
    std::string ptx = program;
    ptx.replace(ptx.find("CONVERT_AND_FMA"), 15, body);
    const auto to16 = [&](float f) { return bf16 ? emu::float_to_bfloat16_bits_rn(f) : emu::float_to_half_bits_rn(f); };
    const auto to32 = [&](uint16_t h) { return bf16 ? emu::bfloat16_bits_to_float(h) : emu::half_bits_to_float(h); };
    alignas(16) uint16_t b[16], c[16];
    for (int i = 0; i < 8; ++i) {
      b[i] = 0x1111, c[i] = 0x2222;  // row 0: untouched
      b[8 + i] = to16(b_values[i]);
      c[8 + i] = i == 0 ? uint16_t{0x3333} : to16(c_values[i]);
    }
    alignas(16) uint16_t expected[16];
    std::memcpy(expected, c, sizeof c);
    expected[8] = 0;  // z
    for (int i = 1; i < 8; ++i) expected[8 + i] = to16(std::fmaf(to32(b[8 + i]), weight, to32(c[8 + i])));
    emu::set_memory_bounds(b, sizeof b, c, sizeof c);
    run(ptx, b, c, 16);
    emu::set_memory_bounds(nullptr, 0, nullptr, 0);
    for (int i = 0; i < 16; ++i) {
      INFO("element " << i);
      CHECK(c[i] == expected[i]);
    }
    // By hand: 1 x 1.1 + 0.5 = 1.6 (in half, 0x3e66; in bfloat16, 0x3fcd).
    CHECK(c[9] == (bf16 ? 0x3fcd : 0x3e66));
    // 65504 x 1.1 overflows a half (inf) but not a bfloat16.
    CHECK(c[15] == (bf16 ? to16(65504.0f * 1.1f) : 0x7c00));
  }
}

TEST_CASE("PTX interpreter: mov.b32 packs and unpacks 16-bit halves", "[codegen][emulation][ptx]") {
  alignas(16) const uint16_t b[4] = {0x1234, 0xabcd, 0x3c00, 0xc000};
  alignas(16) uint32_t c[8] = {};
  run("{.reg .b16 h<4>;.reg .b16 z;.reg .b32 w<3>;.reg .f32 f;.reg .u32 u;\n"
      "ld.global.nc.v2.b16 {h0,h1},[%0];\n"
      "mov.b32 w0,{h0,h1};\n"          // 0xabcd1234: lo first
      "mov.b32 {h2,h3},%2;\n"          // unpack the operand 0x89abcdef
      "mov.b32 w1,{h3,h2};\n"          // 0xcdef89ab
      "mov.b16 z,-1;mov.b32 u,{z,z};\n"  // into a .u32 register: 0xffffffff
      "ld.global.nc.v2.b16 {h0,h1},[%0+4];mov.b32 f,{h0,h1};\n"  // into a .f32 register: bits 0xc0003c00
      "mov.b32 {h0,h1},0f3F800000;cvt.f32.bf16 f,h1;\n"           // an immediate: h1 = 0x3f80, 1.0 as bfloat16
      "mov.b32 {h2,h3},w0;mov.b32 w2,{h3,h2};\n"                    // a register: halves swapped
      "st.global.v4.b32 [%1],{w0,w1,u,w2};st.global.f32 [%1+16],f;st.global.v2.b16 [%1+20],{h0,h1};}",
      b, c, 0x89abcdefu);
  CHECK(c[0] == 0xabcd1234u);
  CHECK(c[1] == 0xcdef89abu);
  CHECK(c[2] == 0xffffffffu);
  CHECK(c[3] == 0x1234abcdu);
  CHECK(c[4] == 0x3f800000u);
  CHECK(c[5] == 0x3f800000u);  // h0 = 0x0000, h1 = 0x3f80, stored low first
  alignas(16) float d[2] = {};
  run("{.reg .b16 h<2>;.reg .f32 f;ld.global.nc.v2.b16 {h0,h1},[%0+4];mov.b32 f,{h0,h1};st.global.f32 [%1],f;}", b, d, 0);
  CHECK(d[0] == f32_of(0xc0003c00u));
}

TEST_CASE("PTX interpreter: 16-bit forms it cannot run faithfully abort", "[codegen][emulation][ptx]") {
  const std::vector<BadCase> cases = {
      {"misaligned .v2.b16 load", "{.reg .b16 h<2>;ld.global.nc.v2.b16 {h0,h1},[%0+2];}", {"misaligned access", "not a multiple of 4 bytes", "`ld.global.nc.v2.b16 {h0,h1},[%0+2];`"}},
      {"misaligned .v4.b16 store", "{.reg .b16 z;mov.b16 z,0;st.global.v4.b16 [%1+4],{z,z,z,z};}", {"misaligned access", "not a multiple of 8 bytes"}},
      {"misaligned .b16 load", "{.reg .b16 h;.reg .b64 p;mad.wide.u32 p,%2,0,%0;add.s64 p,p,1;ld.global.b16 h,[p];}", {"not a multiple of 2 bytes"}},
      {"another rounding", "{.reg .f32 a;.reg .b16 h;mov.f32 a,0f3F800000;cvt.rz.f16.f32 h,a;}", {"cvt.f16.f32 needs the rounding modifier .rn", "`cvt.rz.f16.f32 h,a;`"}},
      {"no rounding", "{.reg .f32 a;.reg .b16 h;mov.f32 a,0f3F800000;cvt.bf16.f32 h,a;}", {"cvt.bf16.f32 needs the rounding modifier .rn"}},
      {".ftz", "{.reg .f32 a;.reg .b16 h;mov.f32 a,0f3F800000;cvt.rn.ftz.f16.f32 h,a;}", {"unsupported modifier .ftz of cvt.f16.f32"}},
      {".sat", "{.reg .f32 a;.reg .b16 h;mov.f32 a,0f3F800000;cvt.rn.sat.bf16.f32 h,a;}", {"unsupported modifier .sat of cvt.bf16.f32"}},
      {"rounding of an exact cvt", "{.reg .f32 a;.reg .b16 h;mov.b16 h,0;cvt.rn.f32.f16 a,h;}", {"unsupported modifier .rn of cvt.f32.f16"}},
      {"another pair of types", "{.reg .f64 d;.reg .b16 h;mov.f64 d,0d3FF0000000000000;cvt.rn.f16.f64 h,d;}", {"cvt.f16.f64 is not emulated"}},
      {"f16 arithmetic", "{.reg .f16 h;.reg .b16 z;mov.b16 z,0;mov.f16 h,z;add.f16 h,h,h;}", {"add.f16 is not emulated", "`add.f16 h,h,h;`"}},
      {"f16 fma", "{.reg .b16 h;mov.b16 h,0;fma.rn.f16 h,h,h,h;}", {"fma.f16 is not emulated"}},
      {"16-bit setp", "{.reg .b16 h;.reg .pred q;mov.b16 h,0;setp.eq.b16 q,h,0;}", {"setp.b16 is not emulated"}},
      {"16-bit register in a 32-bit operand", "{.reg .b16 h;.reg .f32 x;mov.b16 h,0;fma.rn.f32 x,h,h,h;}", {"h is .b16, which does not fit .f32"}},
      {"32-bit register in a cvt from f16", "{.reg .f32 x,y;mov.f32 y,0f00000000;cvt.f32.f16 x,y;}", {"y is .f32, which does not fit .f16"}},
      {"a .bf16 register (ptxas rejects it)", "{.reg .bf16 g;}", {"register type .bf16 is no PTX"}},
      {"an .f16 register in a cvt from bf16", "{.reg .f16 h;.reg .f32 x;cvt.f32.bf16 x,h;}", {"h is .f16, which does not fit .bf16"}},
      {"16-bit load into a 32-bit register", "{.reg .f32 x;ld.global.nc.b16 x,[%0];}", {"x is .f32, which does not fit .b16"}},
      {"ld.f16", "{.reg .b16 h;ld.global.nc.f16 h,[%0];}", {"ld.f16 is no PTX"}},
      {"an immediate for .f16", "{.reg .f16 h;mov.f16 h,0;}", {"no immediate for a .f16 operand"}},
      {"an immediate too large for .b16", "{.reg .b16 h;mov.b16 h,65536;}", {"65536 does not fit .b16"}},
      {"pack of 32-bit registers", "{.reg .f32 x,y;.reg .b32 w;mov.f32 x,0f00000000;mov.f32 y,0f00000000;mov.b32 w,{x,y};}", {"x is .f32, which does not fit .b16"}},
      {"pack by mov.u32", "{.reg .b16 h<2>;.reg .u32 w;mov.b16 h0,0;mov.b16 h1,0;mov.u32 w,{h0,h1};}", {"only mov.b32 packs and unpacks"}},
      {"pack of three", "{.reg .b16 h<3>;.reg .b32 w;mov.b32 w,{h0,h1,h2};}", {"{2 16-bit registers}, not 3"}},
      {"pack read before write", "{.reg .b16 h<2>;.reg .b32 w;mov.b16 h0,0;mov.b32 w,{h0,h1};}", {"register h1 is read before it is written"}},
      {"unpack into a 32-bit register", "{.reg .b16 h;.reg .b32 w;mov.b32 {h,w},%2;}", {"w is .b32, which does not fit .b16"}},
  };
  alignas(16) uint16_t b[16] = {};
  alignas(16) uint16_t c[16] = {};
  for (const BadCase& bad : cases) {
    INFO(bad.what << ": " << bad.ptx);
    const ChildResult r = in_child([&] { run(bad.ptx, b, c, bad.ld); });
    INFO("stderr: " << r.err);
    CHECK(r.aborted);
    CHECK(r.err.find("spmmc_emulation: PTX error") != std::string::npos);
    for (const std::string& part : bad.message) CHECK(r.err.find(part) != std::string::npos);
  }
  // Bounds, as for 32-bit accesses: a .v4.b16 store reaching past the output, a .b16 ld.nc of C.
  const std::vector<std::pair<std::string, std::string>> bounded = {
      {"{.reg .b16 z;mov.b16 z,0;st.global.v4.b16 [%1+8],{z,z,z,z};}", "outside the output"},
      {"{.reg .b16 h;ld.global.nc.b16 h,[%1+2];}", "memory the kernel writes"},
  };
  for (const auto& [ptx, part] : bounded) {
    INFO(ptx);
    const ChildResult r = in_child([&] {
      emu::set_memory_bounds(b, sizeof b, c, 12);  // 6 halves of output: [%1+8, +16) reaches 4 bytes past
      run(ptx, b, c, 16);
    });
    INFO("stderr: " << r.err);
    CHECK(r.aborted);
    CHECK(r.err.find(part) != std::string::npos);
  }
}

}  // namespace
}  // namespace spmmc
