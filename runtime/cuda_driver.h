// The CUDA driver API, loaded at run time (dlopen of libcuda.so.1), so that spmmc runs and
// compiles on machines without a GPU and only the commands that time kernels need one.
// Everything here runs on one context of device 0 and one stream; loading and launching are
// serial (compilation is what runs in parallel, see runtime/compile_pool.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace spmmc {

// A driver call failed. what() names the call, the object (module or kernel) and the driver's
// own error name and message, e.g. "cuLaunchKernel(proxy_m16): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
// too many resources requested for launch" (cuLaunchKernelEx for an overlapping launch).
class DriverError : public std::runtime_error {
 public:
  DriverError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }  // the CUresult

 private:
  int code_;
};

// True for the CUresults after which the context is unusable, because a kernel faulted: an
// illegal address or instruction, a misaligned address, an invalid PC, a hardware stack error,
// an assert, a launch failure or timeout, an uncorrectable ECC error. Measured on an H100 (driver
// CUDA 13.0): nothing recovers the process, not even resetting the primary context (the next
// retain reports the same error); only a new process can use the GPU again.
bool is_sticky_error(int code);

struct DeviceInfo {
  std::string name;            // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int registers_per_sm = 0;
  int registers_per_block = 0;
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int max_blocks_per_sm = 0;
  int64_t shared_memory_per_sm = 0;
  int64_t shared_memory_per_block_optin = 0;   // the most dynamic + static shared memory one block may opt into
  int64_t reserved_shared_memory_per_block = 0;
  int64_t l2_bytes = 0;
  int driver_version = 0;      // e.g. 13000

  std::string arch() const;    // "sm_90"
};

// What the compiler gave a kernel (cuFuncGetAttribute).
struct KernelAttributes {
  int registers_per_thread = 0;
  int static_shared_bytes = 0;
  int local_bytes_per_thread = 0;  // > 0: registers spilled (or a local array)
  int max_threads_per_block = 0;   // the most this kernel can launch with (launch bounds, registers)
};

struct LaunchShape {
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1;
  unsigned dynamic_shared_bytes = 0;
  unsigned block_y = 1;  // last, so that {grid x, y, z, block x, shared} keeps its meaning
};

class GpuContext;

// A kernel of a loaded module. Valid while its module lives.
class Kernel {
 public:
  const std::string& name() const { return name_; }
  KernelAttributes attributes() const;
  // Allows `bytes` of dynamic shared memory (needed above 48 KiB) and asks for the largest
  // shared-memory carveout when `bytes` > 0.
  void allow_dynamic_shared(int64_t bytes) const;
  // Active blocks per SM for this block size and dynamic shared memory (the driver's occupancy
  // calculator).
  int active_blocks_per_sm(int block_threads, int64_t dynamic_shared_bytes) const;
  // Enqueues one launch on the context's stream; `args` as for cuLaunchKernel. With
  // `overlap_previous`, where the context has dependent launch (GpuContext::dependent_launch),
  // it is launched with programmatic stream serialization (cuLaunchKernelEx): it may start while
  // the kernel before it on the stream still runs, once all of that kernel's blocks have executed
  // griddepcontrol.launch_dependents, and must griddepcontrol.wait before it relies on that
  // kernel's work or ends (so the completion of the last kernel of a chain means all are done).
  // Elsewhere it is a plain launch. DriverError naming the kernel and the shape when it fails.
  void launch(const LaunchShape& shape, void** args, bool overlap_previous = false) const;

 private:
  friend class Module;
  Kernel(const GpuContext* context, void* function, std::string name) : context_(context), function_(function), name_(std::move(name)) {}
  const GpuContext* context_;
  void* function_;  // CUfunction
  std::string name_;
};

// A cubin loaded into the context (cuModuleLoadData); unloaded on destruction.
class Module {
 public:
  Module(const GpuContext& context, const std::string& cubin_image, std::string name);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // The kernel `symbol` (an extern "C" name or a lowered name); DriverError when absent.
  Kernel kernel(const std::string& symbol) const;
  // Copies `bytes` from `host` into the module's device variable `symbol` (cuModuleGetGlobal; an
  // extern "C" or global-namespace name), which must have exactly that size; synchronous, on the
  // context's stream. False, copying nothing, where the module has no such variable (the compiler
  // drops one no kernel reads); DriverError for other failures, an internal error when the size differs.
  bool set_global(const std::string& symbol, const void* host, size_t bytes) const;
  const std::string& name() const { return name_; }

