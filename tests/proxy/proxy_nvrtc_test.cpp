// Proxies and real kernels compile with NVRTC to sm_90 cubins: no GPU needed.
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include "codegen/emit_unrolled_kernel.h"
#include "codegen/embedded_templates.h"
#include "compiler/formats/generate_matrix.h"
#include "proxy/build_proxy.h"
#include "runtime/nvrtc_compile.h"

namespace spmmc {
namespace {

void check_cubin(const Cubin& cubin, const std::string& symbol) {
  REQUIRE(cubin.image.size() > 4);
  CHECK(cubin.image.compare(0, 4, "\x7f" "ELF") == 0);
  CHECK(cubin.image.find(symbol) != std::string::npos);
}

Csr layer() {
  GeneratorOptions g;
  g.rows = 96;
  g.cols = 80;
  g.sparsity = 0.9;
  g.seed = 5;
  return generate_matrix(g);
}

}  // namespace

TEST_CASE("proxy nvrtc: the bare templates compile on their own", "[proxy][nvrtc]") {
  check_cubin(compile_to_cubin({"proxy.cu", std::string(embedded_template("proxy.cu"))}, {}), kProxySymbol);
  NvrtcOptions with_templates;
  with_templates.flags = {"-I" SPMMC_SOURCE_DIR "/codegen/templates"};
  check_cubin(compile_to_cubin({"kernel_nvrtc.cu", std::string(embedded_template("kernel_nvrtc.cu"))}, with_templates),
              "spmmc_template_kernel_0");
}

TEST_CASE("proxy nvrtc: a proxy per launch-bound class and V compiles to a cubin", "[proxy][nvrtc]") {
  const Csr a = layer();
  for (const auto& [threads, min_blocks, v] : {std::tuple{256, 4, 1}, std::tuple{1024, 1, 1}, std::tuple{512, 2, 2},
                                              std::tuple{256, 4, 4}}) {
    INFO(threads << " threads, " << min_blocks << " blocks per SM, V = " << v);
    ProxyRequest request;
    request.max_threads = threads;
    request.min_blocks = min_blocks;
    request.cols_per_thread = v;
    request.max_clusters = 6;
    const ProxyKernel p = build_proxy(a, tile_rows(a, 8, ReorderMethod::kColumnOverlap), request);
    const Cubin cubin = compile_to_cubin({p.name, p.cu}, {});
    check_cubin(cubin, kProxySymbol);
    CHECK(cubin.log.find("warning") == std::string::npos);
  }
}

TEST_CASE("proxy nvrtc: the NVRTC form of a real kernel compiles to a cubin", "[proxy][nvrtc]") {
  const Csr a = layer();
  TileCandidate tile;
  tile.m1 = 4;
  tile.n1 = 128;
  EmitOptions emit;
  emit.name = "candidate_m4_n128";
  emit.nvrtc_form = true;
  emit.fmas_per_kernel = 64;  // several kernels, each given C linkage
  const EmittedKernel k = emit_unrolled_kernel(a, tile_rows(a, 4, ReorderMethod::kColumnOverlap), tile, emit);
  REQUIRE(k.kernel_symbols.size() > 1);
  CHECK(k.kernel_symbols.front() == "candidate_m4_n128_kernel_0");
  CHECK(k.nvrtc_cu.find("#include") == std::string::npos);
  const Cubin cubin = compile_to_cubin({emit.name + ".cu", k.nvrtc_cu}, {});
  for (const std::string& symbol : k.kernel_symbols) check_cubin(cubin, symbol);
}

}  // namespace spmmc
