// Test-only fault injection at the system-call helper (io/syscall.h).
//
// Every call the helper makes is first shown to the installed injector, if
// any, which may let it through, shorten its transfer, or fail it with an
// errno value without making it. With no injector installed (production)
// the cost is one relaxed atomic load per call.
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

// The faults the error-injection tests use.
enum class Fault {
  Eio,            // the call fails with EIO
  Enospc,         // ... with ENOSPC
  Eintr,          // ... with EINTR (once): the helper must retry it transparently
  Eagain,         // ... with EAGAIN
  ShortTransfer,  // the call moves half its bytes (at least 1): the helper must complete it
};
std::string_view to_string(Fault f);
// The errno value the fault makes a call fail with; 0 for the ones the
// helper absorbs (EINTR: retried; a short transfer: completed).
int error_number(Fault f);
inline constexpr Fault kAllFaults[] = {Fault::Eio, Fault::Enospc, Fault::Eintr, Fault::Eagain, Fault::ShortTransfer};

// Gives `fault` to the n-th call (1-based) whose name matches `call` (empty:
// every call; ShortTransfer only applies to calls that move data). nth = 0
// never fires: it only counts, so a test can learn how many calls a
// workload makes, then fail each in turn.
class NthCallFault final : public CallInjector {
 public:
  NthCallFault(std::string call, std::uint64_t nth, Fault fault);
  Decision on_call(std::string_view call, std::size_t length) override;
  std::uint64_t calls_seen() const noexcept { return seen_.load(std::memory_order_relaxed); }
  bool fired() const noexcept { return fired_.load(std::memory_order_relaxed); }

 private:
  std::string call_;
  std::uint64_t nth_;
  Fault fault_;
  std::atomic<std::uint64_t> seen_{0};
  std::atomic<bool> fired_{false};
};

namespace detail {
extern std::atomic<CallInjector*> g_injector;
}  // namespace detail

}  // namespace iolab::io::sys
