#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <climits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "compiler/common/diagnostics.h"
#include "runtime/cuda_driver_api.h"

namespace spmmc {
namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";

// What loading the driver found, once per process: the entry points, or why there is no GPU.
struct Probe {
  GpuContext::Api api;
  std::string unavailable;  // empty: the driver loaded, cuInit succeeded and a device exists
};

// Resolves `symbol` at ABI `version` (the number in its PFN type) into `slot`; false, with `why`,
// when the driver lacks it.
template <typename Pfn>
bool resolve(PFN_cuGetProcAddress_v12000 get_proc, const char* symbol, int version, Pfn& slot, std::string& why) {
  void* pointer = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result = get_proc(symbol, &pointer, version, CU_GET_PROC_ADDRESS_DEFAULT, &found);
  if (result != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || pointer == nullptr) {
    why = fmt::format("the CUDA driver ({}) lacks {} (ABI version {}): a newer driver is needed", kDriverLibrary,
                      symbol, version);
    return false;
  }
  slot = reinterpret_cast<Pfn>(pointer);
  return true;
}

std::string error_text(const GpuContext::Api& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName == nullptr || api.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr)
    return fmt::format("CUDA error {}", static_cast<int>(result));
  if (api.cuGetErrorString == nullptr || api.cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr)
    return name;
  return fmt::format("{}: {}", name, text);
}

