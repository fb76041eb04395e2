// One small interface for "an open file, accessed through one method".
//
// Every access method (streams, plain syscalls, positional, vectored, mmap,
// O_DIRECT, io_uring) implements File. Methods never create files: scratch.h
// creates them (O_EXCL, in iolab's own directory) and a method opens what is
// there, without following symlinks.
//
// A File is not safe for concurrent use: one thread at a time (REQUIRES:
// external synchronization). Two Files on the same path may be used from two
// threads (each worker of a parallel run opens its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/base/clock.h"

namespace iolab::io {

enum class Access { Read, ReadWrite };

// What a durability call promises, strongest last. Each File says which it
// supports; asking for one it does not support throws Error(EOPNOTSUPP).
enum class Durability {
  None,           // nothing: data may sit in user-space buffers
  Flush,          // user-space buffers handed to the kernel: survives a process crash, not a power loss
  SyncFileRange,  // sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER): data written back, but no
                  // metadata and no device cache flush: NOT durable, a writeback hint
  Fdatasync,      // fdatasync: data (and the size needed to read it) survives a power loss
  Fsync,          // fsync: data and all metadata survive a power loss
  MsyncSync,      // msync(MS_SYNC) of the mapping (mmap only): data survives a power loss
};
// MS_ASYNC is deliberately absent: on Linux it schedules nothing durable.

std::string_view to_string(Durability d);
// "none", "flush", "sync_file_range", "fdatasync", "fsync", "msync". Throws UsageError.
Durability parse_durability(std::string_view name);

// When written data is flushed, and by which call: the one flush policy of
// the engine's file experiments, the record store, the suites' tables and
// every record's `sync` field.
enum class FlushSchedule {
  None,        // never: the data ends in the page cache (or in the device, for O_DIRECT)
  End,         // once after the last write (the engine: inside the timed region; the store: at close)
  EveryWrite,  // after every write call, inline (the store: after every put or remove)
  EveryBytes,  // inline, each time `interval` more bytes have been written ("every-16k")
  AsyncBytes,  // a background thread flushes whenever >= `interval` bytes are dirty,
               // coalescing (RocketMQ's flush thread, Java's asynchronous force) ("async-16k")
  EveryOps,    // inline, every `interval` operations (the store: puts and removes; "every-1000-ops")
};

struct FlushPolicy {
  FlushSchedule schedule = FlushSchedule::None;
  // The flush call; None with a schedule means the method's own data sync
  // (MethodTraits::data_sync: fdatasync, or msync for a mapping).
  Durability call = Durability::None;
  std::uint64_t interval = 0;  // EveryBytes, AsyncBytes: bytes; EveryOps: operations

