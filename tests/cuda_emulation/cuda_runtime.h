// CUDA emulation for tests: lets a kernel that spmmc emits (NAME.cu) compile as host C++
// (g++ -std=c++17 -x c++ -I tests/cuda_emulation NAME.cu) and run on the CPU, so that CI
// machines without a GPU check the numbers the emitted code computes (tests/codegen).
//
// Just enough of the runtime for the unrolled family and its generic fallback, and for kernels
// that cooperate within a block or warp: the execution-space qualifiers are no-ops,
// blockIdx/threadIdx/blockDim/gridDim are thread-local globals, and cudaLaunchKernel and
// cudaLaunchKernelExC run the kernel's blocks one after the other, each block's threads as
// cooperative fibers (warp_scheduler.h's run_blocks): a thread runs until it returns or reaches a
// collective, and a kernel without collectives runs its threads in order, each to completion, as
// this emulation always did (the several kernels of one emitted file one after the other: the
// overlap that programmatic dependent launch allows on a GPU cannot change the result, since the
// kernels write disjoint rows; griddepcontrol is compiled out on the host). Several kernels
// launched as one CUDA graph (stream capture, instantiation, argument updates, graph launch) are
// emulated too, below. fmaf is the C library's fused multiply-add (one rounding), bit-exact with
// the GPU's FFMA; the default host floating point keeps subnormals, like nvcc without
// --use_fast_math.
//
// Warp-synchronous programming (see warp_scheduler.h for the semantics and the faults that abort):
// __syncthreads and __syncthreads_count/_and/_or; __syncwarp; __shfl_sync, __shfl_up_sync,
// __shfl_down_sync, __shfl_xor_sync for any type of 1 to 8 bytes (int, unsigned, float, double,
// long long..., and __half / __nv_bfloat16 of the shims); __ballot_sync, __any_sync, __all_sync;
// warpSize; __threadfence_block and __threadfence (no-ops: the threads share one host thread and
// switch only at collectives). Warps are 32 consecutive threads in threadIdx order (x fastest).
// __activemask is not emulated (which threads run together is the scheduler's choice, not the
// GPU's). __shared__ variables are static storage shared by all threads of the running block
// (blocks run one after another): `__shared__` is `static` with a section attribute, one linker
// section per declaration (spmmc_shared_N, N = __COUNTER__, since g++ refuses one section for
// variables of inline and non-inline functions alike), and every block starts with the sections
// of its shared object (N < 128) filled with 0xFF bytes (NaN floats, -1 integers), so that a
// kernel reading shared memory it has not written in this block reads garbage, as on a GPU,
// rather than the previous block's values. g++ before 14 drops the section attribute of a static
// local of a function template (PR c++/70435): a __shared__ variable of a template kernel is not
// refilled (it keeps the previous block's values). Since the storage is static, a kernel with
// __shared__ variables must not run on two host threads at once. Dynamic shared memory (`extern
// __shared__`) does not compile here (`extern static`), and a launch asking for dynamic shared
// memory is refused (cudaErrorInvalidValue), as before.
//
// The tile bodies are inline PTX written through SPMMC_TILE_ASM (codegen/print_tile_ptx.h):
// defined here, before the emitted code's own #ifndef sees it, to run the same text through the
// PTX-subset interpreter of ptx_subset.h (operands b, c and ld of the tile function). Its errors
// (unknown instruction, undeclared or unwritten register, misaligned or out-of-bounds access)
// abort the process with a message naming the PTX statement.
//
// The device queries of the launch code answer as a small GPU would: device 0 with
// kEmulatedSmCount SMs, kEmulatedBlocksPerSm blocks of any kernel per SM, so that grid.y stays
// small and the blocks loop over the B-tiles. For the tests, two C functions are exported
// (dlsym them from the shared object): spmmc_emulation_last_launch (the last launch's grid,
// block and number of PTX executions) and spmmc_emulation_set_bounds (ptx_subset.h's memory
// bounds).
//
// Everything has external linkage and inline definitions (one copy however many emitted .cu
// files are linked together), so the launcher and every kernel see the same blockIdx; only the
// cache of parsed PTX is per translation unit (ptx_subset.h, run_ptx).
#ifndef SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
#define SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H

