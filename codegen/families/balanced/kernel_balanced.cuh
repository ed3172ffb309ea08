/*@HEADER_COMMENT*/// Template of the balanced family's device code (codegen/families/balanced/kernel_balanced.cuh):
// A's CSR arrays, its pieces placed in blocks, and the kernel. The printer (print_balanced.h) fills
// it and the emitter pastes it into NAME.cu (kernel.cu) in place of the generic family's code.
// Needs int64_t, spmmc_elem (float) and the CUDA built-ins from its includer.
/*@*/
// The balanced family (docs/design/balanced.md): rows longer than the piece length are cut, ahead of
// time and from A alone, into at most spmmc_balanced_warps pieces of equal size (longer pieces where
// a row has more products than that many pieces of the length hold), every other row is one piece;
// pieces run one per warp, longest first, a row's pieces as warps of one block. A warp sums its
// piece's products for 32 x V adjacent columns of C (V = 4, 2 or 1 per lane, vector loads of B),
// each column's products in column order from +0, one rounding per FMA: the warp loads 32 products'
// columns and weights at a time, one per lane, and hands them to every lane by shuffles (dgSPARSE's
// coalesced row caching), eight loads of B in flight per lane. A whole row's sum is stored; a cut
// row's pieces leave theirs in shared memory and the row's last warp to finish adds them in piece
// order (a counter per row in shared memory): no workspace, no atomics on global memory, the same
// sums at every n (batch invariance; the sums of a cut row differ from one chain in column order).
constexpr int spmmc_rows = /*@M*/1/*@*/;
constexpr int spmmc_balanced_warps = /*@WARPS*/16/*@*/;  // warps per block
constexpr int spmmc_balanced_blocks = /*@BLOCKS*/1/*@*/;  // grid.x
constexpr int spmmc_balanced_piece_length = /*@PIECE_LENGTH*/64/*@*/;  // products; rows longer are cut
constexpr int spmmc_balanced_ahead = 8;  // loads of B in flight per lane
static_assert(spmmc_balanced_warps >= 1 && spmmc_balanced_warps <= 32 && spmmc_balanced_piece_length >= 1,
              "1..32 warps per block, pieces of at least one product");

// A as CSR: spmmc_row_ptr is what spmmc verify checks the rows against; the kernel reads the products
// of its piece from spmmc_piece below, their columns and weights from spmmc_col_idx and
// spmmc_weight_bits.
[[maybe_unused]] __device__ const int spmmc_row_ptr[] = {/*@ROW_PTR*/0, 0/*@*/};
__device__ const int spmmc_col_idx[] = {/*@COL_IDX*/0/*@*/};
__device__ const unsigned spmmc_weight_bits[] = {/*@WEIGHT_BITS*/0u/*@*/};
// The piece of each warp of the grid (block b's warp w at b * spmmc_balanced_warps + w): its row (-1:
// an idle warp), its products [begin, end), and first + spmmc_balanced_warps x pieces: the warp of
// the row's first piece in the block and the row's pieces.
__device__ const int4 spmmc_piece[] = {/*@PIECES*/{-1, 0, 0, 16}/*@*/};

// V adjacent floats of B (one vector load: 16 or 8 bytes aligned, as the launch ensures), and of C;
// four and one through the dtype's functions (templates/dtype_fp32.cuh).
template <int V>
__device__ __forceinline__ void spmmc_balanced_load(const float* p, float (&r)[V]) {
  if constexpr (V == 4) {
    spmmc_load_b4(p, r);
  } else if constexpr (V == 2) {
    const float2 t = __ldg(reinterpret_cast<const float2*>(p));
    r[0] = t.x, r[1] = t.y;
  } else {
    r[0] = spmmc_load_b1(p);
  }
}
template <int V>
__device__ __forceinline__ void spmmc_balanced_store(float* p, const float (&r)[V]) {
  if constexpr (V == 4) spmmc_store_c4(p, r);
  else if constexpr (V == 2) *reinterpret_cast<float2*>(p) = make_float2(r[0], r[1]);
  else spmmc_store_c1(p, r[0]);
}

