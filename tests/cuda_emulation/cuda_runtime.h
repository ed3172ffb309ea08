// CUDA emulation for tests: lets a kernel that spmmc emits (NAME.cu) compile as host C++
// (g++ -std=c++17 -x c++ -I tests/cuda_emulation NAME.cu) and run on the CPU, so that CI
// machines without a GPU check the numbers the emitted code computes (tests/codegen).
//
// Just enough of the runtime for the unrolled family, its generic fallback and warp-synchronous
// kernels (the tensor-core family): the execution-space qualifiers are no-ops,
// blockIdx/threadIdx/blockDim/gridDim are thread-local globals, and cudaLaunchKernel and
// cudaLaunchKernelExC run the kernel synchronously, block after block (blockIdx.x fastest), each
// block's threads as cooperative fibers (warp_scheduler.h): a thread runs until it returns or
// reaches a collective, so a kernel without collectives runs its threads in order, each to
// completion. A shared object whose code has no collective at all (no fiber needed) runs its blocks
// as a plain loop in that same order, without compiling the scheduler. The several kernels of one
// emitted file run one after the other: the overlap that programmatic dependent launch allows on a
// GPU cannot change the result, since the kernels write disjoint rows; griddepcontrol is compiled
// out on the host. Several kernels launched as one CUDA graph (stream capture, instantiation,
// argument updates, graph launch) are emulated too, below. fmaf is the C library's fused
// multiply-add (one rounding), bit-exact with the GPU's FFMA; the default host floating point keeps
// subnormals, like nvcc without --use_fast_math.
//
// Warp-synchronous code (semantics and faults in warp_scheduler.h): __syncthreads and
// __syncthreads_count/_and/_or; __syncwarp; __shfl_sync, __shfl_up_sync, __shfl_down_sync,
// __shfl_xor_sync for CUDA's types (int, unsigned, long, unsigned long, long long, unsigned long
// long, float, double; __half and __nv_bfloat16 in cuda_fp16.h and cuda_bf16.h); __ballot_sync,
// __any_sync, __all_sync; warpSize; __threadfence_block and __threadfence (no-ops: the threads
// share one host thread and switch only at collectives). Warps are 32 consecutive threads in
// threadIdx order (x fastest). Not emulated: __activemask and __match_*/__reduce_* (which threads
// run together is the scheduler's choice, not the GPU's), cooperative groups, dynamic shared memory
// (`extern __shared__` does not compile; a launch asking for it is refused), atomics other than
// atomicAdd (which is a plain read-add-write here: threads switch only at collectives).
//
// For the tensor-core family's loads, stores and fragments: uint4 and int2 (with make_uint4,
// make_int2; the balanced family's float2 and int4 likewise), and __byte_perm; in tf32 float4 stores through __stwb (a plain store here). For the
// tests' own kernels, spmmc_emulation::launch(kernel, grid, block, args...) stands for
// kernel<<<grid, block>>>(args...) (cudaLaunchKernel here assumes the emitted kernels' signature,
// B, C and n).
//
// The tensor-core MMA: spmmc_emulation::mma_m16n8k8_f16, mma_m16n8k8_bf16 and mma_m16n8k4_tf32
// (warp_scheduler.h), the warp collectives with the semantics of PTX mma.sync, and the macros
// SPMMC_MMA_M16N8K8_F16, SPMMC_MMA_M16N8K8_BF16 and SPMMC_MMA_M16N8K4_TF32(d, a0, a1, b0): defined
// here, before a kernel template's own #ifndef sees them (its inline asm), to accumulate into d[0..3]
// in place through those functions. SPMMC_CVT_RNA_TF32(d, x), the tf32 templates' cvt.rna.tf32.f32,
// likewise: half_bits.h's f32_bits_to_tf32_bits_rna. SPMMC_CP_ASYNC_16(dst, src, bytes) and
// SPMMC_CP_ASYNC_WAIT_ALL(), the staged kernel's cp.async: a copy when issued, a wait of nothing;
// SPMMC_LDMATRIX_X4_TRANS(r, at) and SPMMC_STMATRIX_X4_TRANS(at, r), its ldmatrix and stmatrix.
//
// __shared__ variables are static storage shared by all threads of the running block (blocks run one
// after another): `__shared__` is `static` with a section attribute, one linker section per
// declaration (spmmc_shared_N, N = __COUNTER__: one section for all of them would mix variables of
// inline functions, which are COMDAT, with others, and g++ refuses that), and every block starts with
// this shared object's sections spmmc_shared_0..127 filled with 0xFF bytes (NaN floats, -1
// integers), so that a kernel reading shared memory it has not written in this block reads garbage,
// as on a GPU, rather than the previous block's values. Limits: g++ before 14 drops the section
// attribute of a static local of a function template (GCC PR 70435), so a __shared__ variable of a
// template kernel is not refilled (it keeps the previous block's values); so is one whose __COUNTER__
// is past 127; and since the storage is static, kernels with __shared__ variables must not run on two
// host threads at once.
//
// The tile bodies are inline PTX written through SPMMC_TILE_ASM (codegen/print_tile_ptx.h):
// defined here, before the emitted code's own #ifndef sees it, to run the same text through the
// PTX-subset interpreter of ptx_subset.h (operands b, c and ld of the tile function). Its errors
// (unknown instruction, undeclared or unwritten register, misaligned or out-of-bounds access)
// abort the process with a message naming the PTX statement.
//
// The device queries of the launch code answer as small GPUs would: kEmulatedDevices devices (the
// calling thread's current one 0 unless set) with kEmulatedSmCount SMs, kEmulatedBlocksPerSm blocks
// of any kernel per SM, so that grid.y stays small and the blocks loop over the B-tiles. For the tests,
// C functions are exported (dlsym them from the shared object), among them spmmc_emulation_last_launch
// (the last launch's grid, block and number of PTX executions), spmmc_emulation_set_bounds
// (ptx_subset.h's memory bounds) and spmmc_emulation_set_device (the calling thread's device).
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
#include <tuple>
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
#define __maxnreg__(...)
// __restrict__ is a g++ and clang extension already.

