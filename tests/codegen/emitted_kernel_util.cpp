#include "tests/codegen/emitted_kernel_util.h"

#include "codegen/families/balanced/balanced_launch.h"
#include "codegen/generic_launch.h"
#include "codegen/tensor_core_launch.h"
#include "compiler/planning/small_n_dispatch.h"
#include "compiler/planning/tile_space.h"

#include <dlfcn.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <thread>
#include <tuple>

#include "compiler/common/sha256.h"
#include "runtime/reference_spmm.h"
#include "tests/test_util.h"
#include "tools/gpu_bench/bench_host.h"

namespace spmmc::test {

std::string quote(const std::string& word) {
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

int run_command(const std::string& command, std::string& log) {
  TempDir dir;
  const std::filesystem::path out = dir.path / "log";
  const int status = std::system((command + " >" + quote(out.string()) + " 2>&1 </dev/null").c_str());
  log = read_file(out);
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void run_parallel(std::vector<Job>& jobs) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) jobs[i].exit_code = run_command(jobs[i].command, jobs[i].log);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(2u, std::thread::hardware_concurrency()); ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
}

int build_emulated(const std::vector<std::filesystem::path>& sources, const std::filesystem::path& so, std::string& log,
                   const std::vector<std::filesystem::path>& includes) {
  // -Wno-aggressive-loop-optimizations: on a matrix of fewer non-zeros than the generic path's
  // batch (8), g++ sees the batch loop index past the weight arrays, in iterations that never run.
  std::string command = quote(SPMMC_CXX) + " -std=c++17 -O1 -shared -fPIC -Wall -Wextra -Werror -Wno-aggressive-loop-optimizations -I " +
                        quote(SPMMC_CUDA_EMULATION_DIR);
  for (const auto& dir : includes) command += " -I " + quote(dir.string());
  command += " -x c++";
  for (const auto& source : sources) command += " " + quote(source.string());
  command += " -o " + quote(so.string());
  return run_command(command, log);
}

std::unique_ptr<EmulatedKernel> emulate_emitted(const std::filesystem::path& cu, const std::string& name) {
  std::string log;
  const std::filesystem::path so = cu.parent_path() / ("lib" + name + ".so");
  const int built = build_emulated({cu}, so, log);
  INFO(log);
  REQUIRE(built == 0);
  std::string error;
  std::unique_ptr<EmulatedKernel> kernel = EmulatedKernel::load(so, name, error);
  INFO(error);
  REQUIRE(kernel);
  return kernel;
}

void* EmulatedKernel::symbol(const char* name) const { return dlsym(handle_, name); }

std::unique_ptr<EmulatedKernel> EmulatedKernel::load(const std::filesystem::path& so, const std::string& name,
                                                     std::string& error) {
  std::unique_ptr<EmulatedKernel> k(new EmulatedKernel());
  // RTLD_NODELETE: the emulation's fibers are shared by every shared object of the host thread
  // (tests/cuda_emulation/warp_scheduler.h), and a fiber runs the code of the object that created it
  // (every emitted file has collectives: the generic path's split kernel), so no object may be
  // unmapped while the process runs (each test's files are at paths of their own).
  k->handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!k->handle_) {
    error = dlerror();
    return nullptr;
  }
  // POSIX guarantees that a dlsym result converts to a function pointer.
  k->entry = reinterpret_cast<Entry>(dlsym(k->handle_, name.c_str()));
  k->info = reinterpret_cast<Info>(dlsym(k->handle_, (name + "_info").c_str()));
  k->last_launch = reinterpret_cast<LastLaunch>(dlsym(k->handle_, "spmmc_emulation_last_launch"));
  k->set_bounds = reinterpret_cast<SetBounds>(dlsym(k->handle_, "spmmc_emulation_set_bounds"));
  k->graph_stats = reinterpret_cast<GraphStats>(dlsym(k->handle_, "spmmc_emulation_graph_stats"));
  k->capturing_stream = reinterpret_cast<CapturingStream>(dlsym(k->handle_, "spmmc_emulation_capturing_stream"));
  k->replay_capture = reinterpret_cast<ReplayCapture>(dlsym(k->handle_, "spmmc_emulation_replay_capture"));
  k->last_kernel = reinterpret_cast<LastKernel>(dlsym(k->handle_, "spmmc_emulation_last_kernel"));
  if (!k->entry || !k->info) {
    error = "no symbol " + name + " or " + name + "_info in " + so.string();
    return nullptr;
  }
  if (!k->last_launch || !k->set_bounds || !k->graph_stats || !k->capturing_stream || !k->replay_capture ||
      !k->last_kernel) {
    error = "no spmmc_emulation_* hooks (last_launch, set_bounds, graph_stats, capturing_stream, replay_capture, "
            "last_kernel) in " +
            so.string() +
            " (not built against tests/cuda_emulation?)";
    return nullptr;
  }
  return k;
}

EmulatedKernel::~EmulatedKernel() {
  if (handle_) dlclose(handle_);
}

std::vector<float> fmaf_spmm(const Csr& a, const std::vector<float>& b, int64_t n, const std::vector<int32_t>& k_part_begin) {
  std::vector<float> c(static_cast<size_t>(a.rows) * static_cast<size_t>(n));
  const std::vector<int32_t> ranges = k_part_begin.empty() ? std::vector<int32_t>{0, a.cols} : k_part_begin;
  for (int32_t r = 0; r < a.rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float total = 0.0f;
      int32_t p = a.row_ptr[r];
      for (size_t part = 0; part + 1 < ranges.size(); ++part) {
        const bool empty = p == a.row_ptr[r + 1] || a.col_idx[p] >= ranges[part + 1];
        if (part > 0 && empty) continue;  // a range without products of the row adds nothing
        float acc = 0.0f;
        for (; p < a.row_ptr[r + 1] && a.col_idx[p] < ranges[part + 1]; ++p)
          acc = std::fmaf(a.values[p], b[static_cast<size_t>(a.col_idx[p] * n + j)], acc);
        total = part == 0 ? acc : total + acc;
      }
      c[static_cast<size_t>(r * n + j)] = total;
    }
  return c;
}

