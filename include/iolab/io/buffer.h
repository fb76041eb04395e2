// Memory for I/O: an ordinary heap allocation or a page-aligned one.
// The C++ counterpart of Java's heap vs direct ByteBuffer: the kernel copies
// to and from either, but O_DIRECT needs the aligned kind.
//
// Neither kind is placed by accident. Where malloc puts a block depends on
// everything allocated before it (a large block is mmapped and starts 16
// bytes past a page boundary, a small one lands wherever the heap is), and a
// copy's speed can depend on the destination's offset in its page relative to
// the source's: on AMD Zen 3 a `rep movsb` copy (glibc's memcpy from 2112
// bytes up, the kernel's copy to user space) whose destination is 16 bytes
// past the source modulo 4096 runs ~5x slower. A heap buffer therefore starts
// exactly kHeapBufferOffset bytes past a page boundary, in every run, and
// results record the offset (Result::buffer_offset).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace iolab::io {

enum class BufferKind { Heap, Aligned };

std::string_view to_string(BufferKind kind);
// Throws UsageError for an unknown name ("heap" or "aligned").
BufferKind parse_buffer_kind(std::string_view name);

inline constexpr std::size_t kPageSize = 4096;
// Where a heap buffer starts within its page: one cache line in, so it is
// not page- or sector-aligned (O_DIRECT still refuses it, as it refuses a
// Java heap array) and no copy to or from a page-aligned file offset is 16
// bytes out of step (the Zen 3 `rep movsb` slow case above).
inline constexpr std::size_t kHeapBufferOffset = 64;

// Where `p` lies within its page (results record it for a buffer: see above).
inline std::size_t page_offset(const void* p) noexcept { return reinterpret_cast<std::uintptr_t>(p) % kPageSize; }

class Buffer {
 public:
  Buffer() = default;
  // Heap: operator new[], the data kHeapBufferOffset bytes past a page
  // boundary (the block is over-allocated by a page and a cache line for it).
  // Aligned: `alignment`-aligned (a power of two, at least kPageSize when 0
  // is given). Contents are zero.
  Buffer(std::size_t size, BufferKind kind, std::size_t alignment = 0);

  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  BufferKind kind() const noexcept { return kind_; }
  // The data's offset within its page: kHeapBufferOffset for Heap, 0 for Aligned.
  std::size_t page_offset() const noexcept { return io::page_offset(data_); }
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
