/*@HEADER_COMMENT*/// Template of an spmmc-emitted kernel (codegen/templates/kernel.cu). It compiles on its own
// as an empty kernel; the emitter replaces each marked span (see codegen/fill_template.h).
/*@*/
/*@HOST_ARRAYS_DEFINE*//*@*/#include /*@HEADER*/"kernel.h"/*@*/
#if defined(SPMMC_HOST_ARRAYS) && !defined(__CUDA_ARCH__)  // what the copy of A's arrays needs (host_arrays.cuh)
#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>
#endif

namespace {

/*@GENERIC_ONLY*//*@*/
/*@DTYPE_CODE*/#include "dtype_fp32.cuh"
/*@*/
/*@DEVICE_CODE*/#include "kernel_device.cuh"
/*@*/
/*@GENERIC_CODE*/#include "kernel_generic.cuh"
/*@*/
/*@SMALL_N_CODE*//*@*/
#ifdef SPMMC_SMALL_N_BALANCED
// The small-n path of an unrolled or generic file (docs/design/small-n.md): the balanced kernel (rows
// cut into pieces, codegen/families/balanced/kernel_balanced.cuh, reading the generic path's CSR arrays)
// for every n from spmmc_balanced_from_n up to spmmc_balanced_below_n, tried before every other path. Its
// cut rows sum in piece order, so below spmmc_balanced_below_n their last bits differ from the other
// paths' (spmmc compile --batch-invariant leaves this path out). Below SPMMC_BALANCED_PAIRS_BELOW its launch
// takes the pairs kernel, two pieces per warp (the same pieces and sums).
constexpr int64_t spmmc_balanced_from_n = /*@BALANCED_FROM_N*/4/*@*/;
// nvcc -DSPMMC_BALANCED_BELOW_N=N for studies (NAME_info()'s variants keep the file's range).
#ifdef SPMMC_BALANCED_BELOW_N
constexpr int64_t spmmc_balanced_below_n = SPMMC_BALANCED_BELOW_N;
#else
constexpr int64_t spmmc_balanced_below_n = /*@BALANCED_BELOW_N*/0/*@*/;
#endif
// Its one column per lane (n odd, or B and C not aligned to 8 bytes) only below this n; from it such n go
// on to the generic path (the entry point asks spmmc_balanced_columns_per_lane; nvcc
// -DSPMMC_BALANCED_V1_BELOW_N=N for studies).
#ifdef SPMMC_BALANCED_V1_BELOW_N
constexpr int64_t spmmc_balanced_v1_below_n = SPMMC_BALANCED_V1_BELOW_N;
#else
constexpr int64_t spmmc_balanced_v1_below_n = /*@BALANCED_V1_BELOW_N*/0/*@*/;
#endif
// Where the path has a second table (SPMMC_BALANCED_MID: pieces about A's mean row long, for uneven rows;
// docs/design/small-n.md, *Uneven rows from n = 512*), every n in [spmmc_balanced_mid_from_n,
// spmmc_balanced_mid_below_n) that its kernel takes (four columns per lane: n % 4 == 0, B and C aligned to
// 16 bytes; the others go on to the generic path) runs it; its cut rows sum in that table's piece order.
#if SPMMC_BALANCED_MID
constexpr int64_t spmmc_balanced_mid_from_n = /*@BALANCED_MID_FROM_N*/0/*@*/;
constexpr int64_t spmmc_balanced_mid_below_n = /*@BALANCED_MID_BELOW_N*/0/*@*/;
#endif
#endif
#ifndef SPMMC_BALANCED  // (its launch asks nothing of the device)
// What the launch asks of the current device: the SMs (at every launch, cheap, so GPUs of one kind
// but different sizes work) and whether it has programmatic dependent launch (sm_90 and later).
struct spmmc_device_shape {
  int index = 0;
  int sms = 1;
  bool dependent_launch = false;
};
spmmc_device_shape spmmc_current_device() {
  spmmc_device_shape d;
  int device = 0, sms = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return d;
  d.index = device;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess && sms > 0) d.sms = sms;
  d.dependent_launch = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
  return d;
}
#endif