std::vector<float> seeded_b(int64_t k, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> b(static_cast<size_t>(k * n));
  for (float& v : b) v = dist(rng);
  return b;
}

namespace {

constexpr size_t kGuard = 16;               // floats on each side of B and C
constexpr uint32_t kGuardBits = 0x7fc0dead;  // a quiet NaN no computation produces

float guard_value() {
  float f;
  std::memcpy(&f, &kGuardBits, sizeof f);
  return f;
}

// Where four columns per thread's launch (16 rows x 64 columns a block of 8 warps) has at least 14
// warps per SM of the emulated device: the generic path takes them from n = 128 there (512 elsewhere).
bool emulated_v4_fills(int64_t rows, int64_t n) {
  return n >= 128 && (n + 63) / 64 * std::min<int64_t>((rows + 15) / 16, 65535) * 8 >= 14 * int64_t{kEmulatedSmCount};
}

// Whether the wide warp kernel's blocks (32 rows x 128 columns) are at least 31/32 of the emulated SMs
// (its needs besides the file having it: codegen/generic_launch.h).
bool emulated_warp_wide_fills(int64_t rows, int64_t n) {
  return 32 * ((rows + 31) / 32) * std::min<int64_t>((n + 127) / 128, 65535) >= 31 * int64_t{kEmulatedSmCount};
}

// The generic path's last launch (grid, block and kernel as the emulation recorded them) for A at n:
// what codegen/generic_launch.h says (the tuner launches the generic family by it) on the emulated
// device's SMs, the same kernel for the same symbol over the file's calls and different kernels
// for different symbols, and its threads cover the columns: the split kernel (n <= 16) a warp per
// row with every column in it, else threads of 1 or 4 columns (4: n >= 512, or n >= 128 where the
// launch fills the SMs; n % 4 == 0, B and C 16-byte aligned) over the row, from n = 512 a warp per row
// (four adjacent columns a lane where four columns per thread would run, else four 32 apart from the start
// the file lists: 512, or 1024 where A has more than 1024 columns; blocks of 8
// warps, or of 32 where the file has them and emulated_warp_wide_fills; every row in a warp, 128 columns
// a warp).
GenericLaunch check_generic_launch(const EmulatedKernel& kernel, const unsigned* grid, const unsigned* block, const Csr& a,
                                   int64_t n, bool aligned16) {
  const int32_t rows = a.rows;
  // The generic family's files load one column per thread's weights a batch ahead (codegen/emit_unrolled_kernel.cpp).
  const bool weights_ahead = std::string(kernel.info()->a_format) == "csr-constants";
  // The split kernel's end as the file has it (generic_split_below for the target's SMs, which need not be
  // the emulation's): generic-split's n_max + 1, 1 where the file lists none.
  // The wide warp kernel where the file lists it (generic_warp_wide: A of at least 2048 columns, float elements).
  // The strided warp kernel's start as the file lists it (generic_warp_strided_from: 1024 where A has more
  // than 1024 columns).
  int64_t split_below = 1, strided_from = 0;
  bool warp_wide = false;
  for (int32_t i = 0; i < kernel.info()->variant_count; ++i) {
    const std::string variant = kernel.info()->variants[i].kernel;
    if (variant == "generic-split") split_below = kernel.info()->variants[i].n_max + 1;
    if (variant == "generic-warp-strided") strided_from = kernel.info()->variants[i].n_min;
    warp_wide = warp_wide || variant == "generic-warp-wide";
  }
  CHECK((split_below == 1 || split_below == kGenericSplitBelow));
  CHECK(warp_wide == (a.cols >= kGenericWarpWideMinK && std::string(kernel.info()->dtype) != "float16" &&
                      std::string(kernel.info()->dtype) != "bfloat16"));
  CHECK(strided_from == generic_warp_strided_from(a));
  const GenericLaunch l = generic_launch(
      {a.rows, a.nnz(), kEmulatedSmCount, weights_ahead, split_below, warp_wide, strided_from}, n, aligned16);
  CHECK(std::make_tuple(grid[0], grid[1], block[0], block[1]) == std::make_tuple(l.grid_x, l.grid_y, l.block_x, l.block_y));
  const void* const func = kernel.last_kernel();
  for (const auto& [symbol, seen] : kernel.generic_kernels) {
    INFO(symbol << " ran before; now " << l.symbol);
    CHECK((symbol == l.symbol) == (seen == func));
  }
  kernel.generic_kernels.emplace(l.symbol, func);
  if (n < split_below) {
    CHECK(std::string(l.symbol) == kGenericKernelSplit);
    CHECK(int64_t{grid[0]} * block[0] / 32 >= std::min<int64_t>(rows, 65535 * 4));  // a warp per row, or loops
    return l;
  }
  const int64_t v = (n >= 512 || emulated_v4_fills(rows, n)) && n % 4 == 0 && aligned16 ? 4 : 1;
  CHECK(l.cols_per_thread == v);
  if (v == 4 ? n >= 512 : strided_from > 0 && n >= strided_from) {
    // a warp per row (four adjacent columns a lane where v = 4, else four 32 apart from the file's start), in
    // blocks of 32 warps where the file has them and 32 x their count is at least 31 x the SMs
    const int64_t columns = std::min<int64_t>((n + 127) / 128, 65535);
    const int64_t warps = warp_wide && emulated_warp_wide_fills(rows, n) ? 32 : 8;
    if (v == 4) CHECK(std::string(l.symbol) == (warps == 32 ? kGenericKernelWarpWide : kGenericKernelWarp));
    else CHECK(std::string(l.symbol) == (warps == 32 ? kGenericKernelWarpWideStrided : kGenericKernelWarpStrided));
    CHECK((block[0] == 32 * warps && block[1] == 1));
    CHECK(int64_t{grid[0]} * warps >= rows);
    CHECK(int64_t{grid[0] - 1} * warps < rows);
    CHECK(int64_t{grid[1]} == columns);
    return l;
  }
  CHECK(static_cast<int64_t>(grid[0]) * block[0] * v >= n);
  CHECK(static_cast<int64_t>(grid[0] - 1) * block[0] * v < n);
  if (v == 4) {  // 16 rows x 16 threads of 4 columns
    CHECK(block[0] == 16);
    CHECK(block[1] == 16);
  } else {
    CHECK(block[0] * block[1] <= 128);  // rows per block fill the 128 threads
  }
  return l;
}

// The kernel NAME_info()->variants names for a call at n with B and C at `b` and `c`, `elem` bytes per
// element: the first whose n range holds n and whose needs the call meets (read by kernel: n a
// multiple of its columns per thread, B and C aligned to them).
std::string variant_for(const spmmc_kernel_info& info, int64_t n, int64_t elem, const void* b, const void* c) {
  const auto aligned = [&](int64_t bytes) {
    return reinterpret_cast<uintptr_t>(b) % static_cast<uintptr_t>(bytes) == 0 &&
           reinterpret_cast<uintptr_t>(c) % static_cast<uintptr_t>(bytes) == 0;
  };
  for (int32_t i = 0; i < info.variant_count; ++i) {
    const spmmc_kernel_variant& x = info.variants[i];
    const std::string kernel = x.kernel;
    if (n < x.n_min || n > x.n_max) continue;
    const bool tc = kernel == "tensor-core" || kernel == "tensor-core-staged";
    const int64_t v = kernel == "unrolled"                                  ? info.cols_per_thread
                      : tc                                                  ? 8
                      : kernel == "generic-v4" || kernel == "generic-warp" || kernel == "generic-warp-wide" ||
                              kernel == "balanced-v4" || kernel == "balanced-mid-v4"
                          ? 4
                      : kernel == "balanced-v2" || kernel == "balanced-mid-v2" ? 2
                                                                            : 1;
    const int64_t bytes = tc ? 16 : v * elem;
    if (kernel == "generic-v4" && n < 512 && !emulated_v4_fills(info.m, n)) continue;  // its needs below 512
    if ((kernel == "generic-warp-wide" || kernel == "generic-warp-wide-strided") && !emulated_warp_wide_fills(info.m, n))
      continue;  // their needs
    if (n % v == 0 && aligned(bytes)) return kernel;
  }
  return "none";
}

// The variant that ran for a generic launch (codegen/generic_launch.h's symbol).
// Counts a generic launch of the warp per row in blocks of 32 warps, and of either strided form, into `paths`.
void count_warp_kernels(const GenericLaunch& l, PathCounts& paths) {
  const std::string symbol = l.symbol;
  paths.generic_wide += symbol == kGenericKernelWarpWide;
  paths.generic_strided += symbol == kGenericKernelWarpStrided || symbol == kGenericKernelWarpWideStrided;
}

std::string generic_variant(const GenericLaunch& l) {
  const std::string symbol = l.symbol;
  return symbol == kGenericKernelSplit      ? "generic-split"
         : symbol == kGenericKernelWarp     ? "generic-warp"
         : symbol == kGenericKernelWarpWide ? "generic-warp-wide"
         : symbol == kGenericKernelWarpStrided     ? "generic-warp-strided"
         : symbol == kGenericKernelWarpWideStrided ? "generic-warp-wide-strided"
         : l.cols_per_thread == 4           ? "generic-v4"
                                            : "generic-v1";
}


int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

// C (rows x n) from its pieces' sums, as the balanced kernels store it: `piece_sum(piece, j)` a piece's sum
// for column j; a whole row's value its piece's, a cut row's +0 plus its pieces' sums in piece (slot) order.
template <typename PieceSum>
std::vector<float> spmm_of_pieces(const Csr& a, const BalancedSchedule& s, int64_t n, PieceSum piece_sum) {
  std::map<int32_t, std::vector<const BalancedPiece*>> pieces;  // row -> its pieces in piece order
  for (const BalancedPiece& p : s.slots)
    if (p.row >= 0) pieces[p.row].push_back(&p);
  std::vector<float> c(static_cast<size_t>(a.rows) * static_cast<size_t>(n), 0.0f);
  for (const auto& [row, list] : pieces)
    for (int64_t j = 0; j < n; ++j) {
      float value = list.size() == 1 ? piece_sum(*list[0], j) : 0.0f;
      if (list.size() > 1)
        for (const BalancedPiece* p : list) value += piece_sum(*p, j);
      c[static_cast<size_t>(row) * static_cast<size_t>(n) + static_cast<size_t>(j)] = value;
    }
  return c;
}

}  // namespace

