#include "tuner/check_real_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/common/diagnostics.h"
#include "compiler/common/dtype.h"
#include "runtime/reference_spmm.h"
#include "runtime/time_kernel.h"
#include "tuner/measure_worker.h"
#include "tuner/measurement.h"

namespace spmmc {
namespace {

// Largest relative Frobenius error of a correct kernel against the float64 product (FP32 sums in
// a fixed order stay near 1e-7 on every matrix tested; see docs/benchmarks.md).
constexpr double kMaxRelativeError = 1e-4;

// Most local memory per thread a candidate may use. The goal is none (docs/design/kernel.md), but
// under the 64-register budget ptxas's load hoisting spills 8-48 bytes in most kernels measured
// (a few stack slots, hit in L1); a candidate with more spills its accumulators or its prefetch.
constexpr int kMaxLocalBytesPerThread = 64;

}  // namespace

KernelCheckInputs::KernelCheckInputs(const GpuContext& gpu, const std::vector<float>& b_host, std::vector<double> want_host,
                                     int64_t n_)
    : b(gpu, b_host.size() * sizeof(float)), c(gpu, want_host.size() * sizeof(float)), want(std::move(want_host)), n(n_) {
  b.upload(b_host.data(), b_host.size() * sizeof(float));
}

KernelCheckInputs::KernelCheckInputs(const GpuContext& gpu, DType dtype_, const std::vector<float>& b_host,
                                     std::vector<double> want_host, std::vector<double> bound_, int64_t n_)
    : b(gpu, b_host.size() * static_cast<size_t>(dtype_bytes(dtype_))),
      c(gpu, want_host.size() * static_cast<size_t>(dtype_bytes(dtype_))),
      want(std::move(want_host)),
      n(n_),
      dtype(dtype_),
      bound(std::move(bound_)) {
  SPMMC_CHECK(dtype != DType::kFp32, "a kernel judged by the bound of fp16, bf16 or tf32");
  SPMMC_CHECK(bound.size() == want.size(), "a bound per element of C");
  if (dtype == DType::kTf32) {
    b.upload(b_host.data(), b_host.size() * sizeof(float));
    return;
  }
  std::vector<uint16_t> bits(b_host.size());
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = to_half_bits(b_host[i], dtype);
  b.upload(bits.data(), bits.size() * sizeof(uint16_t));
}

int64_t RealKernel::a_tiles() const {
  int64_t total = 0;
  for (const Launch& l : launches) total += l.a_tiles;
  return total;
}

std::string RealKernel::describe() const {
  if (launches.empty()) return "no kernel";
  if (launches.size() == 1) return launches.front().symbol;
  return fmt::format("{} .. {} ({} kernels)", launches.front().symbol, launches.back().symbol, launches.size());
}

RealKernel family_kernel(const Cubin& cubin, std::string symbol, const LaunchShape& shape, TileCandidate tile,
                         std::shared_ptr<const std::vector<ArrayValues>> arrays) {
  RealKernel kernel;
  kernel.tile = tile;
  kernel.tile.min_blocks_per_sm = 1;
  kernel.cubin = &cubin;
  kernel.launches.push_back({std::move(symbol), 0});
  kernel.shape = shape;
  kernel.arrays = std::move(arrays);
  return kernel;
}

std::vector<RealKernel::Launch> unrolled_launches(const EmittedKernel& k) {
  SPMMC_CHECK(!k.kernel_symbols.empty() && k.kernel_symbols.size() == k.kernel_tiles.size(),
              fmt::format("{} kernel symbols for {} kernels' tiles", k.kernel_symbols.size(), k.kernel_tiles.size()));
  std::vector<RealKernel::Launch> launches;
  for (size_t j = 0; j < k.kernel_symbols.size(); ++j) launches.push_back({k.kernel_symbols[j], k.kernel_tiles[j]});
  return launches;
}

void note_candidate(Measurement& m, const RealKernel& k) {
  m.compile_seconds = k.cubin->seconds;
  m.kernels = static_cast<int32_t>(k.launches.size());
}

Measurement check_and_time_real_kernel(const RealKernel& k, const GpuContext& gpu, const KernelCheckInputs& inputs,
                                       const TimingOptions& timing) {
  SPMMC_CHECK(!k.launches.empty(), "a real candidate needs at least one kernel");
  SPMMC_CHECK(!k.shape || k.launches.size() == 1, "a kernel with a launch of its own is launched alone");
  if (!k.shape)
    for (const RealKernel::Launch& l : k.launches)
      SPMMC_CHECK(l.a_tiles >= 1 && l.a_tiles <= INT32_MAX, fmt::format("kernel {} with {} A-tiles", l.symbol, l.a_tiles));
  Measurement m;
  note_candidate(m, k);
  const std::string name = k.describe();
  Module module(gpu, k.cubin->image, name);
  // A's arrays where the module declares them without values (one no kernel reads may be absent).
  if (k.arrays)
    for (const ArrayValues& array : *k.arrays) static_cast<void>(module.set_global(array.name, array.bytes.data(), array.bytes.size()));
  std::vector<Kernel> kernels;
  std::vector<KernelAttributes> attributes;
  for (const RealKernel::Launch& l : k.launches) {
    kernels.push_back(module.kernel(l.symbol));
    attributes.push_back(kernels.back().attributes());
    m.registers_per_thread = std::max(m.registers_per_thread, attributes.back().registers_per_thread);
    m.local_bytes_per_thread = std::max(m.local_bytes_per_thread, attributes.back().local_bytes_per_thread);
  }
  // The worst kernel decides: the one that can launch the fewest threads, the one that spills most.
  const int threads = k.shape ? static_cast<int>(k.shape->block_x * k.shape->block_y) : k.tile.threads_per_block();
  size_t fewest_threads = 0, most_local = 0;
  for (size_t j = 1; j < attributes.size(); ++j) {
    if (attributes[j].max_threads_per_block < attributes[fewest_threads].max_threads_per_block) fewest_threads = j;
    if (attributes[j].local_bytes_per_thread > attributes[most_local].local_bytes_per_thread) most_local = j;
  }
  if (attributes[fewest_threads].max_threads_per_block < threads) {
    m.outcome = Outcome::kInvalid;
    m.detail = fmt::format("the kernel {} can launch at most {} threads per block ({} registers per thread)",
                           kernels[fewest_threads].name(), attributes[fewest_threads].max_threads_per_block,
                           attributes[fewest_threads].registers_per_thread);
    return m;
  }
  if (attributes[most_local].local_bytes_per_thread > kMaxLocalBytesPerThread) {
    m.outcome = Outcome::kInvalid;
    m.detail = fmt::format("registers spill: {} bytes of local memory per thread at {} registers in the kernel {} (at most "
                           "{} are accepted)",
                           attributes[most_local].local_bytes_per_thread, attributes[most_local].registers_per_thread,
                           kernels[most_local].name(), kMaxLocalBytesPerThread);
    return m;
  }
  // grid.y from the first kernel's occupancy and the A-tiles of all kernels, grid.x each kernel's
  // own A-tiles: what the emitted entry point launches (codegen/templates/kernel.cu, spmmc_grid_y).
  // A kernel with a launch of its own (the generic family's) takes it as it is.
  m.blocks_per_sm = kernels.front().active_blocks_per_sm(threads, 0);
  std::vector<LaunchShape> shapes;
  if (k.shape) {
    shapes.push_back(*k.shape);
  } else {
    const LaunchShape shape = tile_launch_shape(k.a_tiles(), inputs.n, k.tile, int64_t{gpu.device().sm_count} * m.blocks_per_sm);
    shapes.assign(kernels.size(), shape);
    for (size_t j = 0; j < kernels.size(); ++j) shapes[j].grid_x = static_cast<unsigned>(k.launches[j].a_tiles);
  }
  uint64_t b_ptr = inputs.b.address(), c_ptr = inputs.c.address();
  int64_t n = inputs.n;
  void* args[] = {&b_ptr, &c_ptr, &n};
  // One run: the kernels in order on the context's stream, each after the first overlapping the
  // one before it (it waits for it before it ends, so the last one's end is the chain's).
  const auto launch_chain = [&] {
    for (size_t j = 0; j < kernels.size(); ++j) kernels[j].launch(shapes[j], args, j > 0);
  };
  // Several overlapping kernels are launched as the emitted entry point launches them on compute
  // capability >= 9.0 (codegen/templates/kernel.cu): the chain captured once into a CUDA graph
  // (its overlaps become programmatic edges) and replayed with one cuGraphLaunch per run, which
  // costs the host far less than a launch per kernel. The check and every timed run replay it.
  std::optional<KernelGraph> graph;
  if (kernels.size() > 1 && gpu.dependent_launch() && gpu.graphs())
    graph.emplace(KernelGraph::capture(gpu, launch_chain, name));
  const auto run = [&] {
    if (graph) {
      graph->launch();
    } else {
      launch_chain();
    }
  };
  inputs.c.fill_zero();
  run();
  gpu.synchronize();
  std::vector<float> got(inputs.want.size());
  if (inputs.dtype != DType::kFp32) {
    // Element by element against the dtype's bound (a NaN or an infinity fails it).
    if (dtype_is_half(inputs.dtype)) {
      std::vector<uint16_t> bits(got.size());
      inputs.c.download(bits.data(), bits.size() * sizeof(uint16_t));
      for (size_t i = 0; i < got.size(); ++i) got[i] = from_half_bits(bits[i], inputs.dtype);
    } else {
      inputs.c.download(got.data(), got.size() * sizeof(float));
    }
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double ratio = std::isfinite(got[i]) ? std::fabs(static_cast<double>(got[i]) - inputs.want[i]) / inputs.bound[i]
                                                 : std::numeric_limits<double>::infinity();
      worst = std::max(worst, ratio);
    }
    m.max_relative_error = relative_frobenius_error(got.data(), inputs.want.data(), static_cast<int64_t>(got.size()));
    if (!(worst <= 1.0)) {
      m.outcome = Outcome::kWrongResult;
      m.detail = fmt::format("an element of C is {:.3g} times its {} error bound from the float64 reference "
                             "(docs/design/precision.md)", worst, dtype_name(inputs.dtype));
      return m;
    }
  } else {
    inputs.c.download(got.data(), got.size() * sizeof(float));
    m.max_relative_error = relative_frobenius_error(got.data(), inputs.want.data(), static_cast<int64_t>(got.size()));
  }
  if (inputs.dtype == DType::kFp32 && !(m.max_relative_error <= kMaxRelativeError)) {
    m.outcome = Outcome::kWrongResult;
    m.detail = fmt::format("relative error {:.3g} against the float64 reference{}", m.max_relative_error,
                           graph ? " (the chain launched as one CUDA graph)" : "");
    return m;
  }
  m.time = time_work(gpu, run, timing, name);
  m.outcome = Outcome::kOk;
  return m;
}

