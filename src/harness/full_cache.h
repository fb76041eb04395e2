// Inside the harness: CacheState::Full (kinds.h) made and proven before
// each pass of a read experiment that runs inside a memory cgroup.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "iolab/harness/memory_cgroup.h"
#include "iolab/results/record.h"

namespace iolab::harness {

// Made: the group's limit becomes the room plus what the group holds
// besides its page cache (its processes' memory, the kernel's on their
// behalf) plus a margin, so the page cache has the room and no more
// whatever was allocated since the last pass (other experiments' buffers,
// at their setup: before they were, the cache had their share too, and
// calibration passes ran on a cache up to twice the room); then, where the
// cache holds less than thresholds::kFullCacheMin of the room, it is read
// into from the file (1 MiB preads, on from where the last fill stopped; at
// most twice the file), else the experiment is skipped. Proven: before a
// timed pass the fill, the limit and the file's resident share are noted
// for the record.
class FullCache {
 public:
  // The page cache of `group`, given `room` bytes, under reads of `file`
  // (`length` bytes, larger than the room).
  FullCache(MemoryCgroup& group, std::uint64_t room, std::filesystem::path file, std::uint64_t length)
      : group_(group), room_(room), file_(std::move(file)), length_(length) {}

  // Before a pass: the state made and proven. Throws SkipExperiment.
  void before_pass(bool timed);
  // How it was made (the record's cache_method), once a pass was prepared.
  const std::string& method() const { return method_; }
  // The file's largest resident share before a timed pass (mincore, at most every 250 ms).
  double most_resident() const { return most_resident_; }
  // The record's extra fields: cache_room_bytes, cache_full_fraction(_max),
  // cgroup_limit_bytes_range, cache_full_min, cache_fill_read_bytes.
  void describe(results::Result& r) const;

 private:
  MemoryCgroup& group_;
  std::uint64_t room_;
  std::filesystem::path file_;
  std::uint64_t length_;
  std::string method_;
  std::uint64_t fill_at_ = 0, fill_read_ = 0;  // where the next fill reads, and how much fills read in all
  // The least and most fill of the room before a timed pass, under the group's limit then.
  double least_full_ = 0, most_full_ = 0, most_resident_ = 0;
  std::uint64_t least_limit_ = 0, most_limit_ = 0, last_mincore_ns_ = 0;
};

}  // namespace iolab::harness