GuardedBuffer::GuardedBuffer(size_t count, size_t offset) : storage(count + 2 * kGuard + offset + 4, guard_value()), size(count) {
  size_t first = 0;
  while (reinterpret_cast<uintptr_t>(storage.data() + first) % 16 != 0) ++first;
  data = storage.data() + first + kGuard + offset;
  begin_guard = data - kGuard;
}

size_t GuardedBuffer::damaged_guards() const {
  size_t damaged = 0;
  for (size_t i = 0; i < kGuard; ++i) {
    damaged += std::memcmp(begin_guard + i, &kGuardBits, sizeof(float)) != 0;
    damaged += std::memcmp(data + size + i, &kGuardBits, sizeof(float)) != 0;
  }
  return damaged;
}

std::vector<float> piece_order_spmm(const Csr& a, const BalancedSchedule& s, const std::vector<float>& b, int64_t n) {
  return spmm_of_pieces(a, s, n, [&](const BalancedPiece& p, int64_t j) {
    float acc = 0.0f;
    for (int32_t q = p.begin; q < p.end; ++q)
      acc = std::fma(a.values[static_cast<size_t>(q)], b[static_cast<size_t>(a.col_idx[static_cast<size_t>(q)]) * n + j], acc);
    return acc;
  });
}

std::vector<float> piece_tree_spmv(const Csr& a, const BalancedSchedule& s, const std::vector<float>& b) {
  const int64_t n = 1;
  const int32_t lanes = 32 / s.groups;
  return spmm_of_pieces(a, s, n, [&](const BalancedPiece& p, int64_t j) {
    std::vector<float> lane(static_cast<size_t>(lanes), 0.0f);
    for (int32_t q = p.begin; q < p.end; ++q) {
      float& acc = lane[static_cast<size_t>((q - p.begin) % lanes)];
      acc = std::fma(a.values[static_cast<size_t>(q)], b[static_cast<size_t>(a.col_idx[static_cast<size_t>(q)]) * n + j], acc);
    }
    for (int32_t half = lanes / 2; half > 0; half /= 2) {
      std::vector<float> next(lane.size());
      for (int32_t l = 0; l < lanes; ++l)
        next[static_cast<size_t>(l)] = lane[static_cast<size_t>(l)] + lane[static_cast<size_t>(l ^ half)];
      lane = next;
    }
    return lane[0];
  });
}

