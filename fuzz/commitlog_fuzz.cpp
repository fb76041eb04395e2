// libFuzzer target for the commit log's reader and recovery: any bytes at
// all, as the first segment of a shared log (in a FaultEnv, no disk), are
// scanned into messages with consecutive sequence numbers from 1 whose frames
// lie inside the file and pass their CRC, and at most one damage report,
// placed where the valid log ends. Then the log opens on the bytes: it opens
// (recovering to exactly the messages the scan found) or refuses with an
// Error; once open, an append and a reopen work, and the second open finds
// nothing to repair. Crashes, hangs, sanitizer reports and broken
// invariants (abort) are findings.
#include <cstdint>
#include <exception>
#include <span>
#include <vector>

#include "internal/commitlog/designs.h"
#include "internal/commitlog/files.h"
#include "internal/commitlog/segment_reader.h"
#include "fuzz_check.h"
#include "iolab/commitlog/commit_log.h"
#include "iolab/commitlog/format.h"
#include "iolab/commitlog/reader.h"
#include "iolab/base/error.h"
#include "iolab/testing/fault_env.h"

using namespace iolab::commitlog;
using iolab::fuzz::require;

namespace {

const std::filesystem::path kDir = "/cl";
const std::filesystem::path kLog = kDir / "log";
constexpr std::uint64_t kSegment = 64 * 1024;  // above the fuzzer's max_len: the input is one segment

Options options() {
  Options o;
  // One shared log, no index and no flush thread: the input is all there is,
  // and recovery reads it as every design's does.
  o.design = Design::ActiveMq;
  o.segment_size = kSegment;
  o.topics = 1;
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  iolab::io::CrashState start;
  start.dirs = {kDir, kLog};
  start.files[kLog / segment_name(0)] = std::vector<std::byte>(bytes, bytes + size);
  iolab::io::FaultEnv env(start, std::uint64_t{1} << 20);
  detail::LogFs fs(env);

  // The scan: valid messages in order, inside the file, damage where they end.
  std::uint64_t expected = kFirstSequence, visited = 0;
  LogScan scan;
  try {
    scan = detail::scan_log(fs, kLog, [&](const MessageView& m) {
      require(m.sequence == expected++);
      require(m.offset + kFrameHeaderSize + m.body.size() <= size);
      ++visited;
    });
  } catch (const iolab::Error&) {
    return 0;  // refused as a whole (not a log): fine
  }
  require(scan.messages == visited);
  require(scan.last_sequence == visited);
  require(scan.segments.size() == 1);
  require(scan.segments[0].valid_end <= size && scan.end_offset == scan.segments[0].valid_end);
  if (scan.damage) require(scan.damage->at.offset == scan.end_offset);

  // Recovery: exactly the scanned messages survive, and the log works.
  std::unique_ptr<CommitLog> log;
  try {
    log = detail::open_commit_log(fs, kDir, options());
  } catch (const iolab::Error&) {
    return 0;
  }
  const std::byte body[24] = {};
  try {
    log->append(0, std::span<const std::byte>(body));
    log->close();
  } catch (const iolab::Error&) {
    return 0;  // e.g. the recovered log leaves no room: a clear error is the contract
  }
  log.reset();
  auto again = detail::open_commit_log(fs, kDir, options());
  for (const LogRecovery& r : again->open_report().logs) require(!r.damage && r.truncated_bytes == 0);
  std::uint64_t after = 0;
  detail::scan_log(fs, kLog, [&](const MessageView& m) { require(m.sequence == ++after); });
  require(after == visited + 1);
  again->close();
  return 0;
}
