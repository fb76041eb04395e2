#include "iolab/io/buffer.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "iolab/base/error.h"
#include "iolab/base/names.h"

namespace iolab::io {

namespace {
constexpr NameTable<BufferKind, 2> kBufferKinds{{{BufferKind::Heap, "heap"}, {BufferKind::Aligned, "aligned"}}};
}  // namespace

std::string_view to_string(BufferKind kind) { return name_of(kBufferKinds, kind); }

BufferKind parse_buffer_kind(std::string_view name) { return parse_name(kBufferKinds, name, "buffer kind"); }

void Buffer::Free::operator()(std::byte* p) const noexcept {
  if (kind == BufferKind::Heap) delete[] p;
  else std::free(p);
}

Buffer::Buffer(std::size_t size, BufferKind kind, std::size_t alignment) : size_(size), kind_(kind) {
  if (kind == BufferKind::Heap) {
    // value-initialised: the pages are touched now, not inside a timed loop.
    // Over-allocated so the data can start at the fixed offset in a page
    // wherever new[] put the block (see kHeapBufferOffset).
    constexpr std::size_t slack = kPageSize + kHeapBufferOffset;
    if (size > SIZE_MAX - slack) throw std::bad_alloc();
    owner_ = std::unique_ptr<std::byte[], Free>(new std::byte[size + slack](), Free{kind});
    auto at = reinterpret_cast<std::uintptr_t>(owner_.get());
    data_ = owner_.get() + ((kPageSize - at % kPageSize) % kPageSize + kHeapBufferOffset);
  } else {
    if (alignment == 0) alignment = kPageSize;
    if ((alignment & (alignment - 1)) != 0)
      throw UsageError("buffer alignment " + std::to_string(alignment), "not a power of two");
    // posix_memalign refuses alignments below a pointer's size; a stricter
    // power of two satisfies the smaller one as well.
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    std::size_t rounded = (size + alignment - 1) / alignment * alignment;
    void* p = nullptr;
    int err = ::posix_memalign(&p, alignment, rounded == 0 ? alignment : rounded);
    if (err != 0) throw Error("allocate", std::to_string(size) + "-byte aligned buffer", err);
    std::memset(p, 0, rounded == 0 ? alignment : rounded);
    owner_ = std::unique_ptr<std::byte[], Free>(static_cast<std::byte*>(p), Free{kind});
    data_ = owner_.get();
  }
}

}  // namespace iolab::io