std::vector<float> balanced_family_spmm(const Csr& a, const BalancedSchedule& s, const std::vector<float>& b, int64_t n,
                                        bool spmv) {
  return spmv && n == 1 ? piece_tree_spmv(a, s, b) : piece_order_spmm(a, s, b, n);
}

PathCounts check_emulated_kernel(const EmulatedKernel& kernel, const Csr& a, const std::vector<int64_t>& ns,
                                 const std::string& label, bool misaligned, const std::vector<int32_t>& k_part_begin) {
  constexpr int kInvalidValue = 1;  // cudaErrorInvalidValue
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const spmmc_kernel_info& info = *kernel.info();
  const int64_t v = info.cols_per_thread, n1 = info.n1, a_tiles = info.a_tiles;
  const bool generic_only = std::string(info.a_format) == "csr-constants";  // the generic family: no unrolled code
  PathCounts paths;
  REQUIRE((v == 1 || v == 2 || v == 4));
  REQUIRE(n1 % v == 0);
  // The balanced small-n path (its variants first in NAME_info()): the n it takes, its pairs kernel's
  // (below pairs_below), and its schedule.
  // n = 1 by the lanes-over-products kernel where it is listed (balanced-spmv, first).
  // Its second table for uneven rows (balanced-mid-*, after the path's): the n it takes, its schedule.
  // Its one column per lane ends where balanced-v1 does (v1_below; the generic path from there where n is
  // odd or B and C are not aligned to 8 bytes).
  int64_t balanced_from = 0, balanced_below = 0, pairs_below = 0, mid_from = 0, mid_below = 0, v1_below = 0;
  bool spmv = false, others = false;
  for (int32_t i = 0; i < info.variant_count; ++i)
    if (std::string(info.variants[i].kernel) == "balanced-spmv") {
      REQUIRE(i == 0);
      REQUIRE((info.variants[i].n_min == 1 && info.variants[i].n_max == 1));
      spmv = true;
    } else if (std::string(info.variants[i].kernel).rfind("balanced-mid-", 0) == 0) {
      REQUIRE(!others);  // tried before every other path
      REQUIRE(balanced_below > 0);  // after the path's
      mid_from = mid_from == 0 ? info.variants[i].n_min : std::min(mid_from, info.variants[i].n_min);
      mid_below = std::max(mid_below, info.variants[i].n_max + 1);
    } else if (std::string(info.variants[i].kernel).rfind("balanced-", 0) == 0) {
      REQUIRE(!others);  // tried before every other path
      REQUIRE(mid_below == 0);
      balanced_from = balanced_from == 0 ? info.variants[i].n_min : std::min(balanced_from, info.variants[i].n_min);
      balanced_below = std::max(balanced_below, info.variants[i].n_max + 1);
      if (std::string(info.variants[i].kernel) == "balanced-pairs-v1") {
        REQUIRE(i == (spmv ? 1 : 0));  // first after n = 1's: below every other balanced kernel
        pairs_below = info.variants[i].n_max + 1;
      }
      if (std::string(info.variants[i].kernel) == "balanced-v1") v1_below = info.variants[i].n_max + 1;
    } else {
      others = true;
    }
  REQUIRE((!spmv || balanced_below > 0));  // only beside the path
  REQUIRE((mid_below == 0 || mid_from >= balanced_below));
  const BalancedSchedule balanced_schedule =
      balanced_below > 0 ? schedule_balanced(a, kSmallNPieceLength, kBalancedWarps, 1) : BalancedSchedule{};
  const BalancedSchedule mid_schedule =
      mid_below > 0 ? schedule_balanced(a, balanced_mid_piece_length(a), kBalancedWarps, 1) : BalancedSchedule{};
  std::vector<std::pair<size_t, size_t>> offsets = {{0, 0}};  // (B, C) in floats
  if (misaligned) offsets.insert(offsets.end(), {{1, 1}, {1, 0}, {0, 1}});
  for (const int64_t n : ns) {
    const std::vector<float> b = seeded_b(a.cols, n, static_cast<uint64_t>(n) * 7919u + static_cast<uint64_t>(a.nnz()));
    const bool lanes_over_products = spmv && n == 1;
    // the path's range (where its launch would take one column per lane from v1_below, the generic path:
    // in the loop below)
    const bool path_range = (n >= balanced_from && n < balanced_below) || lanes_over_products;
    // the second table where n is in its range and its kernel's needs are met (n % 4 == 0 here, B and C
    // aligned to 16 bytes in the loop below; else the generic path)
    const bool mid_range = !path_range && n >= mid_from && n < mid_below && n % 4 == 0;
    // the sums in column order, or the balanced kernel's in piece order (at n = 1, its lanes' tree)
    const std::vector<float> exact_path = lanes_over_products ? piece_tree_spmv(a, balanced_schedule, b)
                                          : path_range        ? piece_order_spmm(a, balanced_schedule, b, n)
                                                              : std::vector<float>{};
    const std::vector<float> exact_generic = fmaf_spmm(a, b, n, k_part_begin);
    const std::vector<float> exact_mid = mid_range ? piece_order_spmm(a, mid_schedule, b, n) : std::vector<float>{};
    const std::vector<double> want = reference_spmm(a, b, n, 1);
    const size_t c_size = static_cast<size_t>(a.rows) * static_cast<size_t>(n);
    for (const auto& [b_offset, c_offset] : offsets) {
      INFO(label << ", n = " << n << ", B and C " << b_offset << " and " << c_offset << " floats past 16-byte boundaries");
      GuardedBuffer gb(b.size(), b_offset), gc(c_size, c_offset);
      const auto aligned16 = [](const float* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
      // (the launch's columns per lane for B's and C's alignment: balanced_launch.h, as below)
      const uintptr_t either = (reinterpret_cast<uintptr_t>(gb.data) | reinterpret_cast<uintptr_t>(gc.data)) & 15;
      const int64_t alignment = either == 0 ? 16 : either % 8 == 0 ? 8 : 4;
      const bool path = path_range && (lanes_over_products || v1_below == 0 || n < v1_below ||
                                       balanced_launch(n, alignment, balanced_schedule.blocks(), kBalancedWarps, 1).cols_per_lane > 1);
      const bool mid = mid_range && aligned16(gb.data) && aligned16(gc.data);
      const bool balanced = path || mid;
      const BalancedSchedule& schedule = mid ? mid_schedule : balanced_schedule;
      const std::vector<float>& exact = mid ? exact_mid : path ? exact_path : exact_generic;
      std::copy(b.begin(), b.end(), gb.data);
      std::fill(gc.data, gc.data + c_size, nan);
      unsigned grid[3], block[3];
      unsigned long long launches_before = 0, launches = 0, chain[4] = {}, runs = 0;
      unsigned long long graphs_before[5] = {}, graphs[5] = {};
      kernel.last_launch(grid, block, &launches_before, chain, &runs);
      kernel.graph_stats(graphs_before);
      kernel.set_bounds(gb.data, b.size() * sizeof(float), gc.data, c_size * sizeof(float));
      const int status = kernel.entry(gb.data, gc.data, n, nullptr);
      kernel.set_bounds(nullptr, 0, nullptr, 0);
      REQUIRE(status == 0);
      kernel.last_launch(grid, block, &launches, chain, &runs);
      kernel.graph_stats(graphs);
      // Several kernels are one graph launch: a new graph, or one built before with the arguments of
      // every kernel set again (or none, where an earlier call had the same B, C and n); one kernel
      // is a plain launch.
      const unsigned long long graph_launches = graphs[3] - graphs_before[3];
      const unsigned long long built = graphs[2] - graphs_before[2], updated = graphs[4] - graphs_before[4];
      CHECK(graph_launches == (chain[0] > 1 ? 1u : 0u));
      CHECK(built <= graph_launches);
      if (built == 1 || graph_launches == 0)
        CHECK(updated == 0);
      else
        CHECK((updated == 0 || updated == chain[0]));
      paths.graphs += static_cast<int>(graph_launches);
      // One chain per call: its first kernel launched plainly, every later one overlapping.
      CHECK(launches == launches_before + chain[0]);
      CHECK(chain[1] + 1 == chain[0]);
      CHECK(chain[3] == 0);  // one grid.y and block for all kernels of the chain

      size_t nans = 0, differing = 0;
      for (size_t i = 0; i < c_size; ++i) {
        if (std::isnan(gc.data[i])) ++nans;
        if (std::memcmp(&gc.data[i], &exact[i], sizeof(float)) != 0) ++differing;
      }
      CHECK(nans == 0);
      CHECK(differing == 0);
      CHECK(gc.damaged_guards() == 0);  // nothing written outside C
      CHECK(gb.damaged_guards() == 0);
      CHECK(relative_frobenius_error(gc.data, want.data(), static_cast<int64_t>(c_size)) < 1e-5);

      // The path: unrolled exactly when n % V == 0 and B, C are aligned to 4 x V bytes.
      const auto aligned = [v](const float* p) { return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(4 * v) == 0; };
      // The file's family from NAME_info()->generic_below_n on, where n and the alignment allow it.
      const bool unrolled =
          !balanced && !generic_only && n >= info.generic_below_n && n % v == 0 && aligned(gb.data) && aligned(gc.data);
      // NAME_info()->variants names the kernel that ran.
      const std::string named = variant_for(info, n, 4, gb.data, gc.data);
      if (unrolled) CHECK(named == "unrolled");
      if (balanced) {
        // The launch the tuner would make (codegen/families/balanced/balanced_launch.h).
        ++paths.balanced;
        paths.mid += mid;
        CHECK(chain[0] == 1);
        CHECK(runs == 0);
        if (lanes_over_products) {  // one block of columns, the schedule's blocks of 32 x warps lanes
          CHECK(std::make_tuple(grid[0], grid[1], grid[2], block[0], block[1], block[2]) ==
                std::make_tuple(static_cast<unsigned>(balanced_schedule.blocks()), 1u, 1u,
                                static_cast<unsigned>(32 * kBalancedWarps), 1u, 1u));
          CHECK(named == "balanced-spmv");
        } else {
          const BalancedLaunch l =
              n < pairs_below ? balanced_pairs_launch(n, balanced_schedule.blocks(), kBalancedWarps)
                              : balanced_launch(n, alignment, schedule.blocks(),
                                                kBalancedWarps, 1);
          CHECK(std::make_tuple(grid[0], grid[1], grid[2], block[0], block[1], block[2]) ==
                std::make_tuple(l.grid_x, l.grid_y, l.grid_z, l.block_x, 1u, 1u));
          CHECK(named == (n < pairs_below ? std::string("balanced-pairs-v1")
                                          : fmt::format("balanced-{}v{}", mid ? "mid-" : "", l.cols_per_lane)));
        }
      } else if (unrolled) {
        ++paths.unrolled;
        const int64_t b_tiles = ceil_div(n, n1);
        // The template's spmmc_grid_y follows the compiler's rule (compiler/planning/tile_space.h).
        const int64_t y = blocks_per_a_tile(a_tiles, b_tiles, kEmulatedSmCount * kEmulatedBlocksPerSm);
        paths.looped += b_tiles > y;
        paths.kernels = std::max<int64_t>(paths.kernels, static_cast<int64_t>(chain[0]));
        CHECK(chain[2] == static_cast<unsigned long long>(a_tiles));  // the kernels' grid.x add up to the A-tiles
        CHECK(grid[0] >= 1);
        CHECK(grid[1] == static_cast<unsigned>(y));
        CHECK(grid[2] == 1);
        CHECK(block[0] == static_cast<unsigned>(n1 / v));
        CHECK(block[1] * block[2] == 1);
        // Every A-tile ran once for every group of V columns: the loop over B-tiles covers each once.
        CHECK(runs == static_cast<unsigned long long>(a_tiles * (n / v)));
      } else {
        ++paths.generic;
        CHECK(chain[0] == 1);  // the generic path is one kernel
        CHECK(runs == 0);      // no inline PTX ran
        const GenericLaunch launched = check_generic_launch(kernel, grid, block, a, n, aligned16(gb.data) && aligned16(gc.data));
        CHECK(named == generic_variant(launched));
        count_warp_kernels(launched, paths);
        CHECK(block[2] == 1);
        CHECK(grid[1] >= 1);
        CHECK(grid[1] <= 65535);
      }
    }
  }
  // Refusals: no launch, C untouched.
  INFO(label);
  const std::vector<float> b = seeded_b(a.cols, 1, 1);
  std::vector<float> c(static_cast<size_t>(a.rows), nan);
  unsigned grid[3], block[3];
  unsigned long long launches_before = 0, launches = 0, chain[4] = {}, runs = 0;
  kernel.last_launch(grid, block, &launches_before, chain, &runs);
  CHECK(kernel.entry(nullptr, c.data(), 1, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), nullptr, 1, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), c.data(), 0, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), c.data(), -5, nullptr) == kInvalidValue);
  kernel.last_launch(grid, block, &launches, chain, &runs);
  CHECK(launches == launches_before);
  CHECK(std::isnan(c[0]));
  return paths;
}

