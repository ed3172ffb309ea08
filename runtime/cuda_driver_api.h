// Internal to runtime/: the driver entry points behind GpuContext (cuda_driver.cpp loads them
// with dlopen + cuGetProcAddress) and the timing code (time_kernel.cpp) uses. Not for callers
// outside runtime/, which see only the opaque GpuContext::Api.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include "runtime/cuda_driver.h"

namespace spmmc {

// Each pointer has the PFN type of one ABI version of its entry point, and cuda_driver.cpp asks
// cuGetProcAddress for exactly that version (the number in the type's name), so the table is
// right whatever CUDA headers spmmc is built against and whatever driver it meets.
struct GpuContext::Api {
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
  PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
  PFN_cuInit_v2000 cuInit = nullptr;
  PFN_cuDriverGetVersion_v2020 cuDriverGetVersion = nullptr;
  PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuCtxSynchronize_v2000 cuCtxSynchronize = nullptr;
  PFN_cuStreamCreate_v2000 cuStreamCreate = nullptr;
  PFN_cuStreamDestroy_v4000 cuStreamDestroy = nullptr;
  PFN_cuStreamSynchronize_v2000 cuStreamSynchronize = nullptr;
  PFN_cuModuleLoadDataEx_v2010 cuModuleLoadDataEx = nullptr;
  PFN_cuModuleUnload_v2000 cuModuleUnload = nullptr;
  PFN_cuModuleGetFunction_v2000 cuModuleGetFunction = nullptr;
  PFN_cuModuleGetGlobal_v3020 cuModuleGetGlobal = nullptr;
  PFN_cuFuncGetAttribute_v2020 cuFuncGetAttribute = nullptr;
  PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute = nullptr;
  PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050 cuOccupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  PFN_cuLaunchKernel_v4000 cuLaunchKernel = nullptr;
  // Optional (nullptr where the driver lacks it): launches with attributes, for programmatic
  // dependent launch (Kernel::launch with overlap_previous).
  PFN_cuLaunchKernelEx_v11060 cuLaunchKernelEx = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuMemcpyHtoDAsync_v3020 cuMemcpyHtoDAsync = nullptr;
  PFN_cuMemcpyDtoHAsync_v3020 cuMemcpyDtoHAsync = nullptr;
  PFN_cuMemsetD8Async_v3020 cuMemsetD8Async = nullptr;
  PFN_cuEventCreate_v2000 cuEventCreate = nullptr;
  PFN_cuEventDestroy_v4000 cuEventDestroy = nullptr;
  PFN_cuEventRecord_v2000 cuEventRecord = nullptr;
  PFN_cuEventSynchronize_v2000 cuEventSynchronize = nullptr;
  PFN_cuEventElapsedTime_v2000 cuEventElapsedTime = nullptr;  // same signature as _v12080
  // Optional (nullptr where the driver lacks them; GpuContext::graphs): stream capture into a
  // CUDA graph and its replay, for KernelGraph. cuGraphInstantiateWithFlags is what the headers'
  // cuGraphInstantiate means since CUDA 12 (cuda.h #defines one to the other).
  PFN_cuStreamBeginCapture_v10010 cuStreamBeginCapture = nullptr;  // with a capture mode
  PFN_cuStreamEndCapture_v10000 cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiateWithFlags_v11040 cuGraphInstantiateWithFlags = nullptr;
  PFN_cuGraphLaunch_v10000 cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy_v10000 cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy_v10000 cuGraphDestroy = nullptr;

  CUcontext context = nullptr;  // the primary context of device 0, once retained

  // Makes the context current on the calling thread (loading and launching may happen on a
  // thread other than the one that opened the context). Cheap: a thread-local store in the driver.
  CUresult bind() const { return context == nullptr ? CUDA_SUCCESS : cuCtxSetCurrent(context); }
};

}  // namespace spmmc
