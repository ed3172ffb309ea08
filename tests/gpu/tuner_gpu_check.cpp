// spmmc-tuner-gpu-check: the GPU test of how the tuner meets a candidate whose kernel faults (an
// illegal address, a sticky error: the process cannot use the GPU afterwards). Real kernels of a
// small matrix are checked and timed by check_and_time_real_kernels with a deliberately faulting
// kernel between them:
//  1. in worker processes (this program with __measure-worker, as spmmc does): before and after
//     the fault Ok, the faulting one LaunchFailed with the driver's message;
//  2. in this process: the one before Ok, the faulting one LaunchFailed, the one after NotRun
//     naming the fault, and the context must indeed refuse further work (why the worker exists). A plain program like
// spmmc-runtime-gpu-check (built here, carried to the GPU machine beside libfmt): PASS/FAIL
// lines, a summary last; exit 0 all passed, 1 a check failed, 69 no GPU (nothing was run).
#include <cstdio>
#include <iostream>
#include <memory>
#include <tuple>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/common/diagnostics.h"
#include "compiler/planning/reorder_rows.h"
#include "runtime/cuda_driver.h"
#include "tests/gpu/gpu_check.h"
#include "runtime/nvrtc_compile.h"
#include "tuner/check_real_kernels.h"
#include "tuner/measure_worker.h"
#include "tuner/measurement.h"

namespace spmmc {
namespace {

// Same signature as an emitted kernel; writes far outside any allocation: an illegal address.
constexpr const char* kFaultingSource = R"(
extern "C" __global__ void spmmc_faulting_kernel(const float* B, float* C, long long n) {
  C[(1ll << 40) + threadIdx.x] = B[0];
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

void run_checks() {
  std::unique_ptr<GpuContext> gpu = GpuContext::open();
  std::printf("device: %s, %s\n", gpu->device().name.c_str(), gpu->device().arch().c_str());
  const Csr a = small_matrix();
  NvrtcOptions nvrtc;
  nvrtc.arch = gpu->device().arch();

  // Two real candidates (V = 1 and V = 2) and the faulting kernel between and after them.
  std::vector<Cubin> cubins;
  std::vector<RealKernel> kernels;
  std::vector<std::string> labels;
  for (const auto& [m1, n1, v] : std::vector<std::tuple<int32_t, int32_t, int32_t>>{{8, 64, 1}, {16, 128, 2}}) {
    TileCandidate tile;
    tile.m1 = m1;
    tile.n1 = n1;
    tile.cols_per_thread = v;
    tile.min_blocks_per_sm = min_blocks_for_register_budget(tile.threads_per_block(), gpu->device().registers_per_sm);
    const RowTiling tiling = tile_rows(a, m1, ReorderMethod::kColumnOverlap);
    EmitOptions emit;
    emit.name = fmt::format("check_m{}_n{}_v{}", m1, n1, v);
    emit.nvrtc_form = true;
    const EmittedKernel k = emit_unrolled_kernel(a, tiling, tile, emit);
    cubins.push_back(compile_to_cubin({emit.name + ".cu", k.nvrtc_cu}, nvrtc));
    kernels.push_back({tile, tiling.num_blocks(), nullptr, k.kernel_symbol});
    labels.push_back(tile.label());
  }
  cubins.push_back(compile_to_cubin({"faulting.cu", kFaultingSource}, nvrtc));
  TileCandidate fault_tile;
  fault_tile.m1 = 8;
  fault_tile.n1 = 64;
  const RealKernel faulting{fault_tile, 1, nullptr, "spmmc_faulting_kernel"};
  // Order: good, FAULT, good.
  std::vector<RealKernel> order = {kernels[0], faulting, kernels[1]};
  order[0].cubin = &cubins[0];
  order[1].cubin = &cubins[2];
  order[2].cubin = &cubins[1];

  TuningOptions options;
  options.n = 256;
  options.timing = {2, 5, false};

  // 1. In worker processes: the fault costs only its candidate.
  options.worker = {"/proc/self/exe", "__measure-worker"};
  const std::vector<Measurement> in_workers = check_and_time_real_kernels(a, order, *gpu, options);
  check(in_workers.size() == order.size(), fmt::format("worker: {} measurements for {} kernels", in_workers.size(), order.size()));
  if (in_workers.size() != 3) return;
  const auto describe_worker = [](const Measurement& m) {
    return fmt::format("{}: {} (error {:.2g}, median {:.4f} ms, {} registers)", outcome_name(m.outcome), m.detail,
                       m.max_relative_error, m.time.median_ms, m.registers_per_thread);
  };
  check(in_workers[0].outcome == Outcome::kOk && in_workers[0].max_relative_error < 1e-5 && in_workers[0].time.median_ms > 0.0,
        "worker: the candidate before the fault is checked and timed: " + describe_worker(in_workers[0]));
  check(in_workers[1].outcome == Outcome::kLaunchFailed && in_workers[1].detail.find("ILLEGAL_ADDRESS") != std::string::npos,
        "worker: the faulting candidate is LaunchFailed with the driver's message: " + describe_worker(in_workers[1]));
  check(in_workers[2].outcome == Outcome::kOk && in_workers[2].max_relative_error < 1e-5 && in_workers[2].time.median_ms > 0.0,
        "worker: the candidate after the fault is checked and timed in a new worker: " + describe_worker(in_workers[2]));

  // 2. In this process (the last check: the fault leaves the process unable to use the GPU).
  options.worker.clear();
  const std::vector<Measurement> measured = check_and_time_real_kernels(a, order, *gpu, options);
  check(measured.size() == order.size(), fmt::format("{} measurements for {} kernels", measured.size(), order.size()));
  if (measured.size() != 3) return;
  const auto describe = [](const Measurement& m) {
    return fmt::format("{}: {} (error {:.2g}, median {:.4f} ms)", outcome_name(m.outcome), m.detail, m.max_relative_error,
                       m.time.median_ms);
  };
  check(measured[0].outcome == Outcome::kOk && measured[0].max_relative_error < 1e-5 && measured[0].time.median_ms > 0.0,
        "the candidate before the fault is checked and timed: " + describe(measured[0]));
  check(measured[1].outcome == Outcome::kLaunchFailed && measured[1].detail.find("ILLEGAL_ADDRESS") != std::string::npos,
        "the faulting candidate is LaunchFailed with the driver's message: " + describe(measured[1]));
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
