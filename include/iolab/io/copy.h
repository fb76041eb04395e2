// File-to-file copy methods: a read/write loop, and the kernel's zero-copy paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "iolab/io/buffer.h"
#include "iolab/io/file.h"

namespace iolab::io {

struct CopyOptions {
  std::size_t buffer_size = std::size_t{1} << 20;  // read/write loop, splice chunk, mmap+write chunk
  BufferKind buffer = BufferKind::Aligned;          // read/write loop
};

struct CopyStats {
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;  // system calls that moved data
};

class CopyMethod {
 public:
  virtual ~CopyMethod() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual Availability probe(const std::filesystem::path& dir) const = 0;
  // Copies all of `from` into `to`, which must already exist (created by
  // scratch) and is truncated first; `to` ends byte-identical to `from`.
  virtual CopyStats copy(const std::filesystem::path& from, const std::filesystem::path& to,
                         const CopyOptions& options = {}) const = 0;
};

}  // namespace iolab::io
