// CUDA emulation for tests: the host stand-in for CUDA's <cuda_bf16.h>, as much of it as an
// emitted kernel with bfloat16 B and C uses (found first through -I tests/cuda_emulation; see
// cuda_runtime.h). __nv_bfloat16 is two bytes of bfloat16 bits (alignof 2, trivially copyable, so
// arrays of it have the GPU's layout); the conversions are bit-exact with the GPU's (to bfloat16:
// round to nearest even, NaN to the canonical 0x7fff; to float: the bits shifted up), from
// half_bits.h, the same code as the PTX interpreter's cvt. The shuffles of __nv_bfloat16
// (__shfl_sync and its up, down and xor forms) are warp collectives of warp_scheduler.h.
#ifndef SPMMC_TESTS_CUDA_EMULATION_CUDA_BF16_H
#define SPMMC_TESTS_CUDA_EMULATION_CUDA_BF16_H

#include "half_bits.h"
#include "warp_scheduler.h"

struct alignas(2) __nv_bfloat16 {
  unsigned short __x;  // the bits
};
static_assert(sizeof(__nv_bfloat16) == 2 && alignof(__nv_bfloat16) == 2, "__nv_bfloat16 has the GPU's layout");

inline __nv_bfloat16 __ushort_as_bfloat16(const unsigned short i) { return __nv_bfloat16{i}; }
inline unsigned short __bfloat16_as_ushort(const __nv_bfloat16 h) { return h.__x; }
inline __nv_bfloat16 __float2bfloat16_rn(const float a) {
  return __nv_bfloat16{spmmc_emulation::float_to_bfloat16_bits_rn(a)};
}
inline float __bfloat162float(const __nv_bfloat16 a) { return spmmc_emulation::bfloat16_bits_to_float(a.__x); }

// The shuffles of CUDA's __nv_bfloat16 overloads (a warp collective: warp_scheduler.h), the width's
// default warpSize (32); templates, as cuda_runtime.h's, compiled only where called.
template <class Unused = void>
inline __nv_bfloat16 __shfl_sync(unsigned mask, __nv_bfloat16 var, int src_lane, int width = 32) {
  return spmmc_emulation::warp_shuffle<__nv_bfloat16, Unused>(spmmc_emulation::WarpOp::kShflIdx, mask, var, src_lane,
                                                              width, "__shfl_sync");
}
template <class Unused = void>
inline __nv_bfloat16 __shfl_up_sync(unsigned mask, __nv_bfloat16 var, unsigned delta, int width = 32) {
  return spmmc_emulation::warp_shuffle<__nv_bfloat16, Unused>(spmmc_emulation::WarpOp::kShflUp, mask, var, delta,
                                                              width, "__shfl_up_sync");
}
template <class Unused = void>
inline __nv_bfloat16 __shfl_down_sync(unsigned mask, __nv_bfloat16 var, unsigned delta, int width = 32) {
  return spmmc_emulation::warp_shuffle<__nv_bfloat16, Unused>(spmmc_emulation::WarpOp::kShflDown, mask, var, delta,
                                                              width, "__shfl_down_sync");
}
template <class Unused = void>
inline __nv_bfloat16 __shfl_xor_sync(unsigned mask, __nv_bfloat16 var, int lane_mask, int width = 32) {
  return spmmc_emulation::warp_shuffle<__nv_bfloat16, Unused>(spmmc_emulation::WarpOp::kShflXor, mask, var, lane_mask,
                                                              width, "__shfl_xor_sync");
}

#endif  // SPMMC_TESTS_CUDA_EMULATION_CUDA_BF16_H
