// mmap: reads copy out of a read-only mapping taken in windows; writes go
// through one shared mapping of the file's allocated capacity.
//
// SIGBUS is never an outcome: before any byte is written through the map,
// its blocks are allocated with fallocate, so a full disk is an ENOSPC error
// from fallocate. The file grows by mmap_grow_step and is re-mapped (the base
// address moves); close() truncates it to the bytes really written.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "alignment.h"
#include "methods.h"
#include "iolab/io/syscall.h"

namespace iolab::io {
namespace {

constexpr MethodFacts kMmapFacts{
    "mmap",
    "mmap: reads copy out of windows, writes through a shared map grown by fallocate + re-map; the "
    "MappedByteBuffer analogue",
    {.maps_file = true, .data_sync = Durability::MsyncSync}};

int advice_flag(Advice a) {
  switch (a) {
    case Advice::Sequential: return MADV_SEQUENTIAL;
    case Advice::Random: return MADV_RANDOM;
    case Advice::WillNeed: return MADV_WILLNEED;
    case Advice::Normal: break;
  }
  return MADV_NORMAL;
}

class MmapFile final : public File {
 public:
  MmapFile(const std::filesystem::path& p, Access a, const FileOptions& o)
      : File(p),
        fd_(sys::open_existing(p, a)),
        writable_(a == Access::ReadWrite),
        window_(std::max<std::size_t>(direct_io::round_up(o.mmap_window, kPage), kPage)),
        grow_step_(std::max<std::size_t>(direct_io::round_up(o.mmap_grow_step, kPage), kPage)),
        advice_(advice_flag(o.mmap_advice)) {
    size_ = sys::file_size(fd_.get(), p);
    if (writable_ && size_ > 0) {
      // Existing holes would be allocated on first touch: do it now, so
      // ENOSPC is an error here rather than SIGBUS later.
      allocate(0, size_);
      remap(size_);
    }
  }
  // Closes quietly, as File promises: unmap, and trim the preallocated tail
  // so an unclosed file still ends at the bytes really written.
  ~MmapFile() override {
    if (map_ != nullptr) ::munmap(map_, map_len_);
    if (fd_.get() >= 0 && writable_) trim_quietly();
  }

  // The common read, kept lean: the range lies in the mapped window and in
  // the file. At 1 KiB from slow memory the general path's register saves
  // alone cost 7-12% against a bare memcpy loop (docs/performance.md).
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) override {
    const std::uint64_t end = offset + dst.size();
    if (map_ != nullptr && offset >= map_off_ && end >= offset && end <= map_off_ + map_len_ && end <= size_) {
      std::memcpy(dst.data(), map_ + (offset - map_off_), dst.size());
      counters_.bytes_read += dst.size();
      return dst.size();
    }
    return read_general(offset, dst);
  }

  // A pass in one call: the blocks that lie wholly in the mapped window and
  // in the file are counted first, then copied by copy_blocks. Anything else
  // goes to the general path.
  std::uint64_t read_sequence(std::uint64_t offset, std::uint64_t count, std::span<std::byte> dst) override {
    const std::size_t block = dst.size();
    if (block == 0) return 0;
    std::uint64_t bytes = 0;
    while (count > 0) {
      std::uint64_t run = 0;
      if (map_ != nullptr && offset >= map_off_) {
        const std::uint64_t limit = std::min<std::uint64_t>(map_off_ + map_len_, size_);
        if (limit > offset) run = std::min(count, (limit - offset) / block);
      }
      if (run > 0) {
        copy_blocks(dst.data(), map_ + (offset - map_off_), block, run);
        const std::uint64_t copied = run * block;
        counters_.bytes_read += copied;
        bytes += copied;
        offset += copied;
        count -= run;
        continue;
      }
      const std::size_t got = read_general(offset, dst);
      bytes += got;
      if (got < block) break;
      offset += block;
      --count;
    }
    return bytes;
  }

  void write_at(std::uint64_t offset, std::span<const std::byte> src) override {
    if (!writable_) throw Error("write", path().string(), "file was opened for reading only", EBADF);
    if (src.empty()) return;
    std::uint64_t end = offset + src.size();
    // Checked against what is mapped, not what is allocated: after a failed
    // re-map, blocks may be allocated that the map does not cover yet.
    if (map_ == nullptr || end > map_len_) {
      std::uint64_t cap = direct_io::round_up(end, grow_step_);
      if (cap > capacity_) allocate(capacity_, cap - capacity_);
      remap(std::max(cap, capacity_));
    }
    std::memcpy(map_ + offset, src.data(), src.size());
    size_ = std::max(size_, end);
    counters_.bytes_written += src.size();
  }

  void sync(Durability d) override {
    if (!supports(d)) sys::unsupported(d, kMmapFacts.name, path());
    if (d == Durability::MsyncSync) {
      if (map_ == nullptr) return;
      sys::msync(map_, map_len_, path(), counters_);
      return;
    }
    // fsync and fdatasync write back pages dirtied through the map too; the
    // file's length is still the capacity until close trims it.
    sys::sync_fd(fd_.get(), d, path(), counters_);
  }
  bool supports(Durability d) const override { return d == Durability::MsyncSync || sys::fd_supports(d); }
  std::uint64_t size() override { return size_; }

