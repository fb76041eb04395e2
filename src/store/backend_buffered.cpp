// `buffered`: appends are staged in a page-aligned buffer and reach the
// file in large pwrite(2)s (one per buffer-full, or at a flush or sync).
// A get of a staged record decodes it from the buffer; others are one
// pread(2). Writes into holes already in the file go straight to it
// (data, then header); holes still staged are patched in the buffer.
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
  BufferedJournal(int fd, std::filesystem::path path, std::uint64_t end, std::size_t stage_bytes)
      : Journal(fd, std::move(path)),
        stage_(std::max<std::size_t>(stage_bytes, io::kPageSize), io::BufferKind::Aligned),
        stage_start_(end) {}

  void append(std::uint64_t offset, std::span<const std::byte> image) override {
    // offset == stage_start_ + staged_: appends are contiguous.
    if (staged_ + image.size() > stage_.size()) flush();
    if (image.size() > stage_.size()) {  // larger than the whole buffer: write it through
      pwrite_all(image, offset);
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
    pwritev_all(image.subspan(kRecordHeaderSize), leftover, offset + kRecordHeaderSize);
    pwrite_all(image.first(kRecordHeaderSize), offset);
  }

  void write_header(std::uint64_t offset, std::span<const std::byte> header) override {
    if (offset >= stage_start_) {
      std::memcpy(stage_.data() + (offset - stage_start_), header.data(), header.size());
      return;
    }
    pwrite_all(header, offset);
  }

  void read(std::uint64_t offset, std::uint32_t data_length, Employee& out) override {
    std::size_t n = kRecordHeaderSize + data_length;
    if (offset >= stage_start_) {
      check_and_decode(offset, data_length, {stage_.data() + (offset - stage_start_), n}, out);
      return;
    }
    buf_.resize(n);
    pread_exact(buf_, offset);
    check_and_decode(offset, data_length, buf_, out);
  }

  void flush() override {
    if (staged_ == 0) return;
    pwrite_all({stage_.data(), staged_}, stage_start_);
    stage_start_ += staged_;
    staged_ = 0;
  }

 private:
  io::Buffer stage_;
  std::uint64_t stage_start_;  // file offset of the buffer's first byte
  std::size_t staged_ = 0;
  std::vector<std::byte> buf_;
};

}  // namespace

std::unique_ptr<Journal> make_buffered_journal(int fd, const std::filesystem::path& path, std::uint64_t end,
                                               std::size_t stage_bytes) {
  return std::make_unique<BufferedJournal>(fd, path, end, stage_bytes);
}

}  // namespace iolab::store