#include <math.h>  // fmaf
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "ptx_subset.h"
#include "warp_scheduler.h"

#define SPMMC_TILE_ASM(ptx) ::spmmc_emulation::run_ptx((ptx), b, c, ld)

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// __restrict__ is a g++ and clang extension already.

// __shared__: see the header comment. One section per declaration, named after __COUNTER__.
#define SPMMC_SHARED_AT(n) static __attribute__((section("spmmc_shared_" #n)))
#define SPMMC_SHARED_EXPAND(n) SPMMC_SHARED_AT(n)
#define __shared__ SPMMC_SHARED_EXPAND(__COUNTER__)
// The sections spmmc_shared_0..127 of this shared object (the linker's __start_ and __stop_
// symbols; hidden, so each shared object sees its own; weak: null where there is no such section).
#define SPMMC_SHARED_SLOTS(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) \
  X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) \
  X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) \
  X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) \
  X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) \
  X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) \
  X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) \
  X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63) \
  X(64) X(65) X(66) X(67) X(68) X(69) X(70) X(71) \
  X(72) X(73) X(74) X(75) X(76) X(77) X(78) X(79) \
  X(80) X(81) X(82) X(83) X(84) X(85) X(86) X(87) \
  X(88) X(89) X(90) X(91) X(92) X(93) X(94) X(95) \
  X(96) X(97) X(98) X(99) X(100) X(101) X(102) X(103) \
  X(104) X(105) X(106) X(107) X(108) X(109) X(110) X(111) \
  X(112) X(113) X(114) X(115) X(116) X(117) X(118) X(119) \
  X(120) X(121) X(122) X(123) X(124) X(125) X(126) X(127)
#define SPMMC_SHARED_BOUNDS(n)                                                         \
  extern "C" char __start_spmmc_shared_##n[] __attribute__((weak, visibility("hidden"))); \
  extern "C" char __stop_spmmc_shared_##n[] __attribute__((weak, visibility("hidden")));
SPMMC_SHARED_SLOTS(SPMMC_SHARED_BOUNDS)
#undef SPMMC_SHARED_BOUNDS

