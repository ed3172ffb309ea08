// Warp-synchronous CUDA kernels for tests/codegen/warp_emulation_test.cpp: built as host C++
// against the CUDA emulation (g++ -x c++ -I tests/cuda_emulation, as the emitted kernels are) into a
// shared object that the test loads. Each extern "C" entry point launches one kernel synchronously
// (spmmc_emulation::launch, the emulation's stand-in for kernel<<<grid, block>>>(...)) on host
// memory the test owns. The kernels are written as device code would be: shuffles, votes,
// __syncthreads with __shared__ memory, the tensor-core MMA through the SPMMC_MMA_* hooks (the
// same macros a kernel template calls) and through spmmc_emulation's functions; and kernels that
// break the warp-synchronous rules, which the emulation must abort (run_fault).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

namespace {

constexpr unsigned kFull = 0xffffffffu;

// Shuffles: per thread, 8 results of its warp's values v (in[t]):
//   0: the warp's sum by xor butterfly (every lane), 1: by shuffle-down (lane 0 has the sum),
//   2: the inclusive scan by shuffle-up, 3: lane 0's v (broadcast), 4: lane 31 - lane's v / 2 as
//   a double (8-byte shuffle), 5: lane 0 of the thread's group of 8 (width 8), 6: the xor-1
//   partner's v through a __half, 7: the lane + 3's v through a __nv_bfloat16 (down by 3).
__global__ void shuffle_kernel(const int* in, double* out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int v = in[t];
  int sum = v;
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(kFull, sum, offset);
  int down = v;
  for (int offset = 16; offset > 0; offset >>= 1) down += __shfl_down_sync(kFull, down, static_cast<unsigned>(offset));
  int scan = v;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int up = __shfl_up_sync(kFull, scan, static_cast<unsigned>(offset));
    if (lane >= offset) scan += up;
  }
  const int first = __shfl_sync(kFull, v, 0);
  const double reversed = __shfl_sync(kFull, 0.5 * v, 31 - lane);
  const float group = __shfl_sync(kFull, static_cast<float>(v), 0, 8);
  const __half h = __shfl_xor_sync(kFull, __float2half_rn(static_cast<float>(v)), 1);
  const __nv_bfloat16 b = __shfl_down_sync(kFull, __float2bfloat16_rn(static_cast<float>(v)), 3u);
  double* const o = out + 8 * t;
  o[0] = sum, o[1] = down, o[2] = scan, o[3] = first, o[4] = reversed, o[5] = group;
  o[6] = __half2float(h), o[7] = __bfloat162float(b);
}

// Votes on in[t] > 0, per thread: the warp's ballot, any, all, and the ballot of its half warp
// (two groups with different masks at once).
__global__ void vote_kernel(const int* in, unsigned* out) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int p = in[t] > 0;
  out[4 * t + 0] = __ballot_sync(kFull, p);
  out[4 * t + 1] = static_cast<unsigned>(__any_sync(kFull, p));
  out[4 * t + 2] = static_cast<unsigned>(__all_sync(kFull, p));
  out[4 * t + 3] = lane < 16 ? __ballot_sync(0x0000ffffu, p) : __ballot_sync(0xffff0000u, p);
  __syncwarp();
}

// A block's sum through shared memory and __syncthreads (a tree), the count of positive inputs
// (__syncthreads_count), and what thread 0 reads of its shared array before any thread of the block
// wrote it (first_bits: garbage on a GPU; here 0xFFFFFFFF in every block, not the previous block's
// sum).
constexpr int kBlockSumThreads = 128;
__global__ void block_sum_kernel(const float* in, float* out, unsigned* first_bits, int* positive) {
  __shared__ float partial[kBlockSumThreads];
  const unsigned t = threadIdx.x;
  if (t == 0) memcpy(&first_bits[blockIdx.x], &partial[5], sizeof(unsigned));
  __syncthreads();
  const float x = in[blockIdx.x * kBlockSumThreads + t];
  partial[t] = x;
  __syncthreads();
  for (unsigned half = kBlockSumThreads / 2; half > 0; half >>= 1) {
    if (t < half) partial[t] += partial[t + half];
    __syncthreads();
  }
  const int count = __syncthreads_count(x > 0.0f);
  if (t == 0) out[blockIdx.x] = partial[0], positive[blockIdx.x] = count;
}

// Records the order in which the threads of a block run: a kernel without collectives runs them in
// threadIdx order (x fastest), each to completion, blocks one after another.
__global__ void order_kernel(int* sequence, int* next) {
  const int me = static_cast<int>(blockIdx.x * 10000 + threadIdx.z * 100 + threadIdx.y * 10 + threadIdx.x);
  sequence[(*next)++] = me;
}

