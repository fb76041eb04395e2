// The faults the error-injection tests give the system-call helper through
// the injection seam (iolab/io/call_injection.h). Test support: tests,
// benchmarks and fuzzers link it; the iolab programs do not.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "iolab/io/call_injection.h"

namespace iolab::io::sys {

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

}  // namespace iolab::io::sys