namespace spmmc_emulation {
// Internal linkage, like run_ptx (ptx_subset.h): the sections are those of the shared object
// holding the code (a static of an inline function would be one object for all of them).
namespace {

// The __shared__ variables of this shared object: its non-empty sections spmmc_shared_N, as
// (start, bytes).
inline std::vector<std::pair<char*, size_t>> shared_memory() {
#define SPMMC_SHARED_RANGE(n) {__start_spmmc_shared_##n, __stop_spmmc_shared_##n},
  char* const ranges[][2] = {SPMMC_SHARED_SLOTS(SPMMC_SHARED_RANGE)};
#undef SPMMC_SHARED_RANGE
  std::vector<std::pair<char*, size_t>> out;
  for (const auto& range : ranges)
    if (range[0] != nullptr && range[1] > range[0]) out.emplace_back(range[0], static_cast<size_t>(range[1] - range[0]));
  return out;
}

}  // namespace

// The bits of a value of 1 to 8 bytes, and back (shuffles).
template <class T>
inline uint64_t bits_of_value(const T& v) {
  static_assert(sizeof(T) >= 1 && sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "a warp shuffle exchanges a trivially copyable value of 1 to 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <class T>
inline T value_of_bits(uint64_t bits) {
  T v;
  memcpy(&v, &bits, sizeof(T));
  return v;
}

}  // namespace spmmc_emulation

constexpr int warpSize = 32;

inline void __syncthreads() { spmmc_emulation::block_barrier(spmmc_emulation::BlockOp::kSync, 0, "__syncthreads()"); }
inline int __syncthreads_count(int predicate) {
  return spmmc_emulation::block_barrier(spmmc_emulation::BlockOp::kCount, predicate, "__syncthreads_count()");
}
inline int __syncthreads_and(int predicate) {
  return spmmc_emulation::block_barrier(spmmc_emulation::BlockOp::kAnd, predicate, "__syncthreads_and()");
}
inline int __syncthreads_or(int predicate) {
  return spmmc_emulation::block_barrier(spmmc_emulation::BlockOp::kOr, predicate, "__syncthreads_or()");
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { spmmc_emulation::warp_sync(mask, "__syncwarp"); }
inline void __threadfence_block() {}
inline void __threadfence() {}

template <class T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {
  return spmmc_emulation::value_of_bits<T>(spmmc_emulation::warp_shuffle(
      spmmc_emulation::WarpOp::kShflIdx, mask, spmmc_emulation::bits_of_value(var), src_lane, width, "__shfl_sync"));
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return spmmc_emulation::value_of_bits<T>(spmmc_emulation::warp_shuffle(spmmc_emulation::WarpOp::kShflUp, mask,
                                                                         spmmc_emulation::bits_of_value(var),
                                                                         static_cast<int32_t>(delta), width, "__shfl_up_sync"));
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  return spmmc_emulation::value_of_bits<T>(spmmc_emulation::warp_shuffle(spmmc_emulation::WarpOp::kShflDown, mask,
                                                                         spmmc_emulation::bits_of_value(var),
                                                                         static_cast<int32_t>(delta), width, "__shfl_down_sync"));
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {
  return spmmc_emulation::value_of_bits<T>(spmmc_emulation::warp_shuffle(
      spmmc_emulation::WarpOp::kShflXor, mask, spmmc_emulation::bits_of_value(var), lane_mask, width, "__shfl_xor_sync"));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return spmmc_emulation::warp_vote(spmmc_emulation::WarpOp::kBallot, mask, predicate, "__ballot_sync");
}
inline int __any_sync(unsigned mask, int predicate) {
  return static_cast<int>(spmmc_emulation::warp_vote(spmmc_emulation::WarpOp::kAny, mask, predicate, "__any_sync"));
}
inline int __all_sync(unsigned mask, int predicate) {
  return static_cast<int>(spmmc_emulation::warp_vote(spmmc_emulation::WarpOp::kAll, mask, predicate, "__all_sync"));
}

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

inline thread_local dim3 blockIdx{0, 0, 0};
inline thread_local dim3 threadIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};

// Values as in the CUDA runtime's driver_types.h.
enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorInvalidDevice = 101,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorUnknown = 999
};
typedef enum cudaError cudaError_t;
typedef struct CUstream_st* cudaStream_t;
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75 };

// The extensible launch (cudaLaunchKernelExC) with the one attribute the emitted code sets.
enum cudaLaunchAttributeID { cudaLaunchAttributeProgrammaticStreamSerialization = 5 };
union cudaLaunchAttributeValue {
  int programmaticStreamSerializationAllowed;
  char pad[64];
};
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  cudaLaunchAttributeValue val;
};
struct cudaLaunchConfig_t {
  dim3 gridDim, blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned int numAttrs;
};

// CUDA's vector type of four floats (16-byte aligned), as the generic path loads and stores B and C.
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }

// CUDA's vector type of two unsigned ints (8-byte aligned), as the generic path loads and stores
// four 16-bit halves of B and C (cuda_fp16.h, cuda_bf16.h) at once.
struct alignas(8) uint2 {
  unsigned int x, y;
};
inline uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{x, y}; }

// The read-only data cache load: a plain load on the host (of a float, float4, uint2...).
template <typename T>
inline T __ldg(const T* p) { return *p; }

inline float __uint_as_float(unsigned x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

inline unsigned __float_as_uint(float f) {
  unsigned x;
  memcpy(&x, &f, sizeof x);
  return x;
}

// The emulated device: one, with few SMs (see the header comment), of compute capability 9.0.
constexpr int kEmulatedSmCount = 4;
constexpr int kEmulatedComputeCapabilityMajor = 9;
constexpr int kEmulatedBlocksPerSm = 2;

inline cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = 0;
  return cudaSuccess;
}

inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return cudaErrorInvalidValue;
  if (device != 0) return cudaErrorInvalidDevice;
  if (attr == cudaDevAttrMultiProcessorCount) {
    *value = kEmulatedSmCount;
  } else if (attr == cudaDevAttrComputeCapabilityMajor) {
    *value = kEmulatedComputeCapabilityMajor;
  } else {
    return cudaErrorInvalidValue;  // not emulated
  }
  return cudaSuccess;
}