// The MMA through the kernel templates' hooks: warp w runs iterations[w] MMAs of kind `kind` (0:
// m16n8k8 f16, 1: m16n8k8 bf16, 2: m16n8k4 tf32), accumulating in place into its lanes' d, which
// start as c. frags holds, per warp, per iteration, per lane, the lane's a0, a1 and b0; c and d 4
// floats per lane. The lanes of a warp run the loop together; warps run different counts.
constexpr int kMaxIterations = 8;
__global__ void mma_hook_kernel(const unsigned* frags, const float* c, float* d, int kind, const int* iterations) {
  const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float acc[4];
  for (int i = 0; i < 4; ++i) acc[i] = c[(32 * warp + lane) * 4 + i];
  for (int it = 0; it < iterations[warp]; ++it) {
    const unsigned* f = frags + ((warp * kMaxIterations + static_cast<unsigned>(it)) * 32 + lane) * 3;
    if (kind == 0) {
      SPMMC_MMA_M16N8K8_F16(acc, f[0], f[1], f[2]);
    } else if (kind == 1) {
      SPMMC_MMA_M16N8K8_BF16(acc, f[0], f[1], f[2]);
    } else {
      SPMMC_MMA_M16N8K4_TF32(acc, f[0], f[1], f[2]);
    }
  }
  for (int i = 0; i < 4; ++i) d[(32 * warp + lane) * 4 + i] = acc[i];
}

// The same through spmmc_emulation's functions, with C and D apart (one MMA, one warp), and into
// one row of a two-dimensional accumulator, as a template's acc[s] is.
__global__ void mma_direct_kernel(const unsigned* frags, const float* c, float* d, int kind) {
  const unsigned lane = threadIdx.x;
  const float c_lane[4] = {c[4 * lane], c[4 * lane + 1], c[4 * lane + 2], c[4 * lane + 3]};
  float d_lane[4] = {-1.0f, -1.0f, -1.0f, -1.0f};
  const unsigned* f = frags + 3 * lane;
  if (kind == 0) spmmc_emulation::mma_m16n8k8_f16(d_lane, f[0], f[1], f[2], c_lane);
  if (kind == 1) spmmc_emulation::mma_m16n8k8_bf16(d_lane, f[0], f[1], f[2], c_lane);
  if (kind == 2) spmmc_emulation::mma_m16n8k4_tf32(d_lane, f[0], f[1], f[2], c_lane);
  float acc[2][4] = {};
  for (int i = 0; i < 4; ++i) acc[1][i] = c_lane[i];
  if (kind == 0) SPMMC_MMA_M16N8K8_F16(acc[1], f[0], f[1], f[2]);
  if (kind == 1) SPMMC_MMA_M16N8K8_BF16(acc[1], f[0], f[1], f[2]);
  if (kind == 2) SPMMC_MMA_M16N8K4_TF32(acc[1], f[0], f[1], f[2]);
  for (int i = 0; i < 4; ++i) d[4 * lane + i] = d_lane[i], d[128 + 4 * lane + i] = acc[1][i], d[256 + 4 * lane + i] = acc[0][i];
}

// ldmatrix.x4.trans (the staged tensor-core kernel's, through its hook) of four 8 x 8 matrices of
// 16-bit elements, `in` row-major (row i of matrix j at in + 8 (8j + i)), row 8j + i placed in shared
// memory at piece slot[8j + i]; the lanes' fragments to frags[4 lane + j]; then stmatrix.x4.trans of
// the same fragments with row 8j + i at piece back[8j + i], read back into `out` as `in` is laid out.
__global__ void matrix_kernel(const unsigned short* in, const int* slot, const int* back, unsigned* frags,
                              unsigned short* out) {
  __shared__ uint4 from[32], to[32];
  const unsigned lane = threadIdx.x;
  memcpy(&from[slot[lane]], in + 8 * lane, 16);
  __syncwarp();
  unsigned r[4];
  SPMMC_LDMATRIX_X4_TRANS(r, &from[slot[lane]]);
  for (int j = 0; j < 4; ++j) frags[4 * lane + j] = r[j];
  SPMMC_STMATRIX_X4_TRANS(&to[back[lane]], r);
  __syncwarp();
  memcpy(out + 8 * lane, &to[back[lane]], 16);
}

// Kernels that break the rules (run_fault).
__global__ void half_warp_returns_kernel(int* out) {  // lanes 16-31 leave before a full-warp shuffle
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_sync(kFull, static_cast<int>(threadIdx.x), 0);
}
__global__ void early_return_barrier_kernel(int* out) {  // thread 40 of 64 misses __syncthreads
  if (threadIdx.x == 40) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}