/*@TENSOR_CORE_CODE*//*@*/

#ifndef SPMMC_BALANCED  // the generic path (the balanced family has its own kernel: kernel_balanced.cuh)
// One column per thread: the batch that fits the launch. A batch's loads in flight per warp cost
// registers, so fewer warps stay resident: with the weights loaded with B (the unrolled files'
// generic path, -Xptxas -O1) 128, 64 and 40 registers at 32, 16 and 8 products; with the weights a
// batch ahead (the generic family, nvcc's default level) 145, 80 and 64. Rows shorter than 64
// products on average get little from a batch of 32 (most of their products go one at a time after
// the whole batches); a launch of more warps than stay resident needs warps more than loads. The
// thresholds, in the launch's warps against 16 per SM (`resident`), are the best of the three
// batches on 11 layers at n = 17-384 (H100, issue 27; docs/benchmarks.md: 1.04-1.26x the batch of 32
// alone in the unrolled files, 1.03-1.30x in the generic family, geomeans per n). nvcc
// -DSPMMC_GENERIC_V1_BATCH=32, 16 or 8 takes that batch always (studies).
#ifndef SPMMC_GENERIC_V1_BATCH
#define SPMMC_GENERIC_V1_BATCH 0
#endif
static_assert(SPMMC_GENERIC_V1_BATCH == 0 || SPMMC_GENERIC_V1_BATCH == 32 || SPMMC_GENERIC_V1_BATCH == 16 ||
                  SPMMC_GENERIC_V1_BATCH == 8,
              "SPMMC_GENERIC_V1_BATCH: 0 (by the launch), 32, 16 or 8");
constexpr int spmmc_generic_v1_resident_warps = 16;  // per SM
constexpr int64_t spmmc_generic_v1_long_row = 64;    // products
int spmmc_generic_v1_batch(int64_t warps, int sms) {
  if (SPMMC_GENERIC_V1_BATCH != 0) return SPMMC_GENERIC_V1_BATCH;
  const int64_t resident = int64_t{sms} * spmmc_generic_v1_resident_warps;
  const bool long_rows = spmmc_products >= spmmc_generic_v1_long_row * spmmc_rows;
  if (SPMMC_GENERIC_WEIGHTS_AHEAD) {
    if (long_rows) return warps <= resident ? 32 : 8;
    return 2 * warps <= resident ? 32 : 2 * warps <= 3 * resident ? 16 : 8;
  }
  if (long_rows) return warps <= 2 * resident ? 32 : 16;
  return 2 * warps <= 5 * resident ? 16 : 8;
}

// Four columns per thread below SPMMC_GENERIC_V4_FROM, from n = SPMMC_GENERIC_V4_WIDE_FROM, where
// its launch alone fills the SMs: at least 14 warps per SM (7/8 of spmmc_generic_v1_batch's 16).
// There its vector loads beat one column per thread's extra warps: 1.03-1.54x where its launch had
// 15-31 warps per SM (layers of 1000 and 2048 rows at n = 128 and 256; H100, issue 27,
// docs/benchmarks.md), while with 2-8 per SM (128-512 rows) one column per thread ran up to 1.7x
// four. nvcc -D for studies.
#ifndef SPMMC_GENERIC_V4_WIDE_FROM
#define SPMMC_GENERIC_V4_WIDE_FROM 128
#endif
constexpr int spmmc_generic_v4_wide_warps = 14;  // per SM
bool spmmc_generic_v4_fills(int64_t n, int sms) {
  const int64_t width = spmmc_generic_threads / SPMMC_GENERIC_ROWS;  // threads of a row in a block
  const int64_t x = (n / 4 + width - 1) / width, y = (spmmc_rows + SPMMC_GENERIC_ROWS - 1) / SPMMC_GENERIC_ROWS;
  const int64_t warps = x * (y < 65535 ? y : 65535) * (spmmc_generic_threads / 32);
  return n >= SPMMC_GENERIC_V4_WIDE_FROM && warps >= int64_t{sms} * spmmc_generic_v4_wide_warps;
}

