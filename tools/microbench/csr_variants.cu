// Study 10 (j): variants of the generic family's CSR kernel on one real layer (docs/benchmarks.md).
// Reads a DLMC .smtx file (its pattern; weights and B are seeded uniform values), then times, on
// the same data and with L2 flushed before every run, the generic kernel as emitted before the
// study (V = 4 float4 loads where n >= 128, batches of loads in flight, blocks of 128 columns of
// one row) and variants of it:
//   packed   the column and the weight of a product in one 8-byte load instead of two loads
//   staged   R rows per block share the rows of B they use: the union of the R rows' columns is
//            staged, KC rows of B at a time, in shared memory with cp.async (S buffers), and
//            each row's products read B from there (each staged value feeds the rows that use it)
//   union    R rows per thread: each load of B feeds every one of the R rows that uses it
//   block    the kernel as before in blocks of R rows x 4T columns, the rows in order or grouped
//            (groups of R rows that add the fewest new columns): rows of B shared through L1
// Every variant sums each row's products in column order from +0, so all must agree bit for bit
// with the first; each is also checked against a float64 reference. One Markdown table on stdout.
//
// usage: csr_variants FILE.smtx N [--runs R] [--warmup W]        exit 0, 1 mismatch, 64, 69, 70
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common.cuh"
#include "smtx.cuh"

namespace {

// ---- the generic kernel before this study (codegen/templates/kernel.cu), data in global memory ----
template <int V>
__device__ __forceinline__ void load_b(const float* __restrict__ B, int64_t n, int k, int64_t col, float (&b)[V]) {
  const float* at = B + int64_t(k) * n + col;
  if constexpr (V == 4) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(at));
    b[0] = q.x, b[1] = q.y, b[2] = q.z, b[3] = q.w;
  } else {
    b[0] = __ldg(at);
  }
}

template <int V, bool Packed, int MaxThreads = 128>
__global__ void __launch_bounds__(MaxThreads) generic_kernel(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                                      const float* __restrict__ ws, const int2* __restrict__ pairs,
                                                      int m, const float* __restrict__ B, float* __restrict__ C,
                                                      int64_t n, const int* __restrict__ perm = nullptr) {
  constexpr int batch = V == 4 ? 8 : 32;
  const int64_t col = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V;
  if (col >= n) return;
  const int step = gridDim.y * blockDim.y;
  for (int slot = blockIdx.y * blockDim.y + threadIdx.y; slot < m; slot += step) {
    const int row = perm ? perm[slot] : slot;
    int p = row_ptr[row];
    const int end = row_ptr[row + 1];
    float acc[V];
    for (int v = 0; v < V; ++v) acc[v] = 0.0f;
    int k[batch];
    float w[batch];
    auto fetch = [&](int at) {
      for (int i = 0; i < batch; ++i) {
        if constexpr (Packed) {
          const int2 q = __ldg(&pairs[at + i]);
          k[i] = q.x, w[i] = __int_as_float(q.y);
        } else {
          k[i] = __ldg(&cols[at + i]), w[i] = __ldg(&ws[at + i]);
        }
      }
    };
    if (p + batch <= end) fetch(p);
    for (; p + batch <= end; p += batch) {
      float b[batch][V], wb[batch];
      for (int i = 0; i < batch; ++i) load_b<V>(B, n, k[i], col, b[i]), wb[i] = w[i];
      if (p + 2 * batch <= end) fetch(p + batch);
      for (int i = 0; i < batch; ++i)
        for (int v = 0; v < V; ++v) acc[v] = fmaf(wb[i], b[i][v], acc[v]);
    }
    for (; p < end; ++p) {
      float b[V];
      load_b<V>(B, n, cols[p], col, b);
      for (int v = 0; v < V; ++v) acc[v] = fmaf(ws[p], b[v], acc[v]);
    }
    float* out = C + int64_t(row) * n + col;
    if constexpr (V == 4) *reinterpret_cast<float4*>(out) = make_float4(acc[0], acc[1], acc[2], acc[3]);
    else out[0] = acc[0];
  }
}

