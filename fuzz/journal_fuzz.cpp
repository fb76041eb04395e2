// libFuzzer target for the record store's journal reader (scan_journal and
// the record decoder): any bytes at all must be either refused with an
// Error or scanned into records that lie inside the file, do not overlap,
// pass their CRC and decode. Crashes, hangs, sanitizer reports and broken
// invariants (abort) are findings.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "iolab/error.h"
#include "iolab/store/employee.h"
#include "iolab/store/journal.h"

using namespace iolab::store;

namespace {
void require(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  ScanResult r;
  try {
    r = scan_journal(file, "fuzz input");
  } catch (const iolab::Error&) {
    return 0;  // not a journal, newer version, corrupt header: refused, fine
  }
  require(size >= kFileHeaderSize && r.end <= size && r.end >= kFileHeaderSize);
  require(r.torn_tail_bytes + r.zero_tail_bytes == size - r.end);
  std::uint64_t pos = kFileHeaderSize;
  std::size_t damage = 0;
  Employee e;
  for (const ScannedRecord& rec : r.records) {
    // Records and damaged ranges tile the file in order up to `end`.
    while (damage < r.damage.size() && r.damage[damage].offset == pos) pos += r.damage[damage++].length;
    require(rec.offset == pos);
    require(rec.offset % kRecordAlign == 0);
    std::uint64_t slot = slot_size(rec.data_length);
    require(rec.offset + slot <= r.end);
    RecordHeader h = decode_record_header(file.data() + rec.offset);
    require(h.data_length == rec.data_length && h.sequence == rec.sequence);
    auto body = file.subspan(rec.offset + kRecordHeaderSize, rec.data_length);
    require(record_valid(h, body));
    if (rec.active) require(decode(body, e) && !e.last.empty());
    pos += slot;
  }
  while (damage < r.damage.size() && r.damage[damage].offset == pos) pos += r.damage[damage++].length;
  require(damage == r.damage.size() && pos == r.end);
  return 0;
}