// The launch of the generic path: the split kernel where n < SPMMC_GENERIC_SPLIT_BELOW; else V = 4
// where n is a multiple of 4, B and C are aligned to four elements and n >= SPMMC_GENERIC_V4_FROM or
// spmmc_generic_v4_fills (from n = SPMMC_GENERIC_WARP_FROM up to spmmc_generic_warp_max_n as a warp per
// row, in blocks of 32 warps where SPMMC_GENERIC_WARP_WIDE and they fill the SMs), else 1 with the batch
// of spmmc_generic_v1_batch (from n = SPMMC_GENERIC_WARP_STRIDED_FROM up to spmmc_generic_warp_max_n the
// same warp per row with four columns 32 apart a lane) (the tuner launches the generic family by the same rule,
// codegen/generic_launch.h; the tests' host emulation checks that the two agree).
cudaError_t spmmc_launch_generic(void** args, const spmmc_elem* B, const spmmc_elem* C, int64_t n, cudaStream_t stream) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % (4 * sizeof(spmmc_elem)) == 0; };
  if (n < SPMMC_GENERIC_SPLIT_BELOW) {  // a warp per row, its lanes splitting the row's products
    const int64_t blocks = (spmmc_rows + spmmc_generic_split_threads / 32 - 1) / (spmmc_generic_split_threads / 32);
    return cudaLaunchKernel(reinterpret_cast<const void*>(&spmmc_generic_kernel_split),
                            dim3(static_cast<unsigned>(blocks < 65535 ? blocks : 65535)), dim3(spmmc_generic_split_threads),
                            args, 0, stream);
  }
  const int sms = spmmc_current_device().sms;
  const int64_t v = n % 4 == 0 && aligned(B) && aligned(C) && (n >= SPMMC_GENERIC_V4_FROM || spmmc_generic_v4_fills(n, sms)) ? 4 : 1;
  // a warp per row: four adjacent columns per lane where four columns per thread would run, four 32 apart
  // where one column per thread would
  const int64_t warp_from = v == 4 ? SPMMC_GENERIC_WARP_FROM : SPMMC_GENERIC_WARP_STRIDED_FROM;
  if (warp_from > 0 && n >= warp_from && n <= spmmc_generic_warp_max_n) {
    // in blocks of 32 warps where the file has them and they leave no more than 1/32 of the SMs idle
    const int64_t columns = (n + spmmc_generic_warp_columns - 1) / spmmc_generic_warp_columns;
    const unsigned grid_y = static_cast<unsigned>(columns < 65535 ? columns : 65535);
    const void* const warp = v == 4 ? reinterpret_cast<const void*>(&spmmc_generic_kernel_warp)
                                    : reinterpret_cast<const void*>(&spmmc_generic_kernel_warp_strided);
#if SPMMC_GENERIC_WARP_WIDE
    const int64_t wide_rows = (spmmc_rows + spmmc_generic_warp_wide_rows - 1) / spmmc_generic_warp_wide_rows;
    const void* const wide = v == 4 ? reinterpret_cast<const void*>(&spmmc_generic_kernel_warp_wide)
                                    : reinterpret_cast<const void*>(&spmmc_generic_kernel_warp_wide_strided);
    if (32 * wide_rows * grid_y >= 31 * int64_t{sms})
      return cudaLaunchKernel(wide, dim3(static_cast<unsigned>(wide_rows), grid_y), dim3(32 * spmmc_generic_warp_wide_rows), args,
                              0, stream);
#endif
    const dim3 grid(static_cast<unsigned>((spmmc_rows + spmmc_generic_warp_rows - 1) / spmmc_generic_warp_rows), grid_y);
    return cudaLaunchKernel(warp, grid, dim3(32 * spmmc_generic_warp_rows), args, 0, stream);
  }
  const int64_t threads = n / v + (n % v != 0);  // per row
  int64_t width = spmmc_generic_threads / SPMMC_GENERIC_ROWS, rows_per_block = SPMMC_GENERIC_ROWS;  // V = 4
  if (v == 1) {
    width = 1;
    while (width < threads && width < 32) width *= 2;
    if (threads > 32) width = (threads + 31) / 32 * 32;
    if (width > 128) width = 128;
    rows_per_block = 128 / width;
  }
  const int64_t x = (threads + width - 1) / width;
  const int64_t y = (spmmc_rows + rows_per_block - 1) / rows_per_block;
  if (x > 0x7fffffff) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(x), static_cast<unsigned>(y < 65535 ? y : 65535));
  const dim3 block(static_cast<unsigned>(width), static_cast<unsigned>(rows_per_block));
  const void* kernel = reinterpret_cast<const void*>(&spmmc_generic_kernel_v4);
  if (v == 1) {
    const int64_t warps = int64_t{grid.x} * grid.y * ((width * rows_per_block + 31) / 32);
    const int batch = spmmc_generic_v1_batch(warps, sms);
    kernel = batch == 32   ? reinterpret_cast<const void*>(&spmmc_generic_kernel_v1)
             : batch == 16 ? reinterpret_cast<const void*>(&spmmc_generic_kernel_v1_b16)
                           : reinterpret_cast<const void*>(&spmmc_generic_kernel_v1_b8);
  }
  return cudaLaunchKernel(kernel, grid, block, args, 0, stream);
}
#endif  // SPMMC_BALANCED