  void close() override {
    if (fd_.get() < 0) return;
    if (map_ != nullptr) {
      void* m = map_;
      map_ = nullptr;
      if (::munmap(m, map_len_) != 0) sys::fail("munmap", path());
    }
    // Compare with the real length, not capacity_: a fallocate that failed
    // with ENOSPC may still have extended the file before giving up.
    if (writable_ && sys::file_size(fd_.get(), path()) > size_) {
      sys::truncate(fd_.get(), size_, path(), counters_);
    }
    fd_.close(path());
  }

 private:
  static constexpr std::size_t kPage = 4096;

  void trim_quietly() noexcept {
    struct stat st {};
    if (::fstat(fd_.get(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) > size_)
      (void)::ftruncate(fd_.get(), static_cast<off_t>(size_));
  }

  // madvise is a hint, but a refused hint means the run is not what was asked for.
  void advise() {
    if (advice_ != MADV_NORMAL && ::madvise(map_, map_len_, advice_) != 0) sys::fail("madvise", path());
  }

  void allocate(std::uint64_t from, std::uint64_t len) {
    if (len == 0) return;
    ++counters_.calls;
    int r = sys::retry("fallocate", [&] { return ::fallocate(fd_.get(), 0, static_cast<off_t>(from), static_cast<off_t>(len)); });
    if (r != 0) {
      int err = errno;
      // Filesystems without fallocate: fall back to posix_fallocate, which writes zeros to allocate.
      if (err == EOPNOTSUPP) err = ::posix_fallocate(fd_.get(), static_cast<off_t>(from), static_cast<off_t>(len));
      if (err != 0)
        throw Error("fallocate", path().string(),
                    std::string(std::strerror(err)) + " (allocating " + std::to_string(len) +
                        " bytes before writing through the mapping)",
                    err);
    }
    capacity_ = std::max(capacity_, from + len);
  }

  // The write path maps [0, capacity) in one piece.
  void remap(std::uint64_t capacity) {
    map_ = map_ == nullptr ? sys::map(fd_.get(), 0, capacity, PROT_READ | PROT_WRITE, path(), counters_)
                           : sys::remap(map_, map_len_, capacity, path(), counters_);
    map_len_ = capacity;
    map_off_ = 0;
    capacity_ = capacity;
    advise();
  }

  // `count` blocks copied one after another into `out`, each over the one
  // before. Out of line, so the loop has registers of its own that survive
  // the memcpy call: inlined into read_sequence, the pass's other variables
  // were saved and reloaded around every copy, 4-5% of a 1 KiB copy from fast
  // memory (engine_same_file mmap 1k).
  [[gnu::noinline]] static void copy_blocks(std::byte* out, const std::byte* src, std::size_t block, std::uint64_t count) {
    for (const std::byte* end = src + block * count; src != end; src += block) std::memcpy(out, src, block);
  }

  // Any read: a window to map first, a file that grew, the end of the file.
  [[gnu::noinline]] std::size_t read_general(std::uint64_t offset, std::span<std::byte> dst) {
    if (dst.empty()) return 0;
    if (writable_) {
      if (offset >= size_) return 0;
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(dst.size(), size_ - offset));
      std::memcpy(dst.data(), map_ + offset, n);
      counters_.bytes_read += n;
      return n;
    }
    if (offset + dst.size() > size_) size_ = sys::file_size(fd_.get(), path());  // file may have grown
    std::size_t done = 0;
    while (done < dst.size() && offset + done < size_) {
      std::uint64_t at = offset + done;
      if (map_ == nullptr || at < map_off_ || at >= map_off_ + map_len_) map_window(at);
      std::size_t n = static_cast<std::size_t>(
          std::min<std::uint64_t>({dst.size() - done, map_off_ + map_len_ - at, size_ - at}));
      std::memcpy(dst.data() + done, map_ + (at - map_off_), n);
      done += n;
    }
    counters_.bytes_read += done;
    return done;
  }

  // The read path maps a window of the file around `at`.
  void map_window(std::uint64_t at) {
    if (map_ != nullptr) {
      void* m = map_;
      map_ = nullptr;
      if (::munmap(m, map_len_) != 0) sys::fail("munmap", path());
    }
    std::uint64_t off = direct_io::round_down(at, kPage);
    std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(window_, direct_io::round_up(size_, kPage) - off));
    map_ = sys::map(fd_.get(), off, len, PROT_READ, path(), counters_);
    map_off_ = off;
    map_len_ = len;
    advise();
  }

  sys::Fd fd_;
  bool writable_;
  std::size_t window_;
  std::size_t grow_step_;
  int advice_;
  std::uint64_t size_ = 0;      // bytes of data in the file
  std::uint64_t capacity_ = 0;  // bytes allocated (write path)
  std::byte* map_ = nullptr;
  std::uint64_t map_off_ = 0;
  std::size_t map_len_ = 0;
};

}  // namespace

const Method& mmap_method() { return the_method<FileMethod<MmapFile>>(kMmapFacts); }

}  // namespace iolab::io
