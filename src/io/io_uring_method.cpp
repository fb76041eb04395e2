// io_uring (liburing): requests stream through a submission ring of
// queue_depth entries, kept full by the queue pump (queue_pump.h): each
// io_uring_enter hands over what was prepared and waits for one completion
// (the queue is full) or for all that remain (the tail); warm buffered reads
// complete inline during that call, so one enter serves a whole queue.
// Buffered by default; with `direct` the file is opened O_DIRECT and every
// request must be aligned (no bounce path: unaligned requests fail with
// EINVAL; the direct method's bounce option exists for those).
//
// UringOptions map to fio's options: registered_files (registerfiles),
// fixed_buffers (fixedbufs: buffers given to register_buffers, pinned once;
// reads and writes become READ_FIXED/WRITE_FIXED), sqpoll (sqthread_poll:
// a kernel thread takes submissions from the ring, and poller_cpu_ns()
// reports its CPU time), single_issuer (SINGLE_ISSUER + DEFER_TASKRUN:
// completion work runs only when this thread enters the kernel to reap),
// coop_taskrun (COOP_TASKRUN + TASKRUN_FLAG: no interrupt to run it).
#include <fcntl.h>
#include <liburing.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "iolab/io/buffer.h"
#include "methods.h"
#include "queued_file.h"
#include "io_uring_setup.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kIoUringFacts{
    "io_uring",
    "io_uring via liburing: a queue kept full, settable depth and batch, buffered or O_DIRECT; registered "
    "files, fixed buffers, SQPOLL, DEFER_TASKRUN, COOP_TASKRUN",
    {.direct_optional = true, .queued = true}};

// The user data of a transfer taken back after a failure: its sqe became a
// no-op whose completion is skipped.
constexpr std::uint64_t kTakenBack = ~std::uint64_t{0};
// How long a wait may see no completion at all before the ring is taken to
// have lost its requests (see IoUringFile::recover_stall).
constexpr long long kStallSeconds = 20;
// The kernel registers buffers of at most 1 GiB each.
constexpr std::size_t kMaxFixedBuffer = std::size_t{1} << 30;

