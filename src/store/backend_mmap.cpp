// `mmap`: the MappedByteBuffer analogue. Records are stored into a shared
// mapping of the journal. The file grows by a fixed step whose blocks are
// allocated first (posix_fallocate: a full disk is an Error here, not a
// SIGBUS later) and the mapping follows with mremap (the base may move).
// Gets decode in place from the mapping. Sync is msync(MS_SYNC) of the
// dirty range (MS_ASYNC would make nothing durable). Close trims the
// preallocated tail.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <emmintrin.h>
#include <fcntl.h>
#include <limits>
#include <sys/mman.h>
#include <unistd.h>

#include "iolab/error.h"
#include "iolab/store/journal.h"
#include "journal_file.h"

namespace iolab::store {
namespace {

constexpr std::uint64_t kPage = 4096;

class MmapJournal final : public Journal {
 public:
  MmapJournal(int fd, std::filesystem::path path, std::uint64_t end, std::size_t step)
      : Journal(fd, std::move(path)), step_(std::max<std::size_t>(step, kRecordAlign)) {
    try {
      off_t size = ::lseek(fd_, 0, SEEK_END);
      ++counters_.syscalls;
      if (size < 0) fail("lseek", errno);
      file_size_ = static_cast<std::uint64_t>(size);
      if (file_size_ > 0) map(file_size_);
      ensure(std::max<std::uint64_t>(end, kRecordHeaderSize));
    } catch (...) {
      if (map_ != nullptr) ::munmap(map_, map_size_);
      throw;
    }
  }
  ~MmapJournal() override {
    if (map_ != nullptr) ::munmap(map_, map_size_);
  }

  void append(std::uint64_t offset, std::span<const std::byte> image) override {
    ensure(offset + image.size());
    std::memcpy(map_ + offset, image.data(), image.size());
    wrote(offset, image.size());
  }

  void write_in_hole(std::uint64_t offset, std::span<const std::byte> image,
                     std::span<const std::byte> leftover) override {
    check_range(offset, image.size() + leftover.size());
    std::memcpy(map_ + offset + kRecordHeaderSize, image.data() + kRecordHeaderSize,
                image.size() - kRecordHeaderSize);
    if (!leftover.empty()) std::memcpy(map_ + offset + image.size(), leftover.data(), leftover.size());
    store_header(offset, image.first(kRecordHeaderSize));
    wrote(offset, image.size() + leftover.size());
  }

  void write_header(std::uint64_t offset, std::span<const std::byte> header) override {
    check_range(offset, kRecordHeaderSize);
    store_header(offset, header);
    wrote(offset, kRecordHeaderSize);
  }

  void read(std::uint64_t offset, std::uint32_t data_length, Employee& out) override {
    check_range(offset, kRecordHeaderSize + data_length);
    // Ask for the record's last cache line with its first: the two misses overlap.
    __builtin_prefetch(map_ + offset + kRecordHeaderSize + data_length - 1);
    check_and_decode(offset, data_length, {map_ + offset, kRecordHeaderSize + data_length}, out);
  }

  void sync(io::Durability call) override {
    if (dirty_hi_ > dirty_lo_) {
      std::uint64_t lo = dirty_lo_ / kPage * kPage;
      ++counters_.syscalls;
      if (::msync(map_ + lo, dirty_hi_ - lo, MS_SYNC) < 0) fail("msync", errno);
    }
    dirty_lo_ = std::numeric_limits<std::uint64_t>::max();
    dirty_hi_ = 0;
    if (call == io::Durability::Fsync) fd_sync(call);  // metadata too
  }

  void close(std::uint64_t end) override {
    if (map_ != nullptr) {
      ++counters_.syscalls;
      int r = ::munmap(map_, map_size_);
      map_ = nullptr;
      if (r < 0) fail("munmap", errno);
    }
    Journal::close(end);
  }

 private:
  // One aligned 16-byte store: a process killed mid-way leaves the old
  // header or the new one, never half of each.
  void store_header(std::uint64_t offset, std::span<const std::byte> header) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(header.data()));
    _mm_store_si128(reinterpret_cast<__m128i*>(map_ + offset), v);
  }
  void wrote(std::uint64_t offset, std::uint64_t n) {
    counters_.bytes_written += n;
    dirty_lo_ = std::min(dirty_lo_, offset);
    dirty_hi_ = std::max(dirty_hi_, offset + n);
  }
  void check_range(std::uint64_t offset, std::uint64_t n) const {
    if (offset > file_size_ || n > file_size_ - offset)
      throw Error("mmap journal", path_.string(), "offset " + std::to_string(offset) + " is past the mapped file");
  }
  // Grows the file (allocated blocks) and the mapping to hold `need` bytes.
  void ensure(std::uint64_t need) {
    if (need <= file_size_ && map_ != nullptr) return;
    std::uint64_t size = file_size_;
    if (need > size) size += (need - size + step_ - 1) / step_ * step_;
    std::uint64_t old_size = file_size_;
    if (size > file_size_) {
      ++counters_.syscalls;
      int err = ::posix_fallocate(fd_, static_cast<off_t>(file_size_), static_cast<off_t>(size - file_size_));
      if (err != 0) fail("fallocate", err);
      file_size_ = size;
    }
    map(file_size_);
#ifdef MADV_POPULATE_WRITE
    // Fault the new pages in writable with one call rather than one fault
    // per 4 KiB page as the stores reach them. Only a hint: older kernels
    // say EINVAL, and the stores fault the pages in as usual.
    std::uint64_t from = old_size / kPage * kPage;
    if (file_size_ > from) {
      ++counters_.syscalls;
      (void)::madvise(map_ + from, file_size_ - from, MADV_POPULATE_WRITE);
    }
#else
    (void)old_size;
#endif
  }
  void map(std::uint64_t size) {
    ++counters_.syscalls;
    void* p = map_ == nullptr ? ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0)
                              : ::mremap(map_, map_size_, size, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) fail(map_ == nullptr ? "mmap" : "mremap", errno);
    map_ = static_cast<std::byte*>(p);
    map_size_ = size;
  }

  std::size_t step_;
  std::uint64_t file_size_ = 0;
  std::byte* map_ = nullptr;
  std::uint64_t map_size_ = 0;
  std::uint64_t dirty_lo_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t dirty_hi_ = 0;
};

}  // namespace

std::unique_ptr<Journal> make_mmap_journal(int fd, const std::filesystem::path& path, std::uint64_t end,
                                           std::size_t grow_step) {
  return std::make_unique<MmapJournal>(fd, path, end, grow_step);
}

}  // namespace iolab::store
