// Inside io: an io_uring as UringOptions ask for it (io_uring_method.cpp):
// its setup flags, its registrations, and the threads setup adds (the SQPOLL
// poller, whose CPU time is reported).
#pragma once

#include <liburing.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iolab/io/file.h"

namespace iolab::io::uring {

// IORING_SETUP_* for the options.
unsigned setup_flags(const UringOptions& o);
// "sqpoll, coop_taskrun", or "no options".
std::string describe(const UringOptions& o);
// Entries of the submission ring: the queue depth, at least 1.
inline unsigned ring_depth(const FileOptions& o) { return o.queue_depth == 0 ? 1 : o.queue_depth; }

// An io_uring set up with the flags `o` asks for, exited by the destructor.
struct Ring {
  io_uring ring{};
  bool up = false;

  // 0, or the errno io_uring_setup failed with.
  int setup(unsigned depth, const UringOptions& o) {
    io_uring_params p{};
    p.flags = setup_flags(o);
    int r = ::io_uring_queue_init_params(depth, &ring, &p);
    up = r == 0;
    return r < 0 ? -r : 0;
  }
  void exit() {
    if (up) ::io_uring_queue_exit(&ring);
    up = false;
  }
  ~Ring() { exit(); }
};

// The registrations the options ask for, for the probe and for open():
// 0 or the errno refused with.
int register_file(io_uring& ring, int fd);
int register_buffer_table(io_uring& ring, const std::vector<iovec>& iov);
// Why buffers could not be registered, with the usual cause.
std::string buffers_refused(int err);

// The thread ids of this process now, sorted.
std::vector<pid_t> task_ids();
// "<comm>" of thread `tid` of this process, "" when it is gone.
std::string task_name(pid_t tid);
// CPU time of thread `tid` of this process: the kernel's per-thread CPU
// clock (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), as glibc's
// pthread_getcpuclockid builds it), nanosecond-exact where /proc/<tid>/stat
// counts 10 ms ticks. nullopt once the thread is gone.
std::optional<std::uint64_t> thread_cpu_ns(pid_t tid);

}  // namespace iolab::io::uring
