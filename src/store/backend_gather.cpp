// `gather`: the FileChannel analogue. A record is two buffers, header and
// data, written by one pwritev(2) at an explicit offset (no seeks); a get is
// one pread(2) of header + data.
#include <vector>

#include "iolab/store/journal.h"
#include "journal_file.h"

namespace iolab::store {
namespace {

class GatherJournal final : public Journal {
 public:
  using Journal::Journal;

  void append(std::uint64_t offset, std::span<const std::byte> image) override {
    std::span<const std::byte> parts[] = {image.first(kRecordHeaderSize), image.subspan(kRecordHeaderSize)};
    file_->write_at(offset, parts);
  }

  void write_in_hole(std::uint64_t offset, std::span<const std::byte> image,
                     std::span<const std::byte> leftover) override {
    // Two calls: data (+ the remainder's free header) first, record header last.
    std::span<const std::byte> parts[] = {image.subspan(kRecordHeaderSize), leftover};
    file_->write_at(offset + kRecordHeaderSize, parts);
    file_->write_at(offset, image.first(kRecordHeaderSize));
  }

  void write_header(std::uint64_t offset, std::span<const std::byte> header) override {
    file_->write_at(offset, header);
  }

  void read(std::uint64_t offset, std::uint32_t data_length, Employee& out) override {
    buf_.resize(kRecordHeaderSize + data_length);
    pread_exact(buf_, offset);
    check_and_decode(offset, data_length, buf_, out);
  }

 private:
  std::vector<std::byte> buf_;
};

}  // namespace

std::unique_ptr<Journal> make_gather_journal(std::unique_ptr<io::EnvFile> file) {
  return std::make_unique<GatherJournal>(std::move(file));
}

}  // namespace iolab::store