void check_kernel_info(const spmmc_kernel_info& info, const std::string& name, const Csr& a, int32_t m1, int32_t n1,
                       int32_t v, const std::string& reorder, int32_t k_parts, bool generic_family) {
  INFO(name);
  CHECK(info.abi_version == SPMMC_KERNEL_ABI_VERSION);
  CHECK(info.abi_version == 2);
  CHECK(std::string(info.name) == name);
  CHECK(info.m == a.rows);
  CHECK(info.k == a.cols);
  CHECK(info.nnz == a.nnz());
  if (generic_family) {  // no tiles: M1 = 1, N1 = the generic kernel's 128 threads, V = 1
    CHECK(info.m1 == 1);
    CHECK(info.n1 == 128);
    CHECK(info.cols_per_thread == 1);
    CHECK(info.a_tiles == 0);
    CHECK(std::string(info.a_format) == "csr-constants");
    CHECK(info.generic_below_n == 0);  // the generic path everywhere
  } else {
    CHECK(info.generic_below_n >= 0);
    CHECK(info.m1 == m1);
    CHECK(info.n1 == n1);
    CHECK(info.cols_per_thread == v);
    CHECK(info.a_tiles >= (a.rows + m1 - 1) / m1);
    CHECK(info.a_tiles <= int64_t{a.rows} * k_parts);  // one tile per row at most, per range of K
    CHECK(std::string(info.a_format) == "unrolled-constants");
  }
  CHECK(std::string(info.b_layout) == "row-major");
  CHECK(std::string(info.c_layout) == "row-major");
  CHECK(std::string(info.dtype) == "float32");
  CHECK(std::string(info.arch) == "sm_90");
  CHECK(std::string(info.reorder) == reorder);
  CHECK(std::string(info.weights_sha256) == weights_sha256(a));
  CHECK(std::string(info.spmmc_version) == SPMMC_VERSION);
}

