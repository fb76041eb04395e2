// `fields`: the RandomAccessFile analogue. The file position moves with
// every call; lseek only when it is not already where the next field goes;
// one write(2) per field and one read(2) per field, as writeInt/write did.
// The 16-byte header is one call, so it is written all or nothing.
#include <algorithm>
#include <limits>
#include <vector>

#include "iolab/store/journal.h"
#include "journal_file.h"
#include "iolab/base/le.h"

namespace iolab::store {
namespace {

class FieldsJournal final : public Journal {
 public:
  using Journal::Journal;

  void append(std::uint64_t offset, std::span<const std::byte> image) override {
    move_to(offset);
    put(image.first(kRecordHeaderSize));
    put_fields(image.subspan(kRecordHeaderSize));
  }

  void write_in_hole(std::uint64_t offset, std::span<const std::byte> image,
                     std::span<const std::byte> leftover) override {
    move_to(offset + kRecordHeaderSize);
    put_fields(image.subspan(kRecordHeaderSize));
    if (!leftover.empty()) put(leftover);  // the position is already right after the image
    move_to(offset);
    put(image.first(kRecordHeaderSize));
  }

  void write_header(std::uint64_t offset, std::span<const std::byte> header) override {
    move_to(offset);
    put(header);
  }

  void write_checkpoint(std::span<const std::byte> checkpoint) override {
    move_to(kCheckpointOffset);
    put(checkpoint);
  }

  void read(std::uint64_t offset, std::uint32_t data_length, Employee& out) override {
    buf_.resize(kRecordHeaderSize + data_length);
    move_to(offset);
    get(0, kRecordHeaderSize);
    // Each string: its length, then its bytes; a length is checked against
    // the record's size before it is used.
    std::size_t at = kRecordHeaderSize;
    auto get_string = [&]() {
      if (!get(at, 4)) return false;
      std::uint32_t n = le::get32(buf_.data() + at);
      at += 4;
      if (!get(at, n)) return false;
      at += n;
      return true;
    };
    bool ok = get_string() && get_string() && get(at, 4) && get(at + 4, 4) && get(at + 8, 1);
    if (ok) {
      at += 9;
      ok = get_string();
    }
    if (!ok) std::fill(buf_.begin(), buf_.end(), std::byte{0});  // fails the check below
    check_and_decode(offset, data_length, buf_, out);
  }

 private:
  static constexpr std::uint64_t kUnknown = std::numeric_limits<std::uint64_t>::max();

  void move_to(std::uint64_t offset) {
    if (pos_ != offset) {
      pos_ = kUnknown;  // stays unknown if the seek throws
      file_->seek(offset);
      pos_ = offset;
    }
  }
  void put(std::span<const std::byte> s) {
    if (s.empty()) return;
    std::uint64_t p = pos_;
    pos_ = kUnknown;  // stays unknown if the write throws part-way
    file_->write(s);
    pos_ = p + s.size();
  }
  // Data fields of an image we encoded ourselves; the last write carries the padding.
  void put_fields(std::span<const std::byte> data) {
    std::size_t at = 0;
    auto field = [&](std::size_t n) {
      put(data.subspan(at, n));
      at += n;
    };
    auto string_field = [&](bool last) {
      std::uint32_t n = le::get32(data.data() + at);
      field(4);
      field(last ? data.size() - at : n);
    };
    string_field(false);
    string_field(false);
    field(4);
    field(4);
    field(1);
    string_field(true);
  }
  // Reads n bytes at the file position into buf_[at..]; false when they would not fit the record.
  bool get(std::size_t at, std::size_t n) {
    if (n > buf_.size() - at) return false;
    if (n == 0) return true;
    std::uint64_t p = pos_;
    pos_ = kUnknown;
    read_exact({buf_.data() + at, n});
    pos_ = p + n;
    return true;
  }

  std::uint64_t pos_ = kUnknown;  // the file position, when known
  std::vector<std::byte> buf_;
};

}  // namespace

std::unique_ptr<Journal> make_fields_journal(std::unique_ptr<io::EnvFile> file) {
  return std::make_unique<FieldsJournal>(std::move(file));
}

}  // namespace iolab::store
