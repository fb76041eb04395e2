#include "journal_file.h"

#include <string>

#include "iolab/base/error.h"
#include "iolab/base/crc32c.h"
#include "iolab/store/journal.h"

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
  // The CRC covers header bytes 4..15 and the data; decode() checks the
  // fields' structure itself (record_valid would parse it a second time).
  bool ok = h.kind == kKindActive && h.data_length == data_length &&
            crc32c(crc32c(buf.subspan(4, kRecordHeaderSize - 4)), data) == h.crc;
  if (!ok || !decode(data, out))
    throw Error("get", path().string(),
                "record at offset " + std::to_string(offset) + " fails its header or CRC32C check");
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