std::vector<std::string> tile_ptx_texts(const std::string& cu) {
  std::vector<std::string> texts;
  const std::string call = "SPMMC_TILE_ASM(";
  for (size_t at = cu.find(call); at != std::string::npos; at = cu.find(call, at + call.size())) {
    size_t i = at + call.size();
    const auto skip_space = [&] {
      while (i < cu.size() && std::isspace(static_cast<unsigned char>(cu[i]))) ++i;
    };
    skip_space();
    if (i >= cu.size() || cu[i] != '"') continue;  // the macro's definition, not a use
    std::string text;
    while (i < cu.size() && cu[i] == '"') {
      for (++i; i < cu.size() && cu[i] != '"'; ++i) {
        if (cu[i] != '\\') {
          text += cu[i];
          continue;
        }
        ++i;
        REQUIRE(i < cu.size());
        switch (cu[i]) {
          case 'n': text += '\n'; break;
          case 't': text += '\t'; break;
          case '\\': text += '\\'; break;
          case '"': text += '"'; break;
          case '\'': text += '\''; break;
          default: FAIL("unexpected escape \\" << cu[i] << " in an SPMMC_TILE_ASM string");
        }
      }
      REQUIRE(i < cu.size());
      ++i;  // the closing quote
      skip_space();
    }
    REQUIRE(i < cu.size());
    CHECK(cu[i] == ')');
    texts.push_back(text);
  }
  return texts;
}

