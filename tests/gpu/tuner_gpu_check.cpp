// spmmc-tuner-gpu-check: the GPU test of how the tuner checks and times real candidates, each a
// chain of kernels (the emitted form: NAME_kernel_0, NAME_kernel_1, ... launched in order, every
// one after the first overlapping its predecessor), and how it meets a candidate whose kernel
// faults (an illegal address, a sticky error: the process cannot use the GPU afterwards):
//  1. the context overlaps launches where the device can (cc >= 9, cuLaunchKernelEx);
//  2. hand-made probe kernels record how the chain was launched: grid x = each kernel's A-tiles,
//     the same grid y for all (from the A-tiles of all kernels), the block, n, every block run,
//     in order (each kernel, after griddepcontrol.wait, sees what the one before it wrote); with
//     dependent launch the tuner launches the chain as one CUDA graph (as the emitted entry point
//     does), and the graph, captured once and replayed twice, records what the plain chain does;
//  3. the worst kernel of a chain decides Invalid (too few threads, spilling) and is named;
//  4. emitted candidates split into several kernels (small fmas_per_kernel, launched as a graph
//     where the device has dependent launch) and in one are checked and timed Ok in this process;
//     one missing its last kernel is WrongResult;
//  5. tune_exhaustively end to end (in workers) with fmas_per_kernel 64 and 0: every candidate
//     Ok, with the number of kernels emit_unrolled_kernel made, and cuBLAS SGEMM timed once;
//     tune_with_proxies with 0, 1 and 3 finalists: exactly the fastest proxies' real kernels
//     timed, the pick the fastest of them (the fastest proxy with none);
//     time_sgemm itself: a positive time on a small shape, a missing library unavailable;
//  5a. the generic family's kernels (time_generic_kernel) and the balanced family's (time_balanced_kernels,
//     A's arrays copied into the module), in this process and in a worker;
//  6. in worker processes (this program with __measure-worker, as spmmc does) with a faulting
//     chain between candidates: before and after the fault Ok, the faulting one LaunchFailed with
//     the driver's message;
//  7. in this process: the one before Ok, the faulting one LaunchFailed, the one after NotRun
//     naming the fault, and the context must indeed refuse further work (why the worker exists).
// A plain program like spmmc-runtime-gpu-check (built here, carried to the GPU machine beside
// libfmt): PASS/FAIL lines, a summary last; exit 0 all passed, 1 a check failed, 69 no GPU
// (nothing was run).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/generic_launch.h"
#include "codegen/tensor_core_launch.h"
#include "compiler/common/diagnostics.h"
#include "compiler/planning/plan_tiles.h"
#include "compiler/planning/reorder_rows.h"
#include "runtime/cuda_driver.h"
#include "runtime/nvrtc_compile.h"
#include "runtime/reference_spmm.h"
#include "tests/gpu/gpu_check.h"
#include "tuner/check_real_kernels.h"
#include "tuner/collect_problem.h"
#include "tuner/measure_worker.h"
#include "tuner/measurement.h"
#include "tuner/time_balanced_kernel.h"
#include "tuner/time_generic_kernel.h"
#include "tuner/time_reduced_precision.h"
#include "tuner/time_sgemm.h"
#include "tuner/tune_exhaustively.h"
#include "tuner/tune_with_proxies.h"

namespace spmmc {
namespace {

// Same signature as an emitted kernel. The quiet one does nothing; the faulting one writes far
// outside any allocation: an illegal address. A chain of the two faults in its second, overlapped
// kernel.
constexpr const char* kFaultingSource = R"(
extern "C" __global__ void spmmc_quiet_kernel(const float* B, float* C, long long n) {}
extern "C" __global__ void spmmc_faulting_kernel(const float* B, float* C, long long n) {
  C[(1ll << 40) + threadIdx.x] = B[0];
}
)";

// Probe kernels with the emitted signature and the emitted kernels' griddepcontrol discipline.
// Kernel j records in C[8j ..]: [0] grid x, [1] grid y, [2] block x, [3] n, [4] blocks run
// (one atomic add per block), [5] for j > 0 what kernel j - 1 recorded as its grid x, read after
// griddepcontrol.wait (so only right when kernel j - 1 had finished).
// The narrow kernel can launch at most 32 threads; the spilling one keeps an array in local memory.
constexpr const char* kProbeSource = R"(
#if __CUDA_ARCH__ >= 900
#define LAUNCH_DEPENDENTS() asm volatile("griddepcontrol.launch_dependents;" : : : "memory")
#define WAIT_FOR_PREVIOUS() asm volatile("griddepcontrol.wait;" : : : "memory")
#else
#define LAUNCH_DEPENDENTS()
#define WAIT_FOR_PREVIOUS()
#endif
__device__ void probe(float* C, long long n, int j) {
  LAUNCH_DEPENDENTS();
  const bool first = threadIdx.x == 0;
  if (first && blockIdx.x == 0 && blockIdx.y == 0) {
    C[8 * j + 0] = (float)gridDim.x;
    C[8 * j + 1] = (float)gridDim.y;
    C[8 * j + 2] = (float)blockDim.x;
    C[8 * j + 3] = (float)n;
  }
  if (first) atomicAdd(&C[8 * j + 4], 1.0f);
  WAIT_FOR_PREVIOUS();
  if (j > 0 && first && blockIdx.x == 0 && blockIdx.y == 0) C[8 * j + 5] = *(volatile float*)&C[8 * (j - 1)];
}
extern "C" __global__ void spmmc_probe_0(const float* B, float* C, long long n) { probe(C, n, 0); }
extern "C" __global__ void spmmc_probe_1(const float* B, float* C, long long n) { probe(C, n, 1); }
extern "C" __global__ void spmmc_probe_2(const float* B, float* C, long long n) { probe(C, n, 2); }
extern "C" __global__ void __launch_bounds__(32) spmmc_narrow_kernel(const float* B, float* C, long long n) {
  C[threadIdx.x] = B[threadIdx.x];
}
// (volatile and indexed by n: measured, a plain array indexed once is folded into one load).
extern "C" __global__ void spmmc_spilling_kernel(const float* B, float* C, long long n) {
  volatile float buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = B[(i * 7) % 13 + threadIdx.x];
  float sum = 0.0f;
  for (int i = 0; i < 64; ++i) sum += buf[(i * (int)n + threadIdx.x) & 63];
  C[threadIdx.x] = sum;
}
)";