// ---- staged: R rows per block, the union of their columns staged KC rows of B at a time ----------
// Row group g (rows g*R .. g*R+R-1) has the sorted union of its rows' columns u_col[u_ptr[g]..);
// each product p of those rows stores its position in that union (pos_w[p].x) and its weight
// (pos_w[p].y). A block: R x T threads, row group blockIdx.y, columns blockIdx.x * T*V + [0, T*V).
// Stages: S buffers of KC x W floats, filled with 16-byte cp.async (smtx.cuh; n % 4 == 0, B 16-byte aligned).

template <int R, int T, int V, int KC, int S>
__global__ void __launch_bounds__(R* T) staged_kernel(const int* __restrict__ row_ptr, const int2* __restrict__ pos_w,
                                                      const int* __restrict__ u_ptr, const int* __restrict__ u_col,
                                                      int m, const float* __restrict__ B, float* __restrict__ C,
                                                      int64_t n) {
  constexpr int W = T * V;  // columns of the block
  extern __shared__ float4 smem4[];
  float* const buf = reinterpret_cast<float*>(smem4);  // S x KC x W
  const int g = blockIdx.y;
  const int u0 = u_ptr[g], un = u_ptr[g + 1] - u0;
  const int chunks = (un + KC - 1) / KC;
  const int64_t col0 = int64_t(blockIdx.x) * W;
  const int tid = threadIdx.y * T + threadIdx.x;
  auto stage = [&](int c) {
    float* dst = buf + (c % S) * KC * W;
    constexpr int quads = KC * W / 4;
    for (int e = tid; e < quads; e += R * T) {
      const int j = e / (W / 4), q = e % (W / 4);
      const int u = c * KC + j;
      const int64_t col = col0 + q * 4;
      if (u < un && col < n) cp_async16(dst + j * W + q * 4, B + int64_t(u_col[u0 + u]) * n + col);
    }
  };
  for (int c = 0; c < S - 1; ++c) {
    if (c < chunks) stage(c);
    cp_async_commit();
  }
  const int row = g * R + threadIdx.y;
  int p = row < m ? row_ptr[row] : 0;
  const int end = row < m ? row_ptr[row + 1] : 0;
  float acc[V];
  for (int v = 0; v < V; ++v) acc[v] = 0.0f;
  // the row's next eight (position, weight) pairs in registers, four being used while four load
  auto fetch = [&](int at) { return at < end ? __ldg(&pos_w[at]) : make_int2(0x7fffffff, 0); };
  int2 q[8];
  for (int i = 0; i < 8; ++i) q[i] = fetch(p + i);
  for (int c = 0; c < chunks; ++c) {
    if (c + S - 1 < chunks) stage(c + S - 1);
    cp_async_commit();
    cp_async_wait<S - 1>();
    __syncthreads();
    const float* src = buf + (c % S) * KC * W + threadIdx.x * V;
    const int limit = (c + 1) * KC, base = c * KC;
    auto fma_one = [&](int2 e) {
      const float wv = __int_as_float(e.y);
      const float* b = src + (e.x - base) * W;
      if constexpr (V == 4) {
        const float4 f = *reinterpret_cast<const float4*>(b);
        acc[0] = fmaf(wv, f.x, acc[0]), acc[1] = fmaf(wv, f.y, acc[1]);
        acc[2] = fmaf(wv, f.z, acc[2]), acc[3] = fmaf(wv, f.w, acc[3]);
      } else {
        for (int v = 0; v < V; ++v) acc[v] = fmaf(wv, b[v], acc[v]);
      }
    };
    for (;;) {
      if (q[3].x < limit) {  // four products in this chunk: use them, load four more
        for (int i = 0; i < 4; ++i) fma_one(q[i]);
        for (int i = 0; i < 4; ++i) q[i] = q[i + 4], q[i + 4] = fetch(p + 8 + i);
        p += 4;
      } else if (q[0].x < limit) {  // fewer than four left in this chunk: one
        fma_one(q[0]);
        for (int i = 0; i < 7; ++i) q[i] = q[i + 1];
        q[7] = fetch(p + 8);
        ++p;
      } else {
        break;
      }
    }
    __syncthreads();
  }
  const int64_t col = col0 + threadIdx.x * V;
  if (row < m && col < n) {
    float* out = C + int64_t(row) * n + col;
    if constexpr (V == 4) *reinterpret_cast<float4*>(out) = make_float4(acc[0], acc[1], acc[2], acc[3]);
    else for (int v = 0; v < V; ++v) out[v] = acc[v];
  }
}