// __shared__: see the header comment. One section per declaration, named after __COUNTER__ (the
// number is stringized after expansion, hence the two steps).
#define SPMMC_SHARED_IN(n) static __attribute__((section("spmmc_shared_" #n)))
#define SPMMC_SHARED_EXPAND(n) SPMMC_SHARED_IN(n)
#define __shared__ SPMMC_SHARED_EXPAND(__COUNTER__)
// X(0) .. X(127), the sections whose variables are refilled.
#define SPMMC_SHARED_TEN(X, d) X(d##0) X(d##1) X(d##2) X(d##3) X(d##4) X(d##5) X(d##6) X(d##7) X(d##8) X(d##9)
#define SPMMC_SHARED_SLOTS(X)                                                                                \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) SPMMC_SHARED_TEN(X, 1) SPMMC_SHARED_TEN(X, 2)            \
  SPMMC_SHARED_TEN(X, 3) SPMMC_SHARED_TEN(X, 4) SPMMC_SHARED_TEN(X, 5) SPMMC_SHARED_TEN(X, 6)                \
  SPMMC_SHARED_TEN(X, 7) SPMMC_SHARED_TEN(X, 8) SPMMC_SHARED_TEN(X, 9) SPMMC_SHARED_TEN(X, 10)               \
  SPMMC_SHARED_TEN(X, 11) X(120) X(121) X(122) X(123) X(124) X(125) X(126) X(127)
// The linker's bounds of each section: hidden, so each shared object (or executable) sees its own;
// weak, so null where the section does not exist.
#define SPMMC_SHARED_BOUNDS(n)                                                              \
  extern "C" char __start_spmmc_shared_##n[] __attribute__((weak, visibility("hidden"))); \
  extern "C" char __stop_spmmc_shared_##n[] __attribute__((weak, visibility("hidden")));
SPMMC_SHARED_SLOTS(SPMMC_SHARED_BOUNDS)
#undef SPMMC_SHARED_BOUNDS

