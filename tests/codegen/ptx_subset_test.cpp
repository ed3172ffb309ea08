// The tests' PTX-subset interpreter (tests/cuda_emulation/ptx_subset.h), on which the CPU tests of
// emitted kernels rely: exact semantics of what it runs (fma.rn rounds once, subnormals kept,
// 32 x 32 -> 64-bit addresses, vector accesses, predicates and branches), and that everything it
// cannot run faithfully aborts the process with a message naming the statement (each checked in
// a forked child: SIGABRT and the message on stderr), so that a test meeting it fails.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/cuda_emulation/ptx_subset.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

namespace emu = spmmc_emulation;

uint64_t address_of(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// Runs `ptx` with %0 = b, %1 = c (64-bit) and %2 = ld (32-bit), as an emitted tile does.
void run(const std::string& ptx, const float* b, float* c, uint32_t ld) {
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

}  // namespace
}  // namespace spmmc
