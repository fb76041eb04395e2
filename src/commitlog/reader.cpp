#include "segment_reader.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/sendfile.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iolab/base/names.h"
#include "iolab/base/error.h"
#include "iolab/io/syscall.h"

namespace iolab::commitlog {

namespace sys = io::sys;

namespace {
constexpr NameTable<ReadPath, 4> kReadPathNames{
    {{ReadPath::Pread, "pread"}, {ReadPath::Mmap, "mmap"}, {ReadPath::Read, "read"}, {ReadPath::Sendfile, "sendfile"}}};
}  // namespace

std::string_view to_string(ReadPath p) noexcept { return name_of(kReadPathNames, p); }
ReadPath parse_read_path(std::string_view name) { return parse_name(kReadPathNames, name, "read path"); }

std::string Damage::describe() const {
  std::string s = "segment " + at.segment.string() + " offset " + std::to_string(at.offset) + ": " +
                  std::string(to_string(check));
  if (check == FrameCheck::BadSequence)
    s += " (found " + std::to_string(at.sequence) + ", expected " + std::to_string(expected_sequence) + ")";
  else
    s += " (sequence " + std::to_string(expected_sequence) + " expected)";
  if (next_valid)
    s += "; valid messages follow from sequence " + std::to_string(next_valid->sequence) + " at " +
         next_valid->segment.string() + " offset " + std::to_string(next_valid->offset);
  else
    s += "; nothing valid follows (a torn tail)";
  return s;
}

namespace detail {
namespace {

// What a read(2) or pread(2) reader asks for at a time. With 1 MiB, a
// tailing read(2) consumer beside activemq's writer thread made the writer's
// copy into the page cache 7-10x dearer per message in 6 of 11 runs; with
// 128-256 KiB in none of 13 (docs/commitlog.md). Sequential reads lose
// nothing: a call per 256 KiB is well under 1% of the copy.
constexpr std::size_t kReadChunk = std::size_t{256} << 10;

class PreadSource final : public SegmentSource {
 public:
  explicit PreadSource(std::unique_ptr<LogFile> file) : SegmentSource(std::move(file)) {}
  std::size_t read(std::uint64_t offset, std::span<std::byte> dst) override { return file_->read_at(offset, dst); }
  std::uint64_t calls() const noexcept override { return file_->calls(); }
};

class ReadSource final : public SegmentSource {
 public:
  explicit ReadSource(std::unique_ptr<LogFile> file) : SegmentSource(std::move(file)) {}
  std::size_t read(std::uint64_t offset, std::span<std::byte> dst) override {
    return file_->seek_and_read(offset, dst);
  }
  std::uint64_t calls() const noexcept override { return file_->calls(); }
};

class MmapSource final : public SegmentSource {
 public:
  MmapSource(std::unique_ptr<LogFile> file, std::uint64_t map_size) : SegmentSource(std::move(file)) {
    if (map_size == 0) map_size = file_->size();
    map_ = file_->map(map_size, false);
  }
  std::size_t read(std::uint64_t offset, std::span<std::byte> dst) override {
    if (offset >= map_.size()) return 0;
    std::size_t n = std::min<std::uint64_t>(dst.size(), map_.size() - offset);
    std::memcpy(dst.data(), map_.data() + offset, n);
    return n;
  }
  std::span<const std::byte> mapped() const noexcept override { return {map_.data(), map_.size()}; }
  std::uint64_t calls() const noexcept override { return file_->calls(); }