using gpu_check::check;

// A 40 x 48 matrix with a few non-zeros per row, deterministic.
Csr small_matrix() {
  Csr a;
  a.rows = 40;
  a.cols = 48;
  a.row_ptr.push_back(0);
  for (int32_t r = 0; r < a.rows; ++r) {
    for (int32_t c = r % 5; c < a.cols; c += 7) {
      a.col_idx.push_back(c);
      a.values.push_back(0.25f * static_cast<float>((r + c) % 9) - 1.0f);
    }
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  return a;
}

// A rows x cols matrix with about `density` of its entries non-zero, deterministic (a hash of the
// position and `seed`), values multiples of 1/8 in [-1, 1) (exact in fp16 and bf16).
Csr hashed_matrix(int32_t rows, int32_t cols, double density, uint32_t seed) {
  Csr a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.push_back(0);
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < cols; ++c) {
      const uint32_t h = (static_cast<uint32_t>(r) * 2654435761u) ^ (static_cast<uint32_t>(c) * 40503u + seed * 2246822519u);
      const float value = 0.125f * static_cast<float>(static_cast<int32_t>(h % 16) - 8);
      if (static_cast<double>((h >> 8) % 1000) >= 1000.0 * density || value == 0.0f) continue;
      a.col_idx.push_back(c);
      a.values.push_back(value);
    }
    a.row_ptr.push_back(static_cast<int32_t>(a.col_idx.size()));
  }
  return a;
}

TileCandidate make_tile(int32_t m1, int32_t n1, int32_t v, const GpuContext& gpu) {
  TileCandidate tile;
  tile.m1 = m1;
  tile.n1 = n1;
  tile.cols_per_thread = v;
  tile.min_blocks_per_sm = min_blocks_for_register_budget(tile.threads_per_block(), gpu.device().registers_per_sm);
  return tile;
}

// An emitted candidate, compiled: the RealKernel (cubin pointer set by the caller once the
// cubins stop moving) and what emit_unrolled_kernel said about it.
struct Emitted {
  RealKernel kernel;
  std::vector<int32_t> kernel_tiles;
  int32_t tiles = 0;
  int64_t fmas_per_kernel = 0;
};

Emitted emit_candidate(const Csr& a, const TileCandidate& tile, int64_t fmas_per_kernel, const NvrtcOptions& nvrtc,
                       std::vector<std::unique_ptr<Cubin>>& cubins) {
  const RowTiling tiling = tile_rows(a, tile.m1, ReorderMethod::kColumnOverlap);
  EmitOptions emit;
  emit.name = fmt::format("check_m{}_n{}_v{}_f{}", tile.m1, tile.n1, tile.cols_per_thread, fmas_per_kernel);
  emit.arch = nvrtc.arch;
  emit.nvrtc_form = true;
  emit.fmas_per_kernel = fmas_per_kernel;
  const EmittedKernel k = emit_unrolled_kernel(a, tiling, tile, emit);
  cubins.push_back(std::make_unique<Cubin>(compile_to_cubin({emit.name + ".cu", k.nvrtc_cu}, nvrtc)));
  Emitted e;
  e.kernel.tile = tile;
  e.kernel.cubin = cubins.back().get();
  for (size_t j = 0; j < k.kernel_symbols.size() && j < k.kernel_tiles.size(); ++j)
    e.kernel.launches.push_back({k.kernel_symbols[j], k.kernel_tiles[j]});
  e.kernel_tiles = k.kernel_tiles;
  e.tiles = k.tiles;
  e.fmas_per_kernel = fmas_per_kernel;
  bool named = k.kernel_symbols.size() == k.kernel_tiles.size() && !k.kernel_symbols.empty();
  for (size_t j = 0; named && j < k.kernel_symbols.size(); ++j)
    named = k.kernel_symbols[j] == fmt::format("{}_kernel_{}", emit.name, j) && k.kernel_tiles[j] >= 1;
  check(named && e.kernel.a_tiles() == k.tiles && k.tiles == tiling.num_blocks(),
        fmt::format("{}: {} kernels with A-tiles [{}] (sum {}; the tiling has {})", emit.name, k.kernel_symbols.size(),
                    fmt::join(k.kernel_tiles, ", "), e.kernel.a_tiles(), tiling.num_blocks()));
  return e;
}

std::string describe(const Measurement& m) {
  return fmt::format("{}: {} ({} kernels, error {:.2g}, median {:.4f} ms, p20 {:.4f}, p80 {:.4f}, {} registers, {} B local, "
                     "{} blocks/SM)",
                     outcome_name(m.outcome), m.detail, m.kernels, m.max_relative_error, m.time.median_ms, m.time.p20_ms,
                     m.time.p80_ms, m.registers_per_thread, m.local_bytes_per_thread, m.blocks_per_sm);
}

std::string describe(const SgemmTiming& t) {
  return t.available ? fmt::format("median {:.4f} ms", t.median_ms) : "unavailable: " + t.why_unavailable;
}

