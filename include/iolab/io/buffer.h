// Memory for I/O: an ordinary heap allocation or a page-aligned one.
// The C++ counterpart of Java's heap vs direct ByteBuffer: the kernel copies
// to and from either, but O_DIRECT needs the aligned kind, and large heap
// blocks from malloc start 16 bytes past a page boundary.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

namespace iolab::io {

enum class BufferKind { Heap, Aligned };

std::string_view to_string(BufferKind kind);
// Throws UsageError for an unknown name ("heap" or "aligned").
BufferKind parse_buffer_kind(std::string_view name);

inline constexpr std::size_t kPageSize = 4096;

class Buffer {
 public:
  Buffer() = default;
  // Heap: operator new[]. Aligned: `alignment`-aligned (a power of two, at
  // least kPageSize when 0 is given). Contents are zero.
  Buffer(std::size_t size, BufferKind kind, std::size_t alignment = 0);

  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  BufferKind kind() const noexcept { return kind_; }
  std::span<std::byte> span() noexcept { return {data_, size_}; }
  std::span<const std::byte> span() const noexcept { return {data_, size_}; }

 private:
  struct Free {
    BufferKind kind;
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte[], Free> owner_{nullptr, Free{BufferKind::Heap}};
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  BufferKind kind_ = BufferKind::Heap;
};

}  // namespace iolab::io