// Below this n the entry point takes the generic path, whatever the family (its kernels spread a
// row's work over more threads where n is small: the split kernel up to n = 16); chosen by spmmc
// compile (docs/emitted-code.md, *Every batch size*); nvcc -DSPMMC_GENERIC_BELOW_N=N for studies.
#ifdef SPMMC_GENERIC_BELOW_N
constexpr int64_t spmmc_generic_below_n = SPMMC_GENERIC_BELOW_N;
#else
constexpr int64_t spmmc_generic_below_n = /*@GENERIC_BELOW_N*/0/*@*/;
#endif

// The variants in the order the entry point below tries them (NAME_info()->variants).
#define SPMMC_STRINGIZE_(x) #x
#define SPMMC_STRINGIZE(x) SPMMC_STRINGIZE_(x)
#ifndef SPMMC_BALANCED
constexpr const char* spmmc_generic_v4_needs = "n % 4 == 0; B and C aligned to 4 elements; below n = " SPMMC_STRINGIZE(
    SPMMC_GENERIC_V4_FROM) " only where its launch has at least 14 warps per SM";
#endif
constexpr int64_t spmmc_any_n = 0x7fffffffffffffff;
const spmmc_kernel_variant spmmc_variants[] = {
#if (defined(SPMMC_SMALL_N_BALANCED) || defined(SPMMC_BALANCED)) && SPMMC_BALANCED_SPMV
    {"balanced-spmv", 1, 1, ""},
#endif
    /*@SMALL_N_VARIANTS*//*@*/
#if defined(SPMMC_TENSOR_CORE)
#if SPMMC_TC_STAGED && !defined(SPMMC_TC_DIRECT)
    {"tensor-core-staged", spmmc_tc_staged_from_n > spmmc_generic_below_n ? spmmc_tc_staged_from_n : spmmc_generic_below_n,
     spmmc_tc_staged_max_n, "n % 8 == 0; B and C aligned to 16 bytes"},
#endif
    {"tensor-core", spmmc_generic_below_n > 1 ? spmmc_generic_below_n : 1, spmmc_any_n,
     "n % 8 == 0; B and C aligned to 16 bytes"},
#elif !defined(SPMMC_GENERIC_ONLY)
    {"unrolled", spmmc_generic_below_n > 1 ? spmmc_generic_below_n : 1, spmmc_max_n,
     "n % cols_per_thread == 0; B and C aligned to cols_per_thread elements"},
#endif
#if defined(SPMMC_BALANCED)
    {"balanced-v4", 4 * spmmc_balanced_lanes, spmmc_any_n, "n % 4 == 0; B and C aligned to 16 bytes"},
    {"balanced-v2", 2 * spmmc_balanced_lanes, spmmc_any_n, "n % 2 == 0; B and C aligned to 8 bytes"},
    {"balanced-v1", SPMMC_BALANCED_SPMV ? 2 : 1, spmmc_any_n, ""},
#else
#if SPMMC_GENERIC_SPLIT_BELOW > 1
    {"generic-split", 1, SPMMC_GENERIC_SPLIT_BELOW - 1, ""},
#endif
#if SPMMC_GENERIC_WARP_FROM > 0
#if SPMMC_GENERIC_WARP_WIDE
    {"generic-warp-wide", SPMMC_GENERIC_WARP_FROM, spmmc_generic_warp_max_n,
     "n % 4 == 0; B and C aligned to 4 elements; only where ceil(M / 32) x ceil(n / 128) blocks are at least 31/32 of the SMs"},
#endif
    {"generic-warp", SPMMC_GENERIC_WARP_FROM, spmmc_generic_warp_max_n, "n % 4 == 0; B and C aligned to 4 elements"},
#endif
#if SPMMC_GENERIC_WARP_STRIDED_FROM > 0
#if SPMMC_GENERIC_WARP_WIDE
    {"generic-warp-wide-strided", SPMMC_GENERIC_WARP_STRIDED_FROM, spmmc_generic_warp_max_n,
     "only where ceil(M / 32) x ceil(n / 128) blocks are at least 31/32 of the SMs"},
#endif
    {"generic-warp-strided", SPMMC_GENERIC_WARP_STRIDED_FROM, spmmc_generic_warp_max_n, ""},
#endif
    {"generic-v4", SPMMC_GENERIC_V4_WIDE_FROM < SPMMC_GENERIC_V4_FROM ? SPMMC_GENERIC_V4_WIDE_FROM : SPMMC_GENERIC_V4_FROM,
     spmmc_any_n, spmmc_generic_v4_needs},
    {"generic-v1", SPMMC_GENERIC_SPLIT_BELOW, spmmc_any_n, ""},
#endif
};