struct Staged {
  std::vector<int2> pos_w;
  std::vector<int> u_ptr, u_col;
};

Staged build_staged(const Csr& a, int r) {
  Staged s;
  s.pos_w.resize(a.col.size());
  s.u_ptr.push_back(0);
  std::vector<int> mark(a.k, -1);
  for (int g = 0; g * r < a.m; ++g) {
    const int lo = g * r, hi = std::min(a.m, lo + r);
    std::vector<int> u;
    for (int i = lo; i < hi; ++i)
      for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        if (mark[a.col[p]] != g) mark[a.col[p]] = g, u.push_back(a.col[p]);
    std::sort(u.begin(), u.end());
    std::vector<int> where(a.k);
    for (size_t j = 0; j < u.size(); ++j) where[u[j]] = int(j);
    for (int i = lo; i < hi; ++i)
      for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        int bits;
        std::memcpy(&bits, &a.w[p], 4);
        s.pos_w[p] = make_int2(where[a.col[p]], bits);
      }
    s.u_col.insert(s.u_col.end(), u.begin(), u.end());
    s.u_ptr.push_back(int(s.u_col.size()));
  }
  return s;
}


// ---- union: R rows per thread, each load of B used by every one of the R rows that needs it ------
// Row group g (rows perm[g*R .. g*R+R-1]) has entries e = u_ptr[g] .. u_ptr[g+1]-1 in column order:
// u_cm[e] = (column, mask of the rows that use it), u_w[e*R + r] the weight of row r (0 where the
// mask has no bit). A thread: V = 4 columns of all R rows; loads of B issued `batch` at a time.
template <int R, int Batch>
__global__ void __launch_bounds__(128) union_kernel(const int* __restrict__ u_ptr, const int2* __restrict__ u_cm,
                                                    const float* __restrict__ u_w, const int* __restrict__ perm, int m,
                                                    const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  const int64_t col = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (col >= n) return;
  const int g = blockIdx.y;
  float acc[R][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 4; ++v) acc[r][v] = 0.0f;
  int e = u_ptr[g];
  const int end = u_ptr[g + 1];
  auto one = [&](int2 cm, const float* w, const float4 b) {
    for (int r = 0; r < R; ++r)
      if (cm.y >> r & 1) {
        acc[r][0] = fmaf(w[r], b.x, acc[r][0]), acc[r][1] = fmaf(w[r], b.y, acc[r][1]);
        acc[r][2] = fmaf(w[r], b.z, acc[r][2]), acc[r][3] = fmaf(w[r], b.w, acc[r][3]);
      }
  };
  for (; e + Batch <= end; e += Batch) {
    int2 cm[Batch];
    float w[Batch][R];
    float4 b[Batch];
    for (int i = 0; i < Batch; ++i) cm[i] = __ldg(&u_cm[e + i]);
    for (int i = 0; i < Batch; ++i) b[i] = __ldg(reinterpret_cast<const float4*>(B + int64_t(cm[i].x) * n + col));
    for (int i = 0; i < Batch; ++i)
      for (int r = 0; r < R; ++r) w[i][r] = __ldg(&u_w[int64_t(e + i) * R + r]);
    for (int i = 0; i < Batch; ++i) one(cm[i], w[i], b[i]);
  }
  for (; e < end; ++e) {
    const int2 cm = __ldg(&u_cm[e]);
    float w[R];
    for (int r = 0; r < R; ++r) w[r] = __ldg(&u_w[int64_t(e) * R + r]);
    one(cm, w, __ldg(reinterpret_cast<const float4*>(B + int64_t(cm.x) * n + col)));
  }
  for (int r = 0; r < R; ++r) {
    const int i = g * R + r;
    if (i < m) *reinterpret_cast<float4*>(C + int64_t(perm[i]) * n + col) = make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
  }
}

