#include "iolab/harness/usage.h"

#include <gtest/gtest.h>

namespace iolab::harness {
namespace {

// A meter whose counter files "cost" one second of CPU each time they are
// read, and whose getrusage reports the CPU spent so far: a region's CPU is
// then exactly the number of counter readings it was charged with.
class CostlyCounters final : public UsageMeter {
 public:
  mutable int counter_reads = 0;

 protected:
  void read_rusage(Snapshot& s) const override {
    s.ru = {};
    s.ru.ru_utime.tv_sec = counter_reads;
  }
  void read_counters(Snapshot& s) const override {
    ++counter_reads;
    s.have_io = false;
    s.have_device = false;
  }
};

TEST(UsageMeter, TheRegionsCpuHoldsNoneOfItsOwnCounterReading) {
  CostlyCounters meter;
  meter.start();
  Usage u = meter.stop();
  EXPECT_EQ(meter.counter_reads, 2);  // both ends read the files
  EXPECT_EQ(u.user_s, 0.0) << "getrusage was read before the counter files at start or after them at stop";
}

TEST(UsageMeter, AnEmptyRegionCostsNoSystemCallsOfItsOwn) {
  UsageMeter meter;
  meter.start();
  Usage u = meter.stop();
  if (!u.have_proc_io) GTEST_SKIP() << "no /proc/self/io here";
  EXPECT_EQ(u.syscalls_read, 0u);
  EXPECT_EQ(u.syscalls_write, 0u);
}

}  // namespace
}  // namespace iolab::harness