// The sum of products [p, end) for a lane's V columns (`at`: B + its first column, n: B's row stride),
// added to acc in order. Every lane of the warp calls it alike (lanes past C's columns read columns
// 0..V-1 instead, and their sums are not stored: no branch around the loads).
template <int V>
__device__ __forceinline__ void spmmc_balanced_sum(int p, int end, const float* __restrict__ at, int64_t n, float (&acc)[V]) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  for (; p < end; p += 32) {
    const int count = end - p < 32 ? end - p : 32;
    const int my_col = lane < count ? __ldg(&spmmc_col_idx[p + lane]) : 0;
    const float my_w = lane < count ? __uint_as_float(__ldg(&spmmc_weight_bits[p + lane])) : 0.0f;
    int j = 0;
    for (; j + spmmc_balanced_ahead <= count; j += spmmc_balanced_ahead) {
      float b[spmmc_balanced_ahead][V];
      float w[spmmc_balanced_ahead];
      for (int u = 0; u < spmmc_balanced_ahead; ++u) {
        const int k = __shfl_sync(0xffffffffu, my_col, j + u);
        w[u] = __shfl_sync(0xffffffffu, my_w, j + u);
        spmmc_balanced_load<V>(at + k * n, b[u]);
      }
      for (int u = 0; u < spmmc_balanced_ahead; ++u)
        for (int v = 0; v < V; ++v) acc[v] = fmaf(w[u], b[u][v], acc[v]);
    }
    for (; j < count; ++j) {
      const int k = __shfl_sync(0xffffffffu, my_col, j);
      const float w = __shfl_sync(0xffffffffu, my_w, j);
      float b[V];
      spmmc_balanced_load<V>(at + k * n, b);
      for (int v = 0; v < V; ++v) acc[v] = fmaf(w, b[v], acc[v]);
    }
  }
}

// All n columns of C, in blocks of 32 x V: block blockIdx.z * gridDim.y + blockIdx.y (the blocks past
// the last return).
template <int V>
__global__ void __launch_bounds__(32 * spmmc_balanced_warps)
    spmmc_balanced_kernel(const float* __restrict__ B, float* __restrict__ C, int64_t n) {
  __shared__ float partial[spmmc_balanced_warps][32 * V];
  __shared__ unsigned arrived[spmmc_balanced_warps];
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  if (lane == 0) arrived[warp] = 0;
  __syncthreads();
  const int4 piece = __ldg(&spmmc_piece[blockIdx.x * spmmc_balanced_warps + warp]);
  const int64_t col = (static_cast<int64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * 32 * V + lane * V;
  if (piece.x < 0 || col - lane * V >= n) return;
  const bool active = col < n;
  float acc[V];
  for (int v = 0; v < V; ++v) acc[v] = 0.0f;
  spmmc_balanced_sum<V>(piece.y, piece.z, B + (active ? col : 0), n, acc);
  const int first = piece.w % spmmc_balanced_warps, pieces = piece.w / spmmc_balanced_warps;
  float* const out = C + static_cast<int64_t>(piece.x) * n + col;
  if (pieces == 1) {
    if (active) spmmc_balanced_store<V>(out, acc);
    return;
  }
  for (int v = 0; v < V; ++v) partial[warp][lane * V + v] = acc[v];
  __threadfence_block();
  __syncwarp();
  unsigned before = 0;
  if (lane == 0) before = atomicAdd(&arrived[first], 1u);
  before = __shfl_sync(0xffffffffu, before, 0);
  if (before + 1 != static_cast<unsigned>(pieces)) return;
  __threadfence_block();
  float sum[V];
  for (int v = 0; v < V; ++v) sum[v] = 0.0f;
  for (int q = 0; q < pieces; ++q)
    for (int v = 0; v < V; ++v) sum[v] += *static_cast<volatile float*>(&partial[first + q][lane * V + v]);
  if (active) spmmc_balanced_store<V>(out, sum);
}

// Launches the kernel over n columns: V = 4 where n >= 128 is a multiple of 4 and B and C are aligned
// to 16 bytes, else 2 where n >= 64 is even and they are aligned to 8, else 1 (a warp's 32 x V columns
// no wider than n: below, lanes would idle); grid.y (and grid.z where they are
// more than 65535) covers the columns in blocks of 32 x V.
cudaError_t spmmc_launch_balanced(const float* B, float* C, int64_t n, cudaStream_t stream) {
  const auto aligned = [](const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; };
  const bool by4 = n >= 4 * 32 && n % 4 == 0 && aligned(B, 16) && aligned(C, 16);
  const int v = by4 ? 4 : n >= 2 * 32 && n % 2 == 0 && aligned(B, 8) && aligned(C, 8) ? 2 : 1;
  const void* kernel = v == 4   ? reinterpret_cast<const void*>(&spmmc_balanced_kernel<4>)
                       : v == 2 ? reinterpret_cast<const void*>(&spmmc_balanced_kernel<2>)
                                : reinterpret_cast<const void*>(&spmmc_balanced_kernel<1>);
  const int64_t column_blocks = (n + 32 * v - 1) / (32 * v);
  const int64_t y = column_blocks < 65535 ? column_blocks : 65535, z = (column_blocks + y - 1) / y;
  if (z > 65535) return cudaErrorInvalidValue;
  void* args[] = {&B, &C, &n};
  return cudaLaunchKernel(kernel, dim3(spmmc_balanced_blocks, static_cast<unsigned>(y), static_cast<unsigned>(z)),
                          dim3(32 * spmmc_balanced_warps), args, 0, stream);
}
