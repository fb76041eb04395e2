// `buffered`: LMDB's split: appends are
// staged in a page-aligned buffer and reach the file in large pwrite(2)s
// (one per buffer-full, or at a flush or sync); gets decode in place from a
// read-only shared mapping of the file (the page cache is one, so what
// pwrite wrote is what the map shows), or from the buffer while staged.
// Writes into holes already in the file go straight to it (data, then
// header); holes still staged are patched in the buffer. The map is never
// written through, so a stray store cannot corrupt the journal, and it only
// covers bytes already written, so it cannot fault past the end of file.
// (The first version read with one pread(2) per get: ~1.5x slower gets.)
#include <algorithm>
#include <cstring>
#include <vector>

#include "iolab/io/buffer.h"
#include "iolab/store/journal.h"
#include "journal_file.h"

namespace iolab::store {
namespace {

class BufferedJournal final : public Journal {
 public:
  BufferedJournal(std::unique_ptr<io::EnvFile> file, std::uint64_t end, std::size_t stage_bytes)
      : Journal(std::move(file)),
        stage_(std::max<std::size_t>(stage_bytes, io::kPageSize), io::BufferKind::Aligned),
        stage_start_(end) {}
  ~BufferedJournal() override = default;  // the region unmaps quietly

  void append(std::uint64_t offset, std::span<const std::byte> image) override {
    // offset == stage_start_ + staged_: appends are contiguous.
    if (staged_ + image.size() > stage_.size()) flush();
    if (image.size() > stage_.size()) {  // larger than the whole buffer: write it through
      file_->write_at(offset, image);
      stage_start_ = offset + image.size();
      return;
    }
    std::memcpy(stage_.data() + staged_, image.data(), image.size());
    staged_ += image.size();
  }

  void write_in_hole(std::uint64_t offset, std::span<const std::byte> image,
                     std::span<const std::byte> leftover) override {
    if (offset >= stage_start_) {  // still in memory: order does not matter
      std::byte* p = stage_.data() + (offset - stage_start_);
      std::memcpy(p, image.data(), image.size());
      if (!leftover.empty()) std::memcpy(p + image.size(), leftover.data(), leftover.size());
      return;
    }
    std::span<const std::byte> parts[] = {image.subspan(kRecordHeaderSize), leftover};
    file_->write_at(offset + kRecordHeaderSize, parts);
    file_->write_at(offset, image.first(kRecordHeaderSize));
  }

  void write_header(std::uint64_t offset, std::span<const std::byte> header) override {
    if (offset >= stage_start_) {
      std::memcpy(stage_.data() + (offset - stage_start_), header.data(), header.size());
      return;
    }
    file_->write_at(offset, header);
  }

  void read(std::uint64_t offset, std::uint32_t data_length, Employee& out) override {
    std::size_t n = kRecordHeaderSize + data_length;
    if (offset >= stage_start_) {
      check_and_decode(offset, data_length, {stage_.data() + (offset - stage_start_), n}, out);
      return;
    }
    if (map_ == nullptr || offset + n > map_->size()) remap(offset + n);
    const std::byte* base = map_->data();
    // Ask for the record's last cache line with its first: the two misses overlap.
    __builtin_prefetch(base + offset + n - 1);
    check_and_decode(offset, data_length, {base + offset, n}, out);
  }

  std::string_view key(std::uint64_t offset, std::uint32_t data_length, std::string&) override {
    if (offset >= stage_start_) return key_in({stage_.data() + (offset - stage_start_) + kRecordHeaderSize, data_length});
    std::size_t n = kRecordHeaderSize + data_length;
    if (map_ == nullptr || offset + n > map_->size()) remap(offset + n);
    return key_in({map_->data() + offset + kRecordHeaderSize, data_length});
  }

  void close(std::uint64_t end) override {
    if (map_ != nullptr) map_->unmap();
    Journal::close(end);
  }

  void flush() override {
    if (staged_ == 0) return;
    file_->write_at(stage_start_, {stage_.data(), staged_});
    stage_start_ += staged_;
    staged_ = 0;
  }

 private:
  // Maps at least `need` bytes (all written already), doubling so that a
  // growing journal is re-mapped rarely. The mapping may extend past the
  // end of file; only bytes below it are ever read.
  void remap(std::uint64_t need) {
    std::uint64_t old = map_ == nullptr ? 0 : map_->size();
    std::uint64_t size = std::max<std::uint64_t>({need, 2 * old, std::uint64_t{16} << 20});
    size = (size + io::kPageSize - 1) / io::kPageSize * io::kPageSize;
    if (map_ == nullptr)
      map_ = file_->map(0, size, io::Access::Read);
    else
      map_->resize(size);
  }

  io::Buffer stage_;
  std::uint64_t stage_start_;  // file offset of the buffer's first byte
  std::size_t staged_ = 0;
  std::unique_ptr<io::MappedRegion> map_;  // read-only
};

}  // namespace

std::unique_ptr<Journal> make_buffered_journal(std::unique_ptr<io::EnvFile> file, std::uint64_t end,
                                               std::size_t stage_bytes) {
  return std::make_unique<BufferedJournal>(std::move(file), end, stage_bytes);
}

}  // namespace iolab::store