bool ok_and_timed(const Measurement& m, size_t kernels) {
  return m.outcome == Outcome::kOk && m.max_relative_error < 1e-5 && m.time.median_ms > 0.0 &&
         m.time.p20_ms <= m.time.median_ms && m.time.median_ms <= m.time.p80_ms && m.registers_per_thread > 0 &&
         m.blocks_per_sm >= 1 && m.kernels == static_cast<int32_t>(kernels);
}

// The device's limits as a planning target.
Target target_of(const GpuContext& gpu) {
  const DeviceInfo& d = gpu.device();
  Target t;
  t.name = "this-gpu";
  t.description = d.name;
  t.arch = d.arch();
  t.sm_count = d.sm_count;
  t.warp_size = d.warp_size;
  t.registers_per_sm = d.registers_per_sm;
  t.max_registers_per_block = d.registers_per_block;
  t.max_registers_per_thread = 255;
  t.register_allocation_granularity = 8;
  t.max_threads_per_sm = d.max_threads_per_sm;
  t.max_threads_per_block = d.max_threads_per_block;
  t.max_blocks_per_sm = d.max_blocks_per_sm;
  t.shared_memory_per_sm = d.shared_memory_per_sm;
  t.max_shared_memory_per_block = d.shared_memory_per_block_optin;
  t.reserved_shared_memory_per_block = d.reserved_shared_memory_per_block;
  t.l2_bytes = d.l2_bytes;
  return t;
}

