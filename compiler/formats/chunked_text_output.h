// Text formatted into memory and handed to a stream in pieces of about 1 MiB: how the writers
// stay fast (fmt into a buffer, not iostream <<) without holding a whole file in memory.
#pragma once

#include <cstddef>
#include <ostream>

#include <fmt/format.h>

namespace spmmc {

class ChunkedTextOutput {
 public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;

  explicit ChunkedTextOutput(std::ostream& out) : out_(out) { buffer_.reserve(kChunkBytes + 256); }

  // Format into this (fmt::format_to(std::back_inserter(text.buffer()), ...)), then call
  // flush_if_full(); call flush() once at the end.
  fmt::memory_buffer& buffer() { return buffer_; }
  void flush_if_full() {
    if (buffer_.size() >= kChunkBytes) flush();
  }
  void flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buffer_;
};

}  // namespace spmmc
