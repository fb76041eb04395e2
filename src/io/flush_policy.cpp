// The flush policy's text forms (file.h): what job files, the command line
// and every record's `sync` field say.
#include <string>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/io/file.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ once it is
// inlined into string-building code (GCC bugs 105329, 105651).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace iolab::io {

std::string to_string(const FlushPolicy& p) {
  std::string call = p.call == Durability::None ? "" : ":" + std::string(to_string(p.call));
  switch (p.schedule) {
    case FlushSchedule::None: return "none";
    case FlushSchedule::End: return "end" + call;
    case FlushSchedule::EveryWrite: return "every" + call;
    case FlushSchedule::EveryBytes: return "every-" + size_label(p.interval) + call;
    case FlushSchedule::AsyncBytes: return "async-" + size_label(p.interval) + call;
    case FlushSchedule::EveryOps: return "every-" + std::to_string(p.interval) + "-ops" + call;
  }
  return "?";
}

FlushPolicy parse_flush_policy(std::string_view text) {
  auto bad = [&] {
    return UsageError("sync '" + std::string(text) + "'",
                      "expected none, end, every, every-SIZE, async-SIZE or every-N-ops, optionally :fdatasync, "
                      ":fsync, :msync, :sync_file_range or :flush (e.g. async-16k:msync)");
  };
  FlushPolicy p;
  std::string_view schedule = text, call;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    schedule = text.substr(0, colon);
    call = text.substr(colon + 1);
    if (call.empty()) throw bad();
  }
  auto interval = [&](std::string_view digits) {
    std::uint64_t v = 0;
    try {
      v = parse_size(digits);
    } catch (const UsageError&) {
      throw bad();
    }
    if (v == 0) throw UsageError("sync '" + std::string(text) + "'", "the flush interval must be above 0");
    return v;
  };
  if (schedule == "none") {
    p.schedule = FlushSchedule::None;
  } else if (schedule == "end") {
    p.schedule = FlushSchedule::End;
  } else if (schedule == "every") {
    p.schedule = FlushSchedule::EveryWrite;
  } else if (schedule.starts_with("every-") && schedule.ends_with("-ops")) {
    p.schedule = FlushSchedule::EveryOps;
    p.interval = interval(schedule.substr(6, schedule.size() - 10));
  } else if (schedule.starts_with("every-")) {
    p.schedule = FlushSchedule::EveryBytes;
    p.interval = interval(schedule.substr(6));
  } else if (schedule.starts_with("async-") || schedule.starts_with("periodic-")) {
    // "periodic-N": schema-1 results files and older job files named the background flusher so.
    p.schedule = FlushSchedule::AsyncBytes;
    p.interval = interval(schedule.substr(schedule.find('-') + 1));
  } else {
    throw bad();
  }
  if (!call.empty()) {
    try {
      p.call = parse_durability(call);
    } catch (const UsageError&) {
      throw bad();
    }
  }
  if (p.schedule == FlushSchedule::None && p.call != Durability::None)
    throw UsageError("sync '" + std::string(text) + "'", "'none' takes no flush call");
  return p;
}

FlushPolicy resolved(FlushPolicy policy, const MethodTraits& traits) {
  if (policy.flushes() && policy.call == Durability::None) policy.call = traits.data_sync;
  return policy;
}

FlushPolicy unresolved(FlushPolicy policy) noexcept {
  if (policy.call == Durability::Fdatasync || policy.call == Durability::MsyncSync) policy.call = Durability::None;
  return policy;
}

}  // namespace iolab::io
