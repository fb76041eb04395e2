// The kernel facts read in one place (base/proc.h): a block device's
// directory and queue settings, found for a partition on its disk, "" where
// there is none; the machine's memory; a thread's CPU time by its name.
#include "iolab/base/proc.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include <pthread.h>
#include <unistd.h>

namespace iolab::proc {
namespace {

TEST(Proc, ABlockDeviceDirectoryIsNamedByMajorAndMinor) {
  EXPECT_EQ(block_device_dir(makedev(8, 1)), std::filesystem::path("/sys/dev/block/8:1"));
  EXPECT_EQ(block_device_dir(makedev(259, 65536)), std::filesystem::path("/sys/dev/block/259:65536"));
}

TEST(Proc, ANumberNoDeviceHasGivesNoQueueSetting) {
  // Major 0 is the kernel's anonymous devices (tmpfs, proc): no block device.
  EXPECT_EQ(block_queue_attribute(makedev(0, 4095), "logical_block_size"), "");
}

TEST(Proc, TheQueueOfTheDeviceUnderTheRootIsItsDisksOwn) {
  struct stat st {};
  ASSERT_EQ(::stat("/", &st), 0);
  const std::filesystem::path dir = block_device_dir(st.st_dev);
  std::error_code ec;
  if (!std::filesystem::exists(dir / "stat", ec)) GTEST_SKIP() << "/ is not on a block device here";
  // A partition has no queue/ of its own: the answer comes from its disk.
  const std::string v = block_queue_attribute(st.st_dev, "logical_block_size");
  ASSERT_FALSE(v.empty());
  const unsigned long bytes = std::stoul(v);
  EXPECT_GE(bytes, 512u);
  EXPECT_EQ(bytes & (bytes - 1), 0u) << v << " is a power of two";
}

// Free page reporting is read from a bound virtio balloon (device 0x0005)
// offering feature bit 5 and the page_reporting module's order; a fake
// sysfs tree stands in for the machine's.
TEST(Proc, FreePageReportingIsABoundBalloonWithTheReportingFeature) {
  const std::filesystem::path sys =
      std::filesystem::temp_directory_path() / ("iolab-fake-sys-" + std::to_string(::getpid()));
  std::filesystem::remove_all(sys);
  auto put = [&](const std::filesystem::path& rel, const std::string& text) {
    std::filesystem::create_directories((sys / rel).parent_path());
    std::ofstream(sys / rel) << text << "\n";
  };
  EXPECT_FALSE(free_page_reporting_order(sys)) << "no virtio devices at all";
  put("bus/virtio/devices/virtio1/device", "0x0002");  // a disk
  put("bus/virtio/devices/virtio1/features", "00100010000");
  put("bus/virtio/devices/virtio0/device", "0x0005");
  put("bus/virtio/devices/virtio0/features", "0110000100000");  // bit 5 off
  put("module/page_reporting/parameters/page_reporting_order", "9");
  EXPECT_FALSE(free_page_reporting_order(sys)) << "a balloon without the feature, and no driver";
  std::filesystem::create_directories(sys / "bus/virtio/devices/virtio0/driver");
  EXPECT_FALSE(free_page_reporting_order(sys)) << "a bound balloon without the feature";
  put("bus/virtio/devices/virtio0/features", "0110010100000");
  EXPECT_EQ(free_page_reporting_order(sys), 9u);
  put("module/page_reporting/parameters/page_reporting_order", "11");
  EXPECT_FALSE(free_page_reporting_order(sys)) << "an order above the largest reports nothing";
  std::filesystem::remove_all(sys / "bus/virtio/devices/virtio0/driver");
  put("module/page_reporting/parameters/page_reporting_order", "9");
  EXPECT_FALSE(free_page_reporting_order(sys)) << "an unbound balloon reports nothing";
  std::filesystem::remove_all(sys);
}

TEST(Proc, PhysicalMemoryIsWhatMeminfoCallsMemTotal) {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (in >> key >> kib >> unit && key != "MemTotal:") {
  }
  ASSERT_EQ(key, "MemTotal:");
  EXPECT_EQ(physical_memory_bytes(), kib * 1024);
}

double own_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A named thread that has spent 20 ms of CPU is found under its name with
// at least that much and no more than it has spent by the time it ends.
TEST(Proc, AThreadsCpuTimeIsFoundUnderItsName) {
  std::atomic<int> phase{0};
  std::atomic<double> spent_at_end{0};
  std::thread worker([&] {
    ::pthread_setname_np(::pthread_self(), "proc-test-cpu");
    volatile std::uint64_t sink = 0;
    while (own_cpu_seconds() < 0.02) sink = sink + 1;
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
    spent_at_end = own_cpu_seconds();
  });
  while (phase.load() != 1) std::this_thread::yield();
  auto by_name = thread_cpu_seconds_by_name();
  phase = 2;
  worker.join();
  ASSERT_TRUE(by_name.contains("proc-test-cpu"));
  EXPECT_GE(by_name["proc-test-cpu"], 0.02);
  EXPECT_LE(by_name["proc-test-cpu"], spent_at_end.load());
  EXPECT_FALSE(thread_cpu_seconds_by_name().contains("proc-test-cpu"));  // ended: not counted
}

}  // namespace
}  // namespace iolab::proc
