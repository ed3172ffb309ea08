// Helpers for the tests that build kernels emitted by `spmmc compile` and run them on the CPU
// through tests/cuda_emulation (emitted_kernel_cpu_test.cpp, emitted_kernel_nvcc_test.cpp), and
// for the tests that read the inline PTX of the tile functions (emit_unrolled_kernel_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/families/balanced/balanced_schedule.h"
#include "codegen/print_tensor_core.h"
#include "codegen/templates/spmmc_kernel_info.h"
#include "compiler/common/csr.h"
#include "compiler/common/dtype.h"

namespace spmmc::test {

// Runs a shell command, stdout and stderr into `log`; returns its exit status (or 128 + signal).
int run_command(const std::string& command, std::string& log);

// A shell command to run with run_parallel, and what it gave.
struct Job {
  explicit Job(std::string c) : command(std::move(c)) {}
  std::string command;
  int exit_code = -1;
  std::string log;
};

// Runs the commands (run_command), one per core at a time.
void run_parallel(std::vector<Job>& jobs);

// Quotes one word for /bin/sh.
std::string quote(const std::string& word);

// Builds `sources` (emitted .cu files) as host C++ against the CUDA emulation into the shared
// object `so` with SPMMC_CXX (-std=c++17 -O1 -shared -fPIC, -Wall -Wextra -Werror); `includes`
// are extra -I folders. Returns the compiler's exit status; its output goes to `log`.
int build_emulated(const std::vector<std::filesystem::path>& sources, const std::filesystem::path& so,
                   std::string& log, const std::vector<std::filesystem::path>& includes = {});

// An emitted kernel loaded from a shared object built by build_emulated.
class EmulatedKernel {
 public:
  // The entry point's C ABI: cudaError_t is an int-sized enum, cudaStream_t a pointer.
  using Entry = int (*)(const float* b, float* c, int64_t n, void* stream);
  using Info = const spmmc_kernel_info* (*)();
  // The emulation's hooks (tests/cuda_emulation/cuda_runtime.h).
  using LastLaunch = void (*)(unsigned* grid, unsigned* block, unsigned long long* launches, unsigned long long* chain,
                              unsigned long long* ptx_runs);
  using SetBounds = void (*)(const void* read_only, size_t read_only_bytes, void* read_write, size_t read_write_bytes);
  // Streams created, captures begun, graphs instantiated, graph launches, kernel-node updates.
  using GraphStats = void (*)(unsigned long long* counts);
  // A stream its caller captures, and the end of that capture (the graph run once; its nodes).
  using CapturingStream = void* (*)();
  using ReplayCapture = int (*)(void* stream);
  using LastKernel = const void* (*)();

  // dlopens `so` (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE: see load's comment) and finds NAME, NAME_info and the emulation's hooks;
  // `error` says why not.
  static std::unique_ptr<EmulatedKernel> load(const std::filesystem::path& so, const std::string& name, std::string& error);
  ~EmulatedKernel();
  EmulatedKernel(const EmulatedKernel&) = delete;
  EmulatedKernel& operator=(const EmulatedKernel&) = delete;

  Entry entry = nullptr;
  Info info = nullptr;
  LastLaunch last_launch = nullptr;
  SetBounds set_bounds = nullptr;
  GraphStats graph_stats = nullptr;
  CapturingStream capturing_stream = nullptr;
  ReplayCapture replay_capture = nullptr;
  LastKernel last_kernel = nullptr;
  // Any other symbol of the shared object (an emulation hook), or nullptr.
  void* symbol(const char* name) const;
  // The generic path's kernels seen so far: codegen/generic_launch.h's symbol -> the address the
  // emulation launched (check_generic_launch: one address per symbol, one symbol per address).
  mutable std::map<std::string, const void*> generic_kernels;