 private:
  MappedRegion map_;
};

// sendfile(2) from the segment into one end of a socket pair, recv(2) from
// the other: the bytes cross the kernel as they would to a consumer's socket.
class SendfileSource final : public SegmentSource {
 public:
  explicit SendfileSource(std::unique_ptr<LogFile> file) : SegmentSource(std::move(file)) {
    if (file_->native_handle() < 0)
      throw Error("sendfile", file_->path().string(), "this file system has no descriptor to send from", EOPNOTSUPP);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) sys::fail("socketpair", file_->path());
    send_ = sys::Fd(sv[0]);
    recv_ = sys::Fd(sv[1]);
    int size = 4 << 20;  // the kernel caps it at net.core.wmem_max / rmem_max
    ::setsockopt(send_.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    ::setsockopt(recv_.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    int flags = ::fcntl(send_.get(), F_GETFL);
    ::fcntl(send_.get(), F_SETFL, flags | O_NONBLOCK);  // a full socket returns EAGAIN: then drain it
  }

  std::size_t read(std::uint64_t offset, std::span<std::byte> dst) override {
    std::size_t sent = 0, got = 0, want = dst.size();
    bool end_of_file = false;
    int fd = file_->native_handle();
    while (got < want) {
      if (!end_of_file && sent < want) {
        auto at = static_cast<off_t>(offset + sent);
        std::size_t chunk = std::min<std::size_t>(want - sent, 256 * 1024);
        ssize_t n = sys::retry("sendfile", chunk,
                               [&](std::size_t len) { return ::sendfile(send_.get(), fd, &at, len); });
        ++calls_;
        if (n > 0) {
          sent += static_cast<std::size_t>(n);
        } else if (n == 0) {
          end_of_file = true;
          want = sent;
        } else if (errno != EAGAIN) {
          sys::fail("sendfile", file_->path());
        }
      }
      if (got < sent) {
        // The bytes are in the socket already: a blocking recv returns at once.
        ssize_t r = sys::retry("recv", sent - got, [&](std::size_t len) {
          return ::recv(recv_.get(), dst.data() + got, len, 0);
        });
        ++calls_;
        if (r <= 0) sys::fail("recv", file_->path(), r == 0 ? EPIPE : errno);
        got += static_cast<std::size_t>(r);
      }
    }
    return got;
  }
  std::uint64_t calls() const noexcept override { return calls_ + file_->calls(); }

 private:
  sys::Fd send_, recv_;
  std::uint64_t calls_ = 0;
};

// First non-zero byte of `s` at or after `from`, or s.size().
std::size_t first_nonzero(std::span<const std::byte> s, std::size_t from) noexcept {
  std::size_t i = from;
  while (i < s.size() && (i & 7u) != 0) {
    if (s[i] != std::byte{0}) return i;
    ++i;
  }
  while (i + 8 <= s.size()) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (w != 0) break;
    i += 8;
  }
  while (i < s.size() && s[i] == std::byte{0}) ++i;
  return i;
}

// The first valid frame with a sequence above `after_sequence`, searching
// segment `first` from `offset` on, then every later segment from its start.
std::optional<FrameLocation> find_next_valid(LogFs& fs, const std::vector<SegmentScan>& segments, std::size_t first,
                                             std::uint64_t offset, std::uint64_t after_sequence) {
  std::vector<std::byte> chunk, frame_bytes;
  for (std::size_t s = first; s < segments.size(); ++s) {
    const SegmentScan& seg = segments[s];
    auto file = fs.open(seg.path, false);
    std::uint64_t at = s == first ? offset : 0;
    while (at + kFrameHeaderSize <= seg.file_size) {
      // A chunk of candidate starts, plus the header bytes of the last ones.
      std::uint64_t len = std::min<std::uint64_t>(kReadChunk + kFrameHeaderSize - 1, seg.file_size - at);
      chunk.resize(len);
      chunk.resize(file->read_at(at, chunk));
      std::span<const std::byte> c(chunk);
      std::size_t starts = c.size() >= kFrameHeaderSize ? c.size() - kFrameHeaderSize + 1 : 0;
      std::size_t x = 0;
      while (x < starts) {
        // A frame's sequence is non-zero: skip starts whose sequence bytes are all zero.
        std::size_t nz = first_nonzero(c, x + 8);
        if (nz >= c.size()) break;
        if (nz > x + 15) {
          x = nz - 15;
          continue;
        }
        FrameHeader h = decode_header(c.data() + x);
        std::uint64_t pos = at + x;
        if (h.sequence > after_sequence && h.sequence - after_sequence <= (std::uint64_t{1} << 40) &&
            h.length <= kMaxBodySize && pos + frame_size(h.length) <= seg.file_size) {
          frame_bytes.resize(frame_size(h.length));
          Frame f;
          if (file->read_at(pos, frame_bytes) == frame_bytes.size() &&
              check_frame(frame_bytes, 0, f) == FrameCheck::Valid)
            return FrameLocation{seg.path, pos, f.sequence};
        }
        ++x;
      }
      if (starts == 0) break;
      at += starts;
    }
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<SegmentSource> open_source(LogFs& fs, const std::filesystem::path& path, ReadPath read_path,
                                           std::uint64_t map_size) {
  auto file = fs.open(path, false);
  switch (read_path) {
    case ReadPath::Pread: return std::make_unique<PreadSource>(std::move(file));
    case ReadPath::Read: return std::make_unique<ReadSource>(std::move(file));
    case ReadPath::Mmap: return std::make_unique<MmapSource>(std::move(file), map_size);
    case ReadPath::Sendfile: return std::make_unique<SendfileSource>(std::move(file));
  }
  throw Error("open", path.string(), "unknown read path");
}

FrameStream::FrameStream(SegmentSource& source, std::uint64_t offset, std::uint64_t limit)
    : source_(source), offset_(offset), limit_(limit) {}

std::span<const std::byte> FrameStream::window(std::uint64_t at, std::uint64_t n) {
  n = std::min(n, limit_ - at);
  auto mapped = source_.mapped();
  if (!mapped.empty()) {
    if (at >= mapped.size()) return {};
    return mapped.subspan(at, std::min<std::uint64_t>(n, mapped.size() - at));
  }
  if (at < buffer_offset_ || at + n > buffer_offset_ + buffer_length_) {
    // Refill from `at`: a whole chunk, or the frame if it is larger.
    std::size_t want = std::max<std::uint64_t>(n, std::min<std::uint64_t>(kReadChunk, limit_ - at));
    if (buffer_.size() < want) buffer_.resize(want);  // a short segment needs no whole chunk
    buffer_offset_ = at;
    buffer_length_ = source_.read(at, {buffer_.data(), want});
  }
  std::uint64_t have = std::min(n, buffer_offset_ + buffer_length_ - at);
  return {buffer_.data() + (at - buffer_offset_), static_cast<std::size_t>(have)};
}

FrameCheck FrameStream::next(std::uint64_t expected_sequence, Frame& frame) {
  if (offset_ >= limit_) return FrameCheck::Unwritten;
  auto head = window(offset_, kFrameHeaderSize);
  if (head.size() < kFrameHeaderSize) return check_frame(head, expected_sequence, frame);
  FrameHeader h = decode_header(head.data());
  if (h.length > kMaxBodySize) return FrameCheck::BadLength;
  auto whole = window(offset_, frame_size(h.length));
  FrameCheck c = check_frame(whole, expected_sequence, frame);
  if (c == FrameCheck::Valid) offset_ += frame.size();
  return c;
}

std::vector<SegmentName> list_segments(LogFs& fs, const std::filesystem::path& dir) {
  std::vector<SegmentName> out;
  for (const std::string& name : fs.list(dir)) {
    std::uint64_t base = 0;
    if (parse_segment_name(name, base))
      out.push_back({dir / name, base});
    else if (!name.ends_with(".index"))
      throw Error("open log", (dir / name).string(), "not a segment file of a commit log", EINVAL);
  }
  std::sort(out.begin(), out.end(), [](const SegmentName& a, const SegmentName& b) { return a.base < b.base; });
  return out;
}

LogScan scan_log(LogFs& fs, const std::filesystem::path& dir, const std::function<void(const MessageView&)>& visit) {
  LogScan scan;
  for (const SegmentName& s : list_segments(fs, dir)) {
    auto file = fs.open(s.path, false);
    scan.segments.push_back({s.path, s.base, file->size(), 0, 0});
  }
  std::uint64_t expected = kFirstSequence;
  for (std::size_t i = 0; i < scan.segments.size() && !scan.damage; ++i) {
    SegmentScan& seg = scan.segments[i];
    auto source = open_source(fs, seg.path, ReadPath::Pread);
    FrameStream stream(*source, 0, seg.file_size);
    Frame frame;
    FrameCheck check;
    while ((check = stream.next(expected, frame)) == FrameCheck::Valid) {
      if (visit) visit(MessageView{frame.sequence, frame.body, i, stream.offset() - frame.size()});
      ++seg.messages;
      ++scan.messages;
      scan.body_bytes += frame.body.size();
      scan.last_sequence = frame.sequence;
      ++expected;
      seg.valid_end = stream.offset();
      scan.end_segment = i;
      scan.end_offset = seg.valid_end;
    }
    // Unwritten space ends a segment cleanly (the next message did not fit,
    // or this is the end of the log) unless valid frames follow it here.
    std::size_t search_from = i;
    std::uint64_t search_offset = stream.offset() + (check == FrameCheck::Unwritten ? 0 : 1);
    auto next = find_next_valid(fs, scan.segments, search_from, search_offset, expected - 1);
    if (check == FrameCheck::Unwritten && (!next || next->segment != seg.path)) continue;
    Damage d;
    d.at = {seg.path, stream.offset(), check == FrameCheck::BadSequence ? frame.sequence : 0};
    d.check = check;
    d.expected_sequence = expected;
    d.next_valid = next;
    scan.damage = d;
  }
  return scan;
}

}  // namespace detail

LogScan scan_log(const std::filesystem::path& dir, const std::function<void(const MessageView&)>& visit) {
  return detail::scan_log(detail::posix_fs(), dir, visit);
}

LogsRead read_logs(std::span<const std::filesystem::path> log_dirs, ReadPath path) {
  auto& fs = detail::posix_fs();
  LogsRead out;
  for (const auto& dir : log_dirs) {
    std::uint64_t expected = kFirstSequence;
    for (const auto& s : detail::list_segments(fs, dir)) {
      auto source = detail::open_source(fs, s.path, path);
      detail::FrameStream stream(*source, 0, source->file().size());
      Frame frame;
      FrameCheck check;
      while ((check = stream.next(expected, frame)) == FrameCheck::Valid) {
        ++out.messages;
        out.bytes += frame.size();
        ++expected;
      }
      if (check != FrameCheck::Unwritten)
        throw Error("catch-up read", s.path.string(),
                    "offset " + std::to_string(stream.offset()) + ": " + std::string(to_string(check)));
      out.calls += source->calls();
    }
  }
  return out;
}

std::vector<std::filesystem::path> segment_files(std::span<const std::filesystem::path> log_dirs) {
  auto& fs = detail::posix_fs();
  std::vector<std::filesystem::path> out;
  for (const auto& dir : log_dirs)
    for (const auto& s : detail::list_segments(fs, dir)) out.push_back(s.path);
  return out;
}

CatchUpResult catch_up(std::span<const std::filesystem::path> log_dirs, ReadPath path, bool cold) {
  auto& fs = detail::posix_fs();
  const std::vector<std::filesystem::path> files = segment_files(log_dirs);
  // The fraction of all the logs' bytes in the page cache (evicting first when cold).
  auto resident = [&](bool evict) {
    double total = 0, cached = 0;
    for (const auto& segment : files) {
      auto f = fs.open(segment, false);
      if (evict) f->drop_cache();
      auto size = static_cast<double>(f->size());
      total += size;
      cached += f->resident_fraction() * size;
    }
    return total > 0 ? cached / total : 0.0;
  };
  CatchUpResult r;
  r.path = path;
  r.cold = cold;
  if (!cold) read_logs(log_dirs, path);
  r.resident_before = resident(cold);
  auto t0 = std::chrono::steady_clock::now();
  LogsRead got = read_logs(log_dirs, path);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.messages = got.messages;
  r.bytes = got.bytes;
  r.calls = got.calls;
  return r;
}

}  // namespace iolab::commitlog