// As the runtime's C++ template: any kernel pointer; a block of 1 to 1024 threads.
template <class T>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* num_blocks, T func, int block_size, size_t dynamic_smem) {
  if (num_blocks == nullptr || dynamic_smem != 0) return cudaErrorInvalidValue;
  if (func == nullptr) return cudaErrorInvalidDeviceFunction;
  if (block_size < 1 || block_size > 1024) return cudaErrorInvalidValue;
  *num_blocks = kEmulatedBlocksPerSm;
  return cudaSuccess;
}

// The last launch and the chain it belongs to, for the tests (see spmmc_emulation_last_launch).
// A chain starts at a plain launch; each launch after it that carries programmatic stream
// serialization (an emitted file's kernels after the first) joins it.
struct EmulatedLaunch {
  dim3 grid{0, 0, 0}, block{0, 0, 0};
  unsigned long long launches = 0;
  unsigned chain_kernels = 0, chain_overlapped = 0;
  unsigned long long chain_grid_x = 0;
  bool chain_shapes_differ = false;  // grid.y, grid.z or block differ within the chain
};
inline EmulatedLaunch emulated_last_launch;

// What a GPU launch rejects (a block of more than 1024 threads, grid.y or grid.z above 65535, an
// empty grid or block: cudaErrorInvalidConfiguration; dynamic shared memory, which the emitted
// kernels never ask for: cudaErrorInvalidValue), for launches run and recorded alike, so the
// emitted launch configuration is checked too.
inline cudaError_t spmmc_emulated_check(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem) {
  if (func == nullptr || args == nullptr || shared_mem != 0) return cudaErrorInvalidValue;
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    return cudaErrorInvalidConfiguration;
  return cudaSuccess;
}

// One launch's kernel and arguments, for the block scheduler's callbacks.
struct EmulatedKernelRun {
  void (*kernel)(const float*, float*, int64_t) = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int64_t n = 0;
  std::vector<dim3> thread_index;  // threadIdx of thread t (x fastest, then y, then z)
  dim3 grid, next;                 // the next block's index (x fastest)
  bool done = false;
  std::vector<std::pair<char*, size_t>> shared;  // the __shared__ variables, refilled at each block
};

// The next block of the launch: blockIdx, and the __shared__ variables filled with 0xFF bytes.
inline bool spmmc_emulated_next_block(void* run, unsigned index[3]) {
  EmulatedKernelRun& r = *static_cast<EmulatedKernelRun*>(run);
  if (r.done) return false;
  blockIdx = r.next;
  index[0] = r.next.x, index[1] = r.next.y, index[2] = r.next.z;
  for (const auto& [start, bytes] : r.shared) memset(start, 0xff, bytes);
  if (++r.next.x == r.grid.x) {
    r.next.x = 0;
    if (++r.next.y == r.grid.y) {
      r.next.y = 0;
      r.done = ++r.next.z == r.grid.z;
    }
  }
  return true;
}

inline void spmmc_emulated_thread(void* run, unsigned /*thread*/) {
  const EmulatedKernelRun& r = *static_cast<const EmulatedKernelRun*>(run);
  r.kernel(r.b, r.c, r.n);
}

// Thread t of the block starts or resumes: its threadIdx.
inline void spmmc_emulated_enter(void* run, unsigned t) { threadIdx = static_cast<const EmulatedKernelRun*>(run)->thread_index[t]; }

