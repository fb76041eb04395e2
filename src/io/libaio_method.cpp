// Linux native AIO through libaio (io_setup/io_submit/io_getevents): what
// fio users compare io_uring against. O_DIRECT only: on a buffered file
// io_submit does the I/O before it returns, so there would be no queue.
// Requests stream through the same queue pump as io_uring (queue_pump.h):
// each io_submit hands over what was prepared, then io_getevents waits for
// one completion (the queue is full) or all that remain (the tail). A batch
// cut short by submit_batch is handed over without a wait; its completions
// are reaped at the next one.
#include <fcntl.h>
#include <libaio.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "methods.h"
#include "queued_file.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kLibaioFacts{
    "libaio",
    "Linux native AIO via libaio (io_submit/io_getevents), O_DIRECT only: a queue kept full, settable depth "
    "and batch; fio's libaio engine",
    {.bypasses_page_cache = true, .needs_alignment = true, .queued = true}};

// libaio returns -errno; sys::retry expects -1 and errno.
template <typename F>
int call_aio(std::string_view call, F&& f) {
  return sys::retry(call, [&] {
    int r = f();
    if (r < 0) {
      errno = -r;
      return -1;
    }
    return r;
  });
}

// Why io_setup refused `depth`, with what to change.
std::string setup_refused(int err, unsigned depth) {
  std::string why = std::strerror(err);
  if (err == EAGAIN) {
    std::ifstream max("/proc/sys/fs/aio-max-nr"), used("/proc/sys/fs/aio-nr");
    unsigned long m = 0, u = 0;
    max >> m;
    used >> u;
    why += " (queue depth " + std::to_string(depth) + " needs more AIO events than fs.aio-max-nr=" + std::to_string(m) +
           " leaves; " + std::to_string(u) + " in use)";
  }
  return why;
}

// io_destroy waits for an RCU grace period (~32 ms here), so a closed file
// parks its idle context for the next open of the same depth. A parked
// context has nothing in flight and no event unreaped (the queue pump never
// returns otherwise); the kernel tears the last ones down at exit. A
// context belongs to the process that set it up: a child forked after some
// were parked (the decision table's larger-than-memory cell runs in one)
// got io_submit's EINVAL from its parent's, so a process takes only its own.
class IdleContexts {
 public:
  static IdleContexts& instance() {
    static IdleContexts* pool = new IdleContexts;  // never destroyed: files may close during exit
    return *pool;
  }
  // A context for `depth` events: a parked one, or a new one (0 or -errno).
  int take(unsigned depth, io_context_t& ctx) {
    {
      std::lock_guard lock(mutex_);
      forget_inherited();
      for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if (it->first == depth) {
          ctx = it->second;
          idle_.erase(it);
          return 0;
        }
    }
    ctx = nullptr;
    return ::io_setup(static_cast<int>(depth), &ctx);
  }
  void give(unsigned depth, io_context_t ctx) {
    {
      std::lock_guard lock(mutex_);
      forget_inherited();
      if (idle_.size() < kKeep) {
        idle_.emplace_back(depth, ctx);
        return;
      }
    }
    ::io_destroy(ctx);
  }

 private:
  static constexpr std::size_t kKeep = 8;
  // Contexts a parent parked before the fork that made this process are
  // not ours to use or destroy (called under mutex_).
  void forget_inherited() {
    if (owner_ == ::getpid()) return;
    idle_.clear();
    owner_ = ::getpid();
  }
  std::mutex mutex_;
  pid_t owner_ = ::getpid();  // the process whose contexts idle_ holds
  std::vector<std::pair<unsigned, io_context_t>> idle_;
};

class LibaioFile final : public QueuedFile {
 public:
  LibaioFile(const std::filesystem::path& p, Access a, const FileOptions& o)
      : QueuedFile(p, a, /*direct=*/true, kLibaioFacts.name), pump_(*this, queue_settings(o), path(), counters_) {
    const unsigned depth = pump_.depth();
    if (int r = IdleContexts::instance().take(depth, ctx_); r < 0)
      throw Error("io_setup", path().string(), setup_refused(-r, depth), -r);
    iocbs_.resize(depth);
    pending_.reserve(depth);
    events_.resize(depth);
  }
  ~LibaioFile() override { destroy(); }