__global__ void late_lane_kernel(int* out) {  // lane 0 returns first, then the others shuffle with it in the mask
  if (threadIdx.x == 0) return;
  out[threadIdx.x] = __shfl_xor_sync(kFull, 1, 1);
}
__global__ void divergent_kernel(int* out) {  // same mask, different intrinsics
  const int lane = static_cast<int>(threadIdx.x);
  out[lane] = lane < 16 ? __shfl_sync(kFull, lane, 0) : static_cast<int>(__ballot_sync(kFull, 1));
}
__global__ void deadlock_kernel(int* out) {  // half the warp at a shuffle, half at __syncthreads
  const int lane = static_cast<int>(threadIdx.x);
  if (lane < 16) {
    out[lane] = __shfl_sync(kFull, lane, 0);
  } else {
    __syncthreads();
  }
}
__global__ void mma_small_block_kernel(float* out) {  // an MMA in a block of 16 threads
  float acc[4] = {};
  SPMMC_MMA_M16N8K8_F16(acc, 0u, 0u, 0u);
  out[threadIdx.x] = acc[0];
}
__global__ void mma_half_warp_kernel(float* out) {  // lanes 16-31 leave before the MMA
  if (threadIdx.x >= 16) return;
  float acc[4] = {};
  SPMMC_MMA_M16N8K4_TF32(acc, 0u, 0u, 0u);
  out[threadIdx.x] = acc[0];
}
__global__ void ldmatrix_misaligned_kernel(int* out) {  // a row address 8 bytes past a 16-byte boundary
  __shared__ uint4 rows[33];
  unsigned r[4];
  SPMMC_LDMATRIX_X4_TRANS(r, reinterpret_cast<const char*>(&rows[threadIdx.x]) + (threadIdx.x == 5 ? 8 : 0));
  out[threadIdx.x] = static_cast<int>(r[0]);
}
__global__ void bad_mask_kernel(int* out) {  // a lane not in its own mask
  out[threadIdx.x] = __shfl_sync(0x0000ffffu, 1, 0);
}

}  // namespace

extern "C" {

// in: blocks x threads ints; out: 8 doubles per thread.
int warp_test_shuffle(const int* in, double* out, unsigned blocks, unsigned threads) {
  return spmmc_emulation::launch(shuffle_kernel, dim3(blocks), dim3(threads), in, out);
}

int warp_test_vote(const int* in, unsigned* out, unsigned blocks, unsigned threads) {
  return spmmc_emulation::launch(vote_kernel, dim3(blocks), dim3(threads), in, out);
}

// in: blocks x 128 floats.
int warp_test_block_sum(const float* in, float* out, unsigned* first_bits, int* positive, unsigned blocks) {
  return spmmc_emulation::launch(block_sum_kernel, dim3(blocks), dim3(kBlockSumThreads), in, out, first_bits, positive);
}

int warp_test_order(int* sequence, unsigned blocks, unsigned x, unsigned y, unsigned z) {
  int next = 0;
  return spmmc_emulation::launch(order_kernel, dim3(blocks), dim3(x, y, z), sequence, &next);
}

// frags: warps x kMaxIterations x 32 x 3 words; c, d: warps x 32 x 4 floats.
int warp_test_mma_hook(const unsigned* frags, const float* c, float* d, int kind, const int* iterations, unsigned warps) {
  return spmmc_emulation::launch(mma_hook_kernel, dim3(1), dim3(32 * warps), frags, c, d, kind, iterations);
}

// frags: 32 x 3 words; c: 32 x 4 floats; d: 3 x 32 x 4 floats (the function, the hook into acc[1],
// acc[0] left untouched).
int warp_test_mma_direct(const unsigned* frags, const float* c, float* d, int kind) {
  return spmmc_emulation::launch(mma_direct_kernel, dim3(1), dim3(32), frags, c, d, kind);
}

int warp_test_matrix(const unsigned short* in, const int* slot, const int* back, unsigned* frags, unsigned short* out) {
  return spmmc_emulation::launch(matrix_kernel, dim3(1), dim3(32), in, slot, back, frags, out);
}

// __byte_perm as the tensor-core family uses it to build fragments (host code: not a collective).
unsigned warp_test_byte_perm(unsigned x, unsigned y, unsigned s) { return __byte_perm(x, y, s); }
static_assert(sizeof(uint4) == 16 && alignof(uint4) == 16 && sizeof(int2) == 8 && alignof(int2) == 8,
              "CUDA's vector types have the GPU's size and alignment");

// Runs fault case `which`; returns only if the emulation did not abort.
int warp_test_fault(int which) {
  int out[64] = {};
  float fout[64] = {};
  switch (which) {
    case 0: return spmmc_emulation::launch(half_warp_returns_kernel, dim3(1), dim3(32), out);
    case 1: return spmmc_emulation::launch(early_return_barrier_kernel, dim3(1), dim3(64), out);
    case 2: return spmmc_emulation::launch(late_lane_kernel, dim3(1), dim3(32), out);
    case 3: return spmmc_emulation::launch(divergent_kernel, dim3(1), dim3(32), out);
    case 4: return spmmc_emulation::launch(deadlock_kernel, dim3(1), dim3(32), out);
    case 5: return spmmc_emulation::launch(mma_small_block_kernel, dim3(1), dim3(16), fout);
    case 6: return spmmc_emulation::launch(mma_half_warp_kernel, dim3(1), dim3(32), fout);
    case 7: return spmmc_emulation::launch(bad_mask_kernel, dim3(1), dim3(32), out);
    case 8: __syncwarp(); return 0;  // on the host, outside any launch
    case 9: return spmmc_emulation::launch(ldmatrix_misaligned_kernel, dim3(1), dim3(32), out);
    default: return -1;
  }
}

}  // extern "C"