 private:
  EmulatedKernel() = default;
  void* handle_ = nullptr;
};

// Builds `cu` (an emitted NAME.cu) with build_emulated into lib`name`.so beside it and loads it, the
// calling test failing (REQUIRE) with the compiler's or the loader's message where either fails.
std::unique_ptr<EmulatedKernel> emulate_emitted(const std::filesystem::path& cu, const std::string& name);

// What the emulated device reports (tests/cuda_emulation/cuda_runtime.h): the launch code's
// grid.y is ceil(SMs x blocks per SM / A-tiles), at most the B-tiles and 65535.
constexpr int kEmulatedSmCount = 4;
constexpr int kEmulatedBlocksPerSm = 2;

// C = A * B the way every emitted kernel computes each element: fmaf over the row's non-zeros
// in column order, from 0.0f; with ranges of K (`k_part_begin`, the split along K; empty: one
// range), each range's sum from 0.0f, added to the row's total in range order (a range without
// products of the row adds nothing). The emitted code must match it bit for bit.
std::vector<float> fmaf_spmm(const Csr& a, const std::vector<float>& b, int64_t n,
                             const std::vector<int32_t>& k_part_begin = {});

// C = A * B as the balanced kernel sums it (codegen/families/balanced): each piece of `s` in column order
// by fmaf from +0; a whole row's sum is its piece's; a cut row's, +0 plus its pieces' sums in piece order.
std::vector<float> piece_order_spmm(const Csr& a, const BalancedSchedule& s, const std::vector<float>& b, int64_t n);

// C = A * b (n = 1) as the balanced kernels' lanes over products sum it (spmmc_balanced_spmv,
// kernel_balanced.cuh): each piece of `s` on L = 32 / s.groups lanes, lane l summing products l, l + L, ...
// in order by fmaf from +0, the lanes' sums added by a butterfly (lane l + lane l xor h, h = L / 2 ... 1),
// lane 0's kept; a whole row's sum is its piece's, a cut row's +0 plus its pieces' sums in piece order.
std::vector<float> piece_tree_spmv(const Csr& a, const BalancedSchedule& s, const std::vector<float>& b);

// What a balanced-family file gives: piece_tree_spmv at n = 1 where `spmv` (NAME.json's
// kernel.balanced.spmv), else piece_order_spmm.
std::vector<float> balanced_family_spmm(const Csr& a, const BalancedSchedule& s, const std::vector<float>& b, int64_t n,
                                        bool spmv);

// Seeded B (K x n) with values uniform in [-1, 1].
std::vector<float> seeded_b(int64_t k, int64_t n, uint64_t seed);

// A buffer of `count` floats that starts `offset` floats after a 16-byte boundary, with 16 guard floats
// on each side (a quiet NaN no computation produces: read into a sum, it shows in C).
struct GuardedBuffer {
  GuardedBuffer(size_t count, size_t offset);
  size_t damaged_guards() const;  // guard floats that no longer hold their value
  std::vector<float> storage;
  size_t size;
  float* data = nullptr;
  float* begin_guard = nullptr;
};

// Which code ran, over the calls of check_emulated_kernel.
struct PathCounts {
  int unrolled = 0;  // runs that took the unrolled kernel (inline PTX)
  int generic = 0;   // runs that took the generic CSR kernel
  int generic_wide = 0;  // of those, runs of the warp per row in blocks of 32 warps (A long along K)
  int generic_strided = 0;  // of those, runs of the warp per row with four columns 32 apart a lane
  int balanced = 0;  // runs that took the balanced kernel of the small-n path
  int mid = 0;       // of those, runs of its second table (balanced-mid-*: uneven rows)
  int looped = 0;    // unrolled runs whose blocks looped over more B-tiles than grid.y
  int64_t kernels = 0;  // the most kernels one unrolled run launched
  int graphs = 0;       // unrolled runs launched as one CUDA graph (several kernels)
  int tensor_core = 0;  // runs that took a tensor-core kernel (check_emulated_half_kernel, _tf32_kernel)
  int tensor_core_staged = 0;  // of those, runs of the staged kernel (B in shared memory)
  PathCounts& operator+=(const PathCounts& o) {
    unrolled += o.unrolled, generic += o.generic, generic_wide += o.generic_wide, generic_strided += o.generic_strided, balanced += o.balanced, mid += o.mid, looped += o.looped, kernels = std::max(kernels, o.kernels);
    graphs += o.graphs, tensor_core += o.tensor_core, tensor_core_staged += o.tensor_core_staged;
    return *this;
  }
};

// Runs `kernel` for each n in `ns` on seeded B, with B and C aligned to 16 bytes and, when
// `misaligned` is set, also with B, C or both offset by one float (C filled with NaN first and
// guarded by NaN-filled floats on both sides), and checks with Catch2 CHECKs labelled `label`:
// C against reference_spmm (relative Frobenius error < 1e-5), against fmaf_spmm with the file's
// ranges of K `k_part_begin` (bit for bit; where the balanced small-n path that NAME_info()'s
// variants list takes n, against piece_order_spmm of its schedule, pieces of kSmallNPieceLength, and
// its launch against balanced_launch),
// for NaN and for writes outside C; the path the entry point took (the unrolled kernel exactly
// when n is a multiple of V and B and C are aligned to 4 x V bytes, the generic one otherwise)
// and its launch (grid, block, and one tile execution per A-tile and group of V columns; several
// kernels launched as one CUDA graph, whose arguments follow each call's B, C and n); the
// inline PTX confined to B (loads) and C (stores) through the emulation's bounds. Also checks
// that null B, null C and n < 1 are refused without touching C.
PathCounts check_emulated_kernel(const EmulatedKernel& kernel, const Csr& a, const std::vector<int64_t>& ns,
                                 const std::string& label, bool misaligned = true,
                                 const std::vector<int32_t>& k_part_begin = {});

// Checks NAME_info(): ABI version, name, shapes, nnz, tile (M1, N1, V), layouts, dtype, reorder,
// weights SHA-256; for `generic_family` the generic family's (csr-constants, no A-tiles, the tile
// arguments unused).
void check_kernel_info(const spmmc_kernel_info& info, const std::string& name, const Csr& a, int32_t m1, int32_t n1,
                       int32_t v, const std::string& reorder, int32_t k_parts = 1, bool generic_family = false);

// The inline-PTX text of every tile function of an emitted NAME.cu, in the order of the file
// (spmmc_tile_0, spmmc_tile_1, ...): the C string literals of each SPMMC_TILE_ASM(...)
// concatenated and unescaped, as the compiler would pass them on.
std::vector<std::string> tile_ptx_texts(const std::string& cu);

// check_emulated_kernel for a kernel of half-precision B and C (--dtype fp16 or bf16; `a` holds
// A's values as spmmc rounded them): B seeded in [-1, 1] and rounded to the dtype, for each n in
// `ns`, with B and C aligned to 16 bytes and offset by one element (C filled with NaN, guarded
// by NaN elements on both sides). Checks C bit for bit against fmaf_spmm of the rounded values
// rounded to the dtype (ties to even), every element within dtype_error_bound of the float64
// reference, no NaN and no write outside C; the path (unrolled exactly when n % V == 0 and B and
// C are aligned to V elements; the generic one with four columns per thread where n >= 128 is a
// multiple of 4 and both are aligned to four elements) and the refusals of null pointers and n < 1.
// Where the tensor-core kernel runs, C is checked bit for bit against `tc->sums` instead when given
// (the staged kernel's blocks are not in the columns' order, and the direct kernel may split K), and
// its launch against `tc->parts` (the direct kernel's warps per window at n).
// Where `tc->launch` is given (the file's launch constants), the launch is also checked against the
// tuner's copy of the rule, tensor_core_launch (codegen/tensor_core_launch.h).
struct TcModel {
  std::function<std::vector<float>(const std::vector<float>& b, int64_t n)> sums;  // C before rounding
  std::function<int(int64_t n)> parts;
  std::optional<TensorCoreCode> launch;
};
PathCounts check_emulated_half_kernel(const EmulatedKernel& kernel, const Csr& a, DType dtype, const std::vector<int64_t>& ns,
                                      const std::string& label, const TcModel* tc = nullptr);

// check_emulated_kernel for a kernel of --dtype tf32 (`a` holds A's values as spmmc rounded them to
// tf32): B seeded in [-1, 1] as float32, not rounded (the kernel rounds it), for each n in `ns`,
// with B and C aligned to 16 bytes and offset by one float (C filled with NaN, guarded on both
// sides). Checks C bit for bit against fmaf_spmm of A and B rounded to tf32 (ties away from zero:
// what the emulation's MMA, which sums each element's products in k order with fmaf, and the
// generic path give), every element within dtype_error_bound(kTf32) of the float64 reference of
// those rounded values, that C is not what unrounded B would give, no NaN, no write outside C,
// B untouched; the path (the tensor-core kernel exactly when n % 8 == 0 and B and C are 16-byte
// aligned, with its launch) and the refusals of null pointers and n < 1.
PathCounts check_emulated_tf32_kernel(const EmulatedKernel& kernel, const Csr& a, const std::vector<int64_t>& ns,
                                      const std::string& label);

}  // namespace spmmc::test