namespace spmmc_emulation {

// The bytes of the __shared__ variables of this shared object (its sections spmmc_shared_N), each
// filled with 0xFF bytes if `fill`. Hidden, like the bounds it reads: each shared object calls its
// own copy.
__attribute__((visibility("hidden"))) inline size_t shared_memory(bool fill) {
#define SPMMC_SHARED_RANGE(n) {__start_spmmc_shared_##n, __stop_spmmc_shared_##n},
  char* const ranges[][2] = {SPMMC_SHARED_SLOTS(SPMMC_SHARED_RANGE)};
#undef SPMMC_SHARED_RANGE
  size_t bytes = 0;
  for (const auto& range : ranges) {
    if (range[0] == nullptr || range[1] <= range[0]) continue;
    if (fill) memset(range[0], 0xff, static_cast<size_t>(range[1] - range[0]));
    bytes += static_cast<size_t>(range[1] - range[0]);
  }
  return bytes;
}

}  // namespace spmmc_emulation

constexpr int warpSize = 32;

// The collectives are function templates whose one template parameter defaults, called as plain
// functions: compiled only where a kernel calls them (see warp_scheduler.h's collective_scheduler).
template <class Unused = void>
inline void __syncthreads() {
  spmmc_emulation::block_barrier<Unused>(spmmc_emulation::BlockOp::kSync, 0, "__syncthreads");
}
template <class Unused = void>
inline int __syncthreads_count(int predicate) {
  return spmmc_emulation::block_barrier<Unused>(spmmc_emulation::BlockOp::kCount, predicate, "__syncthreads_count");
}
template <class Unused = void>
inline int __syncthreads_and(int predicate) {
  return spmmc_emulation::block_barrier<Unused>(spmmc_emulation::BlockOp::kAnd, predicate, "__syncthreads_and");
}
template <class Unused = void>
inline int __syncthreads_or(int predicate) {
  return spmmc_emulation::block_barrier<Unused>(spmmc_emulation::BlockOp::kOr, predicate, "__syncthreads_or");
}
template <class Unused = void>
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  spmmc_emulation::warp_sync<Unused>(mask);
}
inline void __threadfence_block() {}
inline void __threadfence() {}
// atomicAdd on int, unsigned and float: the old value, then the sum stored (no other thread runs in between).
template <class T>
inline T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}

// The shuffles, one overload per type as CUDA declares them (a type CUDA has no shuffle for, a
// struct say, does not compile here either).
#define SPMMC_SHUFFLES(T)                                                                                              \
  template <class Unused = void>                                                                                       \
  inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {                                     \
    using spmmc_emulation::WarpOp;                                                                                     \
    return spmmc_emulation::warp_shuffle<T, Unused>(WarpOp::kShflIdx, mask, var, src_lane, width, "__shfl_sync");      \
  }                                                                                                                    \
  template <class Unused = void>                                                                                       \
  inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {                                \
    using spmmc_emulation::WarpOp;                                                                                     \
    return spmmc_emulation::warp_shuffle<T, Unused>(WarpOp::kShflUp, mask, var, delta, width, "__shfl_up_sync");       \
  }                                                                                                                    \
  template <class Unused = void>                                                                                       \
  inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {                              \
    using spmmc_emulation::WarpOp;                                                                                     \
    return spmmc_emulation::warp_shuffle<T, Unused>(WarpOp::kShflDown, mask, var, delta, width, "__shfl_down_sync");   \
  }                                                                                                                    \
  template <class Unused = void>                                                                                       \
  inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {                                \
    using spmmc_emulation::WarpOp;                                                                                     \
    return spmmc_emulation::warp_shuffle<T, Unused>(WarpOp::kShflXor, mask, var, lane_mask, width, "__shfl_xor_sync"); \
  }
SPMMC_SHUFFLES(int)
SPMMC_SHUFFLES(unsigned int)
SPMMC_SHUFFLES(long)
SPMMC_SHUFFLES(unsigned long)
SPMMC_SHUFFLES(long long)
SPMMC_SHUFFLES(unsigned long long)
SPMMC_SHUFFLES(float)
SPMMC_SHUFFLES(double)
#undef SPMMC_SHUFFLES

