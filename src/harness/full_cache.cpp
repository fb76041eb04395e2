#include "full_cache.h"

#include <algorithm>
#include <optional>

#include "iolab/base/clock.h"
#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/harness/engine.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"

namespace iolab::harness {

void FullCache::before_pass(bool timed) {
  const double room = static_cast<double>(room_), want = results::thresholds::kFullCacheMin * room;
  auto cached = [&] {
    std::optional<std::uint64_t> b = group_.page_cache_bytes();
    if (!b) throw SkipExperiment("cannot read the page-cache bytes of " + group_.description() + " (memory.stat)");
    return *b;
  };
  const std::optional<std::uint64_t> usage = group_.usage_bytes();
  if (!usage) throw SkipExperiment("cannot read the memory usage of " + group_.description());
  const std::uint64_t cache = cached(), others = *usage > cache ? *usage - cache : 0;
  const std::uint64_t limit = room_ + others + results::thresholds::kFullCacheMarginBytes;
  // (Within a MiB of the limit in force: the margin absorbs it, and the kernel is spared a resize.)
  if (limit > group_.limit_bytes() + (1u << 20) || limit + (1u << 20) < group_.limit_bytes()) {
    try {
      group_.set_limit(limit);
    } catch (const Error& err) {
      throw SkipExperiment("could not give the page cache of " + group_.description() + " its " + format_bytes(room) +
                           " room: " + err.what());
    }
  }
  double bytes = static_cast<double>(cached());
  if (bytes < want) {
    for (std::uint64_t read = 0; bytes < want && read < 2 * length_;) {
      if (fill_at_ >= length_) fill_at_ = 0;
      // At most 8 MiB between looks at memory.stat, on from where the last fill stopped.
      const std::uint64_t n = read_into_cache(file_, fill_at_, std::uint64_t{8} << 20);
      fill_at_ = n > 0 ? fill_at_ + n : length_;
      read += n;
      fill_read_ += n;
      bytes = static_cast<double>(cached());
    }
    if (bytes < want)
      throw SkipExperiment("could not fill the page cache of " + group_.description() + ": it held " +
                           format_bytes(bytes) + " of its " + format_bytes(room) + " room after reading " +
                           format_bytes(static_cast<double>(2 * length_)) + " of the file (needs " +
                           format_percent(results::thresholds::kFullCacheMin) + ")");
  }
  method_ = "a full page cache: before every pass " + group_.description() + " was limited to its " +
            format_bytes(room) + " page-cache room plus its other memory plus " +
            format_bytes(static_cast<double>(results::thresholds::kFullCacheMarginBytes)) + ", and held at least " +
            format_percent(results::thresholds::kFullCacheMin) + " of the room in its page cache (memory.stat), read "
            "into from the file by 1 MiB preads where it held less; the file " +
            format_bytes(static_cast<double>(length_)) +
            ", mostly not resident (mincore, at most every 250 ms); nothing evicted between passes";
  if (!timed) return;
  const bool first = most_full_ == 0;
  least_full_ = first ? bytes / room : std::min(least_full_, bytes / room);
  most_full_ = std::max(most_full_, bytes / room);
  least_limit_ = first ? group_.limit_bytes() : std::min(least_limit_, group_.limit_bytes());
  most_limit_ = std::max(most_limit_, group_.limit_bytes());
  // mincore of the whole file takes ~1.7 ms here at 128 MiB, seven times a 16-block pass of pread, and the
  // engine counts it against --max-time: at most one every 250 ms (the group's page cache, read before every
  // pass, bounds the file's resident share in between).
  const std::uint64_t now = steady_ns();
  if (first || now - last_mincore_ns_ >= 250'000'000) {
    most_resident_ = std::max(most_resident_, resident_fraction(file_));
    last_mincore_ns_ = now;
  }
}

void FullCache::describe(results::Result& r) const {
  r.extra["cache_room_bytes"] = room_;
  r.extra["cache_full_fraction"] = least_full_;  // of the room, the least before a timed pass
  r.extra["cache_full_fraction_max"] = most_full_;
  r.extra["cgroup_limit_bytes_range"] = {least_limit_, most_limit_};  // the group's, before its timed passes
  r.extra["cache_full_min"] = results::thresholds::kFullCacheMin;
  r.extra["cache_fill_read_bytes"] = fill_read_;
}

}  // namespace iolab::harness
