#include "iolab/commitlog/consumer.h"

#include "iolab/base/error.h"
#include "segment_reader.h"

namespace iolab::commitlog {

struct TailingConsumer::Cursor {
  std::uint32_t log = 0;
  std::filesystem::path dir;
  std::uint64_t base = 0;  // of the segment being read
  std::uint64_t next_sequence = kFirstSequence;
  std::uint64_t closed_calls = 0;  // of segments already left behind
  std::unique_ptr<detail::SegmentSource> source;
  std::unique_ptr<detail::FrameStream> stream;
};

TailingConsumer::TailingConsumer(CommitLog& log, ReadPath path) : log_(log), path_(path) {
  for (std::uint32_t l = 0; l < log.log_count(); ++l) {
    auto c = std::make_unique<Cursor>();
    c->log = l;
    c->dir = log.log_dir(l);
    auto segments = detail::list_segments(detail::posix_fs(), c->dir);
    c->base = segments.empty() ? 0 : segments.front().base;
    cursors_.push_back(std::move(c));
  }
}

TailingConsumer::~TailingConsumer() = default;

std::uint64_t TailingConsumer::calls() const noexcept {
  std::uint64_t n = 0;
  for (const auto& c : cursors_) n += c->closed_calls + (c->source ? c->source->calls() : 0);
  return n;
}

std::uint64_t TailingConsumer::poll(const Visit& visit) {
  std::uint64_t read = 0;
  const std::uint64_t segment_size = log_.options().segment_size;
  for (auto& cp : cursors_) {
    Cursor& c = *cp;
    auto v = log_.visible(c.log);
    while (v.sequence >= c.next_sequence) {
      if (!c.source) {
        // Map the segment's whole capacity: the file grows, and only what is
        // visible is ever touched.
        c.source = detail::open_source(detail::posix_fs(), c.dir / segment_name(c.base), path_, segment_size);
        c.stream = std::make_unique<detail::FrameStream>(*c.source, 0, 0);
      }
      std::uint64_t limit = std::min(v.position - c.base, segment_size);
      if (v.position >= c.base + segment_size) {
        // The writer rolled: what it left here ends at the file's end. A
        // segment that is not preallocated stops short of its capacity, and
        // reading the mapping past the file's last page would raise SIGBUS.
        limit = std::min(limit, detail::posix_fs().open(c.dir / segment_name(c.base), false)->size());
      }
      c.stream->set_limit(limit);
      Frame frame;
      FrameCheck check;
      while ((check = c.stream->next(c.next_sequence, frame)) == FrameCheck::Valid) {
        if (visit) visit(c.log, frame);
        ++c.next_sequence;
        ++read;
      }
      if (check != FrameCheck::Unwritten)
        throw Error("consume", (c.dir / segment_name(c.base)).string(),
                    "offset " + std::to_string(c.stream->offset()) + ": " + std::string(to_string(check)), EIO);
      if (v.position < c.base + segment_size) break;  // caught up within this segment
      // The writer rolled: the rest of this segment is padding.
      c.closed_calls += c.source->calls();
      c.stream.reset();
      c.source.reset();
      c.base += segment_size;
    }
  }
  consumed_ += read;
  return read;
}

std::uint64_t TailingConsumer::poll_wait(std::chrono::nanoseconds timeout, const Visit& visit) {
  std::uint64_t n = poll(visit);
  if (n > 0 || cursors_.empty()) return n;
  // Wait on one log at a time, round robin: a single-log log waits on its only one.
  Cursor& c = *cursors_[next_wait_++ % cursors_.size()];
  log_.wait_visible(c.log, c.next_sequence - 1, timeout);
  return poll(visit);
}

}  // namespace iolab::commitlog