  bool flushes() const noexcept { return schedule != FlushSchedule::None; }
  bool operator==(const FlushPolicy&) const = default;
};
// "none", "end:fdatasync", "every:fsync", "every-16k:msync", "async-16k:fdatasync",
// "every-1000-ops:fdatasync" (the call omitted when None).
std::string to_string(const FlushPolicy& policy);
// Parses the forms above; the call part is optional ("every-16k"). Throws UsageError.
FlushPolicy parse_flush_policy(std::string_view text);

// madvise(2) hint for mapped methods.
enum class Advice { Normal, Sequential, Random, WillNeed };
std::string_view to_string(Advice a);
Advice parse_advice(std::string_view name);

// What O_DIRECT does with a request whose buffer address, offset or length
// is not a multiple of the file's alignment.
enum class UnalignedPolicy {
  Reject,  // throw Error(EINVAL) naming what is misaligned and the required alignment
  Bounce,  // go through an aligned bounce buffer (read-modify-write for writes)
};

// io_uring setup flags and registrations fio users reach for (fio's
// registerfiles, fixedbufs, sqthread_poll, ...). Each is a request: a kernel
// that lacks one makes open() throw Error(EOPNOTSUPP) naming it, and
// Method::supports_option says so beforehand (the experiment is skipped with
// the reason, never silently run without it).
struct UringOptions {
  bool registered_files = false;   // io_uring_register_files: no per-request file refcount
  bool fixed_buffers = false;      // io_uring_register_buffers (O_DIRECT): pages pinned once
  bool sqpoll = false;             // IORING_SETUP_SQPOLL: a kernel thread polls the submission ring
  bool single_issuer = false;      // IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
  bool coop_taskrun = false;       // IORING_SETUP_COOP_TASKRUN: no IPI to run completion work
  bool operator==(const UringOptions&) const = default;
};
// The options set, as results name them ("registered files", "fixed buffers",
// "SQPOLL", "SINGLE_ISSUER+DEFER_TASKRUN", "COOP_TASKRUN"); empty for none.
std::vector<std::string> option_names(const UringOptions&);

// Options understood by the methods; each method reads the ones that apply
// to it and ignores the rest. Defaults are what a careful user would pick.
struct FileOptions {
  // iostream, stdio: the user-space buffer size. stdio: 0 = unbuffered.
  std::size_t stream_buffer = 4096;
  // vectored: split each request into buffers of this many bytes (one iovec each).
  std::size_t iov_segment = 4096;
  // mmap: reads map windows of this size; writes grow the file (blocks
  // allocated with fallocate) by this step and re-map. The window is Java's
  // largest MappedByteBuffer (2 GiB): a file up to that size is mapped once,
  // as a program that maps a file maps it, and no munmap of a window is
  // timed in the middle of its read (256 MiB windows cost a 1 KiB copy loop
  // over 1 GiB ~10% here).
  std::size_t mmap_window = std::size_t{2} << 30;
  std::size_t mmap_grow_step = std::size_t{1} << 20;
  Advice mmap_advice = Advice::Normal;
  // Methods that bypass the page cache (MethodTraits::needs_alignment).
  UnalignedPolicy unaligned = UnalignedPolicy::Reject;
  // Queued methods (MethodTraits::queued): most requests in flight, and most
  // requests handed to the kernel per submission call (0 = every free slot).
  unsigned queue_depth = 32;
  unsigned submit_batch = 0;
  // Methods that can run either way (MethodTraits::direct_optional): open O_DIRECT.
  bool direct = false;
  UringOptions uring;
};

// What a method is, so code outside io/ decides by traits and never by a
// method's name (fio's ioengine_ops flags in spirit). Some facts depend on
// the options a file is opened with (io_uring bypasses the page cache only
// when opened O_DIRECT): Method::traits(options) answers for those options.
struct MethodTraits {
  bool bypasses_page_cache = false;  // O_DIRECT: reads are never warm or cold, writes reach the device
  bool needs_alignment = false;      // buffer address, offset and length must be multiples of File::alignment()
  bool direct_optional = false;      // FileOptions::direct chooses O_DIRECT or buffered
  bool queued = false;               // keeps several requests in flight: queue depth and batches apply (File::stream)
  bool user_space_buffer = false;    // buffers data in user space (stdio, iostream): Flush moves it to the kernel
  bool library_calls = false;        // its data calls happen inside a library: only the kernel can count them
  bool maps_file = false;            // data moves through a shared mapping: writers need the file preallocated
  bool positional = true;            // every call names its offset (no shared file position)
  Durability data_sync = Durability::Fdatasync;  // its own call that makes written data durable
};
// The true ones of the boolean traits as words ("bypasses_page_cache",
// "needs_alignment", "direct_optional", "queued", "user_space_buffer",
// "library_calls", "maps_file", "positional"), for records: what kind of
// method a figure came from, readable without this build's registry.
std::vector<std::string_view> trait_names(const MethodTraits& t);
// The reverse: the named traits true, every other boolean false (data_sync
// stays the default); unknown words are ignored (a newer build's traits).
MethodTraits traits_from_names(std::span<const std::string> names);
// The policy with its call resolved for a method (None -> the method's data sync).
FlushPolicy resolved(FlushPolicy policy, const MethodTraits& traits);
// The reverse, for comparing methods: a data sync (fdatasync, or msync for a
// mapping: each a method's own MethodTraits::data_sync) back to None, since
// either makes the written data durable. Two methods whose resolved policies
// have one unresolved form flushed to the same durability on one schedule.
FlushPolicy unresolved(FlushPolicy policy) noexcept;

// One request of a batch given to File::submit, or pulled by File::stream.
struct IoRequest {
  enum class Kind { Read, Write } kind = Kind::Read;
  std::uint64_t offset = 0;
  std::span<std::byte> data;  // destination for reads, source for writes
  std::size_t result = 0;     // filled by the File: bytes transferred
  std::uint64_t tag = 0;      // the caller's (e.g. which buffer slot); the File never reads it
  // Filled by File::stream when asked to time requests: base's steady_ns()
  // at submission and at completion (latency = the difference).
  std::uint64_t submitted_ns = 0, completed_ns = 0;
};

// The requests of one File::stream call, pulled as the queue has room.
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // Fills the next request to issue (kind, offset, data, tag), or returns
  // false when none is left. The request's buffer belongs to the File until
  // done() hands it back.
  virtual bool next(IoRequest& request) = 0;
  // A request completed: `result` holds its bytes (a read comes back short
  // only at end of file). Called once per request, in completion order.
  // After a failure (a request failed, or next() or done() threw) stream()
  // calls neither again: it waits for what is in flight and throws; requests
  // not handed to done() may or may not have reached the file.
  virtual void done(IoRequest& request) = 0;
};

