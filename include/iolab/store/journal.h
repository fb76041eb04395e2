// The journal file format (docs/store-format.md) and its reader.
//
// The reader works on the bytes of a whole file, touches nothing else, and
// never trusts a length it has not checked: the fuzz target (fuzz/) drives
// it with arbitrary input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace iolab::store {

// File header: magic, format version, CRC32C of the first 12 bytes.
inline constexpr char kJournalMagic[8] = {'i', 'o', 'l', 'a', 'b', 'J', 'N', 'L'};
inline constexpr std::uint32_t kJournalVersion = 2;
inline constexpr std::size_t kFileHeaderSize = 16;

// Version 2: a checkpoint follows the file header, and records start after
// it. Version 1 (no checkpoint) is still read and written.
inline constexpr std::size_t kCheckpointOffset = 16;
inline constexpr std::size_t kCheckpointSize = 32;
inline constexpr std::size_t kRecordsStart = kCheckpointOffset + kCheckpointSize;  // 48
inline constexpr std::size_t kRecordsStartV1 = kFileHeaderSize;                    // 16
constexpr std::size_t records_start(std::uint32_t version) noexcept {
  return version >= 2 ? kRecordsStart : kRecordsStartV1;
}

// What the journal knew to be durable when the checkpoint was written:
// every record with a sequence number <= `sequence` and every byte below
// `end` had been synced. Written after a sync, in one call within the first
// 512-byte sector (all or nothing); durable at the next sync. Open uses it
// to tell what a crash can have left half-written (newer than the
// checkpoint) from damage to what was already durable.
struct Checkpoint {
  // Written by a store that does not order its writes with syncs (sync
  // policy none or at close): after a crash any range may be half-written,
  // so open repairs damage instead of refusing it.
  bool unordered = false;
  std::uint64_t sequence = 0;
  std::uint64_t end = 0;
  bool operator==(const Checkpoint&) const = default;
};
void encode_checkpoint(std::byte out[kCheckpointSize], const Checkpoint& c) noexcept;
// False when the checkpoint's CRC does not hold (or its flags are unknown).
bool decode_checkpoint(const std::byte* in, Checkpoint& out) noexcept;

// Record header: CRC32C, data length, kind (top byte) | sequence number (low 56 bits).
inline constexpr std::size_t kRecordHeaderSize = 16;
// Records start on 16-byte boundaries, so a header never straddles a page
// (or a 512-byte sector) and is written all or nothing.
inline constexpr std::size_t kRecordAlign = 16;
inline constexpr std::uint8_t kKindActive = 0xA5;
inline constexpr std::uint8_t kKindFree = 0x5F;
inline constexpr std::uint64_t kMaxSequence = (std::uint64_t{1} << 56) - 1;
// Largest data length accepted: three maximal strings plus fixed fields.
inline constexpr std::uint32_t kMaxDataLength = 3 * (4 + 64 * 1024) + 9;

// Bytes a record with `data_length` bytes of data occupies: header + data, rounded up.
constexpr std::uint64_t slot_size(std::uint64_t data_length) noexcept {
  return (kRecordHeaderSize + data_length + kRecordAlign - 1) / kRecordAlign * kRecordAlign;
}

struct RecordHeader {
  std::uint32_t crc = 0;
  std::uint32_t data_length = 0;
  std::uint8_t kind = 0;
  std::uint64_t sequence = 0;
};

// The 16 bytes of a file header for `version` (the current one by default).
void write_file_header(std::byte out[kFileHeaderSize], std::uint32_t version = kJournalVersion) noexcept;

// Encodes a header; the CRC is computed here: over header bytes 4..15 and,
// for an active record, `data`; a free record's CRC covers its header only.
void encode_record_header(std::byte out[kRecordHeaderSize], std::uint8_t kind, std::uint64_t sequence,
                          std::uint32_t data_length, std::span<const std::byte> data = {}) noexcept;
RecordHeader decode_record_header(const std::byte* in) noexcept;
// True when `header` and the bytes after it form a valid record (kind, length, CRC).
bool record_valid(const RecordHeader& header, std::span<const std::byte> data) noexcept;

struct ScannedRecord {
  std::uint64_t offset = 0;
  std::uint32_t data_length = 0;
  std::uint64_t sequence = 0;
  bool active = false;
};

// A stretch of bytes between valid records that is not a valid record.
struct Damage {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  // A write a crash can have left half-done: it lies at or past the
  // checkpoint's end, or starts with an active record header newer than the
  // checkpoint's sequence, or right after a valid record newer than it, or
  // the checkpoint says the journal is unordered. Anything else is damage
  // to what was durable.
  bool crash_debris = false;
};

struct ScanResult {
  std::uint32_t version = 0;
  std::uint64_t records_start = 0;     // kRecordsStart (version 2) or kRecordsStartV1
  bool has_checkpoint = false;         // version 2 with a checkpoint whose CRC holds
  bool checkpoint_corrupt = false;     // version 2 with a checkpoint whose CRC fails
  Checkpoint checkpoint;
  std::vector<ScannedRecord> records;  // active and free, in file order
  std::uint64_t end = 0;               // logical end: the file should be truncated here
  std::uint64_t zero_tail_bytes = 0;   // preallocated zeros after the last record (mmap growth)
  std::uint64_t torn_tail_bytes = 0;   // a torn or corrupt tail: bytes dropped
  std::uint64_t torn_tail_records = 0; // ... and how many record starts it held (at least 1)
  std::vector<Damage> damage;          // mid-file damage (followed by valid records)
  std::uint64_t max_sequence = 0;
};

// Checks the file header: throws Error naming `name` for a file that is too
// short, has a bad magic, a newer format version, or a corrupt header.
// Returns the format version.
std::uint32_t check_file_header(std::span<const std::byte> file, const std::string& name);

// Scans a whole journal (file header included). Never throws for damage:
// it is reported in the result (each range classified as crash debris or
// not, by the checkpoint), and the caller decides. A version 2 file shorter
// than its checkpoint, or whose checkpoint is corrupt, scans with no
// checkpoint: nothing is crash debris.
ScanResult scan_journal(std::span<const std::byte> file, const std::string& name);

}  // namespace iolab::store