 private:
  const GpuContext* context_;
  void* module_ = nullptr;  // CUmodule
  std::string name_;
};

// Device memory; freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer(const GpuContext& context, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint64_t address() const { return address_; }  // CUdeviceptr
  size_t bytes() const { return bytes_; }
  // `bytes` from `host` into the buffer from byte `offset` on (synchronous).
  void upload(const void* host, size_t bytes, size_t offset = 0) const;
  void download(void* host, size_t bytes) const;
  void fill_zero() const;  // asynchronous on the context's stream

 private:
  const GpuContext* context_;
  uint64_t address_ = 0;
  size_t bytes_ = 0;
};

// Launches captured once from the context's stream into a CUDA graph (stream capture), then
// replayed: one cuGraphLaunch enqueues them all, for far less host time than launching each (on
// an H100, about 0.5 us per kernel instead of about 2.8 us; tools/microbench/launch_chain.cu).
// Kernels launched with overlap_previous where the context has dependent launch keep their
// programmatic stream serialization as programmatic edges of the graph, so a replay runs the
// chain as the launches would have. The kernel arguments' values are copied at capture: a replay
// uses the same ones, so the modules and the memory they point to must outlive the graph.
// The graph and its executable form are destroyed with the object.
class KernelGraph {
 public:
  // Runs `enqueue`, which must only enqueue work on the context's stream (Kernel::launch), inside
  // a thread-local capture of that stream, and instantiates what it captured. `name` says what the
  // graph runs, for errors. The capture is ended even when `enqueue` throws, and that exception is
  // rethrown (the stream is then usable again). DriverError naming the graph and the call when
  // capture or instantiation fails; requires GpuContext::graphs().
  static KernelGraph capture(const GpuContext& context, const std::function<void()>& enqueue, std::string name);
  ~KernelGraph();
  KernelGraph(KernelGraph&& other) noexcept;
  KernelGraph& operator=(KernelGraph&&) = delete;
  KernelGraph(const KernelGraph&) = delete;
  KernelGraph& operator=(const KernelGraph&) = delete;

  // Enqueues one replay on the context's stream (cuGraphLaunch), ordered with the work before and
  // after it like the launches it captured. DriverError naming the graph when it fails.
  void launch() const;
  const std::string& name() const { return name_; }

 private:
  KernelGraph(const GpuContext* context, std::string name) : context_(context), name_(std::move(name)) {}
  const GpuContext* context_;
  std::string name_;
  void* graph_ = nullptr;  // CUgraph
  void* exec_ = nullptr;   // CUgraphExec
};

// The driver, a context on device 0 and its stream.
class GpuContext {
 public:
  // Opens device 0. Throws UserError with ExitCode::kUnavailable (69) when there is no driver
  // library or no CUDA device, naming which; DriverError for any other failure.
  static std::unique_ptr<GpuContext> open();
  // Whether open() would succeed; `why` says why not.
  static bool available(std::string* why = nullptr);
  ~GpuContext();

  const DeviceInfo& device() const { return info_; }
  // Whether Kernel::launch can overlap a kernel with the one before it (programmatic dependent
  // launch): compute capability 9.0 or later and a driver with cuLaunchKernelEx.
  bool dependent_launch() const;
  // Whether KernelGraph can capture and replay launches: a driver with stream capture and graph
  // launch (cuStreamBeginCapture, cuStreamEndCapture, cuGraphInstantiateWithFlags, cuGraphLaunch,
  // cuGraphExecDestroy, cuGraphDestroy). Every driver open() accepts (CUDA 12.0 or newer) has
  // them; the query is there so that their absence turns the graph off rather than open() down.
  bool graphs() const;
  void synchronize() const;

  // Internals for Module/Kernel/DeviceBuffer/timing (opaque driver handles).
  struct Api;
  const Api& api() const { return *api_; }
  void* stream() const { return stream_; }
  // Throws DriverError naming `call` and `object` when `result` is not CUDA_SUCCESS.
  void check(int result, const char* call, const std::string& object) const;

 private:
  GpuContext() = default;
  std::unique_ptr<Api> api_;
  void* context_ = nullptr;  // CUcontext
  void* stream_ = nullptr;   // CUstream
  DeviceInfo info_;
};

}  // namespace spmmc
