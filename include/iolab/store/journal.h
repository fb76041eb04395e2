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
inline constexpr std::uint32_t kJournalVersion = 1;
inline constexpr std::size_t kFileHeaderSize = 16;

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

// The 16 bytes of a file header for the current version.
void write_file_header(std::byte out[kFileHeaderSize]) noexcept;

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
};

struct ScanResult {
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
void check_file_header(std::span<const std::byte> file, const std::string& name);

// Scans a whole journal (file header included). Never throws for damage:
// it is reported in the result, and the caller decides.
ScanResult scan_journal(std::span<const std::byte> file, const std::string& name);

}  // namespace iolab::store
