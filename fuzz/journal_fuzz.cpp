// libFuzzer target for the record store's journal reader: any bytes at all
// are either refused with an Error or scanned into records that lie inside
// the file, tile it with the damaged ranges up to its end, pass their CRC
// and decode; crash debris is only ever found under a checkpoint. Then the
// store itself opens the bytes (in a FaultEnv, no disk): it refuses with an
// Error or opens, every record it lists reads back, a put and a reopen
// work, and the second open repairs nothing. Crashes, hangs, sanitizer
// reports and broken invariants (abort) are findings.
#include <cstdint>
#include <span>

#include "fuzz_check.h"
#include "iolab/base/error.h"
#include "iolab/testing/fault_env.h"
#include "iolab/store/employee.h"
#include "iolab/store/journal.h"
#include "iolab/store/record_store.h"

using namespace iolab::store;
using iolab::fuzz::require;

namespace {

void scan_invariants(std::span<const std::byte> file) {
  ScanResult r;
  try {
    r = scan_journal(file, "fuzz input");
  } catch (const iolab::Error&) {
    return;  // not a journal, newer version, corrupt header: refused, fine
  }
  const std::uint64_t size = file.size();
  require(size >= kFileHeaderSize && r.end <= size && r.end >= kFileHeaderSize);
  require(r.torn_tail_bytes + r.zero_tail_bytes == size - r.end);
  require(r.records_start == records_start(r.version));
  if (!r.has_checkpoint)
    for (const Damage& d : r.damage) require(!d.crash_debris);
  if (r.end < r.records_start) {
    require(r.records.empty() && r.damage.empty());
    return;
  }
  std::uint64_t pos = r.records_start;
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
}

void open_invariants(std::span<const std::byte> file, bool salvage) {
  iolab::io::CrashState start;
  start.files["/j"] = std::vector<std::byte>(file.begin(), file.end());
  // Small files, small growth: the env reserves (and ASan shadows) each file's largest size.
  iolab::io::FaultEnv env(start, std::uint64_t{256} << 10);
  StoreOptions o;
  o.backend = kAllBackends[file.size() % 4];
  o.mmap_grow_step = 4096;
  o.stage_buffer = 4096;
  o.salvage = salvage;
  o.env = &env;
  std::uint64_t records = 0;
  try {
    RecordStore s("/j", o);
    std::uint64_t listed = 0;
    s.for_each([&](const Employee& e) {
      ++listed;
      require(s.contains(e.last));
    });
    require(listed == s.size());
    Employee e;
    e.last = "fuzz";
    e.comments = "a record put after the open";
    s.put(e);
    records = s.size();
    s.close();
  } catch (const iolab::Error&) {
    return;  // refused (damage without salvage, not a journal...): fine
  }
  StoreOptions again = o;
  again.salvage = false;
  RecordStore s("/j", again);  // what the first open repaired stays repaired
  require(s.open_report().repaired.empty() && s.open_report().salvaged.empty());
  require(s.size() == records && s.get("fuzz").has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  scan_invariants(file);
  open_invariants(file, size % 3 == 0);
  return 0;
}
