// CUDA emulation for tests: the host stand-in for CUDA's <cuda_fp16.h>, as much of it as an
// emitted kernel with half-precision B and C uses (found first through -I tests/cuda_emulation;
// see cuda_runtime.h). __half is two bytes of IEEE binary16 bits (alignof 2, trivially copyable,
// so arrays of it have the GPU's layout); the conversions are bit-exact with the GPU's (round to
// nearest even, subnormals kept, NaN to the canonical 0x7fff), from half_bits.h, the same code as
// the PTX interpreter's cvt.
#ifndef SPMMC_TESTS_CUDA_EMULATION_CUDA_FP16_H
#define SPMMC_TESTS_CUDA_EMULATION_CUDA_FP16_H

#include "half_bits.h"

struct alignas(2) __half {
  unsigned short __x;  // the bits
};
static_assert(sizeof(__half) == 2 && alignof(__half) == 2, "__half has the GPU's layout");

inline __half __ushort_as_half(const unsigned short i) { return __half{i}; }
inline unsigned short __half_as_ushort(const __half h) { return h.__x; }
inline __half __float2half_rn(const float a) { return __half{spmmc_emulation::float_to_half_bits_rn(a)}; }
inline float __half2float(const __half a) { return spmmc_emulation::half_bits_to_float(a.__x); }

#endif  // SPMMC_TESTS_CUDA_EMULATION_CUDA_FP16_H