// Runs `func`, a kernel `void(const float* B, float* C, int64_t n)` (the signature of every
// emitted kernel), over grid x block, synchronously: block by block (blockIdx.x fastest), each
// block's threads as fibers (see the header comment).
inline cudaError_t spmmc_emulated_run(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                                      bool overlap_previous) {
  if (const cudaError_t e = spmmc_emulated_check(func, grid, block, args, shared_mem); e != cudaSuccess) return e;
  using Kernel = void (*)(const float*, float*, int64_t);
  const Kernel kernel = reinterpret_cast<Kernel>(const_cast<void*>(func));
  const float* b = *static_cast<const float* const*>(args[0]);
  float* c = *static_cast<float* const*>(args[1]);
  const int64_t n = *static_cast<const int64_t*>(args[2]);
  gridDim = grid;
  blockDim = block;
  EmulatedLaunch& l = emulated_last_launch;
  if (overlap_previous && l.chain_kernels > 0) {
    l.chain_shapes_differ = l.chain_shapes_differ || grid.y != l.grid.y || grid.z != l.grid.z || block.x != l.block.x ||
                            block.y != l.block.y || block.z != l.block.z;
    ++l.chain_overlapped;
  } else {
    l.chain_kernels = 0, l.chain_overlapped = 0, l.chain_grid_x = 0, l.chain_shapes_differ = false;
    spmmc_emulation::ptx_runs().store(0);
  }
  ++l.chain_kernels;
  l.chain_grid_x += grid.x;
  l.grid = grid;
  l.block = block;
  ++l.launches;
  EmulatedKernelRun run;
  run.kernel = kernel, run.b = b, run.c = c, run.n = n;
  for (unsigned tz = 0; tz < block.z; ++tz)
    for (unsigned ty = 0; ty < block.y; ++ty)
      for (unsigned tx = 0; tx < block.x; ++tx) run.thread_index.push_back(dim3(tx, ty, tz));
  run.grid = grid, run.next = dim3(0, 0, 0);
  run.shared = spmmc_emulation::shared_memory();
  const unsigned dim[3] = {block.x, block.y, block.z};
  spmmc_emulation::run_blocks(dim, spmmc_emulated_next_block, spmmc_emulated_thread, spmmc_emulated_enter, &run);
  return cudaSuccess;
}


// Streams and graphs, as far as the emitted entry point uses them (codegen/templates/kernel.cu:
// the kernels of a split layer captured once into a graph, launched with cudaGraphLaunch, their
// arguments set again with cudaGraphExecKernelNodeSetParams when B, C or n change). A stream
// created here can be captured: a launch into a capturing stream records a node (its arguments
// copied, as CUDA copies them) instead of running; the null stream never captures. An
// instantiated graph keeps its own copy of the nodes; launching it runs them in order, each
// overlapping the one before where it was launched with programmatic stream serialization (the
// chain accounting of EmulatedLaunch as for plain launches). Counts for the tests in
// EmulatedGraphs (spmmc_emulation_graph_stats).
#define cudaStreamNonBlocking 0x01
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1, cudaStreamCaptureStatusInvalidated = 2 };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
enum cudaGraphNodeType { cudaGraphNodeTypeKernel = 0 };
struct cudaKernelNodeParams {
  void* func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
};
struct CUgraphNode_st {
  const void* func = nullptr;
  dim3 grid, block;
  const float* b = nullptr;  // the three arguments of every emitted kernel, copied
  float* c = nullptr;
  int64_t n = 0;
  bool overlap_previous = false;
};
struct CUgraph_st {
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;
};
struct CUgraphExec_st {
  const CUgraph_st* from = nullptr;
  std::vector<CUgraphNode_st> nodes;  // the graph's nodes, in the same order
};
struct CUstream_st {
  CUgraph_st* capture = nullptr;  // the graph being captured, or null
};
typedef CUgraph_st* cudaGraph_t;
typedef CUgraphExec_st* cudaGraphExec_t;
typedef CUgraphNode_st* cudaGraphNode_t;

struct EmulatedGraphs {
  unsigned long long streams_created = 0, captures = 0, instantiated = 0, launched = 0, node_updates = 0;
};
inline EmulatedGraphs emulated_graphs;

inline cudaError_t cudaGetLastError() { return cudaSuccess; }

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int /*flags*/) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  *stream = new CUstream_st;
  ++emulated_graphs.streams_created;
  return cudaSuccess;
}

inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (stream == nullptr) return cudaErrorInvalidValue;
  delete stream->capture;  // a capture never ended is discarded
  delete stream;
  return cudaSuccess;
}

inline cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return cudaErrorInvalidValue;
  *status = stream != nullptr && stream->capture != nullptr ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

