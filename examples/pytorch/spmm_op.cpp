// A PyTorch custom operator around one spmmc-emitted kernel: torch.ops.spmmc_example.pruned_fc(B)
// returns C = A · B for the A compiled into pruned_fc.cu, on B's device and PyTorch's current
// stream. Registered with TORCH_LIBRARY, so the library needs neither pybind11 nor Python headers:
// load it with torch.ops.load_library(path). Built by run_example.py (see README.md). The element
// type follows the kernel's --dtype: build with -DSPMMC_EXAMPLE_FP16 or -DSPMMC_EXAMPLE_BF16 for a
// kernel compiled with --dtype fp16 or bf16 (the header's prototype takes __half or __nv_bfloat16).
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include "pruned_fc.h"  // emitted by: spmmc compile WEIGHTS --name pruned_fc ...

namespace {

#if defined(SPMMC_EXAMPLE_FP16)
using Elem = __half;  // the kernel's B and C
using TorchElem = at::Half;
constexpr at::ScalarType kType = at::kHalf;
#elif defined(SPMMC_EXAMPLE_BF16)
using Elem = __nv_bfloat16;
using TorchElem = at::BFloat16;
constexpr at::ScalarType kType = at::kBFloat16;
#else
using Elem = float;
using TorchElem = float;
constexpr at::ScalarType kType = at::kFloat;
#endif

at::Tensor pruned_fc_op(const at::Tensor& b) {
  const spmmc_kernel_info* info = pruned_fc_info();
  TORCH_CHECK(info->abi_version == SPMMC_KERNEL_ABI_VERSION, "pruned_fc: kernel ABI ", info->abi_version,
              ", header ABI ", SPMMC_KERNEL_ABI_VERSION);
  TORCH_CHECK(b.is_cuda(), "pruned_fc: B must be a CUDA tensor");
  TORCH_CHECK(b.scalar_type() == kType, "pruned_fc: B must be ", kType, " (the kernel's ", info->dtype, "), not ",
              b.scalar_type());
  TORCH_CHECK(b.dim() == 2 && b.size(0) == info->k, "pruned_fc: B must be ", info->k, " x n, not ", b.sizes());
  TORCH_CHECK(b.size(1) >= 1, "pruned_fc: B needs at least one column");
  const c10::cuda::CUDAGuard device(b.device());  // launch on B's GPU
  const at::Tensor b_rows = b.contiguous();        // the kernel reads B row-major, K x n
  at::Tensor c = at::empty({info->m, b.size(1)}, b.options());  // every element is written
  // at::Half and at::BFloat16 have the layout of __half and __nv_bfloat16 (16 bits of the same format).
  const cudaError_t status = pruned_fc(reinterpret_cast<const Elem*>(b_rows.data_ptr<TorchElem>()),
                                       reinterpret_cast<Elem*>(c.data_ptr<TorchElem>()), b.size(1),
                                       c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(status == cudaSuccess, "pruned_fc: ", cudaGetErrorString(status));
  return c;  // b_rows stays alive until here; the caching allocator orders its reuse on the stream
}

}  // namespace

TORCH_LIBRARY(spmmc_example, m) { m.def("pruned_fc(Tensor b) -> Tensor"); }
TORCH_LIBRARY_IMPL(spmmc_example, CUDA, m) { m.impl("pruned_fc", &pruned_fc_op); }