PathCounts check_emulated_half_kernel(const EmulatedKernel& kernel, const Csr& a, DType dtype, const std::vector<int64_t>& ns,
                                      const std::string& label, const TcModel* tc) {
  constexpr int kInvalidValue = 1;  // cudaErrorInvalidValue
  static constexpr uint16_t kNanBits = 0x7fff;  // a NaN in both fp16 and bf16
  static constexpr size_t kGuard = 8;
  using HalfEntry = int (*)(const uint16_t* b, uint16_t* c, int64_t n, void* stream);
  const auto entry = reinterpret_cast<HalfEntry>(kernel.entry);
  const spmmc_kernel_info& info = *kernel.info();
  REQUIRE(std::string(info.dtype) == dtype_info_name(dtype));
  const int64_t v = info.cols_per_thread;
  const bool generic_only = std::string(info.a_format) == "csr-constants";
  const bool tensor_core = std::string(info.a_format) == "vector-blocks-constants";
  PathCounts paths;
  // A buffer of 16-bit elements starting `offset` elements past a 16-byte boundary, NaN guards around it.
  struct Buffer {
    Buffer(size_t count, size_t offset) : storage(count + 2 * kGuard + offset + 8, kNanBits), size(count) {
      size_t first = 0;
      while (reinterpret_cast<uintptr_t>(storage.data() + first) % 16 != 0) ++first;
      data = storage.data() + first + kGuard + offset;
    }
    size_t damaged_guards() const {
      size_t damaged = 0;
      for (size_t i = 1; i <= kGuard; ++i) damaged += (data[-static_cast<ptrdiff_t>(i)] != kNanBits) + (data[size + i - 1] != kNanBits);
      return damaged;
    }
    std::vector<uint16_t> storage;
    size_t size;
    uint16_t* data = nullptr;
  };
  const auto is_nan = [dtype](uint16_t bits) { return std::isnan(from_half_bits(bits, dtype)); };
  for (const int64_t n : ns) {
    const std::vector<float> b =
        gpu_bench::rounded_b(seeded_b(a.cols, n, static_cast<uint64_t>(n) * 7919u + static_cast<uint64_t>(a.nnz())), dtype);
    const std::vector<float> sums = fmaf_spmm(a, b, n);
    // The tensor-core kernels' sums: in the order of the window's vectors (and its shares) where the caller gave it.
    const std::vector<float> tc_sums = tc ? tc->sums(b, n) : sums;
    const std::vector<double> want = reference_spmm(a, b, n, 1);
    const size_t c_size = static_cast<size_t>(a.rows) * static_cast<size_t>(n);
    // Per element: the bound of docs/design/precision.md from the row's products.
    const std::vector<double> bound = gpu_bench::error_bounds(a, b, n, dtype, want, /*dense=*/false);
    for (const auto& [b_offset, c_offset] : std::vector<std::pair<size_t, size_t>>{{0, 0}, {1, 1}, {1, 0}, {0, 1}}) {
      INFO(label << " (" << dtype_name(dtype) << "), n = " << n << ", B and C " << b_offset << " and " << c_offset
                 << " elements past 16-byte boundaries");
      Buffer gb(b.size(), b_offset), gc(c_size, c_offset);
      for (size_t i = 0; i < b.size(); ++i) gb.data[i] = to_half_bits(b[i], dtype);
      std::fill(gc.data, gc.data + c_size, kNanBits);
      unsigned grid[3], block[3];
      unsigned long long launches = 0, chain[4] = {}, runs = 0;
      kernel.set_bounds(gb.data, b.size() * 2, gc.data, c_size * 2);
      const int status = entry(gb.data, gc.data, n, nullptr);
      kernel.set_bounds(nullptr, 0, nullptr, 0);
      REQUIRE(status == 0);
      kernel.last_launch(grid, block, &launches, chain, &runs);
      const auto aligned = [](const uint16_t* p, int64_t elements) {
        return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(2 * elements) == 0;
      };
      const bool tc_path = tensor_core && n >= info.generic_below_n && n % 8 == 0 && aligned(gb.data, 8) && aligned(gc.data, 8);
      const std::vector<float>& exact = tc_path ? tc_sums : sums;
      size_t nans = 0, differing = 0, beyond_bound = 0;
      for (size_t i = 0; i < c_size; ++i) {
        nans += is_nan(gc.data[i]);
        differing += gc.data[i] != to_half_bits(exact[i], dtype);
        beyond_bound += !(std::fabs(from_half_bits(gc.data[i], dtype) - want[i]) <= bound[i]);
      }
      CHECK(nans == 0);
      CHECK(differing == 0);
      CHECK(beyond_bound == 0);
      CHECK(gc.damaged_guards() == 0);
      CHECK(gb.damaged_guards() == 0);
      const bool unrolled =
          !generic_only && !tensor_core && n >= info.generic_below_n && n % v == 0 && aligned(gb.data, v) && aligned(gc.data, v);
      // NAME_info()->variants names the kernel that ran.
      const std::string named = variant_for(info, n, 2, gb.data, gc.data);
      // The tensor-core kernels: n a multiple of 8, B and C 16-byte aligned; P warps per window (info.a_tiles; P > 1 where the direct kernel splits K)
      // and 64 columns, 4 warps per block (the direct kernel) or 8 (the staged one, where the variants
      // name it) (codegen/templates/kernel_tensor_core.cuh).
      if (tc_path) {
        const bool staged = named == "tensor-core-staged";
        CHECK((named == "tensor-core" || staged));
        ++paths.tensor_core;
        paths.tensor_core_staged += staged;
        CHECK(chain[0] == 1);
        CHECK(runs == 0);  // no inline PTX: the MMAs are the emulation's warp collective
        // Windows per block: one per warp, or (the direct kernel splitting K) one per P warps.
        const int64_t warps = staged ? 8 : 4, windows = warps / (staged || !tc ? 1 : tc->parts(n));
        CHECK(block[0] == static_cast<unsigned>(32 * warps));
        CHECK(grid[0] == static_cast<unsigned>((n + 63) / 64));
        CHECK(grid[1] == static_cast<unsigned>(std::min<int64_t>(65535, (info.a_tiles + windows - 1) / windows)));
        if (tc && tc->launch) {  // the tuner launches its NVRTC form by this rule
          const TensorCoreLaunch rule = tensor_core_launch(*tc->launch, n);
          CHECK(rule.grid_x == grid[0]);
          CHECK(rule.grid_y == grid[1]);
          CHECK(rule.block_x == block[0]);
          CHECK((std::string(rule.symbol) == kTensorCoreStagedKernel) == staged);
          CHECK(rule.parts == (staged ? 1 : tc->parts(n)));
        }
      } else if (unrolled) {
        CHECK(named == "unrolled");
        ++paths.unrolled;
        CHECK(chain[2] == static_cast<unsigned long long>(info.a_tiles));
        CHECK(block[0] == static_cast<unsigned>(info.n1 / v));
        CHECK(runs == static_cast<unsigned long long>(info.a_tiles * (n / v)));
      } else {
        ++paths.generic;
        CHECK(chain[0] == 1);
        CHECK(runs == 0);  // no inline PTX ran
        const GenericLaunch launched = check_generic_launch(kernel, grid, block, a, n, aligned(gb.data, 4) && aligned(gc.data, 4));
        CHECK(named == generic_variant(launched));
        count_warp_kernels(launched, paths);
      }
    }
  }
  INFO(label);
  std::vector<uint16_t> b(static_cast<size_t>(a.cols), 0), c(static_cast<size_t>(a.rows), kNanBits);
  CHECK(entry(nullptr, c.data(), 1, nullptr) == kInvalidValue);
  CHECK(entry(b.data(), nullptr, 1, nullptr) == kInvalidValue);
  CHECK(entry(b.data(), c.data(), 0, nullptr) == kInvalidValue);
  CHECK(c[0] == kNanBits);
  return paths;
}

