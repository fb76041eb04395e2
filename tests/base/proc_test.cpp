// The kernel facts read in one place (base/proc.h): a block device's
// directory and queue settings, found for a partition on its disk, "" where
// there is none; the machine's memory.
#include "iolab/base/proc.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

TEST(Proc, PhysicalMemoryIsWhatMeminfoCallsMemTotal) {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (in >> key >> kib >> unit && key != "MemTotal:") {
  }
  ASSERT_EQ(key, "MemTotal:");
  EXPECT_EQ(physical_memory_bytes(), kib * 1024);
}

}  // namespace
}  // namespace iolab::proc
