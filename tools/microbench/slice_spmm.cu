// Issue 27: B's slice in shared memory for the layers the warp per row leaves L2-bound at n = 128-2048
// (docs/design/small-n.md, *B's slice in shared memory*). Reads a DLMC .smtx file (its pattern; weights
// and B seeded), then times, on the same data and with L2 flushed before every run:
//   warp-row       the generic path's warp per row (blocks of 8 warps, V columns per lane, 32 products'
//                  columns and weights loaded at a time and handed round by shuffles, 8 loads of B in
//                  flight): every product reads its row of B from L2
//   slice R V KC   blocks of R rows of A (consecutive rows) x 32V columns of C: the union of the R rows'
//                  columns is staged, KC of B's rows at a time (two buffers, cp.async), in shared memory,
//                  and each row's products read B from there; 8 warps (or 16, where named), R / warps
//                  rows a warp (dealt longest first), each row's products in column order; A's
//                  columns and weights read from global memory per row and chunk (the first form)
//   slice+A R V KC the same with each chunk's products staged beside B's rows (the second form)
//   cuSPARSE       each SpMM algorithm that takes row-major B and C, preprocessing untimed
// Every spmmc variant sums each row's products in column order from +0, so all must agree bit for bit
// with warp-row; each is also checked against a float64 reference. One Markdown table on stdout.
//
// With --emulate, no GPU: both forms' tables are walked on the host as the kernels walk them and each row's
// sum compared bit for bit with its products in column order (the CPU-side test of the schedule).
//
// usage: slice_spmm FILE.smtx N [--runs R] [--warmup W]     N a multiple of 32; exit 0, 1 mismatch, 64, 69, 70
//        slice_spmm --emulate FILE.smtx                     exit 0 the tables agree, 1 they do not, 64
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "common.cuh"
#include "cusparse_peer.cuh"
#include "smtx.cuh"

namespace {

constexpr int kWarps = 8;  // warps per block of the warp per row, and of the slice kernel unless given

// V adjacent floats of a staged row (shared memory); load_b and store_c (global memory): smtx.cuh.
template <int V>
__device__ __forceinline__ void load_shared(const float* p, float (&r)[V]) {
  if constexpr (V == 4) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    r[0] = t.x, r[1] = t.y, r[2] = t.z, r[3] = t.w;
  } else if constexpr (V == 2) {
    const float2 t = *reinterpret_cast<const float2*>(p);
    r[0] = t.x, r[1] = t.y;
  } else {
    r[0] = *p;
  }
}

// Products [p, end) of one row for a lane's V columns, in order; `at(k)` gives B's row (global
// memory) or the staged row (shared memory) of column index k. 8 loads in flight.
template <int V, bool Shared, class At>
__device__ __forceinline__ void row_sum(int p, int end, const int* __restrict__ cols, const float* __restrict__ ws, At at,
                                        int lane, float (&acc)[V]) {
  for (; p < end; p += 32) {
    const int count = min(32, end - p);
    const int my_k = lane < count ? __ldg(&cols[p + lane]) : 0;
    const float my_w = lane < count ? __ldg(&ws[p + lane]) : 0.0f;
    int j = 0;
    for (; j + 8 <= count; j += 8) {
      float b[8][V], w[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int k = __shfl_sync(0xffffffffu, my_k, j + u);
        w[u] = __shfl_sync(0xffffffffu, my_w, j + u);
        if constexpr (Shared) load_shared<V>(at(k), b[u]);
        else load_b<V>(at(k), b[u]);
      }
#pragma unroll
      for (int u = 0; u < 8; ++u)
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = fmaf(w[u], b[u][v], acc[v]);
    }
    for (; j < count; ++j) {
      const int k = __shfl_sync(0xffffffffu, my_k, j);
      const float w = __shfl_sync(0xffffffffu, my_w, j);
      float b[V];
      if constexpr (Shared) load_shared<V>(at(k), b);
      else load_b<V>(at(k), b);
#pragma unroll
      for (int v = 0; v < V; ++v) acc[v] = fmaf(w, b[v], acc[v]);
    }
  }
}