Probe load_driver() {
  Probe probe;
  // Never dlclose'd: the driver stays loaded for the life of the process, as with libcudart.
  void* library = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    probe.unavailable = fmt::format("no CUDA driver: {} could not be loaded ({})", kDriverLibrary,
                                    why != nullptr ? why : "no reason given");
    return probe;
  }
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    probe.unavailable = fmt::format(
        "the CUDA driver in {} is too old: it has no cuGetProcAddress_v2 (a CUDA 12.0 or newer driver is needed)",
        kDriverLibrary);
    return probe;
  }
  GpuContext::Api& a = probe.api;
  std::string& why = probe.unavailable;
  const bool resolved =
      resolve(get_proc, "cuGetErrorName", 6000, a.cuGetErrorName, why) &&
      resolve(get_proc, "cuGetErrorString", 6000, a.cuGetErrorString, why) &&
      resolve(get_proc, "cuInit", 2000, a.cuInit, why) &&
      resolve(get_proc, "cuDriverGetVersion", 2020, a.cuDriverGetVersion, why) &&
      resolve(get_proc, "cuDeviceGetCount", 2000, a.cuDeviceGetCount, why) &&
      resolve(get_proc, "cuDeviceGet", 2000, a.cuDeviceGet, why) &&
      resolve(get_proc, "cuDeviceGetName", 2000, a.cuDeviceGetName, why) &&
      resolve(get_proc, "cuDeviceGetAttribute", 2000, a.cuDeviceGetAttribute, why) &&
      resolve(get_proc, "cuDevicePrimaryCtxRetain", 7000, a.cuDevicePrimaryCtxRetain, why) &&
      resolve(get_proc, "cuDevicePrimaryCtxRelease", 11000, a.cuDevicePrimaryCtxRelease, why) &&
      resolve(get_proc, "cuCtxSetCurrent", 4000, a.cuCtxSetCurrent, why) &&
      resolve(get_proc, "cuStreamCreate", 2000, a.cuStreamCreate, why) &&
      resolve(get_proc, "cuStreamDestroy", 4000, a.cuStreamDestroy, why) &&
      resolve(get_proc, "cuStreamSynchronize", 2000, a.cuStreamSynchronize, why) &&
      resolve(get_proc, "cuModuleLoadDataEx", 2010, a.cuModuleLoadDataEx, why) &&
      resolve(get_proc, "cuModuleUnload", 2000, a.cuModuleUnload, why) &&
      resolve(get_proc, "cuModuleGetFunction", 2000, a.cuModuleGetFunction, why) &&
      resolve(get_proc, "cuModuleGetGlobal", 3020, a.cuModuleGetGlobal, why) &&
      resolve(get_proc, "cuFuncGetAttribute", 2020, a.cuFuncGetAttribute, why) &&
      resolve(get_proc, "cuFuncSetAttribute", 9000, a.cuFuncSetAttribute, why) &&
      resolve(get_proc, "cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050,
              a.cuOccupancyMaxActiveBlocksPerMultiprocessor, why) &&
      resolve(get_proc, "cuLaunchKernel", 4000, a.cuLaunchKernel, why) &&
      resolve(get_proc, "cuMemAlloc", 3020, a.cuMemAlloc, why) &&
      resolve(get_proc, "cuMemFree", 3020, a.cuMemFree, why) &&
      resolve(get_proc, "cuMemcpyHtoDAsync", 3020, a.cuMemcpyHtoDAsync, why) &&
      resolve(get_proc, "cuMemcpyDtoHAsync", 3020, a.cuMemcpyDtoHAsync, why) &&
      resolve(get_proc, "cuMemsetD8Async", 3020, a.cuMemsetD8Async, why) &&
      resolve(get_proc, "cuEventCreate", 2000, a.cuEventCreate, why) &&
      resolve(get_proc, "cuEventDestroy", 4000, a.cuEventDestroy, why) &&
      resolve(get_proc, "cuEventRecord", 2000, a.cuEventRecord, why) &&
      resolve(get_proc, "cuEventSynchronize", 2000, a.cuEventSynchronize, why) &&
      resolve(get_proc, "cuEventElapsedTime", 2000, a.cuEventElapsedTime, why);
  if (!resolved) return probe;
  // Optional: where the driver lacks it the slot stays empty and every launch is a plain one
  // (GpuContext::dependent_launch).
  std::string no_launch_ex;
  static_cast<void>(resolve(get_proc, "cuLaunchKernelEx", 11060, a.cuLaunchKernelEx, no_launch_ex));
  // Optional too: without all six, GpuContext::graphs() is false and no KernelGraph is captured.
  std::string no_graphs;
  static_cast<void>(resolve(get_proc, "cuStreamBeginCapture", 10010, a.cuStreamBeginCapture, no_graphs) &&
                    resolve(get_proc, "cuStreamEndCapture", 10000, a.cuStreamEndCapture, no_graphs) &&
                    resolve(get_proc, "cuGraphInstantiateWithFlags", 11040, a.cuGraphInstantiateWithFlags, no_graphs) &&
                    resolve(get_proc, "cuGraphLaunch", 10000, a.cuGraphLaunch, no_graphs) &&
                    resolve(get_proc, "cuGraphExecDestroy", 10000, a.cuGraphExecDestroy, no_graphs) &&
                    resolve(get_proc, "cuGraphDestroy", 10000, a.cuGraphDestroy, no_graphs));

  int driver_version = 0;
  a.cuDriverGetVersion(&driver_version);
  if (const CUresult result = a.cuInit(0); result != CUDA_SUCCESS) {
    why = fmt::format("no CUDA device: cuInit failed with driver version {}: {}", driver_version, error_text(a, result));
    return probe;
  }
  int devices = 0;
  if (const CUresult result = a.cuDeviceGetCount(&devices); result != CUDA_SUCCESS) {
    why = fmt::format("no CUDA device: cuDeviceGetCount failed: {}", error_text(a, result));
  } else if (devices == 0) {
    why = fmt::format("no CUDA device: the driver (version {}) sees none", driver_version);
  }
  return probe;
}

const Probe& driver() {
  static const Probe probe = load_driver();
  return probe;
}

int device_attribute(const GpuContext& context, CUdevice device, CUdevice_attribute attribute, const char* what) {
  int value = 0;
  context.check(context.api().cuDeviceGetAttribute(&value, attribute, device), "cuDeviceGetAttribute",
                fmt::format("device 0, {}", what));
  return value;
}

int function_attribute(const GpuContext& context, void* function, CUfunction_attribute attribute,
                       const std::string& kernel) {
  int value = 0;
  context.check(context.api().cuFuncGetAttribute(&value, attribute, static_cast<CUfunction>(function)),
                "cuFuncGetAttribute", kernel);
  return value;
}