template <class Unused = void>
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return spmmc_emulation::warp_vote<Unused>(spmmc_emulation::WarpOp::kBallot, mask, predicate, "__ballot_sync");
}
template <class Unused = void>
inline int __any_sync(unsigned mask, int predicate) {
  return static_cast<int>(spmmc_emulation::warp_vote<Unused>(spmmc_emulation::WarpOp::kAny, mask, predicate, "__any_sync"));
}
template <class Unused = void>
inline int __all_sync(unsigned mask, int predicate) {
  return static_cast<int>(spmmc_emulation::warp_vote<Unused>(spmmc_emulation::WarpOp::kAll, mask, predicate, "__all_sync"));
}

// The kernel templates' MMA hooks (see the header comment): D += A B in place, a warp collective.
#define SPMMC_MMA_M16N8K8_F16(d, a0, a1, b0)                                                                         \
  ::spmmc_emulation::mma_in_place(::spmmc_emulation::WarpOp::kMmaF16, ::spmmc_emulation::kMmaF16Name, (d)[0], (d)[1], \
                                  (d)[2], (d)[3], (a0), (a1), (b0))
#define SPMMC_MMA_M16N8K8_BF16(d, a0, a1, b0)                                                                           \
  ::spmmc_emulation::mma_in_place(::spmmc_emulation::WarpOp::kMmaBF16, ::spmmc_emulation::kMmaBF16Name, (d)[0], (d)[1], \
                                  (d)[2], (d)[3], (a0), (a1), (b0))
#define SPMMC_MMA_M16N8K4_TF32(d, a0, a1, b0)                                                                           \
  ::spmmc_emulation::mma_in_place(::spmmc_emulation::WarpOp::kMmaTF32, ::spmmc_emulation::kMmaTF32Name, (d)[0], (d)[1], \
                                  (d)[2], (d)[3], (a0), (a1), (b0))
// The staged tensor-core kernel's asynchronous copies (cp.async.cg.shared.global, 16 bytes, zero-
// filled where `bytes` is 0) and their wait (cp.async.wait_all): the copy is done when issued, which
// is one order the hardware may take (nothing reads the destination before the wait and a barrier).
#define SPMMC_CP_ASYNC_16(dst, src, bytes) (*(dst) = (bytes) != 0 ? *(src) : make_uint4(0u, 0u, 0u, 0u))
#define SPMMC_CP_ASYNC_WAIT_ALL() ((void)0)
// The staged tensor-core kernel's ldmatrix and stmatrix (.m8n8.x4.trans.shared.b16, warp collectives:
// warp_scheduler.h's complete_matrix); r is an array of at least 4 unsigned, `at` the lane's row.
#define SPMMC_LDMATRIX_X4_TRANS(r, at) \
  ::spmmc_emulation::ldmatrix_x4_trans(*reinterpret_cast<uint32_t(*)[4]>(&(r)[0]), static_cast<const void*>(at))
#define SPMMC_STMATRIX_X4_TRANS(at, r) \
  ::spmmc_emulation::stmatrix_x4_trans(static_cast<void*>(at), *reinterpret_cast<const uint32_t(*)[4]>(&(r)[0]))
// The tf32 templates' rounding of B (dtype_tf32.cuh: cvt.rna.tf32.f32 d, x into an unsigned d):
// half_bits.h's conversion, ties away from zero, the 13 low mantissa bits cleared.
#define SPMMC_CVT_RNA_TF32(d, x) \
  ((d) = ::spmmc_emulation::f32_bits_to_tf32_bits_rna(::spmmc_emulation::f32_to_bits(static_cast<float>(x))))

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
// Two floats (8-byte aligned), as the balanced family loads and stores two columns of B and C.
struct alignas(8) float2 {
  float x, y;
};
inline float2 make_float2(float x, float y) { return float2{x, y}; }

// CUDA's vector type of two unsigned ints (8-byte aligned), as the generic path loads and stores
// four 16-bit halves of B and C (cuda_fp16.h, cuda_bf16.h) at once.
struct alignas(8) uint2 {
  unsigned int x, y;
};
inline uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{x, y}; }