inline cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode /*mode*/) {
  if (stream == nullptr) return cudaErrorStreamCaptureUnsupported;  // the legacy stream cannot be captured
  if (stream->capture != nullptr) return cudaErrorInvalidValue;
  stream->capture = new CUgraph_st;
  ++emulated_graphs.captures;
  return cudaSuccess;
}

inline cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (stream == nullptr || graph == nullptr || stream->capture == nullptr) return cudaErrorInvalidValue;
  *graph = stream->capture;
  stream->capture = nullptr;
  return cudaSuccess;
}

inline cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  if (graph == nullptr || count == nullptr) return cudaErrorInvalidValue;
  if (nodes != nullptr)
    for (size_t i = 0; i < *count && i < graph->nodes.size(); ++i) nodes[i] = graph->nodes[i].get();
  *count = graph->nodes.size();
  return cudaSuccess;
}

inline cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, cudaKernelNodeParams* params) {
  if (node == nullptr || params == nullptr) return cudaErrorInvalidValue;
  *params = cudaKernelNodeParams{const_cast<void*>(node->func), node->grid, node->block, 0, nullptr, nullptr};
  return cudaSuccess;
}

inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long /*flags*/ = 0) {
  if (exec == nullptr || graph == nullptr) return cudaErrorInvalidValue;
  *exec = new CUgraphExec_st;
  (*exec)->from = graph;
  for (const auto& node : graph->nodes) (*exec)->nodes.push_back(*node);
  ++emulated_graphs.instantiated;
  return cudaSuccess;
}

inline cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                    const cudaKernelNodeParams* params) {
  if (exec == nullptr || node == nullptr || params == nullptr || params->kernelParams == nullptr) return cudaErrorInvalidValue;
  for (size_t i = 0; i < exec->from->nodes.size(); ++i) {
    if (exec->from->nodes[i].get() != node) continue;
    CUgraphNode_st& mine = exec->nodes[i];
    if (params->func != mine.func) return cudaErrorInvalidValue;  // the function cannot change
    mine.grid = params->gridDim;
    mine.block = params->blockDim;
    mine.b = *static_cast<const float* const*>(params->kernelParams[0]);
    mine.c = *static_cast<float* const*>(params->kernelParams[1]);
    mine.n = *static_cast<const int64_t*>(params->kernelParams[2]);
    ++emulated_graphs.node_updates;
    return cudaSuccess;
  }
  return cudaErrorInvalidValue;  // not a node of the graph the exec was instantiated from
}

inline cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

// Runs (or, on a capturing stream, records) a launch.
inline cudaError_t spmmc_emulated_launch(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                                         bool overlap_previous, cudaStream_t stream) {
  if (stream == nullptr || stream->capture == nullptr)
    return spmmc_emulated_run(func, grid, block, args, shared_mem, overlap_previous);
  if (const cudaError_t e = spmmc_emulated_check(func, grid, block, args, shared_mem); e != cudaSuccess) return e;
  auto node = std::make_unique<CUgraphNode_st>();
  node->func = func, node->grid = grid, node->block = block, node->overlap_previous = overlap_previous;
  node->b = *static_cast<const float* const*>(args[0]);
  node->c = *static_cast<float* const*>(args[1]);
  node->n = *static_cast<const int64_t*>(args[2]);
  stream->capture->nodes.push_back(std::move(node));
  return cudaSuccess;
}

inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (exec == nullptr) return cudaErrorInvalidValue;
  ++emulated_graphs.launched;
  for (CUgraphNode_st node : exec->nodes) {
    void* args[] = {&node.b, &node.c, &node.n};
    const cudaError_t status =
        spmmc_emulated_launch(node.func, node.grid, node.block, args, 0, node.overlap_previous, stream);
    if (status != cudaSuccess) return status;
  }
  return cudaSuccess;
}

inline cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared_mem,
                                    cudaStream_t stream) {
  return spmmc_emulated_launch(func, grid, block, args, shared_mem, false, stream);
}