struct Union {
  std::vector<int> u_ptr, perm;
  std::vector<int2> u_cm;
  std::vector<float> u_w;
};

// Groups of R rows, in order or (grouped) greedily: each group starts from the longest row left and
// takes the R-1 rows left that add the fewest new columns to its union.
Union build_union(const Csr& a, int r, bool grouped) {
  Union u;
  std::vector<int> order(a.m);
  for (int i = 0; i < a.m; ++i) order[i] = i;
  if (grouped) {
    std::vector<char> used(a.m, 0);
    std::vector<int> in_union(a.k, 0);
    order.clear();
    std::vector<int> by_len(a.m);
    for (int i = 0; i < a.m; ++i) by_len[i] = i;
    std::stable_sort(by_len.begin(), by_len.end(), [&](int x, int y) {
      return a.row_ptr[x + 1] - a.row_ptr[x] > a.row_ptr[y + 1] - a.row_ptr[y];
    });
    size_t next_seed = 0;
    while (int(order.size()) < a.m) {
      while (used[by_len[next_seed]]) ++next_seed;
      std::vector<int> group{by_len[next_seed]};
      used[group[0]] = 1;
      std::fill(in_union.begin(), in_union.end(), 0);
      for (int p = a.row_ptr[group[0]]; p < a.row_ptr[group[0] + 1]; ++p) in_union[a.col[p]] = 1;
      while (int(group.size()) < r) {
        int best = -1, best_new = 1 << 30;
        for (int i = 0; i < a.m; ++i) {
          if (used[i]) continue;
          int added = 0;
          for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) added += !in_union[a.col[p]];
          if (added < best_new) best_new = added, best = i;
        }
        if (best < 0) break;
        used[best] = 1;
        group.push_back(best);
        for (int p = a.row_ptr[best]; p < a.row_ptr[best + 1]; ++p) in_union[a.col[p]] = 1;
      }
      order.insert(order.end(), group.begin(), group.end());
    }
  }
  u.perm = order;
  u.u_ptr.push_back(0);
  std::vector<int> slot(a.k, -1);
  for (int g = 0; g * r < a.m; ++g) {
    std::vector<int> cols;
    for (int j = 0; j < r && g * r + j < a.m; ++j) {
      const int i = order[g * r + j];
      for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) cols.push_back(a.col[p]);
    }
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    const size_t first = u.u_cm.size();
    for (size_t j = 0; j < cols.size(); ++j) slot[cols[j]] = int(first + j), u.u_cm.push_back(make_int2(cols[j], 0));
    u.u_w.resize(u.u_cm.size() * r, 0.0f);
    for (int j = 0; j < r && g * r + j < a.m; ++j) {
      const int i = order[g * r + j];
      for (int p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        u.u_cm[slot[a.col[p]]].y |= 1 << j;
        u.u_w[size_t(slot[a.col[p]]) * r + j] = a.w[p];
      }
    }
    u.u_ptr.push_back(int(u.u_cm.size()));
  }
  return u;
}

}  // namespace