// CUDA's vector types of four unsigned ints (16-byte aligned: the tensor-core family's 16-byte
// loads and stores of B and C) and of two ints (8-byte aligned).
struct alignas(16) uint4 {
  unsigned int x, y, z, w;
};
inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return uint4{x, y, z, w}; }
struct alignas(8) int2 {
  int x, y;
};
inline int2 make_int2(int x, int y) { return int2{x, y}; }
// Four ints (16-byte aligned): the balanced family's pieces.
struct alignas(16) int4 {
  int x, y, z, w;
};
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }

// PRMT's default mode: byte i of the result is byte (s >> 4i) & 7 of the eight bytes y:x (x's
// bytes 0..3, y's 4..7).
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const uint64_t bytes = static_cast<uint64_t>(y) << 32 | x;
  unsigned int r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned int>(bytes >> (8 * ((s >> (4 * i)) & 7u)) & 0xffu) << (8 * i);
  return r;
}

// The read-only data cache load: a plain load on the host (of a float, float4, uint2...).
template <typename T>
inline T __ldg(const T* p) { return *p; }
// The store with an explicit cache policy (st.global.wb, the default one; of a float4...): a plain store.
template <class T>
inline void __stwb(T* p, T value) { *p = value; }

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

// The emulated devices: kEmulatedDevices alike, each with few SMs (see the header comment), of compute
// capability 9.0; each host thread's current device is 0 until it sets another (cudaSetDevice, or the
// tests' spmmc_emulation_set_device). Their memory is one: a __device__ array is a host array, the same
// for every device (what differs per device is the state the emitted code keeps: its graphs, and the
// copy of A's arrays below).
constexpr int kEmulatedDevices = 65;  // one past the 64 devices that A's arrays on the host serve
constexpr int kEmulatedSmCount = 4;
constexpr int kEmulatedComputeCapabilityMajor = 9;
constexpr int kEmulatedBlocksPerSm = 2;
inline thread_local int emulated_device = 0;

inline cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return cudaErrorInvalidValue;
  *device = emulated_device;
  return cudaSuccess;
}

inline cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= kEmulatedDevices) return cudaErrorInvalidDevice;
  emulated_device = device;
  return cudaSuccess;
}

inline cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return cudaErrorInvalidValue;
  *count = kEmulatedDevices;
  return cudaSuccess;
}

inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return cudaErrorInvalidValue;
  if (device < 0 || device >= kEmulatedDevices) return cudaErrorInvalidDevice;
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
  const void* func = nullptr;  // the kernel
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

namespace spmmc_emulation {

// One launch, for the block scheduler: the block's shape and the kernel call (a closure).
struct LaunchBody {
  dim3 block;
  void (*call)(const void* closure) = nullptr;
  const void* closure = nullptr;
};

// Thread t of the block starts or resumes: its threadIdx (x fastest).
inline void enter_thread(void* body, unsigned t) {
  const dim3 b = static_cast<const LaunchBody*>(body)->block;
  threadIdx = dim3(t % b.x, t / b.x % b.y, t / (b.x * b.y));
}

inline void run_thread(void* body, unsigned /*t*/) {
  const LaunchBody& l = *static_cast<const LaunchBody*>(body);
  l.call(l.closure);
}

// Runs `call(closure)` over grid x block, synchronously: block after block (blockIdx.x fastest, then
// y, then z), the __shared__ variables filled with 0xFF bytes at the start of each block, each
// block's threads as fibers where this shared object has collectives (warp_scheduler.h's
// fiber_hooks), else in a plain loop (threadIdx.x fastest, each thread to completion).
inline void run_grid(dim3 grid, dim3 block, void (*call)(const void*), const void* closure) {
  gridDim = grid;
  blockDim = block;
  LaunchBody body;
  body.block = block, body.call = call, body.closure = closure;
  BlockRun run;
  run.enter = enter_thread, run.body = run_thread, run.context = &body;
  const bool shared = shared_memory(false) > 0;
  const unsigned dim[3] = {block.x, block.y, block.z};
  const FiberHooks hooks = fiber_hooks;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        blockIdx = dim3(bx, by, bz);
        if (shared) shared_memory(true);
        if (hooks.run_block != nullptr) {
          const unsigned index[3] = {bx, by, bz};
          hooks.run_block(dim, index, run);
          continue;
        }
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              threadIdx = dim3(tx, ty, tz);
              call(closure);
            }
      }
}

