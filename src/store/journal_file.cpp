#include "journal_file.h"

#include <string>

#include "iolab/base/error.h"
#include "iolab/base/crc32c.h"
#include "iolab/store/journal.h"
#include "iolab/base/le.h"

namespace iolab::store {

Journal::~Journal() = default;  // the file closes quietly

JournalCounters Journal::counters() const {
  io::IoCounters c = file_->counters();
  return {c.calls, c.bytes_written + mapped_bytes_written_, c.bytes_read};
}

void Journal::check_and_decode(std::uint64_t offset, std::uint32_t data_length, std::span<const std::byte> buf,
                               Employee& out) const {
  RecordHeader h = decode_record_header(buf.data());
  auto data = buf.subspan(kRecordHeaderSize, data_length);
  // The CRC covers header bytes 4..15 and the data, which follow each other
  // in `buf`: one call over both (a ~100-byte record takes the three-stream
  // path, two calls of 12 and ~90 bytes did not). decode() checks the
  // fields' structure itself (record_valid would parse it a second time).
  bool ok = h.kind == kKindActive && h.data_length == data_length &&
            crc32c(buf.subspan(4, kRecordHeaderSize - 4 + data_length)) == h.crc;
  if (!ok || !decode(data, out))
    throw Error("get", path().string(),
                "record at offset " + std::to_string(offset) + " fails its header or CRC32C check");
}

std::string_view Journal::key_in(std::span<const std::byte> data) noexcept {
  if (data.size() < 4) return {};
  std::uint32_t n = le::get32(data.data());
  if (n > data.size() - 4) return {};
  return {reinterpret_cast<const char*>(data.data() + 4), n};
}

std::string_view Journal::key(std::uint64_t offset, std::uint32_t data_length, std::string& scratch) {
  // One pread(2) of the record's data (the file position is not moved).
  scratch.resize(data_length);
  pread_exact({reinterpret_cast<std::byte*>(scratch.data()), scratch.size()}, offset + kRecordHeaderSize);
  return key_in({reinterpret_cast<const std::byte*>(scratch.data()), scratch.size()});
}

void Journal::pread_exact(std::span<std::byte> dst, std::uint64_t offset) {
  if (file_->read_at(offset, dst) != dst.size())
    throw Error("pread", path().string(), "unexpected end of file at offset " + std::to_string(offset));
}

void Journal::read_exact(std::span<std::byte> dst) {
  if (file_->read(dst) != dst.size()) throw Error("read", path().string(), "unexpected end of file");
}

void Journal::write_checkpoint(std::span<const std::byte> checkpoint) {
  file_->write_at(kCheckpointOffset, checkpoint);
}

void Journal::sync(io::Durability call) {
  flush();
  file_->sync(call);
}

void Journal::close(std::uint64_t end) {
  if (closed_) return;
  closed_ = true;
  flush();
  if (file_->size() > end) file_->truncate(end);
  file_->close();
}

std::unique_ptr<Journal> make_journal(const StoreOptions& options, std::unique_ptr<io::EnvFile> file,
                                      std::uint64_t end) {
  switch (options.backend) {
    case Backend::Fields: return make_fields_journal(std::move(file));
    case Backend::Gather: return make_gather_journal(std::move(file));
    case Backend::Mmap: return make_mmap_journal(std::move(file), end, options.mmap_grow_step);
    case Backend::Buffered: return make_buffered_journal(std::move(file), end, options.stage_buffer);
  }
  throw Error("open journal", file->path().string(), "unknown backend");
}

}  // namespace iolab::store