ReferenceProduct reference_product(const Csr& a, const TuningOptions& options) {
  ReferenceProduct r;
  r.b = random_floats(static_cast<size_t>(a.cols) * static_cast<size_t>(options.n), options.seed);
  r.want = reference_spmm(a, r.b, options.n);
  return r;
}

std::vector<Measurement> check_and_time_real_kernels(const Csr& a, const std::vector<RealKernel>& kernels,
                                                     const GpuContext& gpu, const TuningOptions& options,
                                                     const ReferenceProduct* reference) {
  if (kernels.empty()) return {};
  std::optional<ReferenceProduct> computed;
  if (reference == nullptr) reference = &computed.emplace(reference_product(a, options));
  if (!options.worker.empty()) return check_and_time_in_worker(reference->b, reference->want, kernels, options);

  std::vector<Measurement> out(kernels.size());
  const KernelCheckInputs inputs(gpu, reference->b, reference->want, options.n);
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (options.progress) options.progress({"timing kernels", i, kernels.size()});
    try {
      out[i] = check_and_time_real_kernel(kernels[i], gpu, inputs, options.timing);
    } catch (const DriverError& e) {
      note_candidate(out[i], kernels[i]);
      out[i].outcome = Outcome::kLaunchFailed;
      out[i].detail = e.what();
      if (!is_sticky_error(e.code())) continue;
      for (size_t j = i + 1; j < kernels.size(); ++j) {
        out[j].outcome = Outcome::kNotRun;
        note_candidate(out[j], kernels[j]);
        out[j].detail = fmt::format("not run: the kernel of candidate {} faulted before it ({}), which leaves the "
                                    "process unable to use the GPU",
                                    kernels[i].tile.label(), e.what());
      }
      break;
    }
  }
  return out;
}

}  // namespace spmmc