// For the tests' own kernels: runs kernel<<<grid, block>>>(args...) synchronously (the arguments
// converted to the kernel's parameter types and copied, as a launch copies them). Returns what a
// GPU launch of that configuration would (cudaErrorInvalidConfiguration for an empty grid or block,
// a block of more than 1024 threads, grid.y or grid.z above 65535).
template <class... P, class... A>
cudaError_t launch(void (*kernel)(P...), dim3 grid, dim3 block, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "a launch passes one argument per kernel parameter");
  const unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
      grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535)
    return cudaErrorInvalidConfiguration;
  struct Closure {
    void (*kernel)(P...);
    std::tuple<std::decay_t<P>...> values;
  };
  const Closure closure{kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...)};
  run_grid(grid, block, [](const void* c) {
    const Closure& me = *static_cast<const Closure*>(c);
    std::apply(me.kernel, me.values);
  }, &closure);
  return cudaSuccess;
}

}  // namespace spmmc_emulation

// Runs `func`, a kernel `void(const float* B, float* C, int64_t n)` (the signature of every
// emitted kernel, whatever its element type), over grid x block, synchronously
// (spmmc_emulation::run_grid).
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
  l.func = func;
  ++l.launches;
  struct Call {
    Kernel kernel;
    const float* b;
    float* c;
    int64_t n;
  };
  const Call call{kernel, b, c, n};
  spmmc_emulation::run_grid(grid, block, [](const void* p) {
    const Call& k = *static_cast<const Call*>(p);
    k.kernel(k.b, k.c, k.n);
  }, &call);
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
// Hidden: each shared object counts its own (a default-visibility inline variable is a unique symbol
// that g++ and the dynamic loader share among all the kernels loaded into one process, so the counts
// of one kernel would include those of every kernel loaded before it).
__attribute__((visibility("hidden"))) inline EmulatedGraphs emulated_graphs;

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

// A's arrays on the host (spmmc compile --arrays host, codegen/templates/host_arrays.cuh): the copy to
// the device's arrays is a memcpy here, the thread's capture mode a thread-local value, and the driver
// entry points cuCtxGetCurrent and cuCtxGetId give the current device's context, whose ID (unique over
// the devices) the tests advance with spmmc_emulation_reset_device(), which also zeroes every array
// copied to (as a new context's module would have them, and for every device: their memory is one), so
// that a kernel that does not copy them again computes with zeros.
#define CUDART_VERSION 13000
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1 };
enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, cudaDriverEntryPointSymbolNotFound = 1 };
#define cudaEnableDefault 0x0
struct EmulatedUploads {
  unsigned long long copies = 0, bytes = 0;
  unsigned long long context[kEmulatedDevices] = {};  // each device's context ID (1 + the device at first)
  EmulatedUploads() {
    for (int d = 0; d < kEmulatedDevices; ++d) context[d] = static_cast<unsigned long long>(d) + 1;
  }
  std::vector<std::pair<void*, size_t>> arrays;  // every destination copied to
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
};
__attribute__((visibility("hidden"))) inline EmulatedUploads emulated_uploads;

inline cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                           cudaMemcpyKind kind, cudaStream_t stream = nullptr) {
  if (symbol == nullptr || src == nullptr || kind != cudaMemcpyHostToDevice) return cudaErrorInvalidValue;
  if (stream != nullptr && stream->capture != nullptr) return cudaErrorStreamCaptureUnsupported;
  void* to = static_cast<char*>(const_cast<void*>(symbol)) + offset;
  memcpy(to, src, count);
  ++emulated_uploads.copies;
  emulated_uploads.bytes += count;
  emulated_uploads.arrays.emplace_back(to, count);
  return cudaSuccess;
}