// Makes the context current on this thread; DriverError naming `object` when it cannot. (Not
// named bind: with <functional> in view, a call with a std::string would find std::bind by ADL.)
void make_current(const GpuContext& context, const std::string& object) {
  context.check(context.api().bind(), "cuCtxSetCurrent", object);
}

// A KernelGraph in errors: "CUDA graph 'NAME'".
std::string graph_object(const std::string& name) { return fmt::format("CUDA graph '{}'", name); }

}  // namespace

std::string DeviceInfo::arch() const { return fmt::format("sm_{}{}", cc_major, cc_minor); }

// --- GpuContext -----------------------------------------------------------------------------

bool GpuContext::available(std::string* why) {
  const Probe& probe = driver();
  if (why != nullptr) *why = probe.unavailable;
  return probe.unavailable.empty();
}

std::unique_ptr<GpuContext> GpuContext::open() {
  const Probe& probe = driver();
  if (!probe.unavailable.empty()) throw UserError(ExitCode::kUnavailable, {}, probe.unavailable);
  std::unique_ptr<GpuContext> context(new GpuContext());
  context->api_ = std::make_unique<Api>(probe.api);
  const Api& a = *context->api_;

  CUdevice device = 0;
  context->check(a.cuDeviceGet(&device, 0), "cuDeviceGet", "device 0");
  CUcontext primary = nullptr;
  context->check(a.cuDevicePrimaryCtxRetain(&primary, device), "cuDevicePrimaryCtxRetain", "device 0");
  context->context_ = primary;
  context->api_->context = primary;
  context->check(a.bind(), "cuCtxSetCurrent", "device 0");
  CUstream stream = nullptr;
  context->check(a.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", "device 0");
  context->stream_ = stream;

  DeviceInfo& info = context->info_;
  char name[256] = {};
  context->check(a.cuDeviceGetName(name, sizeof name - 1, device), "cuDeviceGetName", "device 0");
  info.name = name;
  const GpuContext& c = *context;
  info.cc_major = device_attribute(c, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
  info.cc_minor = device_attribute(c, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
  info.sm_count = device_attribute(c, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  info.warp_size = device_attribute(c, device, CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size");
  info.registers_per_sm =
      device_attribute(c, device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, "registers per SM");
  info.registers_per_block =
      device_attribute(c, device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, "registers per block");
  info.max_threads_per_sm =
      device_attribute(c, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "threads per SM");
  info.max_threads_per_block =
      device_attribute(c, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  info.max_blocks_per_sm =
      device_attribute(c, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, "blocks per SM");
  info.shared_memory_per_sm = device_attribute(c, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                               "shared memory per SM");
  info.shared_memory_per_block_optin = device_attribute(
      c, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "opt-in shared memory per block");
  info.reserved_shared_memory_per_block = device_attribute(
      c, device, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, "reserved shared memory per block");
  info.l2_bytes = device_attribute(c, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
  context->check(a.cuDriverGetVersion(&info.driver_version), "cuDriverGetVersion", "device 0");
  return context;
}

GpuContext::~GpuContext() {
  if (api_ == nullptr) return;
  if (context_ != nullptr) {
    api_->bind();
    if (stream_ != nullptr) api_->cuStreamDestroy(static_cast<CUstream>(stream_));
    CUdevice device = 0;
    if (api_->cuDeviceGet(&device, 0) == CUDA_SUCCESS) api_->cuDevicePrimaryCtxRelease(device);
  }
}

bool is_sticky_error(int code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

bool GpuContext::dependent_launch() const { return api_->cuLaunchKernelEx != nullptr && info_.cc_major >= 9; }

bool GpuContext::graphs() const {
  const Api& a = *api_;
  return a.cuStreamBeginCapture != nullptr && a.cuStreamEndCapture != nullptr &&
         a.cuGraphInstantiateWithFlags != nullptr && a.cuGraphLaunch != nullptr && a.cuGraphExecDestroy != nullptr &&
         a.cuGraphDestroy != nullptr;
}

void GpuContext::synchronize() const {
  make_current(*this, "stream");
  check(api_->cuStreamSynchronize(static_cast<CUstream>(stream_)), "cuStreamSynchronize", "stream");
}

void GpuContext::check(int result, const char* call, const std::string& object) const {
  if (result == CUDA_SUCCESS) return;
  throw DriverError(result, fmt::format("{}({}): {}", call, object, error_text(*api_, static_cast<CUresult>(result))));
}

// --- Module and Kernel ----------------------------------------------------------------------

Module::Module(const GpuContext& context, const std::string& cubin_image, std::string name)
    : context_(&context), name_(std::move(name)) {
  make_current(context, name_);
  const GpuContext::Api& a = context.api();
  std::vector<char> log(16384, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(log.size() - 1))};
  CUmodule module = nullptr;
  const CUresult result = a.cuModuleLoadDataEx(&module, cubin_image.data(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    const std::string driver_log(log.data());
    throw DriverError(result, fmt::format("cuModuleLoadData({}): {}{}{}", name_, error_text(a, result),
                                          driver_log.empty() ? "" : "\n", driver_log));
  }
  module_ = module;
}

Module::~Module() {
  if (module_ == nullptr) return;
  const GpuContext::Api& a = context_->api();
  a.bind();
  a.cuModuleUnload(static_cast<CUmodule>(module_));
}

Kernel Module::kernel(const std::string& symbol) const {
  const std::string object = fmt::format("{}: kernel '{}'", name_, symbol);
  make_current(*context_, object);
  CUfunction function = nullptr;
  context_->check(context_->api().cuModuleGetFunction(&function, static_cast<CUmodule>(module_), symbol.c_str()),
                  "cuModuleGetFunction", object);
  return Kernel(context_, function, symbol);
}

bool Module::set_global(const std::string& symbol, const void* host, size_t bytes) const {
  const std::string object = fmt::format("{}: device array '{}'", name_, symbol);
  make_current(*context_, object);
  const GpuContext::Api& a = context_->api();
  CUdeviceptr address = 0;
  size_t size = 0;
  const CUresult found = a.cuModuleGetGlobal(&address, &size, static_cast<CUmodule>(module_), symbol.c_str());
  if (found == CUDA_ERROR_NOT_FOUND) return false;
  context_->check(found, "cuModuleGetGlobal", object);
  SPMMC_CHECK(size == bytes, fmt::format("{} has {} bytes, given {}", object, size, bytes));
  if (bytes == 0) return true;
  const auto stream = static_cast<CUstream>(context_->stream());
  context_->check(a.cuMemcpyHtoDAsync(address, host, bytes, stream), "cuMemcpyHtoDAsync", object);
  context_->check(a.cuStreamSynchronize(stream), "cuStreamSynchronize", object);
  return true;
}

KernelAttributes Kernel::attributes() const {
  make_current(*context_, name_);
  KernelAttributes attributes;
  attributes.registers_per_thread = function_attribute(*context_, function_, CU_FUNC_ATTRIBUTE_NUM_REGS, name_);
  attributes.static_shared_bytes = function_attribute(*context_, function_, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, name_);
  attributes.local_bytes_per_thread =
      function_attribute(*context_, function_, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, name_);
  attributes.max_threads_per_block =
      function_attribute(*context_, function_, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, name_);
  return attributes;
}

void Kernel::allow_dynamic_shared(int64_t bytes) const {
  SPMMC_CHECK(bytes >= 0 && bytes <= INT_MAX, fmt::format("dynamic shared memory of {} bytes for {}", bytes, name_));
  make_current(*context_, name_);
  const GpuContext::Api& a = context_->api();
  const auto function = static_cast<CUfunction>(function_);
  context_->check(a.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)),
                  "cuFuncSetAttribute", fmt::format("{}, {} B of dynamic shared memory", name_, bytes));
  if (bytes > 0) {
    context_->check(a.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                         CU_SHAREDMEM_CARVEOUT_MAX_SHARED),
                    "cuFuncSetAttribute", fmt::format("{}, the largest shared-memory carveout", name_));
  }
}

int Kernel::active_blocks_per_sm(int block_threads, int64_t dynamic_shared_bytes) const {
  SPMMC_CHECK(dynamic_shared_bytes >= 0, fmt::format("negative dynamic shared memory for {}", name_));
  make_current(*context_, name_);
  int blocks = 0;
  context_->check(context_->api().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                      &blocks, static_cast<CUfunction>(function_), block_threads,
                      static_cast<size_t>(dynamic_shared_bytes)),
                  "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                  fmt::format("{}, block {}, dynamic shared {} B", name_, block_threads, dynamic_shared_bytes));
  return blocks;
}

void Kernel::launch(const LaunchShape& shape, void** args, bool overlap_previous) const {
  const bool overlap = overlap_previous && context_->dependent_launch();
  const auto object = [&] {
    return fmt::format("{}, grid {}x{}x{}, block {}{}, dynamic shared {} B{}", name_, shape.grid_x, shape.grid_y,
                       shape.grid_z, shape.block_x, shape.block_y > 1 ? fmt::format("x{}", shape.block_y) : std::string(),
                       shape.dynamic_shared_bytes,
                       overlap ? ", overlapping the previous kernel" : "");
  };
  const GpuContext::Api& a = context_->api();
  if (const CUresult bound = a.bind(); bound != CUDA_SUCCESS) context_->check(bound, "cuCtxSetCurrent", object());
  const auto stream = static_cast<CUstream>(context_->stream());
  if (!overlap) {
    const CUresult result =
        a.cuLaunchKernel(static_cast<CUfunction>(function_), shape.grid_x, shape.grid_y, shape.grid_z, shape.block_x,
                         shape.block_y, 1, shape.dynamic_shared_bytes, stream, args, nullptr);
    if (result != CUDA_SUCCESS) context_->check(result, "cuLaunchKernel", object());
    return;
  }
  // Programmatic stream serialization: the kernel may start once every block of the previous
  // kernel on the stream has executed griddepcontrol.launch_dependents (or exited); it must
  // griddepcontrol.wait before it depends on that kernel's work.
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = shape.grid_x;
  config.gridDimY = shape.grid_y;
  config.gridDimZ = shape.grid_z;
  config.blockDimX = shape.block_x;
  config.blockDimY = shape.block_y;
  config.blockDimZ = 1;
  config.sharedMemBytes = shape.dynamic_shared_bytes;
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  const CUresult result = a.cuLaunchKernelEx(&config, static_cast<CUfunction>(function_), args, nullptr);
  if (result != CUDA_SUCCESS) context_->check(result, "cuLaunchKernelEx", object());
}

// --- KernelGraph ----------------------------------------------------------------------------

KernelGraph KernelGraph::capture(const GpuContext& context, const std::function<void()>& enqueue, std::string name) {
  KernelGraph graph(&context, std::move(name));
  const std::string object = graph_object(graph.name_);
  SPMMC_CHECK(context.graphs(), fmt::format("{}: the CUDA driver has no stream capture or graph launch", object));
  make_current(context, object);
  const GpuContext::Api& a = context.api();
  const auto stream = static_cast<CUstream>(context.stream());
  // Thread-local: only this thread's unsafe calls (e.g. a synchronous copy) would break the
  // capture; other threads may go on using the driver.
  context.check(a.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture", object);
  CUgraph captured = nullptr;
  try {
    enqueue();
  } catch (...) {
    // Leave the stream out of capture mode, whatever was captured (a failed launch invalidates the
    // capture, and cuStreamEndCapture then says so): what `enqueue` threw is the error to report.
    a.bind();
    a.cuStreamEndCapture(stream, &captured);
    if (captured != nullptr) a.cuGraphDestroy(captured);
    throw;
  }
  const CUresult ended = a.cuStreamEndCapture(stream, &captured);
  graph.graph_ = captured;  // destroyed with `graph` should what follows throw
  context.check(ended, "cuStreamEndCapture", object);
  CUgraphExec exec = nullptr;
  context.check(a.cuGraphInstantiateWithFlags(&exec, captured, 0), "cuGraphInstantiateWithFlags", object);
  graph.exec_ = exec;
  return graph;
}

KernelGraph::KernelGraph(KernelGraph&& other) noexcept
    : context_(other.context_),
      name_(std::move(other.name_)),
      graph_(std::exchange(other.graph_, nullptr)),
      exec_(std::exchange(other.exec_, nullptr)) {}

KernelGraph::~KernelGraph() {
  if (graph_ == nullptr && exec_ == nullptr) return;
  const GpuContext::Api& a = context_->api();
  a.bind();
  // A replay still running is not cut short: the driver frees the executable graph once it ends.
  if (exec_ != nullptr) a.cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
  if (graph_ != nullptr) a.cuGraphDestroy(static_cast<CUgraph>(graph_));
}

void KernelGraph::launch() const {
  SPMMC_CHECK(exec_ != nullptr, fmt::format("{} launched after it was moved from", graph_object(name_)));
  const GpuContext::Api& a = context_->api();
  if (const CUresult bound = a.bind(); bound != CUDA_SUCCESS)
    context_->check(bound, "cuCtxSetCurrent", graph_object(name_));
  const CUresult result = a.cuGraphLaunch(static_cast<CUgraphExec>(exec_), static_cast<CUstream>(context_->stream()));
  if (result != CUDA_SUCCESS) context_->check(result, "cuGraphLaunch", graph_object(name_));
}

// --- DeviceBuffer ---------------------------------------------------------------------------
// Copies go through the context's (non-blocking) stream and wait for it: the synchronous
// cuMemcpyHtoD/DtoH run on the legacy default stream, which does not order with a non-blocking
// stream, so a kernel still running there could race them.

DeviceBuffer::DeviceBuffer(const GpuContext& context, size_t bytes) : context_(&context), bytes_(bytes) {
  if (bytes == 0) return;
  make_current(context, fmt::format("device buffer of {} bytes", bytes));
  CUdeviceptr address = 0;
  context.check(context.api().cuMemAlloc(&address, bytes), "cuMemAlloc", fmt::format("{} bytes", bytes));
  address_ = address;
}

DeviceBuffer::~DeviceBuffer() {
  if (address_ == 0) return;
  const auto& a = context_->api();
  a.bind();
  a.cuMemFree(static_cast<CUdeviceptr>(address_));
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) const {
  SPMMC_CHECK(offset <= bytes_ && bytes <= bytes_ - offset,
              fmt::format("upload of {} bytes at {} into a device buffer of {}", bytes, offset, bytes_));
  if (bytes == 0) return;
  const std::string object = fmt::format("upload of {} bytes", bytes);
  make_current(*context_, object);
  const auto stream = static_cast<CUstream>(context_->stream());
  context_->check(context_->api().cuMemcpyHtoDAsync(static_cast<CUdeviceptr>(address_ + offset), host, bytes, stream),
                  "cuMemcpyHtoDAsync", object);
  context_->check(context_->api().cuStreamSynchronize(stream), "cuStreamSynchronize", object);
}

void DeviceBuffer::download(void* host, size_t bytes) const {
  SPMMC_CHECK(bytes <= bytes_, fmt::format("download of {} bytes from a device buffer of {}", bytes, bytes_));
  if (bytes == 0) return;
  const std::string object = fmt::format("download of {} bytes", bytes);
  make_current(*context_, object);
  const auto stream = static_cast<CUstream>(context_->stream());
  context_->check(context_->api().cuMemcpyDtoHAsync(host, static_cast<CUdeviceptr>(address_), bytes, stream),
                  "cuMemcpyDtoHAsync", object);
  context_->check(context_->api().cuStreamSynchronize(stream), "cuStreamSynchronize", object);
}

void DeviceBuffer::fill_zero() const {
  if (bytes_ == 0) return;
  const std::string object = fmt::format("device buffer of {} bytes", bytes_);
  make_current(*context_, object);
  context_->check(context_->api().cuMemsetD8Async(static_cast<CUdeviceptr>(address_), 0, bytes_,
                                                  static_cast<CUstream>(context_->stream())),
                  "cuMemsetD8Async", object);
}

}  // namespace spmmc
