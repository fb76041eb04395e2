#include "iolab/testing/call_faults.h"

#include <cerrno>

#include "iolab/base/names.h"

namespace iolab::io::sys {

namespace {
constexpr NameTable<Fault, 5> kFaults{{{Fault::Eio, "EIO"}, {Fault::Enospc, "ENOSPC"}, {Fault::Eintr, "EINTR"},
                                       {Fault::Eagain, "EAGAIN"}, {Fault::ShortTransfer, "short transfer"}}};
}  // namespace

std::string_view to_string(Fault f) { return name_of(kFaults, f); }

int error_number(Fault f) {
  switch (f) {
    case Fault::Eio: return EIO;
    case Fault::Enospc: return ENOSPC;
    case Fault::Eagain: return EAGAIN;
    case Fault::Eintr:
    case Fault::ShortTransfer: return 0;
  }
  return 0;
}

NthCallFault::NthCallFault(std::string call, std::uint64_t nth, Fault fault)
    : call_(std::move(call)), nth_(nth), fault_(fault) {}

CallInjector::Decision NthCallFault::on_call(std::string_view call, std::size_t length) {
  Decision pass{0, length};
  if (!call_.empty() && call != call_) return pass;
  if (fault_ == Fault::ShortTransfer && length < 2) return pass;  // nothing to shorten: not counted
  std::uint64_t n = seen_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != nth_) return pass;
  fired_.store(true, std::memory_order_relaxed);
  if (fault_ == Fault::ShortTransfer) return {0, length / 2};
  return {fault_ == Fault::Eintr ? EINTR : error_number(fault_), 0};
}

}  // namespace iolab::io::sys