// The extensible launch: the same, where the only attribute accepted is programmatic stream
// serialization (0 or 1); with 1 the launch joins the chain of the launch before it.
inline cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr)) return cudaErrorInvalidValue;
  bool overlap = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    if (a.id != cudaLaunchAttributeProgrammaticStreamSerialization) return cudaErrorInvalidValue;  // not emulated
    const int allowed = a.val.programmaticStreamSerializationAllowed;
    if (allowed != 0 && allowed != 1) return cudaErrorInvalidValue;
    overlap = allowed == 1;
  }
  return spmmc_emulated_launch(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, overlap,
                               config->stream);
}

// For the tests, found with dlsym in the emulated shared object. The last successful launch:
// grid and block (3 values each), launches so far, and its chain (see EmulatedLaunch): chain[0]
// its kernels, chain[1] how many of them overlapped the one before, chain[2] the sum of their
// grid.x, chain[3] 1 when their grid.y, grid.z or block differ; and how many inline-PTX
// statements (tile bodies) the chain ran: 0 for kernels without inline PTX (the generic path).
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_last_launch(
    unsigned* grid, unsigned* block, unsigned long long* launches, unsigned long long* chain, unsigned long long* ptx_runs) {
  const EmulatedLaunch& l = emulated_last_launch;
  grid[0] = l.grid.x, grid[1] = l.grid.y, grid[2] = l.grid.z;
  block[0] = l.block.x, block[1] = l.block.y, block[2] = l.block.z;
  *launches = l.launches;
  chain[0] = l.chain_kernels, chain[1] = l.chain_overlapped, chain[2] = l.chain_grid_x, chain[3] = l.chain_shapes_differ;
  *ptx_runs = spmmc_emulation::ptx_runs().load();
}

// For the tests: the counts of EmulatedGraphs, in its order (streams created, captures begun,
// graphs instantiated, graph launches, kernel-node argument updates).
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_graph_stats(unsigned long long* counts) {
  const EmulatedGraphs& g = emulated_graphs;
  counts[0] = g.streams_created, counts[1] = g.captures, counts[2] = g.instantiated, counts[3] = g.launched,
  counts[4] = g.node_updates;
}

// For the tests: a caller that captures its own stream. spmmc_emulation_capturing_stream returns
// a new stream in capture; spmmc_emulation_replay_capture ends that capture, instantiates the
// graph, launches it once and returns its number of nodes (-1 on an error).
extern "C" __attribute__((used, visibility("default"))) inline void* spmmc_emulation_capturing_stream() {
  cudaStream_t stream = nullptr;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess) return nullptr;
  return stream;
}

extern "C" __attribute__((used, visibility("default"))) inline int spmmc_emulation_replay_capture(void* stream) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const auto s = static_cast<cudaStream_t>(stream);
  if (cudaStreamEndCapture(s, &graph) != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) return -1;
  const int nodes = static_cast<int>(graph->nodes.size());
  const bool ran = cudaGraphLaunch(exec, s) == cudaSuccess;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  return ran ? nodes : -1;
}

// For the tests: the block scheduler of the calling host thread (warp_scheduler.h): stats[0] blocks
// run, [1] fibers started, [2] resumptions of a thread after a collective, [3] fiber stacks mapped,
// [4] the bytes of each, [5] the deepest any of them has been used (bytes), [6] the bytes of this
// shared object's __shared__ variables (those refilled at each block's start).
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_fiber_stats(unsigned long long* stats) {
  const spmmc_emulation::BlockScheduler& s = spmmc_emulation::scheduler();
  stats[0] = s.blocks, stats[1] = s.fiber_starts, stats[2] = s.resumes, stats[3] = s.fibers.size();
  stats[4] = s.fibers.empty() ? 0 : s.fibers[0]->stack_bytes;
  stats[5] = spmmc_emulation::stack_high_water();
  stats[6] = 0;
  for (const auto& range : spmmc_emulation::shared_memory()) stats[6] += range.second;
}

// Restricts the PTX's loads to [read_only, +read_only_bytes) and [read_write, +read_write_bytes),
// its ld.nc to the first and its stores to the second; all null: no restriction.
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_set_bounds(
    const void* read_only, size_t read_only_bytes, void* read_write, size_t read_write_bytes) {
  spmmc_emulation::set_memory_bounds(read_only, read_only_bytes, read_write, read_write_bytes);
}

#endif  // SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
