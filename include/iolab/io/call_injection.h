// The seam for fault injection at the system-call helper (io/syscall.h).
//
// Every call the helper makes is first shown to the installed injector, if
// any, which may let it through, shorten its transfer, or fail it with an
// errno value without making it. With no injector installed (production)
// the cost is one relaxed atomic load per call. The injectors themselves
// (iolab/testing/call_faults.h) are test support, not part of the product.
//
// Thread safety: the injector is consulted from whatever thread makes the
// call; implementations must be safe for concurrent use. install/remove are
// meant for tests that install one injector around a workload.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace iolab::io::sys {

class CallInjector {
 public:
  virtual ~CallInjector() = default;
  struct Decision {
    int error = 0;           // non-zero: the call is not made and fails with this errno
    std::size_t length = 0;  // bytes the call may transfer (<= the length asked; at least 1 if that was)
  };
  // `call` names the call ("pwrite", "fdatasync", ...; empty for call sites
  // that do not name theirs); `length` is what it would transfer (0 for
  // calls that move no data).
  virtual Decision on_call(std::string_view call, std::size_t length) = 0;
};

// Installs `injector` for the whole process while the guard lives. Nesting
// restores the previous one.
class ScopedInjector {
 public:
  explicit ScopedInjector(CallInjector& injector);
  ~ScopedInjector();
  ScopedInjector(const ScopedInjector&) = delete;
  ScopedInjector& operator=(const ScopedInjector&) = delete;

 private:
  CallInjector* previous_;
};

namespace detail {
extern std::atomic<CallInjector*> g_injector;
}  // namespace detail

}  // namespace iolab::io::sys
