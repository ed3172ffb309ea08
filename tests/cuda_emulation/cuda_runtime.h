// CUDA emulation for tests: lets a kernel that spmmc emits (NAME.cu) compile as host C++
// (g++ -std=c++17 -x c++ -I tests/cuda_emulation NAME.cu) and run on the CPU, so that CI
// machines without a GPU check the numbers the emitted code computes (tests/codegen).
//
// Just enough of the runtime for the unrolled family and its generic fallback: the
// execution-space qualifiers are no-ops, blockIdx/threadIdx/blockDim/gridDim are thread-local
// globals, and cudaLaunchKernel and cudaLaunchKernelExC run the kernel once per (block, thread),
// sequentially (the several kernels of one emitted file one after the other: the overlap that
// programmatic dependent launch allows on a GPU cannot change the result, since the kernels write
// disjoint rows; griddepcontrol is compiled out on the host). Several kernels launched as one
// CUDA graph (stream capture, instantiation, argument updates, graph launch) are emulated too,
// below. There is
// no shared memory, synchronisation or warp intrinsic: the kernels use none, and a kernel that
// did would not compile here (or, in inline PTX, would abort in the interpreter). fmaf is the C
// library's fused multiply-add (one rounding), bit-exact with the GPU's FFMA; the default host
// floating point keeps subnormals, like nvcc without --use_fast_math.
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
#include <vector>

#include "ptx_subset.h"

#define SPMMC_TILE_ASM(ptx) ::spmmc_emulation::run_ptx((ptx), b, c, ld)

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// __restrict__ is a g++ and clang extension already.

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

// Runs `func`, a kernel `void(const float* B, float* C, int64_t n)` (the signature of every
// emitted kernel), over grid x block, block by block and thread by thread, synchronously.
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
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              blockIdx = dim3(bx, by, bz);
              threadIdx = dim3(tx, ty, tz);
              kernel(b, c, n);
            }
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

// Restricts the PTX's loads to [read_only, +read_only_bytes) and [read_write, +read_write_bytes),
// its ld.nc to the first and its stores to the second; all null: no restriction.
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_set_bounds(
    const void* read_only, size_t read_only_bytes, void* read_write, size_t read_write_bytes) {
  spmmc_emulation::set_memory_bounds(read_only, read_only_bytes, read_write, read_write_bytes);
}

#endif  // SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
