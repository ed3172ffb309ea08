// CUDA emulation for tests: the host stand-in for CUDA's <cuda_fp16.h>, as much of it as an
// emitted kernel with half-precision B and C uses (found first through -I tests/cuda_emulation;
// see cuda_runtime.h). __half is two bytes of IEEE binary16 bits (alignof 2, trivially copyable,
// so arrays of it have the GPU's layout); the conversions are bit-exact with the GPU's (round to
// nearest even, subnormals kept, NaN to the canonical 0x7fff), from half_bits.h, the same code as
// the PTX interpreter's cvt. The shuffles of __half (__shfl_sync and its up, down and xor forms)
// are warp collectives of warp_scheduler.h.
#ifndef SPMMC_TESTS_CUDA_EMULATION_CUDA_FP16_H
#define SPMMC_TESTS_CUDA_EMULATION_CUDA_FP16_H

#include "half_bits.h"
#include "warp_scheduler.h"

struct alignas(2) __half {
  unsigned short __x;  // the bits
};
static_assert(sizeof(__half) == 2 && alignof(__half) == 2, "__half has the GPU's layout");

inline __half __ushort_as_half(const unsigned short i) { return __half{i}; }
inline unsigned short __half_as_ushort(const __half h) { return h.__x; }
inline __half __float2half_rn(const float a) { return __half{spmmc_emulation::float_to_half_bits_rn(a)}; }
inline float __half2float(const __half a) { return spmmc_emulation::half_bits_to_float(a.__x); }

// The shuffles of CUDA's __half overloads (a warp collective: warp_scheduler.h), the width's
// default warpSize (32); templates, as cuda_runtime.h's, compiled only where called.
template <class Unused = void>
inline __half __shfl_sync(unsigned mask, __half var, int src_lane, int width = 32) {
  return spmmc_emulation::warp_shuffle<__half, Unused>(spmmc_emulation::WarpOp::kShflIdx, mask, var, src_lane,
                                                       width, "__shfl_sync");
}
template <class Unused = void>
inline __half __shfl_up_sync(unsigned mask, __half var, unsigned delta, int width = 32) {
  return spmmc_emulation::warp_shuffle<__half, Unused>(spmmc_emulation::WarpOp::kShflUp, mask, var, delta,
                                                       width, "__shfl_up_sync");
}
template <class Unused = void>
inline __half __shfl_down_sync(unsigned mask, __half var, unsigned delta, int width = 32) {
  return spmmc_emulation::warp_shuffle<__half, Unused>(spmmc_emulation::WarpOp::kShflDown, mask, var, delta,
                                                       width, "__shfl_down_sync");
}
template <class Unused = void>
inline __half __shfl_xor_sync(unsigned mask, __half var, int lane_mask, int width = 32) {
  return spmmc_emulation::warp_shuffle<__half, Unused>(spmmc_emulation::WarpOp::kShflXor, mask, var, lane_mask,
                                                       width, "__shfl_xor_sync");
}

#endif  // SPMMC_TESTS_CUDA_EMULATION_CUDA_FP16_H