template <int V>
__global__ void __launch_bounds__(32 * kWarps) warp_row(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                        const float* __restrict__ ws, int m, const float* __restrict__ B,
                                                        float* __restrict__ C, int64_t n) {
  const int lane = threadIdx.x & 31, row = blockIdx.x * kWarps + (threadIdx.x >> 5);
  if (row >= m) return;
  const int64_t col = int64_t(blockIdx.y) * 32 * V + lane * V;
  float acc[V];
  for (int v = 0; v < V; ++v) acc[v] = 0.0f;
  row_sum<V, false>(row_ptr[row], row_ptr[row + 1], cols, ws, [&](int k) { return B + int64_t(k) * n + col; }, lane, acc);
  store_c<V>(C + int64_t(row) * n + col, acc);
}

// One block of the slice kernel: its slots' rows at rows[rows_at + slot] (-1: none), its staged columns
// unions[union_at, + union_count) (ascending), chunks = ceil(union_count / KC) of them staged at a time.
// First form: slot s's product offsets of each chunk at seg[seg_at + s * (chunks + 1) + c], the products'
// columns there indices into the block's union (lcol), their weights lw. Second form: chunk c is one record
// of int2 at records[chunk_start[chunk_at + c], chunk_start[chunk_at + c + 1]): R + 1 offsets (.x) into the
// record, slot s's products between offsets s and s + 1, then the products (.x the staged row within the
// chunk, .y the weight's bits).
struct SliceBlock {
  int rows_at, union_at, union_count, seg_at, chunk_at;
};

// (cp_async16 and its groups: smtx.cuh)
__device__ __forceinline__ void cp_async8(void* dst, const void* src) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(src));
}

