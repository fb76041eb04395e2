// `mmap`: the MappedByteBuffer analogue. Records are stored into a shared
// mapping of the journal. The file grows by a fixed step whose blocks are
// allocated first (fallocate: a full disk is an Error here, not a SIGBUS
// later) and the mapping follows with mremap (the base may move).
// Gets decode in place from the mapping. Sync is msync(MS_SYNC) of the
// dirty range (MS_ASYNC would make nothing durable). Close trims the
// preallocated tail.
#include <algorithm>
#include <cstring>
#include <emmintrin.h>
#include <limits>

#include "iolab/base/error.h"
#include "iolab/store/journal.h"
#include "journal_file.h"

namespace iolab::store {
namespace {

constexpr std::uint64_t kPage = 4096;

class MmapJournal final : public Journal {
 public:
  MmapJournal(std::unique_ptr<io::EnvFile> file, std::uint64_t end, std::size_t step)
      : Journal(std::move(file)), step_(std::max<std::size_t>(step, kRecordAlign)) {
    file_size_ = file_->size();
    if (file_size_ > 0) map(file_size_);
    ensure(std::max<std::uint64_t>(end, kRecordHeaderSize));
  }
  ~MmapJournal() override = default;  // the region unmaps quietly

  void append(std::uint64_t offset, std::span<const std::byte> image) override {
    ensure(offset + image.size());
    std::memcpy(base() + offset, image.data(), image.size());
    wrote(offset, image.size());
  }

  void write_in_hole(std::uint64_t offset, std::span<const std::byte> image,
                     std::span<const std::byte> leftover) override {
    check_range(offset, image.size() + leftover.size());
    std::memcpy(base() + offset + kRecordHeaderSize, image.data() + kRecordHeaderSize,
                image.size() - kRecordHeaderSize);
    if (!leftover.empty()) std::memcpy(base() + offset + image.size(), leftover.data(), leftover.size());
    store_header(offset, image.first(kRecordHeaderSize));
    wrote(offset, image.size() + leftover.size());
  }

  void write_header(std::uint64_t offset, std::span<const std::byte> header) override {
    check_range(offset, kRecordHeaderSize);
    store_header(offset, header);
    wrote(offset, kRecordHeaderSize);
  }

  void write_checkpoint(std::span<const std::byte> checkpoint) override {
    check_range(kCheckpointOffset, checkpoint.size());
    std::memcpy(base() + kCheckpointOffset, checkpoint.data(), checkpoint.size());
    wrote(kCheckpointOffset, checkpoint.size());
  }

  void read(std::uint64_t offset, std::uint32_t data_length, Employee& out) override {
    check_range(offset, kRecordHeaderSize + data_length);
    // Ask for the record's last cache line with its first: the two misses overlap.
    __builtin_prefetch(base() + offset + kRecordHeaderSize + data_length - 1);
    check_and_decode(offset, data_length, {base() + offset, kRecordHeaderSize + data_length}, out);
  }

  std::string_view key(std::uint64_t offset, std::uint32_t data_length, std::string&) override {
    check_range(offset, kRecordHeaderSize + data_length);
    return key_in({base() + offset + kRecordHeaderSize, data_length});
  }

  void sync(io::Durability call) override {
    // One msync over the dirty range: the kernel writes only the pages
    // dirty in it, so a range from the checkpoint's page costs no more.
    if (dirty_hi_ > dirty_lo_) region_->sync(dirty_lo_, dirty_hi_ - dirty_lo_);
    dirty_lo_ = std::numeric_limits<std::uint64_t>::max();
    dirty_hi_ = 0;
    if (call == io::Durability::Fsync) file_->sync(call);  // metadata too
  }

  void close(std::uint64_t end) override {
    if (region_ != nullptr) region_->unmap();
    Journal::close(end);
  }

 private:
  std::byte* base() const noexcept { return region_->data(); }
  // One aligned 16-byte store: a process killed mid-way leaves the old
  // header or the new one, never half of each.
  void store_header(std::uint64_t offset, std::span<const std::byte> header) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(header.data()));
    _mm_store_si128(reinterpret_cast<__m128i*>(base() + offset), v);
  }
  void wrote(std::uint64_t offset, std::uint64_t n) {
    mapped_bytes_written_ += n;
    dirty_lo_ = std::min(dirty_lo_, offset);
    dirty_hi_ = std::max(dirty_hi_, offset + n);
  }
  void check_range(std::uint64_t offset, std::uint64_t n) const {
    if (offset > file_size_ || n > file_size_ - offset)
      throw Error("mmap journal", path().string(), "offset " + std::to_string(offset) + " is past the mapped file");
  }
  // Grows the file (allocated blocks) and the mapping to hold `need` bytes.
  void ensure(std::uint64_t need) {
    if (need <= file_size_ && region_ != nullptr) return;
    std::uint64_t size = file_size_;
    if (need > size) size += (need - size + step_ - 1) / step_ * step_;
    std::uint64_t old_size = file_size_;
    if (size > file_size_) {
      file_->allocate(file_size_, size - file_size_);
      file_size_ = size;
    }
    map(file_size_);
    // Fault the new pages in writable with one call rather than one fault
    // per 4 KiB page as the stores reach them (a hint).
    std::uint64_t from = old_size / kPage * kPage;
    if (file_size_ > from) region_->prefault(from, file_size_ - from);
  }
  void map(std::uint64_t size) {
    if (region_ == nullptr)
      region_ = file_->map(0, size, io::Access::ReadWrite);
    else
      region_->resize(size);
  }

  std::size_t step_;
  std::uint64_t file_size_ = 0;
  std::unique_ptr<io::MappedRegion> region_;
  std::uint64_t dirty_lo_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t dirty_hi_ = 0;
};

}  // namespace

std::unique_ptr<Journal> make_mmap_journal(std::unique_ptr<io::EnvFile> file, std::uint64_t end,
                                           std::size_t grow_step) {
  return std::make_unique<MmapJournal>(std::move(file), end, grow_step);
}

}  // namespace iolab::store
