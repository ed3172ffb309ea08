// Conversions between float and the 16-bit floating-point formats, bit-exact with an NVIDIA GPU:
// IEEE binary16 (__half, PTX .f16) and bfloat16 (__nv_bfloat16, PTX .bf16); and float's rounding to
// TensorFloat-32 (PTX .tf32, cvt.rna.tf32.f32). The one
// implementation behind both the PTX interpreter's cvt (ptx_subset.h) and the host shims of the
// CUDA half types (cuda_fp16.h, cuda_bf16.h), so the inline-PTX and the generic kernel paths round
// alike. Header-only, no dependency.
//
//   float -> half, float -> bfloat16: round to nearest, ties to even (cvt.rn.f16.f32,
//     cvt.rn.bf16.f32, __float2half_rn, __float2bfloat16_rn). Subnormal results are kept (no
//     .ftz); float subnormals are rounded like any other value. Overflow gives +-inf (to half:
//     |x| >= 65520, the midpoint between 65504 and 2^16, ties to even upwards). A NaN of either
//     sign and any payload gives the GPU's canonical NaN 0x7fff (positive, all mantissa bits set),
//     not a NaN carrying the float's payload: what the hardware's F2F and F2FP conversions write
//     and what the CUDA headers' host code of __float2half_rn and __float2bfloat16_rn returns.
//   half -> float: exact (cvt.f32.f16, __half2float); subnormal halves become normal floats. A NaN
//     gives the canonical float NaN 0x7fffffff (the GPU's, and __half2float's host code), so a NaN
//     stays a NaN through a round trip, though not with its bits.
//   bfloat16 -> float: exact, the bits shifted into the top half (cvt.f32.bf16,
//     __bfloat162float); a NaN keeps its sign and payload.
//   float -> tf32 (cvt.rna.tf32.f32): round to nearest, ties away from zero, to 10 explicit
//     mantissa bits; the result is a float's bits with the 13 low mantissa bits zero (the layout
//     the MMA's .tf32 operand reads; the PTX ISA leaves tf32's layout to the implementation, and
//     this is what NVIDIA's GPUs and CUTLASS's software conversion give). Subnormal floats are
//     rounded like any other bits (the quantum 2^-136 is tf32's smallest subnormal); |x| from the
//     midpoint above the largest tf32 (0x7f7ff000) gives +-inf; inf stays inf; a NaN gives the
//     canonical 0x7fffffff (the payload is not relied on).
//
// The *_bits functions work on bit patterns and are constexpr (usable in device code under nvcc's
// --expt-relaxed-constexpr, to compare with the hardware); the float ones wrap them.
#ifndef SPMMC_TESTS_CUDA_EMULATION_HALF_BITS_H
#define SPMMC_TESTS_CUDA_EMULATION_HALF_BITS_H

#include <stdint.h>
#include <string.h>

namespace spmmc_emulation {

// Rounds the integer m / 2^shift (0 < shift < 32) to nearest, ties to even.
constexpr uint32_t round_shift_rne(uint32_t m, uint32_t shift) {
  const uint32_t kept = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  return kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
}

constexpr uint16_t f32_bits_to_f16_bits_rn(uint32_t x) {
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7fffu;                                  // NaN: canonical
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);   // >= 65520 and inf: inf
  if (a >= 0x38800000u) {                                               // >= 2^-14: a normal half
    // Rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits; a carry out of
    // the mantissa steps the exponent, as it should (no overflow: a < 65520).
    return static_cast<uint16_t>(sign | round_shift_rne(a - 0x38000000u, 13));
  }
  if (a <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25: ties to even, 0
  // A subnormal half k * 2^-24 (a carry to k = 1024 is the smallest normal, 0x0400): the float is
  // (2^23 + mantissa) * 2^(e - 150), so k = that * 2^(e - 126), a right shift by 126 - e (14..24).
  const uint32_t e = a >> 23;
  return static_cast<uint16_t>(sign | round_shift_rne((a & 0x7fffffu) | 0x800000u, 126u - e));
}

constexpr uint32_t f16_bits_to_f32_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  if (e == 0x1fu) return m != 0 ? 0x7fffffffu : sign | 0x7f800000u;  // NaN: canonical; +-inf
  if (e != 0) return sign | ((e + 112u) << 23) | (m << 13);
  if (m == 0) return sign;  // +-0
  // A subnormal half m * 2^-24: normalise (the leading bit to bit 10).
  uint32_t exponent = 113u;  // of 2^-14, the exponent of bit 10 of m
  while ((m & 0x400u) == 0) {
    m <<= 1;
    --exponent;
  }
  return sign | (exponent << 23) | ((m & 0x3ffu) << 13);
}

constexpr uint16_t f32_bits_to_bf16_bits_rn(uint32_t x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;  // NaN: canonical
  // Round the low 16 bits away, ties to even; a carry steps the exponent (to inf past the largest).
  return static_cast<uint16_t>(round_shift_rne(x, 16));
}

constexpr uint32_t bf16_bits_to_f32_bits(uint16_t b) { return static_cast<uint32_t>(b) << 16; }

constexpr uint32_t f32_bits_to_tf32_bits_rna(uint32_t x) {
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7fffffffu;  // NaN: canonical
  if (a == 0x7f800000u) return x;           // +-inf
  // Add half of the dropped quantum (a tie goes up in magnitude: away from zero) and clear the 13
  // low bits; a carry steps the exponent, past the largest finite value to 0x7f800000 (inf).
  return (x & 0x80000000u) | ((a + 0x1000u) & 0xffffe000u);
}

inline float f32_from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint32_t f32_to_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline uint16_t float_to_half_bits_rn(float f) { return f32_bits_to_f16_bits_rn(f32_to_bits(f)); }
inline float half_bits_to_float(uint16_t h) { return f32_from_bits(f16_bits_to_f32_bits(h)); }
inline uint16_t float_to_bfloat16_bits_rn(float f) { return f32_bits_to_bf16_bits_rn(f32_to_bits(f)); }
inline float bfloat16_bits_to_float(uint16_t b) { return f32_from_bits(bf16_bits_to_f32_bits(b)); }
inline float float_to_tf32_rna(float f) { return f32_from_bits(f32_bits_to_tf32_bits_rna(f32_to_bits(f))); }

}  // namespace spmmc_emulation

#endif  // SPMMC_TESTS_CUDA_EMULATION_HALF_BITS_H
