// seed 002 #1 and #2: does a 4 KiB user-space buffer help small writes, and
// when does it stop helping?
//
// #1: 128-byte writes, 100 K to 2 M calls, buffered (stdio and iostream with
//     4 KiB buffers) vs unbuffered (stdio with no buffer, plain write(2)).
// #2: 100,000 writes of 1, 2, 3 and 4 KiB through a 4 KiB buffer vs none. The
//     seed's claim (buffering stops helping once a write exceeds half the
//     buffer) is a property of Java's BufferedOutputStream: it flushes before
//     any write that does not fit in the free space, so with 3 KiB writes
//     every call costs a write(2) plus a copy. glibc's stdio fills the buffer
//     to the brim before flushing and libstdc++'s filebuf sends writes of
//     1 KiB or more straight to the kernel (one writev with the buffered
//     bytes), so "bufferedstream" below implements Java's exact policy over
//     write(2) to test the claim itself beside what C and C++ really do.
#include <cstring>
#include <memory>
#include <optional>

#include "seed_common.h"

namespace iolab::suites {
namespace {

using namespace seeds;
using harness::FileExperiment;

constexpr std::size_t kStreamBuffer = 4096;

// Java's java.io.BufferedOutputStream.write(byte[], off, len), over write(2).
class JavaBufferedStream {
 public:
  JavaBufferedStream(int fd, const std::filesystem::path& path) : fd_(fd), path_(path) {}
  void write(const std::byte* data, std::size_t len) {
    if (len >= kStreamBuffer) {  // larger than the buffer: flush, then write directly
      flush();
      put(data, len);
      return;
    }
    if (len > kStreamBuffer - count_) flush();  // does not fit in the free space
    std::memcpy(buf_ + count_, data, len);
    count_ += len;
  }
  void flush() {
    if (count_ == 0) return;
    put(buf_, count_);
    count_ = 0;
  }
  std::uint64_t calls() const noexcept { return calls_; }

 private:
  void put(const std::byte* data, std::size_t len) {
    ++calls_;
    write_all(fd_, data, len, path_);
  }
  int fd_;
  const std::filesystem::path& path_;
  std::byte buf_[kStreamBuffer];
  std::size_t count_ = 0;
  std::uint64_t calls_ = 0;
};

Custom java_buffered(harness::Runner& runner, std::string suite, std::string experiment,
                                        std::uint64_t write_size, std::uint64_t writes) {
  struct State {
    io::ScratchDir* scratch;
    std::filesystem::path file;
    std::optional<Fd> fd;  // opened untimed, closed inside the timed region (as every write)
    bool verified = true;
    io::Buffer source;    // `period` bytes of pattern, written cyclically
    std::uint64_t period;
  };
  auto st = std::make_shared<State>();
  st->scratch = &runner.scratch();
  // The data: write i takes bytes [(i mod k) * size, +size) of one pattern
  // block, so the file repeats that block and is verified against it.
  std::uint64_t per_block = std::max<std::uint64_t>(1, std::min<std::uint64_t>(writes, (4 * MiB) / write_size));
  st->period = per_block * write_size;
  st->source = io::Buffer(static_cast<std::size_t>(st->period), io::BufferKind::Heap);
  io::fill_pattern(kCustomSeed, 0, st->source.span());

  Custom custom;
  harness::CustomExperiment& c = custom.experiment;
  c.labels.suite = std::move(suite);
  c.labels.experiment = std::move(experiment);
  c.labels.method = "bufferedstream";
  c.labels.op = results::Op::Write;
  c.labels.block_size = write_size;
  c.labels.file_size = write_size * writes;
  c.labels.buffer = io::BufferKind::Heap;
  c.labels.cache.reset();
  c.labels.cache_method = "fresh file";
  c.labels.extra = {{"stream_buffer", kStreamBuffer},
                    {"policy", "java.io.BufferedOutputStream: flush before a write that does not fit, "
                               "write directly when it is at least the buffer size"}};
  c.prepare = [st] {
    if (!st->file.empty()) st->scratch->remove_file(st->file);
    st->file = st->scratch->create_unique_file("bufferedstream");
    st->fd.emplace(st->file, O_WRONLY);
  };
  c.timed = [st, write_size, writes, per_block] {
    JavaBufferedStream out(st->fd->get(), st->file);
    for (std::uint64_t i = 0; i < writes; ++i)
      out.write(st->source.data() + (i % per_block) * write_size, static_cast<std::size_t>(write_size));
    out.flush();
    st->fd->close(st->file);
    return harness::Repetition{write_size * writes, writes, out.calls()};
  };
  // Every pass's file is read back and checked (whole, or its length and
  // last 4 KiB, as the engine asks) before the next replaces it.
  c.cleanup = [st, write_size, writes](harness::DataCheck check) {
    st->fd.reset();
    st->verified =
        st->verified && file_matches_pattern(st->file, write_size * writes, kCustomSeed, st->period, check);
  };
  c.verify = [st] { return st->verified; };
  custom.finish = [st](results::Result&) {
    if (!st->file.empty()) st->scratch->remove_file(st->file);
    st->file.clear();
  };
  return custom;
}

class WriteBufferingSuite final : public Suite {
 public:
  using Suite::Suite;

