#include "progress_method.h"

#include <algorithm>

namespace iolab::suites::memory {
namespace {

void add_progress(std::atomic<std::uint64_t>& counter, std::uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Hands completions to the caller's source and counts their bytes.
class CountingSource final : public io::RequestSource {
 public:
  CountingSource(io::RequestSource& inner, std::atomic<std::uint64_t>& bytes) : inner_(inner), bytes_(bytes) {}
  bool next(io::IoRequest& r) override { return inner_.next(r); }
  void done(io::IoRequest& r) override {
    add_progress(bytes_, r.result);
    inner_.done(r);
  }

 private:
  io::RequestSource& inner_;
  std::atomic<std::uint64_t>& bytes_;
};

class ProgressFile final : public io::File {
 public:
  ProgressFile(std::unique_ptr<io::File> inner, std::atomic<std::uint64_t>& bytes)
      : File(inner->path()), inner_(std::move(inner)), bytes_(bytes) {}
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    std::size_t n = inner_->read_at(offset, dst);
    add_progress(bytes_, n);
    counters_ = inner_->counters();
    return n;
  }
  // A sequential pass is one call; it goes to the inner method in pieces of
  // about 1 MiB so that progress shows within a second (one more call per MiB).
  std::uint64_t read_sequence(std::uint64_t offset, std::uint64_t count, std::span<std::byte> dst) override {
    const std::uint64_t block = std::max<std::uint64_t>(dst.size(), 1);
    const std::uint64_t piece = std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / block);
    std::uint64_t total = 0;
    for (std::uint64_t done = 0; done < count;) {
      std::uint64_t n = std::min(piece, count - done);
      std::uint64_t got = inner_->read_sequence(offset + done * block, n, dst);
      total += got;
      add_progress(bytes_, got);
      done += n;
      if (got < n * block) break;  // end of file
    }
    counters_ = inner_->counters();
    return total;
  }
  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    inner_->write_at(offset, src);
    add_progress(bytes_, src.size());
    counters_ = inner_->counters();
  }
  void submit(std::span<io::IoRequest> requests) override {
    inner_->submit(requests);
    for (const auto& r : requests) add_progress(bytes_, r.result);
    counters_ = inner_->counters();
  }
  void stream(io::RequestSource& source, bool time_requests) override {
    CountingSource counting(source, bytes_);
    inner_->stream(counting, time_requests);
    counters_ = inner_->counters();
  }
  void sync(io::Durability d) override {
    inner_->sync(d);
    counters_ = inner_->counters();
  }
  bool supports(io::Durability d) const override { return inner_->supports(d); }
  std::uint64_t size() override { return inner_->size(); }
  void close() override {
    inner_->close();
    counters_ = inner_->counters();
  }
  std::size_t alignment() const override { return inner_->alignment(); }
  void register_buffers(std::span<const std::span<std::byte>> buffers) override { inner_->register_buffers(buffers); }
  std::optional<std::uint64_t> poller_cpu_ns() const override { return inner_->poller_cpu_ns(); }

 private:
  std::unique_ptr<io::File> inner_;
  std::atomic<std::uint64_t>& bytes_;
};

}  // namespace

std::unique_ptr<io::File> ProgressMethod::open(const std::filesystem::path& path, io::Access access,
                                               const io::FileOptions& options) const {
  return std::make_unique<ProgressFile>(inner_.open(path, access, options), bytes_);
}

}  // namespace iolab::suites::memory