const spmmc_kernel_info spmmc_info = {
    SPMMC_KERNEL_ABI_VERSION,
    "/*@NAME*/spmmc_template/*@*/",
    spmmc_rows,
    /*@K*/0/*@*/,
    /*@NNZ*/0/*@*/,
    "/*@A_FORMAT*/unrolled-constants/*@*/",
    "row-major",
    "row-major",
    "/*@DTYPE*/float32/*@*/",
    "/*@ARCH*/sm_90/*@*/",
    spmmc_m1,
    spmmc_n1,
    spmmc_v,
    spmmc_a_tiles,
    "/*@REORDER*/none/*@*/",
    "/*@SHA256*//*@*/",
    "/*@VERSION*//*@*/",
    spmmc_generic_below_n,
    static_cast<int32_t>(sizeof(spmmc_variants) / sizeof(spmmc_variants[0])),
    spmmc_variants,
};

#ifndef SPMMC_GENERIC_ONLY  // the unrolled path (a build with SPMMC_GENERIC_ONLY has the generic path only)
// The kernels of the unrolled path in launch order, and the A-tiles of each (its grid.x).
constexpr int spmmc_kernel_count = /*@KERNEL_COUNT*/1/*@*/;
const void* const spmmc_kernels[spmmc_kernel_count] = {
    /*@KERNEL_POINTERS*/reinterpret_cast<const void*>(&spmmc_template_kernel_0)/*@*/};
constexpr unsigned spmmc_kernel_tiles[spmmc_kernel_count] = {/*@KERNEL_TILES*/1/*@*/};

