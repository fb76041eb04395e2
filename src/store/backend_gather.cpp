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
    pwritev_all(image.first(kRecordHeaderSize), image.subspan(kRecordHeaderSize), offset);
  }

  void write_in_hole(std::uint64_t offset, std::span<const std::byte> image,
                     std::span<const std::byte> leftover) override {
    // Two calls: data (+ the remainder's free header) first, record header last.
    pwritev_all(image.subspan(kRecordHeaderSize), leftover, offset + kRecordHeaderSize);
    pwrite_all(image.first(kRecordHeaderSize), offset);
  }

  void write_header(std::uint64_t offset, std::span<const std::byte> header) override {
    pwrite_all(header, offset);
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

std::unique_ptr<Journal> make_gather_journal(int fd, const std::filesystem::path& path) {
  return std::make_unique<GatherJournal>(fd, path);
}

}  // namespace iolab::store
