// SHA-256 (FIPS 180-4), for the weights fingerprint emitted kernels carry.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/common/csr.h"

namespace spmmc {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  std::array<uint8_t, 32> finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;
};

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

// SHA-256 of A in canonical form: "spmmc-csr-v1", rows and cols (int64 little-endian), then
// row_ptr, col_idx (int32 LE) and values (float32 LE bit patterns). Equal hashes mean the same
// matrix, whatever file or format it came from.
std::string weights_sha256(const Csr& a);

}  // namespace spmmc