  void stream(RequestSource& source, bool time_requests) override {
    if (ctx_ == nullptr) throw Error("libaio", path().string(), "the file is closed", EBADF);
    pump_.run(source, time_requests);
  }

  void close() override {
    destroy();
    fd_.close(path());
  }

  // ---- the queue pump's backend (queue_pump.h; check() is QueuedFile's) ----
  void prepare(std::uint32_t slot, const queue::Piece& p) {
    iocb& cb = iocbs_[slot];
    if (p.kind == IoRequest::Kind::Read)
      ::io_prep_pread(&cb, fd_.get(), p.data, p.length, static_cast<long long>(p.offset));
    else
      ::io_prep_pwrite(&cb, fd_.get(), p.data, p.length, static_cast<long long>(p.offset));
    pending_.push_back(&cb);
  }

  queue::Submitted submit_prepared(unsigned wait_for) {
    queue::Submitted s;
    if (!pending_.empty()) {
      ++counters_.calls;
      int r = call_aio("io_submit", [&] { return ::io_submit(ctx_, static_cast<long>(pending_.size()), pending_.data()); });
      if (r < 0) {
        s.error = errno;
        s.call = "io_submit";
        return s;
      }
      s.went = static_cast<std::size_t>(r);
      pending_.erase(pending_.begin(), pending_.begin() + r);
      if (!pending_.empty()) return s;  // the kernel took part: no wait, the pump submits the rest
    }
    if (wait_for == 0 || ready_ != 0) return s;
    ++counters_.calls;
    int r = call_aio("io_getevents", [&] {
      return ::io_getevents(ctx_, static_cast<long>(wait_for), static_cast<long>(events_.size()), events_.data(), nullptr);
    });
    if (r < 0) {
      s.error = errno;
      s.call = "io_getevents";
      return s;
    }
    ready_ = static_cast<std::size_t>(r);
    first_ready_ = 0;
    return s;
  }

  std::size_t discard_unsubmitted() {
    const std::size_t n = pending_.size();
    pending_.clear();
    return n;
  }

  // Events that do not fit in `out` (the pump takes at most its batch) stay for the next reap.
  std::size_t reap(std::span<queue::Completion> out) {
    const std::size_t n = std::min(ready_, out.size());
    for (std::size_t i = 0; i < n; ++i) {
      const io_event& e = events_[first_ready_ + i];
      out[i].slot = static_cast<std::uint32_t>(e.obj - iocbs_.data());
      out[i].result = static_cast<long>(e.res);  // bytes, or -errno in the same word
    }
    ready_ -= n;
    first_ready_ = ready_ == 0 ? 0 : first_ready_ + n;
    return n;
  }

 private:
  void destroy() {
    if (ctx_ != nullptr) IdleContexts::instance().give(pump_.depth(), ctx_);
    ctx_ = nullptr;
  }

  queue::QueuePump<LibaioFile> pump_;
  io_context_t ctx_ = nullptr;
  std::vector<iocb> iocbs_;       // one per slot, so a completion names its slot
  std::vector<iocb*> pending_;    // prepared, not yet taken by io_submit, oldest first
  std::vector<io_event> events_;  // what the last io_getevents returned
  std::size_t ready_ = 0;         // of which not yet reaped
  std::size_t first_ready_ = 0;   // the first of those
};

class LibaioMethod final : public FileMethod<LibaioFile> {
 public:
  using FileMethod::FileMethod;
  Availability probe(const std::filesystem::path& dir) const override {
    if (Availability a = direct_method().probe(dir); !a.available) return a;
    return supports_depth(1);
  }
  Availability supports_options(const FileOptions& o, const std::filesystem::path&) const override {
    return supports_depth(o.queue_depth == 0 ? 1 : o.queue_depth);
  }

 private:
  static Availability supports_depth(unsigned depth) {
    io_context_t ctx = nullptr;
    if (int r = IdleContexts::instance().take(depth, ctx); r < 0)
      return {false, "io_setup refuses a queue of " + std::to_string(depth) + ": " + setup_refused(-r, depth)};
    IdleContexts::instance().give(depth, ctx);
    return {};
  }
};

}  // namespace

const Method& libaio_method() { return the_method<LibaioMethod>(kLibaioFacts); }

}  // namespace iolab::io
