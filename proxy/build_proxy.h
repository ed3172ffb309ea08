// Proxy construction (LO-SpMM §5.1): the source of the proxy kernel that stands for every real
// candidate with one M1, one V and one set of launch bounds, built by the three reductions:
//  * kernel function reduction: N1 and the grid are run-time arguments (proxy/templates/proxy.cu);
//  * thread-block function reduction: the block functions are clustered on (loads, FMAs) and
//    each cluster becomes one proxy block function, built from its centroid; a table maps
//    blockIdx.x to its cluster;
//  * loop block reduction: each proxy block function runs NNC_P = min(NNC, 300 / (1 - sparsity))
//    proxy iterations of one global load plus the cluster's average FMAs per load.
// Each proxy block function is a TileProgram printed by the real kernel's printer
// (codegen/print_tile_ptx.h), so proxies follow the kernel's design: inline PTX, V columns per
// thread, the real launch bounds.
// See docs/design/proxies.md for the choices the paper leaves open.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/csr.h"
#include "compiler/planning/reorder_rows.h"
#include "proxy/cluster_block_functions.h"

namespace spmmc {

struct ProxyRequest {
  int32_t max_threads = 256;   // launch bounds: the most threads per block it is launched with
  int32_t min_blocks = 1;      // launch bounds: blocks per SM (the real kernels' register budget)
  int32_t cols_per_thread = 1; // V: float, float2 or float4 loads of B and stores of C
  int32_t max_clusters = 1;    // 3 x max(NUM_ATB) over the candidates it stands for
};

struct ProxyBlockFunction {
  int64_t loads = 0;   // NNC_P: proxy iterations (one load each)
  int64_t fmas = 0;    // FMAs over all iterations
  int32_t rows = 0;    // accumulators and stores
};

struct ProxyKernel {
  std::string name;                          // "proxy_m16_v1_t256_b4.cu" (for logs and errors)
  std::string cu;                            // self-contained source for NVRTC
  std::vector<std::string> nvrtc_options;    // how to compile it: as the real unrolled kernels are
  int32_t m1 = 0;
  int32_t max_threads = 0;
  int32_t min_blocks = 1;
  int32_t cols_per_thread = 1;
  int64_t iteration_cap = 0;                 // floor(300 / (1 - sparsity))
  std::vector<BlockFunction> real_functions; // of the real kernel: blockIdx.x -> features
  BlockClustering clustering;                // cluster_of is the launch's cluster table
  std::vector<ProxyBlockFunction> functions; // one per cluster
  // Per thread, summed over all blocks' functions: what the proxy does against the real kernel.
  int64_t real_loads = 0, real_fmas = 0, proxy_loads = 0, proxy_fmas = 0;
};

// The symbol of every proxy kernel: extern "C" spmmc_proxy(const float* B, float* C, int64_t n,
// int n1, const int* cluster_of_tile), launched with n1 / V threads per block. C must hold
// (blockIdx.x range) x M1 rows of n floats; n must be a multiple of V.
inline constexpr const char* kProxySymbol = "spmmc_proxy";

// Builds the proxy for the real kernels of `tiling` (its M1). Deterministic.
ProxyKernel build_proxy(const Csr& a, const RowTiling& tiling, const ProxyRequest& request);

// The proxy's code against the real kernel's: the loads and FMAs of its block functions (one per
// cluster) over those of the real tiles (one function each). Near 1 where the clusters keep every
// tile (few tiles, many blocks per SM): such a proxy is as large as the real code, in one function.
double proxy_code_share(const ProxyKernel& p);

}  // namespace spmmc