void run_checks() {
  std::unique_ptr<GpuContext> gpu = GpuContext::open();
  const DeviceInfo& device = gpu->device();
  std::printf("device: %s, %s, driver %d\n", device.name.c_str(), device.arch().c_str(), device.driver_version);
  const Csr a = small_matrix();
  NvrtcOptions nvrtc;
  nvrtc.arch = device.arch();
  const int64_t n = 256;

  // 1. Overlapped launches where the device has them.
  check(gpu->dependent_launch() == (device.cc_major >= 9),
        fmt::format("dependent launch (cuLaunchKernelEx with programmatic stream serialization): {} on compute capability "
                    "{}.{}",
                    gpu->dependent_launch() ? "used" : "not used (plain launches)", device.cc_major, device.cc_minor));

  const std::vector<float> b_host = random_floats(static_cast<size_t>(a.cols) * n, 7);
  const KernelCheckInputs inputs(*gpu, b_host, reference_spmm(a, b_host, n), n);
  const TimingOptions timing{2, 5, false};

  // 2. How the chain is launched, seen from the kernels.
  // Where the tuner launches a candidate of several kernels as one CUDA graph, as the emitted
  // entry point does (check_real_kernels.cpp).
  const bool as_graph = gpu->dependent_launch() && gpu->graphs();
  const char* launched_as = as_graph ? "launched as one CUDA graph" : "launched kernel by kernel";
  const Cubin probe_cubin = compile_to_cubin({"probe.cu", kProbeSource}, nvrtc);
  {
    RealKernel probe;
    probe.tile = make_tile(8, 64, 1, *gpu);
    probe.cubin = &probe_cubin;
    probe.launches = {{"spmmc_probe_0", 2}, {"spmmc_probe_1", 3}, {"spmmc_probe_2", 1}};
    const Measurement m = check_and_time_real_kernel(probe, *gpu, inputs, timing);
    check(m.outcome == Outcome::kWrongResult && m.kernels == 3,
          "the probe chain ran and is WrongResult (it computes no product): " + describe(m));
    check((m.detail.find("the chain launched as one CUDA graph") != std::string::npos) == as_graph,
          fmt::format("the tuner says the probe chain was {} (dependent launch {}, graphs {}): {}", launched_as,
                      gpu->dependent_launch(), gpu->graphs(), m.detail));
    std::vector<float> c(24);
    inputs.c.download(c.data(), c.size() * sizeof(float));
    const LaunchShape want =
        tile_launch_shape(probe.a_tiles(), n, probe.tile, int64_t{device.sm_count} * m.blocks_per_sm);
    for (size_t j = 0; j < probe.launches.size(); ++j) {
      const float* r = &c[8 * j];
      const auto x = static_cast<float>(probe.launches[j].a_tiles);
      const bool shape_ok = r[0] == x && r[1] == static_cast<float>(want.grid_y) &&
                            r[2] == static_cast<float>(probe.tile.threads_per_block()) && r[3] == static_cast<float>(n);
      const bool all_blocks = r[4] == x * static_cast<float>(want.grid_y);
      const bool ordered = j == 0 || r[5] == static_cast<float>(probe.launches[j - 1].a_tiles);
      check(shape_ok && all_blocks && ordered,
            fmt::format("probe kernel {}: grid {}x{} (want {}x{}), block {} (want {}), n {}, {} blocks ran (want {}), "
                        "saw the previous kernel's grid x {} after its wait (want {})",
                        j, r[0], r[1], x, want.grid_y, r[2], probe.tile.threads_per_block(), r[3], r[4],
                        x * static_cast<float>(want.grid_y), r[5], j == 0 ? 0 : probe.launches[j - 1].a_tiles));
    }

    // The same chain, launched plainly (each kernel after the first overlapping its predecessor)
    // and as a CUDA graph captured from those launches, replayed twice: each replay records
    // exactly what the plain chain records, and so does what the tuner ran.
    const Module module(*gpu, probe_cubin.image, "probe.cu");
    std::vector<Kernel> kernels;
    std::vector<LaunchShape> shapes;
    for (const RealKernel::Launch& l : probe.launches) {
      kernels.push_back(module.kernel(l.symbol));
      shapes.push_back(want);
      shapes.back().grid_x = static_cast<unsigned>(l.a_tiles);
    }
    uint64_t b_ptr = inputs.b.address(), c_ptr = inputs.c.address();
    int64_t n_arg = n;
    void* args[] = {&b_ptr, &c_ptr, &n_arg};
    const auto chain = [&] {
      for (size_t j = 0; j < kernels.size(); ++j) kernels[j].launch(shapes[j], args, j > 0);
    };
    // What the last run recorded, zeroing C before it.
    const auto recorded = [&](const std::function<void()>& run) {
      inputs.c.fill_zero();
      run();
      gpu->synchronize();
      std::vector<float> seen(c.size());
      inputs.c.download(seen.data(), seen.size() * sizeof(float));
      return seen;
    };
    const std::vector<float> plain = recorded(chain);
    check(plain == c, fmt::format("the plain probe chain records what the tuner's run ({}) recorded: [{}] and [{}]",
                                  launched_as, fmt::join(plain, ", "), fmt::join(c, ", ")));
    if (gpu->graphs()) {
      const KernelGraph graph = KernelGraph::capture(*gpu, chain, "probe chain");
      for (int replay = 1; replay <= 2; ++replay) {
        const std::vector<float> replayed = recorded([&] { graph.launch(); });
        check(replayed == plain, fmt::format("replay {} of the captured probe chain records what the plain chain does: "
                                             "[{}] and [{}]",
                                             replay, fmt::join(replayed, ", "), fmt::join(plain, ", ")));
      }
    } else {
      std::printf("the driver has no stream capture or graph launch: no captured chain to check\n");
    }
  }

  // 3. The worst kernel of a chain decides Invalid, and is named.
  {
    RealKernel narrow;
    narrow.tile = make_tile(8, 64, 1, *gpu);  // 64 threads
    narrow.cubin = &probe_cubin;
    narrow.launches = {{"spmmc_probe_0", 2}, {"spmmc_narrow_kernel", 1}, {"spmmc_probe_1", 2}};
    const Measurement m = check_and_time_real_kernel(narrow, *gpu, inputs, timing);
    check(m.outcome == Outcome::kInvalid && m.detail.find("spmmc_narrow_kernel") != std::string::npos &&
              m.detail.find("at most 32 threads") != std::string::npos && m.kernels == 3,
          "a chain with a kernel of at most 32 threads is Invalid for 64, naming it: " + describe(m));
    RealKernel spilling = narrow;
    spilling.launches = {{"spmmc_probe_0", 2}, {"spmmc_probe_1", 2}, {"spmmc_spilling_kernel", 1}};
    const Measurement s = check_and_time_real_kernel(spilling, *gpu, inputs, timing);
    check(s.outcome == Outcome::kInvalid && s.detail.find("spmmc_spilling_kernel") != std::string::npos &&
              s.detail.find("spill") != std::string::npos && s.local_bytes_per_thread > 64,
          "a chain with a spilling kernel is Invalid, naming it, with its local memory: " + describe(s));
  }

  // 4. Emitted candidates, one kernel and several, in this process.
  std::vector<std::unique_ptr<Cubin>> cubins;
  std::vector<Emitted> emitted;
  for (const auto& [m1, n1, v, fmas] : std::vector<std::tuple<int32_t, int32_t, int32_t, int64_t>>{
           {8, 64, 1, 0}, {8, 64, 1, 64}, {8, 64, 1, 120}, {16, 128, 2, 0}, {16, 128, 2, 64}, {4, 256, 4, 64}})
    emitted.push_back(emit_candidate(a, make_tile(m1, n1, v, *gpu), fmas, nvrtc, cubins));
  size_t split = 0;
  for (const Emitted& e : emitted) {
    if (e.fmas_per_kernel == 0) check(e.kernel.launches.size() == 1, e.kernel.describe() + ": fmas_per_kernel 0 gives one kernel");
    if (e.kernel.launches.size() > 1) ++split;
  }
  check(split >= 3, fmt::format("{} of the candidates are split into several kernels", split));
  std::vector<RealKernel> good;
  for (const Emitted& e : emitted) good.push_back(e.kernel);
  TuningOptions options;
  options.n = n;
  options.timing = timing;
  const std::vector<Measurement> in_process = check_and_time_real_kernels(a, good, *gpu, options);
  check(in_process.size() == good.size(), fmt::format("{} measurements for {} candidates", in_process.size(), good.size()));
  for (size_t i = 0; i < in_process.size() && i < good.size(); ++i)
    check(ok_and_timed(in_process[i], good[i].launches.size()),
          fmt::format("{} (tile {}{}) in this process: {}", good[i].describe(), good[i].tile.label(),
                      good[i].launches.size() > 1 ? std::string(", ") + launched_as : std::string(),
                      describe(in_process[i])));
  for (const Emitted& e : emitted) {
    if (e.kernel.launches.size() < 2) continue;
    RealKernel missing_last = e.kernel;
    missing_last.launches.pop_back();
    const Measurement m = check_and_time_real_kernel(missing_last, *gpu, inputs, timing);
    check(m.outcome == Outcome::kWrongResult,
          fmt::format("{} without its last kernel is WrongResult: {}", e.kernel.describe(), describe(m)));
    RealKernel reversed = e.kernel;  // the kernels write disjoint rows: any order computes C
    std::reverse(reversed.launches.begin(), reversed.launches.end());
    const Measurement r = check_and_time_real_kernel(reversed, *gpu, inputs, timing);
    check(ok_and_timed(r, reversed.launches.size()),
          fmt::format("{} launched in reverse order still computes C: {}", e.kernel.describe(), describe(r)));
    break;
  }

  // 5. tune_exhaustively end to end, in workers, split as spmmc compile would split it.
  PlanOptions plan_options;
  plan_options.n = n;
  plan_options.axes.m1 = {4, 8, 16};
  plan_options.axes.n1 = {64, 128};
  plan_options.axes.cols_per_thread = {1, 2};
  const Plan plan = plan_tiles(a, target_of(*gpu), plan_options);
  std::vector<const PlannedCandidate*> candidates;
  for (const PlannedCandidate& c : plan.candidates)
    if (c.verdict.rejected_by != Constraint::kRegister) candidates.push_back(&c);
  for (const int64_t fmas_per_kernel : {int64_t{64}, int64_t{0}}) {
    TuningOptions tune = options;
    tune.worker = {"/proc/self/exe", "__measure-worker"};
    tune.fmas_per_kernel = fmas_per_kernel;
    tune.generic_tiling = &plan.for_generic(kGenericRowsPerBlock).tiling;
    const TuningResult result = tune_exhaustively(a, plan, candidates, *gpu, tune);
    check(result.generic && ok_and_timed(*result.generic, 1),
          fmt::format("tune_exhaustively (fmas_per_kernel {}) timed the generic kernel: {}", fmas_per_kernel,
                      result.generic ? describe(*result.generic) : "not timed"));
    check(!candidates.empty() && result.candidates.size() == candidates.size() && result.chosen >= 0,
          fmt::format("tune_exhaustively (fmas_per_kernel {}): {} candidates, chosen {}", fmas_per_kernel,
                      result.candidates.size(), result.chosen));
    for (size_t i = 0; i < result.candidates.size() && i < candidates.size(); ++i) {
      const TileCandidate& tile = candidates[i]->tile;
      EmitOptions emit;
      emit.name = "count";
      emit.fmas_per_kernel = fmas_per_kernel;
      const EmittedKernel k = emit_unrolled_kernel(a, plan.for_m1(tile.m1).tiling, tile, emit);
      const Measurement& real = result.candidates[i].real;
      check(ok_and_timed(real, k.kernel_symbols.size()),
            fmt::format("tune_exhaustively (fmas_per_kernel {}) {}: {}", fmas_per_kernel, tile.label(), describe(real)));
    }
    const auto sgemm_stages = std::count_if(result.seconds.begin(), result.seconds.end(),
                                            [](const auto& stage) { return stage.first == "sgemm"; });
    check(result.sgemm && result.sgemm->available && result.sgemm->median_ms > 0.0 && sgemm_stages == 1,
          fmt::format("tune_exhaustively (fmas_per_kernel {}) timed cuBLAS SGEMM once ({} stage): {}", fmas_per_kernel,
                      sgemm_stages, result.sgemm ? describe(*result.sgemm) : "not timed"));
  }

  // 5b. tune_with_proxies with finalists: the real kernels of the K fastest proxies are checked and
  // timed (and no others), and the pick is the fastest of them; with none, the fastest proxy.
  for (const int32_t finalists : {0, 1, 3}) {
    TuningOptions tune = options;
    tune.worker = {"/proc/self/exe", "__measure-worker"};
    tune.time_sgemm = false;
    tune.real_finalists = finalists;
    const TuningResult result = tune_with_proxies(a, plan, candidates, *gpu, tune);
    std::vector<size_t> by_proxy;
    for (size_t i = 0; i < result.candidates.size(); ++i)
      if (result.candidates[i].proxy.outcome == Outcome::kOk) by_proxy.push_back(i);
    std::stable_sort(by_proxy.begin(), by_proxy.end(), [&](size_t x, size_t y) {
      return result.candidates[x].proxy.time.median_ms < result.candidates[y].proxy.time.median_ms;
    });
    const size_t want = std::min(by_proxy.size(), static_cast<size_t>(finalists));
    // Candidates whose proxy did not run were timed by their real kernels instead (the proxy would
    // not reduce the code); they compete with the finalists.
    size_t timed_real = 0, finalists_ok = 0;
    for (size_t j = 0; j < result.candidates.size(); ++j)
      if (result.candidates[j].proxy.outcome == Outcome::kOk && result.candidates[j].real.outcome != Outcome::kNotRun)
        ++timed_real;
    for (size_t j = 0; j < want; ++j) finalists_ok += ok_and_timed(result.candidates[by_proxy[j]].real, 1) ? 1 : 0;
    int32_t fastest_real = -1;
    for (size_t j = 0; j < result.candidates.size(); ++j) {
      const Measurement& real = result.candidates[j].real;
      if (real.outcome == Outcome::kOk &&
          (fastest_real < 0 || real.time.median_ms < result.candidates[static_cast<size_t>(fastest_real)].real.time.median_ms))
        fastest_real = static_cast<int32_t>(j);
    }
    const int32_t fastest_finalist = fastest_real;
    const int32_t expected = finalists == 0 ? (by_proxy.empty() ? -1 : static_cast<int32_t>(by_proxy[0])) : fastest_finalist;
    // With no finalists a candidate timed for real instead of by a proxy may win on its real time.
    const bool chosen_ok = result.chosen == expected ||
                           (finalists == 0 && result.chosen >= 0 &&
                            result.candidates[static_cast<size_t>(result.chosen)].proxy.outcome == Outcome::kNotRun);
    check(result.finalists == static_cast<int32_t>(want) && timed_real == want && finalists_ok == want && chosen_ok &&
              expected >= 0,
          fmt::format("tune_with_proxies with {} finalists: {} timed for real ({} Ok, want {}), chosen {} (want {}: the {})",
                      finalists, timed_real, finalists_ok, want, result.chosen, expected,
                      finalists == 0 ? "fastest proxy" : "fastest real kernel"));
  }

  // 5a. time_generic_kernel alone: each of the generic launch's kernels (codegen/generic_launch.h):
  // four columns per thread (n = 512), one (n = 256 and 77) and the split kernel (n = 3), in this
  // process and in a worker; each checked against float64 by check_real_kernels.
  for (const int64_t generic_n : {int64_t{512}, n, int64_t{77}, int64_t{3}})
    for (const bool in_worker : {false, true}) {
      TuningOptions generic_options = options;
      generic_options.n = generic_n;
      if (in_worker) generic_options.worker = {"/proc/self/exe", "__measure-worker"};
      const Measurement m = time_generic_kernel(a, plan.for_generic(kGenericRowsPerBlock).tiling, *gpu, generic_options);
      check(ok_and_timed(m, 1), fmt::format("time_generic_kernel at n = {}{}: {}", generic_n, in_worker ? " in a worker" : "",
                                            describe(m)));
    }

  // 5a''. time_balanced_kernels: the balanced family's NVRTC form declares A's arrays and its pieces without
  // values, which the tuner copies into the module (EmittedKernel::nvrtc_arrays, Module::set_global);
  // rows cut at 16 products, 1, 2 and 4 pieces per warp, in this process and in a worker, each checked
  // against float64 (a copy that missed an array would read zeros: WrongResult).
  for (const bool in_worker : {false, true}) {
    TuningOptions balanced_options = options;
    if (in_worker) balanced_options.worker = {"/proc/self/exe", "__measure-worker"};
    const std::vector<Measurement> ms = time_balanced_kernels(a, 16, {1, 2, 4}, *gpu, balanced_options);
    for (size_t i = 0; i < ms.size(); ++i)
      check(ok_and_timed(ms[i], 1), fmt::format("time_balanced_kernels, {} pieces per warp{}: {}", 1 << i,
                                                in_worker ? " in a worker" : "", describe(ms[i])));
  }

  // 5a'. collect_problem (spmmc collect): the unrolled candidates, the generic family's kernel and the
  // balanced family's three (1, 2, 4 pieces per warp), each a database line, in that order: the generic
  // one with tile "generic" and family 1, then "balanced-g1", "-g2", "-g4" with family 2; the generic
  // family alone gives its one line, the balanced family alone its three.
  {
    TuningOptions collect_options = options;
    collect_options.max_real_compile_seconds = 0;  // no budget: every candidate of this small layer
    const CollectedProblem all = collect_problem(a, "gpu-check", n, load_target("h100"), *gpu, collect_options, 3);
    const auto ok = [](const std::string& l) { return l.find("\"outcome\":\"Ok\"") != std::string::npos; };
    const auto is = [](const std::string& l, const std::string& tile, int family) {
      return l.find(fmt::format("\"tile\":\"{}\"", tile)) != std::string::npos &&
             l.find(fmt::format("\"family\":{}.0", family)) != std::string::npos;
    };
    const size_t lines = all.lines.size();
    const bool order = lines >= 7 && is(all.lines[lines - 4], "generic", 1) && is(all.lines[lines - 3], "balanced-g1", 2) &&
                       is(all.lines[lines - 2], "balanced-g2", 2) && is(all.lines[lines - 1], "balanced-g4", 2);
    check(std::all_of(all.lines.begin(), all.lines.end(), ok) && order,
          fmt::format("collect_problem: {} lines, all Ok, the generic and balanced kernels' last: {}", lines,
                      all.lines.empty() ? std::string() : all.lines.back()));
    const CollectedProblem generic_only = collect_problem(a, "gpu-check", n, load_target("h100"), *gpu, collect_options, 3,
                                                          CollectFamilies{false, true, false});
    check(generic_only.lines.size() == 1 && ok(generic_only.lines[0]) && is(generic_only.lines[0], "generic", 1),
          fmt::format("collect_problem of the generic family alone: {} lines", generic_only.lines.size()));
    const CollectedProblem balanced_only = collect_problem(a, "gpu-check", n, load_target("h100"), *gpu, collect_options,
                                                           3, CollectFamilies{false, false, true});
    check(balanced_only.lines.size() == 3 && std::all_of(balanced_only.lines.begin(), balanced_only.lines.end(), ok) &&
              is(balanced_only.lines[0], "balanced-g1", 2),
          fmt::format("collect_problem of the balanced family alone: {} lines", balanced_only.lines.size()));
  }

  // 5b. time_sgemm alone: the dense 40 x 48 layer at n = 256, and a cuBLAS that does not exist.
  {
    const SgemmTiming timed = time_sgemm(*gpu, a.rows, a.cols, n, timing);
    check(timed.available && timed.median_ms > 0.0, "time_sgemm on 40 x 48 x 256: " + describe(timed));
    const SgemmTiming missing = time_sgemm(*gpu, a.rows, a.cols, n, timing, {"libspmmc-no-such-cublas.so.99"});
    check(!missing.available && missing.why_unavailable.find("libspmmc-no-such-cublas.so.99") != std::string::npos,
          "time_sgemm with a cuBLAS that does not exist is unavailable, naming it: " + missing.why_unavailable);
  }

  // 5c. Half precision (tuner/time_reduced_precision.h): a 256 x 192 layer at density 0.3 in fp16 and
  // bf16, the tensor-core family on 8- and 16-row windows (both kernels: the staged one for a target
  // of one SM, where the file has its tables, and the direct one split 4 ways below n = 64) and the
  // generic family, each checked within its bound and timed; the dense GEMM of the dtype; a wrong
  // element caught; n not a multiple of 8 leaves the tensor-core kernels to the generic path.
  if (device.cc_major >= 8) {
    const Csr h = hashed_matrix(256, 192, 0.3, 11);
    const RowTiling rows8 = tile_rows(h, 8, ReorderMethod::kGrow), rows16 = tile_rows(h, 16, ReorderMethod::kGrow);
    const RowTiling rows_generic = tile_rows(h, kGenericRowsPerBlock, ReorderMethod::kRowLength);
    for (const DType dtype : {DType::kFp16, DType::kBf16})
      for (const int64_t sms : {int64_t{1}, int64_t{device.sm_count}})
        for (const int64_t hn : {int64_t{40}, int64_t{256}, int64_t{100}}) {
          ReducedPrecisionRequest request;
          request.dtype = dtype;
          request.n = hn;
          request.arch = device.arch();
          request.sm_count = sms;
          request.candidates = {ReducedPrecisionCandidate::tensor_core(rows8), ReducedPrecisionCandidate::tensor_core(rows16),
                                ReducedPrecisionCandidate::generic(rows_generic)};
          TuningOptions half_options = options;
          half_options.n = hn;
          half_options.worker.clear();
          const ReducedPrecisionTiming t = time_reduced_precision(h, request, *gpu, half_options);
          const std::string what = fmt::format("time_reduced_precision {} on {} SMs at n = {}", dtype_name(dtype), sms, hn);
          check(t.measured.size() == 3, what + ": a measurement per candidate");
          if (t.measured.size() != 3) continue;
          for (size_t i = 0; i < 3; ++i) {
            const bool skipped = request.candidates[i].family == KernelFamily::kTensorCore && hn % 8 != 0;
            const Measurement& m = t.measured[i];
            check(skipped ? m.outcome == Outcome::kNotRun : m.outcome == Outcome::kOk && m.time.median_ms > 0.0 && m.kernels == 1,
                  fmt::format("{}: {}: {}", what, request.candidates[i].label(), describe(t.measured[i])));
          }
          check(t.dense.available && t.dense.median_ms > 0.0, what + ": the dense GEMM " + describe(t.dense));
          check(t.fastest >= 0, what + ": a fastest kernel");
        }
    // A wrong kernel: the tensor-core file of other values (A scaled by 2) against this A's product.
    Csr twice = h;
    for (float& v : twice.values) v *= 2.0f;
    ReducedPrecisionRequest request;
    request.dtype = DType::kFp16;
    request.n = 64;
    request.arch = device.arch();
    request.sm_count = device.sm_count;
    request.candidates = {ReducedPrecisionCandidate::tensor_core(rows8)};
    const std::vector<float> b = rounded_b(random_floats(static_cast<size_t>(h.cols) * 64, 5), DType::kFp16);
    std::vector<double> want = reference_spmm(h, b, 64);
    std::vector<double> bound = error_bounds(h, b, 64, DType::kFp16, want, false);
    const KernelCheckInputs half_inputs(*gpu, DType::kFp16, b, std::move(want), std::move(bound), 64);
    EmitOptions emit;
    emit.name = "twice";
    emit.arch = device.arch();
    emit.nvrtc_form = true;
    emit.dtype = DType::kFp16;
    emit.tensor_core = true;
    emit.sm_count = device.sm_count;
    const EmittedKernel k = emit_unrolled_kernel(twice, rows8, TileCandidate{}, emit);
    NvrtcOptions half_nvrtc{device.arch(), nvrtc_cuda_include_options()};
    const Cubin cubin = compile_to_cubin({"twice.cu", k.nvrtc_cu}, half_nvrtc);
    RealKernel wrong;
    wrong.cubin = &cubin;
    const TensorCoreLaunch l = tensor_core_launch(k.tensor_core, 64);
    wrong.launches.push_back({l.symbol, 0});
    LaunchShape shape;
    shape.grid_x = l.grid_x, shape.grid_y = l.grid_y, shape.block_x = l.block_x;
    wrong.shape = shape;
    const Measurement m = check_and_time_real_kernel(wrong, *gpu, half_inputs, timing);
    check(m.outcome == Outcome::kWrongResult && m.detail.find("fp16 error bound") != std::string::npos,
          "a tensor-core kernel of other values is WrongResult against its bound: " + describe(m));
    const SgemmTiming hgemm = time_dense_gemm(*gpu, 256, 192, 64, DType::kBf16, timing);
    check(hgemm.available && hgemm.median_ms > 0.0, "time_dense_gemm bf16: " + describe(hgemm));
    // tf32: float B and C (the kernel rounds B), its tensor-core kernel and the TF32 GEMM.
    Csr h32 = h;
    for (float& v : h32.values) v = round_to_dtype(v, DType::kTf32);
    for (const int64_t hn : {int64_t{64}, int64_t{100}}) {
      ReducedPrecisionRequest r32;
      r32.dtype = DType::kTf32;
      r32.n = hn;
      r32.arch = device.arch();
      r32.sm_count = device.sm_count;
      r32.candidates = {ReducedPrecisionCandidate::tensor_core(rows8)};
      TuningOptions tf32_options = options;
      tf32_options.n = hn;
      tf32_options.worker.clear();
      const ReducedPrecisionTiming t = time_reduced_precision(h32, r32, *gpu, tf32_options);
      const std::string what = fmt::format("time_reduced_precision tf32 at n = {}", hn);
      check(t.measured.size() == 1 && (hn % 8 == 0 ? t.measured[0].outcome == Outcome::kOk && t.measured[0].time.median_ms > 0.0
                                                   : t.measured[0].outcome == Outcome::kNotRun),
            what + ": " + (t.measured.empty() ? std::string("none") : describe(t.measured[0])));
      check(t.dense.available && t.dense.median_ms > 0.0, what + ": the TF32 GEMM " + describe(t.dense));
    }
    // The CUDA-core families as candidates: in tf32 float32's code (B multiplied as given, checked against
    // that product), the unrolled kernel split into kernels; in fp16 the unrolled kernel of 16-bit B and C;
    // an unrolled kernel beyond the compile budget is NotRun, not compiled.
    const RowTiling tiles16 = tile_rows(h32, 16, ReorderMethod::kColumnOverlap);
    for (const DType dtype : {DType::kTf32, DType::kFp16}) {
      const Csr& ha = dtype == DType::kTf32 ? h32 : h;
      ReducedPrecisionRequest rc;
      rc.dtype = dtype;
      rc.n = 128;
      rc.arch = device.arch();
      rc.sm_count = device.sm_count;
      rc.max_compile_seconds = 20.0;
      rc.candidates = {ReducedPrecisionCandidate::unrolled(tiles16, make_tile(16, 64, 2, *gpu), 2000, 1.0),
                       ReducedPrecisionCandidate::generic(rows_generic), ReducedPrecisionCandidate::tensor_core(rows8),
                       ReducedPrecisionCandidate::unrolled(tiles16, make_tile(16, 64, 2, *gpu), 0, 60.0)};
      TuningOptions cc_options = options;
      cc_options.n = 128;
      cc_options.worker.clear();
      const ReducedPrecisionTiming t = time_reduced_precision(ha, rc, *gpu, cc_options);
      const std::string what = fmt::format("time_reduced_precision {} with CUDA-core candidates", dtype_name(dtype));
      check(t.measured.size() == 4, what + ": a measurement per candidate");
      if (t.measured.size() != 4) continue;
      check(t.measured[0].outcome == Outcome::kOk && t.measured[0].kernels >= 2,
            what + ": the unrolled kernel, split, checked and timed: " + describe(t.measured[0]));
      check(t.measured[1].outcome == Outcome::kOk, what + ": the generic kernel: " + describe(t.measured[1]));
      check(t.measured[2].outcome == Outcome::kOk, what + ": the tensor-core kernel: " + describe(t.measured[2]));
      check(t.measured[3].outcome == Outcome::kNotRun && t.measured[3].detail.find("beyond the budget") != std::string::npos,
            what + ": the unrolled kernel beyond the budget is not compiled: " + describe(t.measured[3]));
    }
  }

  // Candidates for the fault checks: a good one, a faulting chain, a good one split.
  const Emitted* single = &emitted[0];
  const Emitted* multi = &emitted[1];
  const Cubin faulting_cubin = compile_to_cubin({"faulting.cu", kFaultingSource}, nvrtc);
  RealKernel faulting;
  faulting.tile = make_tile(8, 64, 1, *gpu);
  faulting.cubin = &faulting_cubin;
  faulting.launches = {{"spmmc_quiet_kernel", 1}, {"spmmc_faulting_kernel", 1}};

  // 6. In worker processes: the fault costs only its candidate.
  {
    const std::vector<RealKernel> order = {single->kernel, faulting, multi->kernel};
    options.worker = {"/proc/self/exe", "__measure-worker"};
    const std::vector<Measurement> in_workers = check_and_time_real_kernels(a, order, *gpu, options);
    check(in_workers.size() == order.size(),
          fmt::format("worker: {} measurements for {} candidates", in_workers.size(), order.size()));
    if (in_workers.size() != 3) return;
    check(ok_and_timed(in_workers[0], 1), "worker: the candidate before the fault is checked and timed: " + describe(in_workers[0]));
    check(in_workers[1].outcome == Outcome::kLaunchFailed && in_workers[1].detail.find("ILLEGAL_ADDRESS") != std::string::npos,
          "worker: the faulting chain is LaunchFailed with the driver's message: " + describe(in_workers[1]));
    check(ok_and_timed(in_workers[2], multi->kernel.launches.size()),
          "worker: the split candidate after the fault is checked and timed in a new worker: " + describe(in_workers[2]));
  }

  // 7. In this process (the last check: the fault leaves the process unable to use the GPU).
  const std::vector<RealKernel> order = {multi->kernel, faulting, single->kernel};
  options.worker.clear();
  const std::vector<Measurement> measured = check_and_time_real_kernels(a, order, *gpu, options);
  check(measured.size() == order.size(), fmt::format("{} measurements for {} candidates", measured.size(), order.size()));
  if (measured.size() != 3) return;
  check(ok_and_timed(measured[0], multi->kernel.launches.size()),
        "the split candidate before the fault is checked and timed: " + describe(measured[0]));
  check(measured[1].outcome == Outcome::kLaunchFailed && measured[1].detail.find("ILLEGAL_ADDRESS") != std::string::npos,
        "the faulting chain is LaunchFailed with the driver's message: " + describe(measured[1]));
  check(measured[2].outcome == Outcome::kNotRun && measured[2].detail.find("faulted before it") != std::string::npos,
        "the candidate after it is NotRun, naming the fault: " + describe(measured[2]));
  std::vector<CandidateResult> results(measured.size());
  for (size_t i = 0; i < measured.size(); ++i) results[i].real = measured[i];
  check(fastest_candidate(results, true) == 0, "the fastest correct candidate is still found among those measured");

  // Why the search cannot go on in this process: the context refuses everything after the fault.
  bool refused = false;
  try {
    const DeviceBuffer after(*gpu, 1024);
    after.fill_zero();
    gpu->synchronize();
  } catch (const DriverError& e) {
    refused = is_sticky_error(e.code());
  }
  check(refused, "after the fault, the process's context refuses the next operation with the same sticky error");
}

}  // namespace
}  // namespace spmmc

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "__measure-worker") return spmmc::run_measure_worker(std::cin, std::cout);
  return spmmc::gpu_check::run("spmmc-tuner-gpu-check", spmmc::run_checks);
}