// Blocks of R = RPW x Warps rows x 32V columns (blockIdx.y), B's union rows staged KC at a time in two buffers.
// StagedA false (the first form): a warp reads its rows' products of a chunk from global memory (seg, lcol,
// lw), 32 at a time handed round by shuffles. StagedA true (the second form): each chunk's record is staged
// beside B's rows (`max_record`: the longest, in int2), and a warp reads its products from shared memory, a
// broadcast load each. Either way each row's products are summed in column order from +0.
template <int V, int RPW, int KC, bool StagedA, int Warps = kWarps>
__global__ void __launch_bounds__(32 * Warps) slice_kernel(const SliceBlock* __restrict__ blocks, const int* __restrict__ rows,
                                                            const int* __restrict__ unions, const int* __restrict__ seg,
                                                            const int* __restrict__ lcol, const float* __restrict__ lw,
                                                            const int* __restrict__ chunk_start, const int2* __restrict__ records,
                                                            int max_record, const float* __restrict__ B, float* __restrict__ C,
                                                            int64_t n) {
  extern __shared__ float4 smem4[];
  constexpr int W = 32 * V, kPieces = W / 4;                     // floats and 16-byte pieces per staged row
  float* const buf = reinterpret_cast<float*>(smem4);           // two buffers of KC x W floats
  int2* const abuf = reinterpret_cast<int2*>(buf + 2 * KC * W);  // (StagedA) two buffers of max_record int2
  const SliceBlock blk = blocks[blockIdx.x];
  const int chunks = (blk.union_count + KC - 1) / KC;
  const int64_t c0 = int64_t(blockIdx.y) * W;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  auto stage = [&](int c) {
    float* const dst = buf + (c & 1) * KC * W;
    const int first = c * KC, count = min(KC, blk.union_count - first);
    for (int i = threadIdx.x; i < count * kPieces; i += 32 * Warps) {
      const int r = i / kPieces, q = i % kPieces;
      cp_async16(dst + r * W + q * 4, B + int64_t(__ldg(&unions[blk.union_at + first + r])) * n + c0 + q * 4);
    }
    if constexpr (StagedA) {
      const int begin = __ldg(&chunk_start[blk.chunk_at + c]), end = __ldg(&chunk_start[blk.chunk_at + c + 1]);
      for (int i = threadIdx.x; i < end - begin; i += 32 * Warps) cp_async8(abuf + (c & 1) * max_record + i, records + begin + i);
    }
    cp_async_commit();
  };
  float acc[RPW][V];
#pragma unroll
  for (int j = 0; j < RPW; ++j)
#pragma unroll
    for (int v = 0; v < V; ++v) acc[j][v] = 0.0f;
  if (chunks > 0) stage(0);
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) {
      stage(c + 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const float* const tile = buf + (c & 1) * KC * W + lane * V;
#pragma unroll
    for (int j = 0; j < RPW; ++j) {
      const int slot = warp + Warps * j;
      if constexpr (StagedA) {
        const int2* const rec = abuf + (c & 1) * max_record;
        int p = rec[slot].x;
        const int end = rec[slot + 1].x;
        for (; p + 8 <= end; p += 8) {
          float b[8][V], w[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) {
            const int2 q = rec[p + u];
            w[u] = __int_as_float(q.y);
            load_shared<V>(tile + q.x * W, b[u]);
          }
#pragma unroll
          for (int u = 0; u < 8; ++u)
#pragma unroll
            for (int v = 0; v < V; ++v) acc[j][v] = fmaf(w[u], b[u][v], acc[j][v]);
        }
        for (; p < end; ++p) {
          const int2 q = rec[p];
          float b[V];
          load_shared<V>(tile + q.x * W, b);
#pragma unroll
          for (int v = 0; v < V; ++v) acc[j][v] = fmaf(__int_as_float(q.y), b[v], acc[j][v]);
        }
      } else {
        const int* const sg = seg + blk.seg_at + slot * (chunks + 1);
        const int base = c * KC;
        row_sum<V, true>(__ldg(&sg[c]), __ldg(&sg[c + 1]), lcol, lw, [&](int k) { return tile + (k - base) * W; }, lane, acc[j]);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < RPW; ++j) {
    const int row = __ldg(&rows[blk.rows_at + warp + Warps * j]);
    if (row >= 0) store_c<V>(C + int64_t(row) * n + c0 + lane * V, acc[j]);
  }
}

// The slice kernel's tables for blocks of R consecutive rows (dealt to `warps` warps) and chunks of KC
// staged rows, both forms.
struct SliceTables {
  std::vector<SliceBlock> blocks;
  std::vector<int> rows, unions, seg, lcol;
  std::vector<float> lw;
  std::vector<int> chunk_start;
  std::vector<int2> records;
  int max_record = 0;             // the longest record, int2
  double staged_per_product = 0;  // staged rows of B over products (the L2 reads per product, relative)
};

// The shapes the GPU run times and --emulate walks: a slice_kernel instantiation with its R (= RPW x warps), V,
// KC, form and warps. KC: B's two buffers of 32 KiB together (V = 1: 128 rows, 2: 64, 4: 32) or of 64 KiB
// (twice). The first form at its best shapes of 2026-12-07 (docs/benchmarks.md), for reference; the second at
// R = 16-64, some in blocks of 16 warps (half the rows a warp). A shape runs where its 32V columns divide n.
using SliceKernel = void (*)(const SliceBlock*, const int*, const int*, const int*, const int*, const float*, const int*,
                             const int2*, int, const float*, float*, int64_t);
struct SliceShape {
  SliceKernel kernel;
  int R, V, KC;
  bool staged_a;
  int warps;
};
template <int V, int RPW, int KC, bool StagedA, int Warps = kWarps>
SliceShape shape() {
  return {slice_kernel<V, RPW, KC, StagedA, Warps>, RPW * Warps, V, KC, StagedA, Warps};
}
const SliceShape kSliceShapes[] = {
    shape<1, 2, 128, false>(), shape<1, 2, 128, true>(),      shape<1, 4, 128, true>(),     shape<1, 8, 128, true>(),
    shape<1, 2, 256, true>(),  shape<1, 4, 256, true>(),      shape<1, 2, 128, true, 16>(), shape<1, 4, 128, true, 16>(),
    shape<2, 2, 128, false>(), shape<2, 2, 64, true>(),       shape<2, 4, 64, true>(),      shape<2, 8, 64, true>(),
    shape<2, 4, 128, true>(),  shape<4, 2, 32, true>(),       shape<4, 4, 32, true>(),      shape<4, 8, 32, true>(),
    shape<4, 4, 64, true>(),   shape<4, 2, 32, true, 16>()};

// A float's bits (the records' weights).
int float_bits(float f) {
  int i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}

SliceTables slice_tables(const Csr& a, int R, int KC, int warps = kWarps) {
  SliceTables t;
  long staged = 0;
  for (int r0 = 0; r0 < a.m; r0 += R) {
    const int r1 = std::min(a.m, r0 + R);
    SliceBlock b{int(t.rows.size()), int(t.unions.size()), 0, int(t.seg.size()), int(t.chunk_start.size())};
    std::vector<int> u;
    for (int i = r0; i < r1; ++i) u.insert(u.end(), a.col.begin() + a.row_ptr[i], a.col.begin() + a.row_ptr[i + 1]);
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    b.union_count = int(u.size());
    staged += long(u.size());
    t.unions.insert(t.unions.end(), u.begin(), u.end());
    const int chunks = (b.union_count + KC - 1) / KC;
    // Rows longest first, dealt to warps in a snake (slot = warp + warps * j).
    std::vector<int> order(r1 - r0);
    std::iota(order.begin(), order.end(), r0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return a.row_ptr[x + 1] - a.row_ptr[x] > a.row_ptr[y + 1] - a.row_ptr[y]; });
    std::vector<int> slot_row(R, -1);
    for (size_t q = 0; q < order.size(); ++q) {
      const int j = int(q) / warps, w = int(q) % warps;
      slot_row[(j % 2 ? warps - 1 - w : w) + warps * j] = order[q];
    }
    for (int s = 0; s < R; ++s) {
      t.rows.push_back(slot_row[s]);
      const int i = slot_row[s], at = int(t.lcol.size());
      if (i >= 0)
        for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
          t.lcol.push_back(int(std::lower_bound(u.begin(), u.end(), a.col[p]) - u.begin())), t.lw.push_back(a.w[p]);
      for (int c = 0; c <= chunks; ++c)  // where chunk c's products start (c = chunks: the end)
        t.seg.push_back(int(std::lower_bound(t.lcol.begin() + at, t.lcol.end(), c * KC) - t.lcol.begin()));
    }
    // The second form's records: per chunk, R + 1 offsets, then each slot's products of the chunk.
    for (int c = 0; c < chunks; ++c) {
      const int at = int(t.records.size());
      t.chunk_start.push_back(at);
      t.records.resize(at + R + 1);
      for (int s2 = 0; s2 < R; ++s2) {
        t.records[at + s2].x = int(t.records.size()) - at;
        const int* sg = &t.seg[b.seg_at + s2 * (chunks + 1)];
        for (int q = sg[c]; q < sg[c + 1]; ++q) t.records.push_back(int2{t.lcol[q] - c * KC, float_bits(t.lw[q])});
      }
      t.records[at + R].x = int(t.records.size()) - at;
      t.max_record = std::max(t.max_record, int(t.records.size()) - at);
    }
    t.chunk_start.push_back(int(t.records.size()));
    t.blocks.push_back(b);
  }
  t.staged_per_product = double(staged) / std::max<size_t>(1, a.col.size());
  return t;
}

// --emulate: both forms' tables walked on the host as their kernels walk them (blocks, chunks, slots; n = 8
// columns of a seeded B), each row's sum compared bit for bit with the row's products in column order, at
// every schedule of kSliceShapes (its distinct R, KC and warps); no GPU needed. Returns the number of disagreements.
int emulate(const Csr& a) {
  constexpr int n = 8;
  std::vector<float> b(size_t(a.k) * n);
  uint32_t seed = 7;
  for (float& v : b) v = (seed = seed * 1664525u + 1013904223u) / 4294967296.0f * 2.0f - 1.0f;
  std::vector<float> ref(size_t(a.m) * n, 0.0f);
  for (int i = 0; i < a.m; ++i)
    for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
      for (int j = 0; j < n; ++j) ref[size_t(i) * n + j] = std::fmaf(a.w[p], b[size_t(a.col[p]) * n + j], ref[size_t(i) * n + j]);
  int bad = 0;
  std::vector<std::tuple<int, int, int>> walked;  // (R, KC, warps): the tables depend on nothing else
  for (const SliceShape& shape : kSliceShapes) {
    const int R = shape.R, KC = shape.KC;
    if (std::find(walked.begin(), walked.end(), std::tuple{R, KC, shape.warps}) != walked.end()) continue;
    walked.emplace_back(R, KC, shape.warps);
    const SliceTables t = slice_tables(a, R, KC, shape.warps);
    const int before = bad;
    std::vector<float> c(size_t(a.m) * n, 0.0f), first(size_t(a.m) * n, 0.0f);
    std::vector<int> stored(a.m, 0);
    for (const SliceBlock& blk : t.blocks) {
      const int chunks = (blk.union_count + KC - 1) / KC;
      for (int slot = 0; slot < R; ++slot) {
        float acc[n] = {}, acc_first[n] = {};
        for (int ch = 0; ch < chunks; ++ch) {
          const int at = t.chunk_start[blk.chunk_at + ch];
          bad += t.chunk_start[blk.chunk_at + ch + 1] - at > t.max_record;
          const int2* rec = &t.records[at];
          for (int p = rec[slot].x; p < rec[slot + 1].x; ++p) {
            bad += rec[p].x < 0 || rec[p].x >= KC || ch * KC + rec[p].x >= blk.union_count;
            float w;
            std::memcpy(&w, &rec[p].y, sizeof w);
            const int k = t.unions[blk.union_at + ch * KC + rec[p].x];
            for (int j = 0; j < n; ++j) acc[j] = std::fmaf(w, b[size_t(k) * n + j], acc[j]);
          }
          const int* seg = &t.seg[blk.seg_at + slot * (chunks + 1)];
          for (int p = seg[ch]; p < seg[ch + 1]; ++p) {
            bad += t.lcol[p] < ch * KC || t.lcol[p] >= (ch + 1) * KC;
            const int k = t.unions[blk.union_at + t.lcol[p]];
            for (int j = 0; j < n; ++j) acc_first[j] = std::fmaf(t.lw[p], b[size_t(k) * n + j], acc_first[j]);
          }
        }
        const int row = t.rows[blk.rows_at + slot];
        if (row < 0) continue;
        ++stored[row];
        std::memcpy(&c[size_t(row) * n], acc, sizeof acc);
        std::memcpy(&first[size_t(row) * n], acc_first, sizeof acc_first);
      }
    }
    for (int i = 0; i < a.m; ++i) bad += stored[i] != 1;
    bad += std::memcmp(c.data(), ref.data(), c.size() * sizeof(float)) != 0;
    bad += std::memcmp(first.data(), ref.data(), first.size() * sizeof(float)) != 0;
    std::printf("R = %d, KC = %d, %d warps: %zu blocks, longest record %d int2: %s\n", R, KC, shape.warps, t.blocks.size(), t.max_record,
                bad > before ? "DISAGREES" : "both forms give the column-order sums");
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  mb::Options o = mb::parse_options(argc, argv, " FILE.smtx N | --emulate FILE.smtx");
  if (o.rest.size() == 2 && o.rest[0] == "--emulate") return emulate(read_matrix(o.rest[1])) ? 1 : 0;
  if (o.rest.size() != 2) {
    std::fprintf(stderr, "usage: %s FILE.smtx N [--runs R] [--warmup W] | --emulate FILE.smtx\n", argv[0]);
    return mb::kExitUsage;
  }
  const long long n_arg = std::atoll(o.rest[1].c_str());
  if (n_arg < 32 || n_arg > 16384 || n_arg % 32) {
    std::fprintf(stderr, "N must be a multiple of 32 in 32..16384\n");
    return mb::kExitUsage;
  }
  const Csr a = read_matrix(o.rest[0]);
  const int64_t n = n_arg;
  mb::require_gpu(argv[0]);
  const int nnz = int(a.col.size());

  CsrStudy study(a, n, o);
  const DeviceArray d_row_ptr(a.row_ptr), d_col(a.col);
  const DeviceArray d_w(a.w), d_b(study.b());
  float* const d_c = study.c();

  mb::StudyTable table(study);
  const int v_max = n % 128 == 0 ? 4 : n % 64 == 0 ? 2 : 1;
  auto by_v = [&](int v, auto run) {
    if (v == 4) run(std::integral_constant<int, 4>{});
    else if (v == 2) run(std::integral_constant<int, 2>{});
    else run(std::integral_constant<int, 1>{});
  };
  by_v(v_max, [&](auto vv) {
    constexpr int V = decltype(vv)::value;
    const dim3 grid{unsigned((a.m + kWarps - 1) / kWarps), unsigned(n / (32 * V))};
    table.measure(mb::format("warp-row V=%d", V), true, [&, grid] {
      warp_row<V><<<grid, 32 * kWarps>>>(d_row_ptr.get(), d_col.get(), d_w.get(), a.m, d_b.get(), d_c, n);
    });
  });

  for (const SliceShape& shape : kSliceShapes) {
    const int R = shape.R, V = shape.V, KC = shape.KC, warps = shape.warps;
    if (n % (32 * V) != 0) continue;
    const SliceTables t = slice_tables(a, R, KC, warps);
    const DeviceArray d_blocks(t.blocks);
    const DeviceArray d_rows(t.rows), d_unions(t.unions), d_seg(t.seg), d_lcol(t.lcol), d_chunk_start(t.chunk_start);
    const DeviceArray d_lw(t.lw);
    const DeviceArray d_records(t.records);
    const int max_record = shape.staged_a ? std::max(1, t.max_record) : 0;
    const int smem = 2 * KC * 32 * V * int(sizeof(float)) + 2 * max_record * int(sizeof(int2));
    if (smem > 227 * 1024) continue;  // (a record too long for the SM: not run)
    MB_CHECK(cudaFuncSetAttribute(shape.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const dim3 grid{unsigned(t.blocks.size()), unsigned(n / (32 * V))};
    table.measure(mb::format("%s R=%d V=%d KC=%d%s (staged/product %.2f, %u blocks, %d KiB)", shape.staged_a ? "slice+A" : "slice",
                             R, V, KC, warps == kWarps ? "" : mb::format(" %d warps", warps).c_str(), t.staged_per_product,
                             grid.x * grid.y, smem / 1024),
                  true, [&, grid, smem, max_record, warps] {
                    shape.kernel<<<grid, 32 * warps, smem>>>(d_blocks.get(), d_rows.get(), d_unions.get(), d_seg.get(),
                                                             d_lcol.get(), d_lw.get(), d_chunk_start.get(), d_records.get(),
                                                             max_record, d_b.get(), d_c, n);
                  });
  }

  // cuSPARSE, each algorithm that takes row-major B and C; preprocessing untimed.
  mb::CusparsePeer peer(a.m, a.k, nnz, d_row_ptr.get(), d_col.get(), d_w.get(), d_b.get(), d_c, n);
  table.measure_peer(peer);

  std::printf("%s: %d x %d, %d non-zeros, n = %lld\n\n", o.rest[0].c_str(), a.m, a.k, nnz, n_arg);
  std::printf("| variant | µs | × warp-row | × best cuSPARSE (%s) | bit-equal to warp-row | max rel error |\n|---|--:|--:|--:|---|--:|\n",
              table.best_peer_name().c_str());
  const double best_cusparse = table.best_peer_us();
  for (const mb::StudyTable::Row& row : table.rows())
    std::printf("| %s | %.1f | %.2f | %.2f | %s | %.1e |\n", row.name.c_str(), row.r.us, row.r.first_us / row.r.us,
                best_cusparse > 0 ? best_cusparse / row.r.us : 0.0, row.ordered ? (row.r.equal ? "yes" : "NO") : "—",
                row.r.error);
  std::printf("\n");
  return study.failures() ? 1 : 0;
}