// grid.y of every unrolled kernel: blocks per A-tile, each looping over its share of the B-tiles,
// so that all kernels' blocks together fit the SMs in one wave (as many blocks per SM as fit at
// once) and the busiest block has as few B-tiles as that wave allows (the same rule as the
// compiler's blocks_per_a_tile). Blocks per SM depend on the architecture only: asked once (a
// thread-safe static).
int64_t spmmc_grid_y(int64_t b_tiles, int sms) {
  static const int per_sm = [] {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spmmc_kernels[0], spmmc_threads, 0) != cudaSuccess ||
        blocks < 1)
      blocks = 1;
    return blocks;
  }();
  const int64_t most = int64_t{sms} * per_sm / spmmc_a_tiles;  // blocks per A-tile in one wave
  if (most <= 1 || b_tiles <= 1) return 1;
  const int64_t per_block = (b_tiles + most - 1) / most;  // B-tiles of the busiest block
  const int64_t y = (b_tiles + per_block - 1) / per_block;
  return y > spmmc_max_grid_y ? spmmc_max_grid_y : y;
}

// Launches the unrolled kernels in order on `stream`. Every kernel after the first may start
// while the one before it runs (programmatic dependent launch, where the device has it): each
// waits for its predecessor only before it ends (kernel_device.cuh), so the last one's end is the
// end of all of them for whatever the stream runs next.
cudaError_t spmmc_launch_chain(void** args, unsigned grid_y, bool dependent_launch, cudaStream_t stream) {
  cudaLaunchAttribute overlap[1];
  overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap[0].val.programmaticStreamSerializationAllowed = 1;
  for (int j = 0; j < spmmc_kernel_count; ++j) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(spmmc_kernel_tiles[j], grid_y);
    config.blockDim = dim3(spmmc_threads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = overlap;
    config.numAttrs = j > 0 && dependent_launch ? 1 : 0;
    const cudaError_t status = cudaLaunchKernelExC(&config, spmmc_kernels[j], args);
    if (status != cudaSuccess) return status;
  }
  return cudaSuccess;
}

#ifndef SPMMC_NO_GRAPH
// Several kernels are launched as one CUDA graph: the chain above, captured once, costs one
// cudaGraphLaunch (about 1 us of host time) where the chain costs about 3 us of host time per
// kernel (docs/design/kernel.md). A graph's kernel arguments are fixed, so each host thread keeps,
// per device, a few instantiated graphs, one per (B, C, n) it was last called with (an inference
// engine calls a layer with the same buffers again and again); a call with other buffers takes
// the least recently used graph and sets its kernels' arguments (about 0.5 us each). The graphs
// belong to the calling thread, so no lock is needed and no two threads change one graph; they
// are destroyed when the thread ends (a graph still running is freed when it completes). Define
// SPMMC_NO_GRAPH to launch the plain chain always.
constexpr int spmmc_graph_devices = 16;  // devices 0..15 use graphs; others the chain
constexpr int spmmc_graphs_per_device = 4;

struct spmmc_graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaGraphNode_t nodes[spmmc_kernel_count] = {};  // kernel j's node
  const spmmc_elem* B = nullptr;
  spmmc_elem* C = nullptr;
  int64_t n = 0;
  unsigned long long last_use = 0;
};

struct spmmc_device_graphs {
  spmmc_graph graphs[spmmc_graphs_per_device];
  unsigned long long clock = 0;
  bool unusable = false;  // building a graph failed once: this device uses the chain
  ~spmmc_device_graphs() {
    for (spmmc_graph& g : graphs)
      if (g.exec != nullptr) {
        cudaGraphExecDestroy(g.exec);
        cudaGraphDestroy(g.graph);
      }
  }
};

// The calling thread's graphs, created on first use per device.
struct spmmc_thread_graphs {
  spmmc_device_graphs* devices[spmmc_graph_devices] = {};
  ~spmmc_thread_graphs() {
    for (spmmc_device_graphs* d : devices) delete d;
  }
};

