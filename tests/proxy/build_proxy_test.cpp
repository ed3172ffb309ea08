// Proxy construction (proxy/): block features, Ward clustering, loop truncation, occupancy
// alignment and the generated source. NVRTC compilation of proxies is in proxy_nvrtc_test.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "codegen/emit_unrolled_kernel.h"
#include "compiler/formats/generate_matrix.h"
#include "proxy/align_occupancy.h"
#include "proxy/block_features.h"
#include "proxy/build_proxy.h"
#include "proxy/cluster_block_functions.h"
#include "tests/test_util.h"

namespace spmmc {
namespace {

Csr uniform(int64_t rows, int64_t cols, double sparsity, uint64_t seed) {
  GeneratorOptions g;
  g.rows = rows;
  g.cols = cols;
  g.sparsity = sparsity;
  g.seed = seed;
  return generate_matrix(g);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

std::vector<BlockFunction> points(const std::vector<std::pair<int64_t, int64_t>>& xy) {
  std::vector<BlockFunction> out;
  for (auto [x, y] : xy) {
    BlockFunction f;
    f.loads = x;
    f.fmas = y;
    f.rows = 1;
    out.push_back(f);
  }
  return out;
}

// Textbook greedy Ward agglomeration (O(n^3)) on distinct points, as the reference partition.
std::vector<std::set<int>> naive_ward(const std::vector<std::pair<double, double>>& xy, int k) {
  struct C { double x, y, w; std::set<int> members; };
  std::vector<C> cs;
  for (int i = 0; i < static_cast<int>(xy.size()); ++i) cs.push_back({xy[i].first, xy[i].second, 1.0, {i}});
  while (static_cast<int>(cs.size()) > k) {
    double best = std::numeric_limits<double>::infinity();
    size_t bi = 0, bj = 0;
    for (size_t i = 0; i < cs.size(); ++i)
      for (size_t j = i + 1; j < cs.size(); ++j) {
        const double dx = cs[i].x - cs[j].x, dy = cs[i].y - cs[j].y;
        const double cost = cs[i].w * cs[j].w / (cs[i].w + cs[j].w) * (dx * dx + dy * dy);
        if (cost < best) best = cost, bi = i, bj = j;
      }
    C m{(cs[bi].x * cs[bi].w + cs[bj].x * cs[bj].w) / (cs[bi].w + cs[bj].w),
        (cs[bi].y * cs[bi].w + cs[bj].y * cs[bj].w) / (cs[bi].w + cs[bj].w), cs[bi].w + cs[bj].w, cs[bi].members};
    m.members.insert(cs[bj].members.begin(), cs[bj].members.end());
    cs.erase(cs.begin() + static_cast<std::ptrdiff_t>(bj));
    cs[bi] = m;
  }
  std::vector<std::set<int>> out;
  for (auto& c : cs) out.push_back(c.members);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("proxy: block features equal what the emitter writes", "[proxy]") {
  for (int32_t m1 : {1, 3, 8, 32}) {
    Csr a = uniform(70, 90, 0.9, 7);
    // Some empty rows, so that zero tiles exist too.
    for (int32_t r : {5, 6, 40})
      for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) a.values[p] = 0.0f;
    a = test::csr_from_dense(a.rows, a.cols, [&] {
      std::vector<float> d(static_cast<size_t>(a.rows) * a.cols, 0.0f);
      for (int32_t r = 0; r < a.rows; ++r)
        for (int32_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) d[static_cast<size_t>(r) * a.cols + a.col_idx[p]] = a.values[p];
      return d;
    }());
    for (ReorderMethod method : {ReorderMethod::kNone, ReorderMethod::kColumnOverlap}) {
      const RowTiling tiling = tile_rows(a, m1, method);
      TileCandidate tile;
      tile.m1 = m1;
      EmitOptions emit;
      emit.name = "layer";
      const EmittedKernel k = emit_unrolled_kernel(a, tiling, tile, emit);
      const auto functions = block_functions(a, tiling);
      int64_t loads = 0, fmas = 0, rows = 0;
      for (const auto& f : functions) loads += f.loads, fmas += f.fmas, rows += f.rows;
      CAPTURE(m1, reorder_method_name(method));
      CHECK(static_cast<int32_t>(functions.size()) == k.tiles);
      CHECK(loads == k.loads);
      CHECK(fmas == k.fmas);
      CHECK(rows == a.rows);
    }
  }
}

TEST_CASE("proxy: Ward clustering of two obvious groups, centroids and medoids", "[proxy][cluster]") {
  const auto fs = points({{1, 1}, {1, 2}, {10, 10}, {11, 10}, {1, 1}});
  const BlockClustering c = cluster_block_functions(fs, 2);
  REQUIRE(c.clusters.size() == 2);
  CHECK(c.cluster_of == std::vector<int32_t>{0, 0, 1, 1, 0});
  CHECK(c.clusters[0].members == 3);
  CHECK(c.clusters[0].loads == Approx(1.0));
  CHECK(c.clusters[0].fmas == Approx(4.0 / 3.0));
  CHECK(c.clusters[0].medoid == 0);  // (1,1) is nearest (1, 1.33); the lowest index wins the tie with 4
  CHECK(c.clusters[1].loads == Approx(10.5));
  CHECK(c.clusters[1].medoid == 2);  // equidistant: lowest index
}

TEST_CASE("proxy: the cluster count is min(max_clusters, distinct feature points)", "[proxy][cluster]") {
  const auto fs = points({{3, 3}, {3, 3}, {3, 3}, {4, 9}});
  CHECK(cluster_block_functions(fs, 10).clusters.size() == 2);
  CHECK(cluster_block_functions(fs, 1).clusters.size() == 1);
  CHECK(cluster_block_functions(fs, 1).cluster_of == std::vector<int32_t>{0, 0, 0, 0});
  CHECK_THROWS_AS(cluster_block_functions(fs, 0), InternalError);
}

TEST_CASE("proxy: nearest-neighbour-chain Ward equals the textbook greedy agglomeration", "[proxy][cluster]") {
  std::mt19937 gen(3);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 5 + trial % 30;
    std::set<std::pair<int64_t, int64_t>> distinct;
    // A wide range: equal merge costs (ties, where both orders are valid Ward) are unlikely.
    std::uniform_int_distribution<int64_t> dist(0, 1000000);
    while (static_cast<int>(distinct.size()) < n) distinct.insert({dist(gen), dist(gen) * 3});
    std::vector<std::pair<int64_t, int64_t>> xy(distinct.begin(), distinct.end());
    std::shuffle(xy.begin(), xy.end(), gen);
    for (int k : {1, 2, 3, n / 2, n - 1}) {
      if (k < 1) continue;
      const BlockClustering c = cluster_block_functions(points(xy), k);
      std::map<int32_t, std::set<int>> groups;
      for (int i = 0; i < n; ++i) groups[c.cluster_of[i]].insert(i);
      std::vector<std::set<int>> got;
      for (auto& [id, g] : groups) got.push_back(g);
      std::sort(got.begin(), got.end());
      std::vector<std::pair<double, double>> xyd;
      for (auto [x, y] : xy) xyd.emplace_back(static_cast<double>(x), static_cast<double>(y));
      CAPTURE(trial, n, k);
      CHECK(got == naive_ward(xyd, k));
    }
  }
}

TEST_CASE("proxy: clustering 20000 block functions stays fast", "[proxy][cluster]") {
  std::vector<std::pair<int64_t, int64_t>> xy;
  for (int i = 0; i < 20000; ++i) xy.emplace_back(i % 1500, (i * 7919) % 4000);
  const BlockClustering c = cluster_block_functions(points(xy), 48);
  CHECK(c.clusters.size() == 48);
}

TEST_CASE("proxy: loop block reduction truncates to 300 / (1 - sparsity) iterations", "[proxy]") {
  // A dense 4 x 1000 matrix: sparsity 0, so NNC_P = min(1000, 300) = 300 for its one tile.
  std::vector<float> dense(4 * 1000);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = 0.25f + static_cast<float>(i % 7);
  const Csr a = test::csr_from_dense(4, 1000, dense);
  const RowTiling tiling = tile_rows(a, 4, ReorderMethod::kNone);
  ProxyRequest request;
  request.max_clusters = 5;
  const ProxyKernel p = build_proxy(a, tiling, request);
  CHECK(p.iteration_cap == 300);
  REQUIRE(p.functions.size() == 1);
  CHECK(p.functions[0].loads == 300);
  CHECK(p.functions[0].fmas == 1200);  // 4 FMAs per load, as in the real tile
  CHECK(p.functions[0].rows == 4);
  // Printed as the real tiles are (inline PTX): one load of B per iteration, the FMAs with
  // immediate weights, one store per row.
  CHECK(count(p.cu, "ld.global.nc.f32 ") == 300);
  CHECK(count(p.cu, "fma.rn.f32 ") == 1200);
  CHECK(count(p.cu, "st.global.f32 ") == 4);
  CHECK(p.real_loads == 1000);
  CHECK(p.proxy_loads == 300);
}

// The proxy of a 512 x 512 layer at 0.9 in 4-row tiles (128 tiles), 512 threads, at most
// `max_clusters` block functions.
ProxyKernel sparse_layer_proxy(int32_t max_clusters) {
  const Csr a = uniform(512, 512, 0.9, 11);
  ProxyRequest request;
  request.max_threads = 512;
  request.max_clusters = max_clusters;
  return build_proxy(a, tile_rows(a, 4, ReorderMethod::kColumnOverlap), request);
}

TEST_CASE("proxy: a sparse layer keeps its whole loop and at most max_clusters block functions", "[proxy]") {
  const ProxyKernel p = sparse_layer_proxy(12);
  CHECK(p.iteration_cap == 3000);
  CHECK(p.clustering.clusters.size() == 12);
  CHECK(p.functions.size() == 12);
  CHECK(count(p.cu, "__device__ __forceinline__ void spmmc_tile_") == 12);
  CHECK(count(p.cu, "case ") == 12);
  CHECK(p.cu.find("spmmc_max_threads = 512;") != std::string::npos);
  CHECK(p.cu.find("spmmc_m1 = 4;") != std::string::npos);
  CHECK(p.name == "proxy_m4_v1_t512_b1.cu");
  // Not truncated (NNC <= K < 3000): every cluster's proxy loads round its centroid, so the
  // proxy's total loads are within rounding of the real kernel's.
  CHECK(std::abs(static_cast<double>(p.proxy_loads - p.real_loads)) <= 0.5 * static_cast<double>(p.real_functions.size()));
  CHECK(std::abs(static_cast<double>(p.proxy_fmas - p.real_fmas)) <= 0.02 * static_cast<double>(p.real_fmas) + 8);
  for (size_t c = 0; c < p.functions.size(); ++c) {
    CHECK(p.functions[c].loads == std::llround(p.clustering.clusters[c].loads));
    CHECK(p.functions[c].fmas >= p.functions[c].loads);
    CHECK(p.functions[c].fmas <= p.functions[c].loads * p.functions[c].rows);
  }
  // Deterministic.
  CHECK(sparse_layer_proxy(12).cu == p.cu);
}

TEST_CASE("proxy: its code share is the clusters' loads and FMAs over the real tiles'", "[proxy]") {
  // 512 rows in 4-row tiles: 128 tiles. 12 clusters keep about a tenth of the code; one cluster
  // per distinct (loads, FMAs) point keeps most of it (such a proxy --tune proxy replaces by the
  // real kernels: kRealInsteadOfProxyShare = 0.5).
  const ProxyKernel few = sparse_layer_proxy(12);
  int64_t proxy = 0, real = 0;
  for (const ProxyBlockFunction& f : few.functions) proxy += f.loads + f.fmas;
  for (const BlockFunction& f : few.real_functions) real += f.loads + f.fmas;
  CHECK(proxy_code_share(few) == Approx(static_cast<double>(proxy) / static_cast<double>(real)));
  CHECK(proxy_code_share(few) > 0.05);
  CHECK(proxy_code_share(few) < 0.15);
  const ProxyKernel all = sparse_layer_proxy(1 << 20);
  CHECK(all.functions.size() == all.clustering.clusters.size());
  CHECK(all.functions.size() > 100);  // of 128 tiles; equal features share a cluster
  CHECK(proxy_code_share(all) > 0.5);
  CHECK(proxy_code_share(all) <= 1.0);
}

TEST_CASE("proxy: V columns per thread and the real launch bounds", "[proxy]") {
  // The proxy of candidates with V = 4 and __launch_bounds__(256, 4): float4 loads and stores,
  // the same launch bounds, as many loads and FMAs as with V = 1 (per thread, per group of V
  // columns).
  const Csr a = uniform(128, 256, 0.8, 5);
  const RowTiling tiling = tile_rows(a, 8, ReorderMethod::kColumnOverlap);
  ProxyRequest request;
  request.max_threads = 256;
  request.min_blocks = 4;
  request.max_clusters = 6;
  request.cols_per_thread = 4;
  const ProxyKernel p4 = build_proxy(a, tiling, request);
  request.cols_per_thread = 1;
  const ProxyKernel p1 = build_proxy(a, tiling, request);
  CHECK(p4.name == "proxy_m8_v4_t256_b4.cu");
  CHECK(p4.cu.find("spmmc_v = 4;") != std::string::npos);
  CHECK(p4.cu.find("spmmc_min_blocks = 4;") != std::string::npos);
  CHECK(p4.cu.find("__launch_bounds__(spmmc_max_threads, spmmc_min_blocks)") != std::string::npos);
  size_t loads = 0, fmas = 0;
  for (const ProxyBlockFunction& f : p4.functions) loads += static_cast<size_t>(f.loads), fmas += static_cast<size_t>(f.fmas);
  CHECK(count(p4.cu, "ld.global.nc.v4.f32 ") == loads);
  CHECK(count(p4.cu, "ld.global.nc.f32 ") == 0);
  CHECK(count(p1.cu, "ld.global.nc.f32 ") == loads);
  CHECK(count(p4.cu, "fma.rn.f32 ") == 4 * fmas);  // one FMA per lane
  CHECK(count(p1.cu, "fma.rn.f32 ") == fmas);
  CHECK(p4.proxy_loads == p1.proxy_loads);
  // A request outside the tile space is a bug of the caller.
  request.cols_per_thread = 3;
  CHECK_THROWS(build_proxy(a, tiling, request));
}

TEST_CASE("proxy: occupancy alignment follows Eq. 5 and 6", "[proxy][occupancy]") {
  SmResources h100;
  h100.sm_count = 132;
  h100.registers_per_sm = 65536;
  h100.max_threads_per_sm = 2048;
  h100.max_blocks_per_sm = 32;
  h100.shared_memory_per_sm = 233472;
  h100.reserved_shared_memory_per_block = 1024;
  h100.max_shared_memory_per_block = 232448;
  // 200 registers x 128 threads: 6400 registers per warp, 10 warps fit, 4 per block -> 2 blocks.
  OccupancyAlignment o = align_occupancy(h100, 100000, 128, 200, 0);
  CHECK(o.real_blocks_per_sm == 2);
  CHECK(o.dynamic_shared_bytes == 233472 / 2 - 1024);
  // Few blocks: ceil(150 / 132) = 2 bounds NUM_ATB.
  o = align_occupancy(h100, 150, 64, 32, 0);
  CHECK(o.real_blocks_per_sm == 2);
  CHECK(o.dynamic_shared_bytes == 233472 / 2 - 1024);
  // One block per SM: the whole per-block limit, less static shared memory.
  o = align_occupancy(h100, 132, 1024, 64, 512);
  CHECK(o.real_blocks_per_sm == 1);
  CHECK(o.dynamic_shared_bytes == 232448 - 512);
  // Occupancy already at the thread limit (256 threads, 32 registers): no padding.
  o = align_occupancy(h100, 100000, 256, 32, 0);
  CHECK(o.real_blocks_per_sm == 8);
  CHECK(o.dynamic_shared_bytes == 0);
  // Registers allocated in units of 256 per warp: 33 registers -> 1280 per warp.
  o = align_occupancy(h100, 100000, 256, 33, 0);
  CHECK(o.real_blocks_per_sm == 6);  // 65536 / 1280 = 51 warps, 8 per block
}

}  // namespace spmmc