int main(int argc, char** argv) {
  mb::Options o = mb::parse_options(argc, argv, " FILE.smtx N");
  if (o.rest.size() != 2) {
    std::fprintf(stderr, "usage: %s FILE.smtx N [--runs R] [--warmup W]\n", argv[0]);
    return mb::kExitUsage;
  }
  const Csr a = read_smtx(o.rest[0]);
  const int64_t n = std::atoll(o.rest[1].c_str());
  if (n <= 0 || n % 4 != 0) {
    std::fprintf(stderr, "N must be a positive multiple of 4\n");
    return mb::kExitUsage;
  }
  mb::require_gpu(argv[0]);
  const long nnz = long(a.col.size());

  CsrStudy study(a, n, o);
  std::vector<int2> pairs(nnz);
  for (long p = 0; p < nnz; ++p) {
    int bits;
    std::memcpy(&bits, &a.w[p], 4);
    pairs[p] = make_int2(a.col[p], bits);
  }
  const DeviceArray d_row_ptr(a.row_ptr);
  const DeviceArray d_col(a.col);
  const DeviceArray d_w(a.w);
  const DeviceArray d_pairs(pairs);
  const DeviceArray d_b(study.b());
  float* const d_c = study.c();

  std::printf("## %s, n = %lld (%d x %d, %ld non-zeros)\n\n", o.rest[0].c_str(), (long long)n, a.m, a.k, nnz);
  std::printf("| variant | µs | TFLOP/s | × before | union/nnz | bit-equal | max rel error |\n|---|--:|--:|--:|--:|---|--:|\n");
  auto measure = [&](const std::string& name, double union_ratio, const std::function<void()>& launch) {
    const CsrStudy::Result r = study.measure(launch);
    std::printf("| %s | %.1f | %.2f | %.2f | %s | %s | %.1e |\n", name.c_str(), r.us, 2.0 * nnz * n / (r.us * 1e6),
                r.first_us / r.us, union_ratio > 0 ? mb::format("%.2f", union_ratio).c_str() : "-",
                r.equal ? "yes" : "NO", r.error);
    std::fflush(stdout);
  };

  const bool v4 = n >= 128;
  auto launch_generic = [&](bool packed) {
    const int64_t threads = v4 ? n / 4 : n;
    int64_t width = 1;
    while (width < threads && width < 32) width *= 2;
    if (threads > 32) width = (threads + 31) / 32 * 32;
    if (width > 128) width = 128;
    const int64_t rows = 128 / width;
    const dim3 grid{unsigned((threads + width - 1) / width), unsigned(std::min<int64_t>((a.m + rows - 1) / rows, 65535))};
    const dim3 block{unsigned(width), unsigned(rows)};
    const auto kernel = v4 ? (packed ? generic_kernel<4, true> : generic_kernel<4, false>)
                           : (packed ? generic_kernel<1, true> : generic_kernel<1, false>);
    kernel<<<grid, block>>>(d_row_ptr.get(), d_col.get(), d_w.get(), d_pairs.get(), a.m, d_b.get(), d_c, n, nullptr);
  };
  measure("before (generic kernel as emitted before study 10 (j))", 0, [&] { launch_generic(false); });
  measure("packed column+weight", 0, [&] { launch_generic(true); });

  auto run_staged = [&](auto kernel, int r, int t, int v, int kc, int stages) {
    const Staged st = build_staged(a, r);
    const DeviceArray d_pos_w(st.pos_w);
    const DeviceArray d_u_ptr(st.u_ptr);
    const DeviceArray d_u_col(st.u_col);
    const int w = t * v;
    const size_t smem = size_t(stages) * kc * w * sizeof(float);
    MB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    const dim3 grid{unsigned((n + w - 1) / w), unsigned((a.m + r - 1) / r)}, block{unsigned(t), unsigned(r)};
    measure(mb::format("staged R=%d T=%d V=%d KC=%d S=%d", r, t, v, kc, stages), double(st.u_col.size()) / nnz,
            [&] {
              kernel<<<grid, block, smem>>>(d_row_ptr.get(), d_pos_w.get(), d_u_ptr.get(), d_u_col.get(), a.m, d_b.get(), d_c, n);
            });
  };
  auto run_union = [&](auto kernel, int r, bool grouped) {
    const Union un = build_union(a, r, grouped);
    const DeviceArray d_u_ptr(un.u_ptr);
    const DeviceArray d_u_cm(un.u_cm);
    const DeviceArray d_u_w(un.u_w);
    const DeviceArray d_perm(un.perm);
    const int64_t threads = n / 4;
    const dim3 grid{unsigned((threads + 127) / 128), unsigned((a.m + r - 1) / r)}, block{128u, 1u};
    measure(mb::format("union R=%d%s", r, grouped ? " grouped" : ""), double(un.u_cm.size()) / nnz,
            [&] { kernel<<<grid, block>>>(d_u_ptr.get(), d_u_cm.get(), d_u_w.get(), d_perm.get(), a.m, d_b.get(), d_c, n); });
  };
  // the kernel as before in blocks of `rows` rows x threads_x threads (4 columns each), the rows in
  // order or in groups of `rows` rows that share columns (build_union's greedy grouping)
  auto run_rows = [&](int threads_x, int rows, bool grouped) {
    const Union un = build_union(a, rows, grouped);
    const DeviceArray d_perm(un.perm);
    const int64_t threads = n / 4;
    const dim3 grid{unsigned((threads + threads_x - 1) / threads_x), unsigned((a.m + rows - 1) / rows)},
        block{unsigned(threads_x), unsigned(rows)};
    measure(mb::format("block %d rows x %d columns%s", rows, threads_x * 4, grouped ? " grouped" : ""), 0, [&] {
      generic_kernel<4, false, 256><<<grid, block>>>(d_row_ptr.get(), d_col.get(), d_w.get(), d_pairs.get(), a.m, d_b.get(),
                                                     d_c, n, d_perm.get());
    });
  };
  if (v4) {
    // blocks of R rows x T threads staging the union of their columns in shared memory
    run_staged(staged_kernel<4, 32, 4, 32, 2>, 4, 32, 4, 32, 2);
    run_staged(staged_kernel<8, 32, 4, 32, 2>, 8, 32, 4, 32, 2);
    run_staged(staged_kernel<16, 32, 4, 32, 2>, 16, 32, 4, 32, 2);
    run_staged(staged_kernel<8, 32, 4, 32, 3>, 8, 32, 4, 32, 3);
    run_staged(staged_kernel<8, 32, 4, 64, 2>, 8, 32, 4, 64, 2);
    run_staged(staged_kernel<8, 16, 4, 32, 2>, 8, 16, 4, 32, 2);
    run_staged(staged_kernel<16, 16, 4, 32, 2>, 16, 16, 4, 32, 2);
    // R rows per thread over the union of their columns, rows in order or grouped
    for (const bool grouped : {false, true}) {
      run_union(union_kernel<2, 8>, 2, grouped);
      run_union(union_kernel<4, 8>, 4, grouped);
      run_union(union_kernel<8, 4>, 8, grouped);
    }
    // the kernel as before in blocks of R rows x 4T columns, rows in order or grouped (the emitted
    // kernel since this study: 16 rows x 64 columns, the A-tiles' rows)
    for (const auto& [t, r] : std::vector<std::pair<int, int>>{{32, 4}, {32, 8}, {16, 16}, {8, 32}, {16, 8}, {8, 16}, {4, 32}, {4, 64}})
      for (const bool grouped : {false, true}) run_rows(t, r, grouped);
  } else {
    // n < 128: one column per thread, T = n threads per row (n of 32 here: the layers at n = 32)
    if (n != 32) {
      std::printf("\n(staged variants are built for n = 32 or n >= 128 only)\n");
      return study.failures() ? 1 : 0;
    }
    run_staged(staged_kernel<4, 32, 1, 32, 2>, 4, 32, 1, 32, 2);
    run_staged(staged_kernel<8, 32, 1, 32, 2>, 8, 32, 1, 32, 2);
    run_staged(staged_kernel<8, 32, 1, 32, 4>, 8, 32, 1, 32, 4);
    run_staged(staged_kernel<4, 32, 1, 64, 4>, 4, 32, 1, 64, 4);
    run_staged(staged_kernel<2, 32, 1, 32, 4>, 2, 32, 1, 32, 4);
    run_staged(staged_kernel<1, 32, 1, 32, 4>, 1, 32, 1, 32, 4);
  }
  std::printf("\n");
  return study.failures() ? 1 : 0;
}
