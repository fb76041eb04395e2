#include "iolab/io/background_flusher.h"

#include "iolab/io/buffer.h"

#include <sys/mman.h>

#include <algorithm>

namespace iolab::io {

BackgroundFlusher::BackgroundFlusher(const std::filesystem::path& file, Durability how, std::uint64_t interval)
    : path_(file), how_(how), interval_(std::max<std::uint64_t>(interval, 1)), fd_(sys::open_existing(file, Access::Read)) {
  thread_ = std::thread([this] { loop(); });
}

BackgroundFlusher::~BackgroundFlusher() {
  if (thread_.joinable()) stop();
}

void BackgroundFlusher::wrote(std::uint64_t total) {
  written_.store(total, std::memory_order_relaxed);
  if (total < next_) return;
  next_ = total + interval_;
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_one();
}

void BackgroundFlusher::finish() {
  stop();
  if (error_) throw *error_;
}

void BackgroundFlusher::stop() {
  done_.store(true, std::memory_order_release);
  wake_.fetch_add(1, std::memory_order_release);
  wake_.notify_one();
  thread_.join();
}

void BackgroundFlusher::loop() {
  int seen = 0;
  for (;;) {
    wake_.wait(seen, std::memory_order_acquire);
    seen = wake_.load(std::memory_order_acquire);
    bool last = done_.load(std::memory_order_acquire);
    std::uint64_t upto = written_.load(std::memory_order_relaxed);
    // A flush when enough is dirty; at the end, whatever is left.
    if (!error_ && upto > flushed_ && (upto - flushed_ >= interval_ || last)) {
      try {
        flush(upto);
      } catch (const Error& e) {
        error_ = e;
      }
    }
    if (last) return;
  }
}

void BackgroundFlusher::flush(std::uint64_t upto) {
  switch (how_) {
    case Durability::SyncFileRange: sys::sync_range(fd_.get(), flushed_, upto - flushed_, path_, counters_); break;
    case Durability::MsyncSync: {
      // The dirty range, page-aligned: msync writes back the file's dirty pages in it.
      const std::uint64_t lo = flushed_ / kPageSize * kPageSize;
      const auto len = static_cast<std::size_t>(upto - lo);
      std::byte* map = sys::map(fd_.get(), lo, len, PROT_READ, path_, counters_);
      try {
        sys::msync(map, len, path_, counters_);
      } catch (...) {
        sys::unmap(map, len, path_);
        throw;
      }
      sys::unmap(map, len, path_);
      break;
    }
    case Durability::Fsync: sys::sync_fd(fd_.get(), Durability::Fsync, path_, counters_); break;
    default: sys::sync_fd(fd_.get(), Durability::Fdatasync, path_, counters_); break;
  }
  ++flushes_;
  flushed_ = upto;
}

}  // namespace iolab::io