PathCounts check_emulated_tf32_kernel(const EmulatedKernel& kernel, const Csr& a, const std::vector<int64_t>& ns,
                                      const std::string& label) {
  constexpr int kInvalidValue = 1;  // cudaErrorInvalidValue
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const spmmc_kernel_info& info = *kernel.info();
  REQUIRE(std::string(info.dtype) == "tfloat32");
  REQUIRE(std::string(info.a_format) == "vector-blocks-constants");  // the tensor-core form (B rounded)
  for (const float w : a.values) REQUIRE(round_to_dtype(w, DType::kTf32) == w);
  PathCounts paths;
  for (const int64_t n : ns) {
    const std::vector<float> b = seeded_b(a.cols, n, static_cast<uint64_t>(n) * 7919u + static_cast<uint64_t>(a.nnz()));
    const std::vector<float> b_tf32 = gpu_bench::rounded_b(b, DType::kTf32);
    const std::vector<float> sums = fmaf_spmm(a, b_tf32, n);
    const std::vector<float> unrounded = fmaf_spmm(a, b, n);  // what a kernel that did not round B would be near
    const std::vector<double> want = reference_spmm(a, b_tf32, n, 1);
    const size_t c_size = static_cast<size_t>(a.rows) * static_cast<size_t>(n);
    const std::vector<double> bound = gpu_bench::error_bounds(a, b_tf32, n, DType::kTf32, want, /*dense=*/false);
    for (const auto& [b_offset, c_offset] : std::vector<std::pair<size_t, size_t>>{{0, 0}, {1, 1}, {1, 0}, {0, 1}}) {
      INFO(label << " (tf32), n = " << n << ", B and C " << b_offset << " and " << c_offset << " floats past 16-byte boundaries");
      GuardedBuffer gb(b.size(), b_offset), gc(c_size, c_offset);
      std::copy(b.begin(), b.end(), gb.data);
      std::fill(gc.data, gc.data + c_size, nan);
      unsigned grid[3], block[3];
      unsigned long long launches = 0, chain[4] = {}, runs = 0;
      kernel.set_bounds(gb.data, b.size() * sizeof(float), gc.data, c_size * sizeof(float));
      const int status = kernel.entry(gb.data, gc.data, n, nullptr);
      kernel.set_bounds(nullptr, 0, nullptr, 0);
      REQUIRE(status == 0);
      kernel.last_launch(grid, block, &launches, chain, &runs);
      size_t nans = 0, differing = 0, beyond_bound = 0, as_unrounded = 0, nonzero = 0;
      for (size_t i = 0; i < c_size; ++i) {
        nans += std::isnan(gc.data[i]);
        differing += std::memcmp(&gc.data[i], &sums[i], sizeof(float)) != 0;
        beyond_bound += !(std::fabs(static_cast<double>(gc.data[i]) - want[i]) <= bound[i]);
        nonzero += sums[i] != 0.0f;
        as_unrounded += sums[i] != 0.0f && gc.data[i] == unrounded[i];
      }
      CHECK(nans == 0);
      CHECK(differing == 0);
      CHECK(beyond_bound == 0);
      // B was rounded: unrounded B gives other sums for nearly every element (equal only by chance).
      CHECK(as_unrounded * 10 <= nonzero);
      CHECK(gc.damaged_guards() == 0);
      CHECK(gb.damaged_guards() == 0);
      CHECK(std::equal(b.begin(), b.end(), gb.data));
      const bool aligned16 = reinterpret_cast<uintptr_t>(gb.data) % 16 == 0 && reinterpret_cast<uintptr_t>(gc.data) % 16 == 0;
      // NAME_info()->variants names the kernel that ran.
      const std::string named = variant_for(info, n, 4, gb.data, gc.data);
      if (n >= info.generic_below_n && n % 8 == 0 && aligned16) {
        // One warp per window (info.a_tiles) and 64 columns, 4 warps per block
        // (codegen/templates/kernel_tensor_core_tf32.cuh).
        CHECK(named == "tensor-core");
        ++paths.tensor_core;
        CHECK(chain[0] == 1);
        CHECK(runs == 0);  // no inline PTX: the MMAs are the emulation's warp collective
        CHECK(block[0] == 128);
        CHECK(grid[0] == static_cast<unsigned>(ceil_div(n, 64)));
        CHECK(grid[1] == static_cast<unsigned>(std::min<int64_t>(65535, ceil_div(info.a_tiles, 4))));
      } else {
        ++paths.generic;
        CHECK(chain[0] == 1);
        CHECK(runs == 0);
        const GenericLaunch launched = check_generic_launch(kernel, grid, block, a, n, aligned16);  // four floats: 16 bytes
        CHECK(named == generic_variant(launched));
        count_warp_kernels(launched, paths);
      }
    }
  }
  INFO(label);
  std::vector<float> b(static_cast<size_t>(a.cols), 0.0f), c(static_cast<size_t>(a.rows), nan);
  CHECK(kernel.entry(nullptr, c.data(), 1, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), nullptr, 1, nullptr) == kInvalidValue);
  CHECK(kernel.entry(b.data(), c.data(), 0, nullptr) == kInvalidValue);
  CHECK(std::isnan(c[0]));
  return paths;
}

}  // namespace spmmc::test