class IoUringFile final : public QueuedFile {
 public:
  IoUringFile(const std::filesystem::path& p, Access a, const FileOptions& o)
      : QueuedFile(p, a, o.direct, kIoUringFacts.name),
        opts_(o.uring),
        pump_(*this, queue_settings(o), path(), counters_) {
    // The SQPOLL thread is one of the threads setup adds (see poller()).
    const std::vector<pid_t> before = opts_.sqpoll ? uring::task_ids() : std::vector<pid_t>{};
    const int err = ring_.setup(pump_.depth(), opts_);
    if (opts_.sqpoll && err == 0) {
      std::vector<pid_t> after = uring::task_ids();
      std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(new_tasks_));
      poller_name_ = "iou-sqp-" + std::to_string(::gettid());
    }
    if (err != 0) {
      // EINVAL with options set: this kernel lacks one of them.
      const bool lacks = err == EINVAL && uring::setup_flags(opts_) != 0;
      throw Error("io_uring_setup", path().string(),
                  std::string(std::strerror(err)) + " (queue depth " + std::to_string(pump_.depth()) + ", " +
                      uring::describe(opts_) + ")",
                  lacks ? EOPNOTSUPP : err);
    }
    if (opts_.registered_files) {
      if (int refused = uring::register_file(ring_.ring, fd_.get()); refused != 0)
        sys::fail("io_uring_register_files", path(), refused);
      target_fd_ = 0;  // index in the registered table
    } else {
      target_fd_ = fd_.get();
    }
    unsubmitted_.reserve(pump_.depth());
  }

  void stream(RequestSource& source, bool time_requests) override {
    if (!ring_.up) throw Error("io_uring", path().string(), "the file is closed", EBADF);
    pump_.run(source, time_requests);
  }

  void register_buffers(std::span<const std::span<std::byte>> buffers) override {
    if (!opts_.fixed_buffers) return;
    if (!ring_.up) throw Error("io_uring_register_buffers", path().string(), "the file is closed", EBADF);
    if (!fixed_.empty()) {
      ::io_uring_unregister_buffers(&ring_.ring);
      fixed_.clear();
    }
    std::vector<iovec> iov;
    for (auto b : buffers) {
      if (b.size() > kMaxFixedBuffer)
        throw Error("io_uring_register_buffers", path().string(),
                    "a buffer of " + std::to_string(b.size()) + " bytes; the kernel registers at most 1 GiB each", EINVAL);
      if (b.empty()) continue;
      fixed_.push_back({b.data(), b.data() + b.size(), static_cast<int>(iov.size())});
      iov.push_back({b.data(), b.size()});
    }
    if (iov.empty()) return;
    if (int err = uring::register_buffer_table(ring_.ring, iov); err != 0) {
      fixed_.clear();
      throw Error("io_uring_register_buffers", path().string(), uring::buffers_refused(err), err);
    }
  }

  std::optional<std::uint64_t> poller_cpu_ns() const override {
    if (!opts_.sqpoll) return std::nullopt;
    if (!ring_.up) return final_poller_ns_;
    pid_t tid = poller();
    return tid == 0 ? std::nullopt : uring::thread_cpu_ns(tid);
  }

  void close() override {
    if (ring_.up) {
      final_poller_ns_ = poller_cpu_ns();
      ring_.exit();
    }
    fd_.close(path());
  }

  void check_request(const IoRequest& r) const override {
    QueuedFile::check_request(r);
    if (opts_.fixed_buffers && fixed_index(r.data.data(), r.data.size()) < 0)
      throw Error(r.kind == IoRequest::Kind::Read ? "io_uring read_fixed" : "io_uring write_fixed", path().string(),
                  std::to_string(r.data.size()) + " bytes that lie outside every buffer given to register_buffers "
                  "(fixed_buffers reads and writes only registered buffers)",
                  EINVAL);
  }

  // ---- the queue pump's backend (queue_pump.h; check() is QueuedFile's) ----
  void prepare(std::uint32_t slot, const queue::Piece& p) {
    io_uring_sqe* sqe = ::io_uring_get_sqe(&ring_.ring);
    if (sqe == nullptr && opts_.sqpoll) {
      // The poller frees ring entries when it publishes its head, which can
      // come after the completions of the requests it took (a page-cache read
      // completes inside its submission): wait for it to publish.
      const int r = sys::retry("io_uring_enter", [&] {
        const int n = ::io_uring_sqring_wait(&ring_.ring);
        if (n < 0) {
          errno = -n;
          return -1;
        }
        return n;
      });
      ++counters_.calls;
      if (r < 0) sys::fail("io_uring_sqring_wait", path());
      sqe = ::io_uring_get_sqe(&ring_.ring);
    }
    if (sqe == nullptr)  // only no-ops left behind by an earlier failure can fill it
      throw Error("io_uring_get_sqe", path().string(), "submission ring full", EBUSY);
    const unsigned len = static_cast<unsigned>(p.length);
    const bool read = p.kind == IoRequest::Kind::Read;
    if (int index = opts_.fixed_buffers ? fixed_index(p.data, p.length) : -1; index >= 0) {
      if (read) ::io_uring_prep_read_fixed(sqe, target_fd_, p.data, len, p.offset, index);
      else ::io_uring_prep_write_fixed(sqe, target_fd_, p.data, len, p.offset, index);
    } else if (read) {
      ::io_uring_prep_read(sqe, target_fd_, p.data, len, p.offset);
    } else {
      ::io_uring_prep_write(sqe, target_fd_, p.data, len, p.offset);
    }
    if (opts_.registered_files) sqe->flags |= IOSQE_FIXED_FILE;
    ::io_uring_sqe_set_data64(sqe, slot);
    unsubmitted_.push_back(sqe);
    if (slot >= held_.size()) held_.resize(slot + 1, 0);
    held_[slot] = 1;
  }

  queue::Submitted submit_prepared(unsigned wait_for) {
    if (wait_for > 0 && !opts_.sqpoll) return submit_and_wait_bounded(wait_for);
    queue::Submitted s;
    // With SQPOLL, only a wait or waking the poller enters the kernel.
    const bool enters = !opts_.sqpoll || wait_for > 0 || (IO_URING_READ_ONCE(*ring_.ring.sq.kflags) & IORING_SQ_NEED_WAKEUP);
    int r = sys::retry("io_uring_enter", [&] {
      int n = wait_for > 0         ? ::io_uring_submit_and_wait(&ring_.ring, wait_for)
              : opts_.single_issuer ? ::io_uring_submit_and_get_events(&ring_.ring)  // deferred completions run only here
                                    : ::io_uring_submit(&ring_.ring);
      if (n < 0) {
        errno = -n;
        return -1;
      }
      return n;
    });
    const int err = r < 0 ? errno : 0;
    if (enters) ++counters_.calls;
    if (opts_.sqpoll) {
      // Everything flushed to the ring is the poller's now, whatever the
      // wake-up call returned (liburing counts entries it has not taken yet).
      stale_ = 0;
      s.went = hand_over(unsubmitted_.size());
    } else {
      s.went = hand_over(r < 0 ? 0 : static_cast<std::size_t>(r));
    }
    if (err != 0) {
      s.error = err;
      s.call = "io_uring_enter";
    }
    return s;
  }

  std::size_t discard_unsubmitted() {
    // An sqe cannot be taken off the ring, but until the kernel reads it,
    // it can become a no-op that touches no buffer.
    const std::size_t n = unsubmitted_.size();
    for (io_uring_sqe* sqe : unsubmitted_) {
      if (std::uint64_t slot = sqe->user_data; slot < held_.size()) held_[slot] = 0;
      ::io_uring_prep_nop(sqe);
      ::io_uring_sqe_set_data64(sqe, kTakenBack);
    }
    if (!opts_.sqpoll) stale_ += n;
    unsubmitted_.clear();
    return n;
  }

  std::size_t reap(std::span<queue::Completion> out) {
    std::size_t n = 0;
    // Requests a lost ring never ran come back as EAGAIN: the pump issues them again.
    while (!lost_.empty() && n < out.size()) {
      out[n++] = {lost_.back(), -EAGAIN};
      lost_.pop_back();
    }
    unsigned head, seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_.ring, head, cqe) {
      if (n == out.size()) break;
      ++seen;
      const std::uint64_t data = ::io_uring_cqe_get_data64(cqe);
      if (data == kTakenBack) continue;
      if (data < held_.size()) held_[data] = 0;
      out[n++] = {static_cast<std::uint32_t>(data), cqe->res};
    }
    ::io_uring_cq_advance(&ring_.ring, seen);
    return n;
  }

 private:
  // The kernel consumed `entries` from the submission ring: first the no-ops
  // still ahead of ours (the ring hands over oldest first), then ours. How
  // many of ours went; they are no longer ours to take back.
  std::size_t hand_over(std::size_t entries) {
    const std::size_t old = std::min(entries, stale_);
    stale_ -= old;
    const std::size_t took = std::min(entries - old, unsubmitted_.size());
    unsubmitted_.erase(unsubmitted_.begin(), unsubmitted_.begin() + static_cast<std::ptrdiff_t>(took));
    return took;
  }

  // Hands over what is prepared and waits for `wait_for` completions, but
  // never forever. On this machine's kernel (6.18) a fresh ring has been
  // seen, twice in ~10 default runs, to take buffered writes and never
  // complete them: SQ head 8, CQ tail 0, no io-wq worker, the process asleep
  // in io_cqring_wait for good. What the kernel took is read off the SQ
  // head, so the count is exact however the wait ends.
  queue::Submitted submit_and_wait_bounded(unsigned wait_for) {
    queue::Submitted s;
    const unsigned head0 = IO_URING_READ_ONCE(*ring_.ring.sq.khead);
    // The fault injector (tests): ETIME makes this wait the stall above
    // without waiting kStallSeconds for a kernel that loses nothing; EINTR
    // changes nothing (the wait is simply made again); any other error fails
    // the call before it hands anything over.
    if (int injected = sys::injected_error("io_uring_wait"); injected == ETIME) {
      return lose_completions(head0);
    } else if (injected != 0 && injected != EINTR) {
      s.error = injected;
      s.call = "io_uring_enter";
      return s;
    }
    __kernel_timespec ts{kStallSeconds, 0};
    io_uring_cqe* cqe = nullptr;
    int r = ::io_uring_submit_and_wait_timeout(&ring_.ring, &cqe, wait_for, &ts, nullptr);
    ++counters_.calls;
    s.went = hand_over(static_cast<unsigned>(IO_URING_READ_ONCE(*ring_.ring.sq.khead) - head0));
    if (r == -ETIME && ::io_uring_cq_ready(&ring_.ring) == 0 && unsubmitted_.empty()) {
      recover_stall();
    } else if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
      s.error = -r;
      s.call = "io_uring_enter";
    }
    return s;
  }

  // The stall, made on purpose: hands over what is prepared, lets the
  // kernel finish every request the ring holds and drops their completions
  // unseen (so no request is still running when its buffer is reused), then
  // recovers as from a real stall.
  queue::Submitted lose_completions(unsigned head0) {
    queue::Submitted s;
    int r = ::io_uring_submit(&ring_.ring);
    ++counters_.calls;
    s.went = hand_over(static_cast<unsigned>(IO_URING_READ_ONCE(*ring_.ring.sq.khead) - head0));
    if (r < 0) {
      s.error = -r;
      s.call = "io_uring_enter";
      return s;
    }
    if (!unsubmitted_.empty()) return s;  // not all in the kernel: no stall to make
    std::vector<char> open(held_.begin(), held_.end());
    while (std::find(open.begin(), open.end(), 1) != open.end()) {
      io_uring_cqe* cqe = nullptr;
      if (int w = ::io_uring_wait_cqe(&ring_.ring, &cqe); w < 0) {
        if (w == -EINTR) continue;
        s.error = -w;
        s.call = "io_uring_enter";
        return s;
      }
      if (std::uint64_t data = ::io_uring_cqe_get_data64(cqe); data < open.size()) open[data] = 0;
      ::io_uring_cqe_seen(&ring_.ring, cqe);
    }
    recover_stall();
    return s;
  }

  // No completion for kStallSeconds with requests in the kernel: the ring
  // is replaced (closing it cancels what it holds) and its requests come
  // back from reap() as EAGAIN, so the pump issues them again; reads and
  // writes at an offset are safe to repeat. Said on stderr: the repetition
  // that waited is slow by that long and shows as such.
  void recover_stall() {
    std::size_t held = 0;
    for (std::uint32_t slot = 0; slot < held_.size(); ++slot)
      if (held_[slot]) {
        lost_.push_back(slot);
        held_[slot] = 0;
        ++held;
      }
    if (held == 0) return;
    if (opts_.fixed_buffers || opts_.sqpoll)
      throw Error("io_uring_enter", path().string(),
                  "no completion in " + std::to_string(kStallSeconds) + " s with " + std::to_string(held) +
                      " requests in flight",
                  ETIMEDOUT);
    ring_.exit();
    if (int err = ring_.setup(pump_.depth(), opts_); err != 0) sys::fail("io_uring_setup", path(), err);
    if (opts_.registered_files)
      if (int refused = uring::register_file(ring_.ring, fd_.get()); refused != 0)
        sys::fail("io_uring_register_files", path(), refused);
    stale_ = 0;
    std::fprintf(stderr, "iolab: io_uring %s: %zu requests had no completion in %lld s; the ring was replaced and they were issued again\n",
                 path().c_str(), held, kStallSeconds);
  }

  struct Fixed {
    const std::byte* begin;
    const std::byte* end;
    int index;  // in the registered table
  };
  // The SQPOLL thread, 0 while unknown. Of the threads that appeared while
  // the ring was set up, the only one, or else the one named after this
  // thread ("iou-sqp-<tid>", which it takes once it runs): other threads may
  // have started threads meanwhile, but not rings of this thread. (The
  // ring's fdinfo names it too, but only while the poller sleeps.)
  pid_t poller() const {
    if (sq_thread_ == 0 && new_tasks_.size() == 1) sq_thread_ = new_tasks_.front();
    for (pid_t t : new_tasks_)
      if (sq_thread_ == 0 && uring::task_name(t) == poller_name_) sq_thread_ = t;
    return sq_thread_;
  }

  // The registered buffer holding [p, p + n), or -1.
  int fixed_index(const std::byte* p, std::size_t n) const {
    for (const auto& f : fixed_)
      if (p >= f.begin && p + n <= f.end) return f.index;
    return -1;
  }

  const UringOptions opts_;
  uring::Ring ring_;
  queue::QueuePump<IoUringFile> pump_;
  int target_fd_ = -1;                       // what sqes name: the fd, or 0 in the registered table
  std::vector<Fixed> fixed_;                 // buffers registered for fixed_buffers
  std::vector<io_uring_sqe*> unsubmitted_;   // prepared, not yet taken by the kernel, oldest first
  std::size_t stale_ = 0;                    // no-ops still on the ring ahead of them
  std::vector<char> held_;                   // per slot: a request the kernel (or the ring) holds
  std::vector<std::uint32_t> lost_;          // slots of a replaced ring's requests, for reap()
  std::vector<pid_t> new_tasks_;             // threads that appeared during setup (SQPOLL)
  std::string poller_name_;                  // what the SQPOLL thread calls itself
  mutable pid_t sq_thread_ = 0;              // the SQPOLL thread, once known
  std::optional<std::uint64_t> final_poller_ns_;
};