inline cudaError_t cudaStreamSynchronize(cudaStream_t /*stream*/) { return cudaSuccess; }

inline cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (mode == nullptr) return cudaErrorInvalidValue;
  const cudaStreamCaptureMode before = emulated_uploads.mode;
  emulated_uploads.mode = *mode;
  *mode = before;
  return cudaSuccess;
}

inline int spmmc_emulated_ctx_get_current(void** context) {
  *context = &emulated_uploads.context[emulated_device];
  return 0;
}
inline int spmmc_emulated_ctx_get_id(void* context, unsigned long long* id) {
  *id = *static_cast<unsigned long long*>(context);
  return 0;
}
inline cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int /*version*/,
                                                    unsigned long long /*flags*/, cudaDriverEntryPointQueryResult* found) {
  if (symbol == nullptr || function == nullptr) return cudaErrorInvalidValue;
  const bool current = strcmp(symbol, "cuCtxGetCurrent") == 0, id = strcmp(symbol, "cuCtxGetId") == 0;
  *function = current ? reinterpret_cast<void*>(&spmmc_emulated_ctx_get_current)
              : id    ? reinterpret_cast<void*>(&spmmc_emulated_ctx_get_id)
                      : nullptr;
  if (found != nullptr) *found = *function != nullptr ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
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

// For the tests: the kernel of the last successful launch (the emitted kernels are file-local, so a
// test tells them apart by this address, not by name).
extern "C" __attribute__((used, visibility("default"))) inline const void* spmmc_emulation_last_kernel() {
  return emulated_last_launch.func;
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

// For the tests: the block scheduler of the calling host thread (warp_scheduler.h), cumulative:
// stats[0] blocks run on fibers, [1] threads started on them, [2] waits at collectives, [3] context
// switches, [4] fibers (stacks) mapped, [5] the bytes of each stack, [6] the deepest any of them has
// been used (bytes): all 0 in a shared object without collectives, whose blocks run in a plain loop;
// [7] the bytes of this shared object's __shared__ variables (those refilled at each block's start).
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_scheduler_stats(unsigned long long* stats) {
  for (int i = 0; i < 7; ++i) stats[i] = 0;
  if (spmmc_emulation::fiber_hooks.stats != nullptr) spmmc_emulation::fiber_hooks.stats(stats);
  stats[7] = spmmc_emulation::shared_memory(false);
}

// Restricts the PTX's loads to [read_only, +read_only_bytes) and [read_write, +read_write_bytes),
// its ld.nc to the first and its stores to the second; all null: no restriction.
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_set_bounds(
    const void* read_only, size_t read_only_bytes, void* read_write, size_t read_write_bytes) {
  spmmc_emulation::set_memory_bounds(read_only, read_only_bytes, read_write, read_write_bytes);
}

// For the tests of A's arrays on the host: stats[0] copies to the devices' arrays, [1] their bytes,
// [2] the current device's context ID, [3] the calling thread's capture mode (cudaStreamCaptureMode).
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_upload_stats(unsigned long long* stats) {
  stats[0] = emulated_uploads.copies;
  stats[1] = emulated_uploads.bytes;
  stats[2] = emulated_uploads.context[emulated_device];
  stats[3] = static_cast<unsigned long long>(emulated_uploads.mode);
}

// As cudaDeviceReset would leave the current device: a new context (an ID no device had) whose arrays
// are zeros (every device's: their memory is one).
extern "C" __attribute__((used, visibility("default"))) inline void spmmc_emulation_reset_device() {
  for (const auto& [to, count] : emulated_uploads.arrays) memset(to, 0, count);
  emulated_uploads.context[emulated_device] += kEmulatedDevices;
}

// The calling thread's current device, as cudaSetDevice sets it (0..kEmulatedDevices - 1); returns
// cudaSetDevice's result.
extern "C" __attribute__((used, visibility("default"))) inline int spmmc_emulation_set_device(int device) {
  return static_cast<int>(cudaSetDevice(device));
}

#endif  // SPMMC_TESTS_CUDA_EMULATION_CUDA_RUNTIME_H
