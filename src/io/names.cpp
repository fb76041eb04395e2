// Names of the io enums, for options, job files and results.
#include <chrono>
#include <string>

#include "iolab/error.h"
#include "iolab/io/file.h"

namespace iolab::io {

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::string_view to_string(Durability d) {
  switch (d) {
    case Durability::None: return "none";
    case Durability::Flush: return "flush";
    case Durability::SyncFileRange: return "sync_file_range";
    case Durability::Fdatasync: return "fdatasync";
    case Durability::Fsync: return "fsync";
    case Durability::MsyncSync: return "msync";
  }
  return "?";
}

Durability parse_durability(std::string_view name) {
  for (auto d : {Durability::None, Durability::Flush, Durability::SyncFileRange, Durability::Fdatasync,
                 Durability::Fsync, Durability::MsyncSync})
    if (name == to_string(d)) return d;
  throw UsageError("durability '" + std::string(name) + "'",
                   "expected none, flush, sync_file_range, fdatasync, fsync or msync");
}

std::string_view to_string(Advice a) {
  switch (a) {
    case Advice::Normal: return "normal";
    case Advice::Sequential: return "sequential";
    case Advice::Random: return "random";
    case Advice::WillNeed: return "willneed";
  }
  return "?";
}

Advice parse_advice(std::string_view name) {
  for (auto a : {Advice::Normal, Advice::Sequential, Advice::Random, Advice::WillNeed})
    if (name == to_string(a)) return a;
  throw UsageError("madvise hint '" + std::string(name) + "'", "expected normal, sequential, random or willneed");
}

std::uint64_t File::read_sequence(std::uint64_t offset, std::uint64_t count, std::span<std::byte> dst) {
  std::uint64_t bytes = 0;
  for (std::uint64_t i = 0; i < count; ++i, offset += dst.size()) {
    std::size_t got = read_at(offset, dst);
    bytes += got;
    if (got < dst.size()) break;
  }
  return bytes;
}

void File::submit(std::span<IoRequest> requests) {
  for (auto& r : requests) {
    if (r.kind == IoRequest::Kind::Read) {
      r.result = read_at(r.offset, r.data);
    } else {
      write_at(r.offset, r.data);
      r.result = r.data.size();
    }
  }
}

// Methods without a queue: one request at a time, in the order given.
void File::stream(RequestSource& source, bool time_requests) {
  IoRequest r;
  while (source.next(r)) {
    if (time_requests) r.submitted_ns = steady_ns();
    if (r.kind == IoRequest::Kind::Read) {
      r.result = read_at(r.offset, r.data);
    } else {
      write_at(r.offset, r.data);
      r.result = r.data.size();
    }
    if (time_requests) r.completed_ns = steady_ns();
    source.done(r);
  }
}

Availability Method::supports_options(const FileOptions&, const std::filesystem::path&) const { return {}; }

}  // namespace iolab::io