class IoUringMethod final : public FileMethod<IoUringFile> {
 public:
  using FileMethod::FileMethod;
  // O_DIRECT only when asked for: the page cache and alignment follow FileOptions::direct.
  MethodTraits traits(const FileOptions& o) const override {
    MethodTraits t = FileMethod::traits(o);
    t.bypasses_page_cache = o.direct;
    t.needs_alignment = o.direct;
    return t;
  }
  Availability probe(const std::filesystem::path&) const override {
    std::ifstream knob("/proc/sys/kernel/io_uring_disabled");
    int disabled = 0;
    if (knob >> disabled && disabled == 2) return {false, "io_uring is disabled by the kernel (kernel.io_uring_disabled=2)"};
    uring::Ring ring;
    if (int err = ring.setup(2, {}); err != 0) {
      std::string why = std::string("io_uring_setup failed: ") + std::strerror(err);
      if (disabled == 1) why += " (kernel.io_uring_disabled=1: only the io_uring_group may use it)";
      return {false, why};
    }
    return {};
  }
  // Sets up a ring exactly as open() would, and makes each registration once.
  Availability supports_options(const FileOptions& o, const std::filesystem::path& dir) const override {
    if (o.direct)
      if (Availability a = direct_method().probe(dir); !a.available) return a;
    uring::Ring ring;
    if (int err = ring.setup(uring::ring_depth(o), o.uring); err != 0)
      return {false, "this kernel refuses an io_uring with " + uring::describe(o.uring) + " at queue depth " +
                         std::to_string(uring::ring_depth(o)) + ": " + std::strerror(err)};
    if (o.uring.registered_files) {
      sys::Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (d.get() < 0) return {false, "cannot open " + dir.string() + ": " + std::strerror(errno)};
      if (int err = uring::register_file(ring.ring, d.get()); err != 0)
        return {false, std::string("this kernel refuses io_uring registered files: ") + std::strerror(err)};
    }
    if (o.uring.fixed_buffers) {
      Buffer page(kPageSize, BufferKind::Aligned);
      if (int err = uring::register_buffer_table(ring.ring, {iovec{page.data(), page.size()}}); err != 0)
        return {false, "this kernel refuses io_uring fixed buffers: " + uring::buffers_refused(err)};
    }
    return {};
  }
};

}  // namespace

const Method& io_uring_method() { return the_method<IoUringMethod>(kIoUringFacts); }

}  // namespace iolab::io