// Captures the chain on a stream of its own and instantiates it; kernel j's node is the one whose
// function is spmmc_kernels[j].
cudaError_t spmmc_build_graph(spmmc_graph& g, void** args, unsigned grid_y) {
  cudaStream_t capture = nullptr;
  cudaError_t status = cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking);
  if (status != cudaSuccess) return status;
  status = cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal);
  if (status == cudaSuccess) {
    const cudaError_t launched = spmmc_launch_chain(args, grid_y, true, capture);
    status = cudaStreamEndCapture(capture, &g.graph);  // ends the capture even after a failed launch
    if (launched != cudaSuccess) status = launched;
  }
  cudaStreamDestroy(capture);
  size_t count = 0;
  if (status == cudaSuccess) status = cudaGraphGetNodes(g.graph, nullptr, &count);
  cudaGraphNode_t found[spmmc_kernel_count] = {};
  if (status == cudaSuccess && count == static_cast<size_t>(spmmc_kernel_count))
    status = cudaGraphGetNodes(g.graph, found, &count);
  else if (status == cudaSuccess)
    status = cudaErrorUnknown;  // not the chain's nodes
  for (size_t i = 0; status == cudaSuccess && i < count; ++i) {
    cudaKernelNodeParams params = {};
    status = cudaGraphKernelNodeGetParams(found[i], &params);
    int j = 0;
    while (status == cudaSuccess && j < spmmc_kernel_count && params.func != spmmc_kernels[j]) ++j;
    if (status == cudaSuccess && j == spmmc_kernel_count) status = cudaErrorUnknown;
    if (status == cudaSuccess) g.nodes[j] = found[i];
  }
  if (status == cudaSuccess) status = cudaGraphInstantiate(&g.exec, g.graph, 0);
  if (status != cudaSuccess) {
    if (g.graph != nullptr) cudaGraphDestroy(g.graph);
    g = spmmc_graph();
  }
  return status;
}

// Sets the arguments and grid of every kernel of an instantiated graph (launches already
// enqueued keep theirs).
cudaError_t spmmc_update_graph(const spmmc_graph& g, void** args, unsigned grid_y) {
  for (int j = 0; j < spmmc_kernel_count; ++j) {
    cudaKernelNodeParams params = {};
    params.func = const_cast<void*>(spmmc_kernels[j]);
    params.gridDim = dim3(spmmc_kernel_tiles[j], grid_y);
    params.blockDim = dim3(spmmc_threads);
    params.sharedMemBytes = 0;
    params.kernelParams = args;
    params.extra = nullptr;
    const cudaError_t status = cudaGraphExecKernelNodeSetParams(g.exec, g.nodes[j], &params);
    if (status != cudaSuccess) return status;
  }
  return cudaSuccess;
}

// Launches the kernels as one of the calling thread's graphs for `device`; cudaErrorNotSupported
// (nothing enqueued) where the graph path is not taken: the device is out of range or building a
// graph failed on it.
cudaError_t spmmc_launch_graph(int device, void** args, const spmmc_elem* B, spmmc_elem* C, int64_t n, unsigned grid_y,
                               cudaStream_t stream) {
  static thread_local spmmc_thread_graphs mine;
  if (device < 0 || device >= spmmc_graph_devices) return cudaErrorNotSupported;
  if (mine.devices[device] == nullptr) mine.devices[device] = new spmmc_device_graphs();
  spmmc_device_graphs& d = *mine.devices[device];
  if (d.unusable) return cudaErrorNotSupported;
  spmmc_graph* g = nullptr;
  for (spmmc_graph& candidate : d.graphs)
    if (candidate.exec != nullptr && candidate.B == B && candidate.C == C && candidate.n == n) g = &candidate;
  if (g == nullptr) {  // the first empty slot, or else the least recently used graph
    g = &d.graphs[0];
    for (spmmc_graph& candidate : d.graphs) {
      if (candidate.exec == nullptr) {
        g = &candidate;
        break;
      }
      if (candidate.last_use < g->last_use) g = &candidate;
    }
    const cudaError_t status = g->exec == nullptr ? spmmc_build_graph(*g, args, grid_y) : spmmc_update_graph(*g, args, grid_y);
    if (status != cudaSuccess) {
      cudaGetLastError();  // the caller should not see the failed attempt: the chain runs instead
      if (g->exec == nullptr) d.unusable = true;
      else g->B = nullptr, g->C = nullptr, g->n = 0;  // arguments unknown: set them again next time
      return cudaErrorNotSupported;
    }
    g->B = B, g->C = C, g->n = n;
  }
  g->last_use = ++d.clock;
  return cudaGraphLaunch(g->exec, stream);
}
#endif