// Counters every File keeps, so a benchmark can say how many calls it made.
struct IoCounters {
  std::uint64_t calls = 0;      // system calls that moved data or synced (read, pwrite, io_uring_enter, msync...)
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
};

class File {
 public:
  virtual ~File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  // Reads up to dst.size() bytes at `offset`; fewer only at end of file.
  // Returns the count (0 at or past the end).
  virtual std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) = 0;
  // Reads `count` consecutive blocks of dst.size() bytes, the first at
  // `offset`, each into dst over the one before: a sequential read pass in
  // one call, so that a method whose read is a memory copy pays no call per
  // block. Returns the bytes read; a short block (end of file) ends it. The
  // default calls read_at once per block.
  virtual std::uint64_t read_sequence(std::uint64_t offset, std::uint64_t count, std::span<std::byte> dst);
  // Writes all of src at `offset`, growing the file if needed, or throws.
  virtual void write_at(std::uint64_t offset, std::span<const std::byte> src) = 0;

  // Runs independent requests; methods that can keep several in flight
  // (io_uring) do, the rest run them in order. Reads may come back short only
  // at end of file.
  virtual void submit(std::span<IoRequest> requests);

  // Issues every request `source` gives until it has no more, keeping up to
  // FileOptions::queue_depth in flight and refilling as completions are
  // reaped (queued methods); the others run them one at a time. Returns when
  // all have completed; on an error, after every request in flight has
  // completed (no buffer is touched after it returns). With time_requests,
  // each request's submitted_ns and completed_ns are filled.
  virtual void stream(RequestSource& source, bool time_requests = false);

  // Makes written data as durable as `d` promises, or throws Error
  // (EOPNOTSUPP when this method cannot give that promise).
  virtual void sync(Durability d) = 0;
  virtual bool supports(Durability d) const = 0;

  // The file's size as this method sees it (including unflushed writes).
  virtual std::uint64_t size() = 0;

  // Flushes user-space buffers, trims preallocated space, releases the file.
  // Errors surface here rather than being lost in a destructor; calling it
  // twice is harmless. The destructor closes quietly if close() was not called.
  virtual void close() = 0;

  // The alignment the method needs for buffer address, offset and length (1 when none).
  virtual std::size_t alignment() const { return 1; }

  // The buffers later requests will use, which the caller keeps allocated
  // and in place until close() or the next call (an empty list releases
  // them). io_uring with UringOptions::fixed_buffers registers them (pins
  // their pages once) and then refuses, with EINVAL, a request whose data
  // does not lie inside one of them; other methods ignore the call.
  virtual void register_buffers(std::span<const std::span<std::byte>> buffers) { (void)buffers; }

  // CPU time (ns) used since open by a kernel thread working for this File
  // beside the caller's threads (io_uring's SQPOLL thread, which polls the
  // submission ring); nullopt when it has none. getrusage(RUSAGE_SELF)
  // includes it, RUSAGE_THREAD does not.
  virtual std::optional<std::uint64_t> poller_cpu_ns() const { return std::nullopt; }

  const std::filesystem::path& path() const noexcept { return path_; }
  const IoCounters& counters() const noexcept { return counters_; }

 protected:
  explicit File(std::filesystem::path path) : path_(std::move(path)) {}
  IoCounters counters_;

 private:
  std::filesystem::path path_;
};

// Whether a method can run here, and if not, why (for `iolab methods` and skipped results).
struct Availability {
  bool available = true;
  std::string reason;  // empty when available
};

// An access method: a name, what it is, and how to open a file with it.
class Method {
 public:
  virtual ~Method() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // What the method is, for files opened with `options`.
  virtual MethodTraits traits(const FileOptions& options = {}) const = 0;
  // Whether this kernel can honour `options` here (io_uring setup flags,
  // registrations); an empty reason when it can, else why not. Called after
  // probe() said the method is available.
  virtual Availability supports_options(const FileOptions& options, const std::filesystem::path& dir) const;
  // Checks this machine and the filesystem of `dir` (a directory iolab owns;
  // probing may create and remove a file there).
  virtual Availability probe(const std::filesystem::path& dir) const = 0;
  // Opens an existing regular file (never creates; never follows a symlink).
  virtual std::unique_ptr<File> open(const std::filesystem::path& path, Access access,
                                     const FileOptions& options = {}) const = 0;
};

}  // namespace iolab::io