  std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const override {
    const Scale s = options.scale;
    std::vector<results::Result> out;

    // #1: 128-byte writes, several call counts.
    auto counts = by_scale<std::vector<std::uint64_t>>(s, {2000}, {100000}, {100000},
                                                       {100000, 1000000, 2000000});
    struct Writer {
      const char* method;
      const char* label;
      std::size_t stream_buffer;
    };
    const Writer small_writers[] = {{"stdio", "", kStreamBuffer},
                                    {"iostream", "", kStreamBuffer},
                                    {"stdio", kStdioUnbuffered, 0},
                                    {"syscall", "", 0}};
    std::vector<FileExperiment> table;
    for (std::uint64_t n : counts) {
      for (const Writer& w : small_writers) {
        FileExperiment e;
        e.suite = std::string(name());
        e.experiment = count_label(n) + " writes of 128 B";
        e.method = w.method;
        e.method_label = w.label;
        e.options.stream_buffer = w.stream_buffer;
        e.op = results::Op::Write;
        e.block_size = 128;
        e.ops = n;
        e.file_size = 128 * n;
        table.push_back(std::move(e));
      }
    }
    run_all(runner, table, out);

    // #2: the half-buffer rule.
    std::uint64_t writes = by_scale<std::uint64_t>(s, 500, 8000, 20000, 100000);
    const Writer big_writers[] = {{"stdio", "", kStreamBuffer}, {"iostream", "", kStreamBuffer}, {"syscall", "", 0}};
    // (The quick scale: one size under half the buffer and one over.)
    auto sizes = by_scale<std::vector<std::uint64_t>>(s, {1 * KiB, 3 * KiB}, {1 * KiB, 3 * KiB},
                                                      {1 * KiB, 2 * KiB, 3 * KiB, 4 * KiB},
                                                      {1 * KiB, 2 * KiB, 3 * KiB, 4 * KiB});
    for (std::uint64_t size : sizes) {
      std::string experiment = count_label(writes) + " writes of " + label(size) + " via a 4k buffer";
      table.clear();
      for (const Writer& w : big_writers) {
        FileExperiment e;
        e.suite = std::string(name());
        e.experiment = experiment;
        e.method = w.method;
        e.method_label = w.label;
        e.options.stream_buffer = w.stream_buffer;
        e.op = results::Op::Write;
        e.block_size = size;
        e.ops = writes;
        e.file_size = size * writes;
        table.push_back(std::move(e));
      }
      run_all(runner, table, out);
      out.push_back(run_custom(runner, java_buffered(runner, std::string(name()), experiment, size, writes)));
    }
    return out;
  }
};

const SuiteRegistration write_buffering_registration{
    std::make_unique<WriteBufferingSuite>(catalogued("write-buffering"))};

}  // namespace
}  // namespace iolab::suites