#endif  // SPMMC_GENERIC_ONLY

/*@HOST_ARRAYS*//*@*/
}  // namespace

extern "C" cudaError_t /*@NAME*/spmmc_template/*@*/(const spmmc_elem* B, spmmc_elem* C, int64_t n, cudaStream_t stream) {
  if (B == nullptr || C == nullptr || n < 1) return cudaErrorInvalidValue;
#if defined(SPMMC_HOST_ARRAYS) && !defined(__CUDA_ARCH__)
  {
    const cudaError_t uploaded = spmmc_upload_arrays();
    if (uploaded != cudaSuccess) return uploaded;
  }
#endif
#if defined(SPMMC_SMALL_N_BALANCED)
  if ((n >= spmmc_balanced_from_n || (SPMMC_BALANCED_SPMV && n == 1)) && n < spmmc_balanced_below_n &&
      (n < spmmc_balanced_v1_below_n || spmmc_balanced_columns_per_lane(B, C, n) > 1))
    return spmmc_launch_balanced(B, C, n, stream);
#if SPMMC_BALANCED_MID
  if (n >= spmmc_balanced_mid_from_n && n < spmmc_balanced_mid_below_n && spmmc_balanced_columns_per_lane(B, C, n) == 4)
    return spmmc_launch_balanced_mid(B, C, n, stream);
#endif
#endif
#if !defined(SPMMC_BALANCED)
  void* args[] = {const_cast<spmmc_elem**>(&B), &C, &n};
#endif
#if defined(SPMMC_TENSOR_CORE)
  // The tensor-core kernel takes 8 columns per lane with 16-byte loads and stores.
  const auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (n >= spmmc_generic_below_n && n % 8 == 0 && aligned16(B) && aligned16(C)) return spmmc_launch_tc(args, n, stream);
  return spmmc_launch_generic(args, B, C, n, stream);
#elif !defined(SPMMC_GENERIC_ONLY)
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % (sizeof(spmmc_elem) * spmmc_v) == 0; };
  if (n < spmmc_generic_below_n || n % spmmc_v != 0 || n > spmmc_max_n || !aligned(B) || !aligned(C))
    return spmmc_launch_generic(args, B, C, n, stream);
  const int64_t b_tiles = (n + spmmc_n1 - 1) / spmmc_n1;
  const spmmc_device_shape device = spmmc_current_device();
  const unsigned grid_y = static_cast<unsigned>(spmmc_grid_y(b_tiles, device.sms));
#ifndef SPMMC_NO_GRAPH
  // Several kernels with dependent launch: one graph, unless the caller is capturing its stream
  // (then the chain is captured into the caller's graph, with the same overlap).
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusActive;
  if (spmmc_kernel_count > 1 && device.dependent_launch && cudaStreamIsCapturing(stream, &capturing) == cudaSuccess &&
      capturing == cudaStreamCaptureStatusNone) {
    const cudaError_t status = spmmc_launch_graph(device.index, args, B, C, n, grid_y, stream);
    if (status != cudaErrorNotSupported) return status;
  }
#endif
  return spmmc_launch_chain(args, grid_y, device.dependent_launch, stream);
#elif defined(SPMMC_BALANCED)
  return spmmc_launch_balanced(B, C, n, stream);
#else
  return spmmc_launch_generic(args, B, C, n, stream);
#endif
}

extern "C" const spmmc_kernel_info* /*@INFO_NAME*/spmmc_template_info/*@*/(void) { return &spmmc_info; }
