#include "iolab/store/journal.h"

#include <algorithm>
#include <cstring>

#include "iolab/base/error.h"
#include "iolab/base/crc32c.h"
#include "iolab/store/employee.h"
#include "iolab/base/le.h"

namespace iolab::store {
namespace {

constexpr std::uint64_t kSequenceMask = kMaxSequence;

bool kind_known(std::uint8_t k) noexcept { return k == kKindActive || k == kKindFree; }

// Structure of an active record's data, without building strings.
bool data_well_formed(std::span<const std::byte> d) noexcept {
  std::size_t at = 0;
  auto skip_string = [&](bool nonempty) {
    if (d.size() - at < 4) return false;
    std::uint32_t n = le::get32(d.data() + at);
    at += 4;
    if (n > kMaxFieldBytes || n > d.size() - at || (nonempty && n == 0)) return false;
    at += n;
    return true;
  };
  if (!skip_string(true) || !skip_string(false) || d.size() - at < 9) return false;
  if (static_cast<std::uint8_t>(d[at + 8]) > 1) return false;
  at += 9;
  return skip_string(false) && at == d.size();
}

bool all_zero(std::span<const std::byte> s) noexcept {
  return std::all_of(s.begin(), s.end(), [](std::byte b) { return b == std::byte{0}; });
}

// A valid record starts at `pos`: its slot fits in the file and its CRC holds.
bool valid_at(std::span<const std::byte> file, std::uint64_t pos, RecordHeader& h) noexcept {
  if (file.size() < kRecordHeaderSize || pos > file.size() - kRecordHeaderSize) return false;
  h = decode_record_header(file.data() + pos);
  if (!kind_known(h.kind) || (h.kind == kKindActive && h.data_length > kMaxDataLength)) return false;
  if (h.kind == kKindFree && h.data_length % kRecordAlign != 0) return false;
  if (slot_size(h.data_length) > file.size() - pos) return false;
  return record_valid(h, file.subspan(pos + kRecordHeaderSize, h.data_length));
}

}  // namespace

void write_file_header(std::byte out[kFileHeaderSize], std::uint32_t version) noexcept {
  std::memcpy(out, kJournalMagic, 8);
  le::put32(out + 8, version);
  le::put32(out + 12, crc32c({out, 12}));
}

namespace {
constexpr std::uint32_t kUnorderedFlag = 1;
}  // namespace

void encode_checkpoint(std::byte out[kCheckpointSize], const Checkpoint& c) noexcept {
  std::memset(out, 0, kCheckpointSize);
  le::put32(out + 4, c.unordered ? kUnorderedFlag : 0);
  le::put64(out + 8, c.sequence);
  le::put64(out + 16, c.end);
  le::put32(out, crc32c({out + 4, kCheckpointSize - 4}));
}

bool decode_checkpoint(const std::byte* in, Checkpoint& out) noexcept {
  if (le::get32(in) != crc32c({in + 4, kCheckpointSize - 4})) return false;
  std::uint32_t flags = le::get32(in + 4);
  if ((flags & ~kUnorderedFlag) != 0) return false;
  out.unordered = (flags & kUnorderedFlag) != 0;
  out.sequence = le::get64(in + 8);
  out.end = le::get64(in + 16);
  return true;
}

void encode_record_header(std::byte out[kRecordHeaderSize], std::uint8_t kind, std::uint64_t sequence,
                          std::uint32_t data_length, std::span<const std::byte> data) noexcept {
  le::put32(out + 4, data_length);
  le::put64(out + 8, (std::uint64_t{kind} << 56) | (sequence & kSequenceMask));
  std::uint32_t crc = crc32c({out + 4, kRecordHeaderSize - 4});
  if (kind == kKindActive) crc = crc32c(crc, data);
  le::put32(out, crc);
}

RecordHeader decode_record_header(const std::byte* in) noexcept {
  RecordHeader h;
  h.crc = le::get32(in);
  h.data_length = le::get32(in + 4);
  std::uint64_t tag = le::get64(in + 8);
  h.kind = static_cast<std::uint8_t>(tag >> 56);
  h.sequence = tag & kSequenceMask;
  return h;
}

bool record_valid(const RecordHeader& h, std::span<const std::byte> data) noexcept {
  if (!kind_known(h.kind) || (h.kind == kKindActive && h.data_length > kMaxDataLength)) return false;
  std::byte head[kRecordHeaderSize];
  le::put32(head + 4, h.data_length);
  le::put64(head + 8, (std::uint64_t{h.kind} << 56) | (h.sequence & kSequenceMask));
  std::uint32_t crc = crc32c({head + 4, kRecordHeaderSize - 4});
  if (h.kind == kKindFree) return crc == h.crc;
  if (data.size() != h.data_length) return false;
  return crc32c(crc, data) == h.crc && data_well_formed(data);
}

std::uint32_t check_file_header(std::span<const std::byte> file, const std::string& name) {
  if (file.size() < kFileHeaderSize)
    throw Error("open journal", name,
                "not a journal: " + std::to_string(file.size()) + " bytes, shorter than the 16-byte file header");
  if (std::memcmp(file.data(), kJournalMagic, 8) != 0)
    throw Error("open journal", name, "not a journal: bad magic (expected \"iolabJNL\")");
  std::uint32_t version = le::get32(file.data() + 8);
  std::uint32_t crc = le::get32(file.data() + 12);
  if (crc != crc32c(file.first(12))) throw Error("open journal", name, "file header is corrupt (CRC mismatch)");
  if (version > kJournalVersion)
    throw Error("open journal", name,
                "format version " + std::to_string(version) + " is newer than this iolab supports (" +
                    std::to_string(kJournalVersion) + ")");
  if (version == 0) throw Error("open journal", name, "format version 0 is not valid");
  return version;
}

ScanResult scan_journal(std::span<const std::byte> file, const std::string& name) {
  ScanResult r;
  r.version = check_file_header(file, name);
  r.records_start = records_start(r.version);
  const std::uint64_t size = file.size();
  if (r.version >= 2 && size >= kRecordsStart) {
    r.has_checkpoint = decode_checkpoint(file.data() + kCheckpointOffset, r.checkpoint);
    r.checkpoint_corrupt = !r.has_checkpoint;
  }
  // Damage a crash can have left (see Damage::crash_debris): past the
  // checkpoint's end; under a header newer than it (a write into a hole
  // whose data did not all arrive); or right after a valid record (or free
  // mark) newer than it (the rest of the hole that record split, whose
  // free header did not arrive).
  auto debris = [&](std::uint64_t at) {
    if (!r.has_checkpoint) return false;
    if (r.checkpoint.unordered || at >= r.checkpoint.end) return true;
    if (!r.records.empty()) {
      const ScannedRecord& prev = r.records.back();
      if (prev.sequence > r.checkpoint.sequence && prev.offset + slot_size(prev.data_length) == at) return true;
    }
    if (size - at < kRecordHeaderSize) return false;
    RecordHeader t = decode_record_header(file.data() + at);
    return t.kind == kKindActive && t.sequence > r.checkpoint.sequence;
  };
  if (size < r.records_start) {  // a version 2 file cut inside its checkpoint: only the header holds
    r.end = kFileHeaderSize;
    r.torn_tail_bytes = size - kFileHeaderSize;
    r.torn_tail_records = r.torn_tail_bytes > 0 ? 1 : 0;
    return r;
  }
  std::uint64_t pos = r.records_start;
  RecordHeader h;
  while (pos < size) {
    if (valid_at(file, pos, h)) {
      r.records.push_back({pos, h.data_length, h.sequence, h.kind == kKindActive});
      r.max_sequence = std::max(r.max_sequence, h.sequence);
      pos += slot_size(h.data_length);
      continue;
    }
    if (all_zero(file.subspan(pos))) {  // preallocated, never written
      r.zero_tail_bytes = size - pos;
      break;
    }
    // Damage: mid-file if any valid record follows it, else a torn tail.
    std::uint64_t next = pos + kRecordAlign;
    RecordHeader probe;
    while (next + kRecordHeaderSize <= size) {
      auto kind = static_cast<std::uint8_t>(file[next + 15]);
      if (kind_known(kind) && valid_at(file, next, probe)) break;
      next += kRecordAlign;
    }
    if (next + kRecordHeaderSize > size) {
      r.torn_tail_bytes = size - pos;
      // Record starts the tail held: follow plausible lengths (at least the first).
      std::uint64_t w = pos;
      do {
        ++r.torn_tail_records;
        if (size - w < kRecordHeaderSize) break;
        RecordHeader t = decode_record_header(file.data() + w);
        if (!kind_known(t.kind) || (t.kind == kKindActive && t.data_length > kMaxDataLength)) break;
        w += slot_size(t.data_length);
      } while (w < size);
      break;
    }
    r.damage.push_back({pos, next - pos, debris(pos)});
    pos = next;
  }
  r.end = std::min(pos, size);
  return r;
}

}  // namespace iolab::store
