// Internal: what the copy methods share. CopyEnds (include/iolab/io/copy.h)
// opens both ends and finishes the copy; TransferCopy makes a copy method of
// its facts and its transfer function; copy_in_steps is the loop of the
// methods whose system calls move a bounded number of bytes each.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <utility>

#include "iolab/io/copy.h"
#include "iolab/io/syscall.h"
#include "methods.h"

namespace iolab::io {

// What a copy method is, for `iolab methods` and the copy suite.
struct CopyMethodFacts {
  std::string_view name;
  std::string_view description;
  CopyTraits traits;
};

// A copy method that runs wherever POSIX does: `Transfer` moves all of
// ends.from into ends.to and returns what it counted; the ends' finish is the
// same for every method. A template, so the timed copy calls the transfer directly.
template <CopyStats (*Transfer)(CopyEnds&, const CopyOptions&)>
class TransferCopy final : public CopyMethod {
 public:
  explicit TransferCopy(const CopyMethodFacts& facts) : facts_(facts) {}
  std::string_view name() const override { return facts_.name; }
  std::string_view description() const override { return facts_.description; }
  CopyTraits traits() const override { return facts_.traits; }
  Availability probe(const std::filesystem::path&) const override { return always_available(); }
  CopyStats copy(CopyEnds& ends, const CopyOptions& options) const override {
    CopyStats stats = Transfer(ends, options);
    ends.finish(options.flush, stats);
    return stats;
  }

 private:
  CopyMethodFacts facts_;
};

// One system call of a copy that moves data: f() retried on EINTR (shown to
// the injector as `call`), counted in stats, a failure thrown as `what` on
// `path`. Returns the bytes it moved.
template <typename F>
std::size_t counted_move(CopyStats& stats, std::string_view call, std::string_view what,
                         const std::filesystem::path& path, F&& f) {
  ssize_t n = sys::retry(call, std::forward<F>(f));
  ++stats.calls;
  if (n < 0) sys::fail(what, path);
  return static_cast<std::size_t>(n);
}

// Moves ends.size() bytes in steps of at most `most` bytes: step(want, stats)
// moves up to `want` and returns how many. A step that moves nothing ends the
// copy early (the source shrank: finish() reports the mismatch).
template <typename Step>
CopyStats copy_in_steps(const CopyEnds& ends, std::uint64_t most, Step&& step) {
  CopyStats stats;
  while (stats.bytes < ends.size()) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(ends.size() - stats.bytes, most));
    std::size_t n = step(want, stats);
    if (n == 0) break;
    stats.bytes += n;
  }
  return stats;
}

// copy_in_steps with one system call a step: call(want) moves up to `want`
// bytes, shown to the injector and failed as `name` on ends.to().
template <typename Call>
CopyStats copy_by_calls(const CopyEnds& ends, std::uint64_t most, std::string_view name, Call&& call) {
  return copy_in_steps(ends, most, [&](std::size_t want, CopyStats& stats) {
    return counted_move(stats, name, name, ends.to(), [&] { return call(want); });
  });
}

}  // namespace iolab::io
