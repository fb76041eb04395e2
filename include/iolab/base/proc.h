// The kernel's counters and settings that iolab reads, each read in one
// place: a process's I/O accounting (/proc/<self|thread-self>/io), a block
// device's directory, sector counts and queue settings (/sys/dev/block/M:m),
// the machine's memory, the page-cache writeback settings
// (/proc/sys/vm/dirty_*), the TLB shootdown count (/proc/interrupts). All
// read outside timed regions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace iolab::proc {

// /proc/<self|thread-self>/io: bytes through read- and write-like calls,
// their counts, bytes fetched from storage, bytes dirtied (write_bytes,
// charged when a page is dirtied, not when it is written back), and the
// dirtied bytes later truncated away.
struct IoAccounting {
  std::uint64_t rchar = 0, wchar = 0, syscr = 0, syscw = 0;
  std::uint64_t read_bytes = 0, write_bytes = 0, cancelled_write_bytes = 0;
};
enum class IoScope { Process, Thread };
// Nullopt when the file cannot be read (no CONFIG_TASK_IO_ACCOUNTING).
std::optional<IoAccounting> read_io(IoScope scope = IoScope::Process);

// A block device's stat file: sectors (512 bytes) read and written so far.
struct BlockSectors {
  std::uint64_t read = 0, written = 0;
};
std::optional<BlockSectors> read_block_sectors(const std::filesystem::path& stat_file);

// /sys/dev/block/M:m of the device `dev` (a file's st_dev): a partition's or
// a disk's directory; it may not exist (tmpfs, overlay: no block device).
std::filesystem::path block_device_dir(dev_t dev);
// queue/<attribute> of the disk holding `dev` (a partition has no queue/ of
// its own: its parent disk's), its first line; "" when there is none.
std::string block_queue_attribute(dev_t dev, std::string_view attribute);

// The machine's RAM in bytes (what /proc/meminfo calls MemTotal); 0 when unknown.
std::uint64_t physical_memory_bytes();

// /proc/sys/vm/dirty_*: how much written data the kernel lets sit in the page
// cache, and for how long, before it writes it back. Knobs that cannot be
// read are left out.
std::map<std::string, std::int64_t> vm_dirty_settings();

// Free page reporting: a guest whose virtio balloon offers
// VIRTIO_BALLOON_F_REPORTING hands the memory it frees back to the host in
// blocks of 2^order pages (/sys/module/page_reporting/parameters/
// page_reporting_order), and the host drops it: the next first touch of
// that memory (a fresh file's page cache, a new buffer) takes a host fault
// per page, so a run that follows a pause or another run's freed memory is
// slower than the one after it. The order while reporting is on; nullopt
// on bare metal, in a guest without the feature, or with reporting off
// (an order above the largest, 10). `sys` is the sysfs root (tests).
std::optional<unsigned> free_page_reporting_order(const std::filesystem::path& sys = "/sys");
// The largest block order the page allocator has on x86-64 (MAX_PAGE_ORDER).
inline constexpr unsigned kLargestPageOrder = 10;
// The bytes of a block of 2^order 4 KiB pages.
constexpr std::uint64_t page_block_bytes(unsigned order) { return std::uint64_t{4096} << order; }

// The machine's TLB shootdown interrupts so far (the "TLB" line of
// /proc/interrupts, summed over CPUs); nullopt where there is no such line.
std::optional<std::uint64_t> tlb_shootdowns();

// The value of `key` in a file of "key value" lines (a cgroup's
// memory.stat, /proc/vmstat); nullopt when the file or the key is missing.
std::optional<std::uint64_t> keyed_value(const std::filesystem::path& file, std::string_view key);

// Mount points of the cgroup hierarchies (/proc/self/mounts): the v1
// hierarchy holding the memory controller, and the v2 (unified) one; empty
// paths where there is none.
struct CgroupMounts {
  std::filesystem::path memory_v1, unified;
};
CgroupMounts cgroup_mounts(const std::filesystem::path& mounts = "/proc/self/mounts");

// CPU time (user + system, seconds) of this process's live threads, summed
// by thread name (/proc/self/task/<tid>/comm): what each kind of thread has
// spent so far. Each thread's CPU clock is read with clock_gettime, to the
// nanosecond: /proc's utime and stime count 10 ms ticks, too coarse for a
// run of a tenth of a second. Threads that have ended are not counted.
std::map<std::string, double> thread_cpu_seconds_by_name();

}  // namespace iolab::proc
