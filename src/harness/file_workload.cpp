// A file experiment as the engine's workload: a file prepared outside the
// timed region, the method's calls (and close) inside it, verification on
// the path that was timed (docs/results-format.md, "The timed region").
#include "file_workload.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "iolab/base/error.h"
#include "iolab/base/proc.h"
#include "iolab/base/units.h"
#include "iolab/harness/requests.h"
#include "iolab/results/statistics.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/background_flusher.h"
#include "iolab/io/buffer.h"
#include "iolab/io/pattern.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "full_cache.h"

namespace iolab::harness {

namespace {

bool misaligned(std::size_t align, const void* p, std::uint64_t block) {
  return align > 1 && (reinterpret_cast<std::uintptr_t>(p) % align != 0 || block % align != 0);
}

}  // namespace

std::optional<std::string> FileWorkload::setup() {
  opts_ = experiment_options(method_, e_);
  traits_ = method_.traits(opts_);
  direct_ = traits_.bypasses_page_cache;
  queued_ = traits_.queued;
  eviction_ = config_.eviction.value_or(e_.eviction);
  record_.buffer = buffer_ = e_.buffer.value_or(traits_.needs_alignment ? io::BufferKind::Aligned : io::BufferKind::Heap);
  if (queued_) record_.queue_depth = std::max(1u, opts_.queue_depth);
  if (direct_) {
    record_.cache = results::CacheState::Direct;
    record_.cache_method = "O_DIRECT";
    // A full cache is the group's, which O_DIRECT shares without using: it is still proven (the record says so).
    if (e_.cache != results::CacheState::Direct && e_.cache != results::CacheState::Full && e_.op == results::Op::Read)
      record_.warn(results::WarningKind::CacheIgnored, "asked for a " + std::string(to_string(e_.cache)) +
                                                  " cache, but O_DIRECT bypasses the page cache: recorded as direct");
  } else if (e_.cache == results::CacheState::Direct) {
    return "cache 'direct' needs O_DIRECT; " + e_.method + " always goes through the page cache";
  }
  if (e_.op == results::Op::Write && !direct_) {
    record_.cache.reset();  // a fresh file: nothing to be warm or cold
    record_.cache_method = "fresh file";
  }
  io::Availability avail = method_.probe(scratch_.path());
  if (!avail.available) return avail.reason;
  io::Availability options = method_.supports_options(opts_, scratch_.path());
  if (!options.available) return options.reason;
  if (e_.op == results::Op::Read && e_.cache == results::CacheState::Cold && !direct_ && eviction_ == results::Eviction::DropCaches &&
      !can_drop_caches())
    return "this experiment evicts with drop_caches, which needs root (/proc/sys/vm/drop_caches is not writable)";
  if (e_.op == results::Op::Read && e_.sync.flushes())
    throw UsageError("sync '" + to_string(e_.sync) + "' for a read", "sync applies to writes only");
  if (e_.cache == results::CacheState::Full && (e_.op != results::Op::Read || !e_.memory_group || e_.cache_room == 0))
    return std::string(e_.op != results::Op::Read ? "a full cache applies to reads (a write goes to a fresh file)"
                                         : "a full cache is the page cache of a memory cgroup the experiment runs in, "
                                           "and none was given (iolab recommend's \"larger than memory\" column makes one)");

  // Before the plan (a random one holds an offset per call) and any file or buffer.
  if (auto why = resource_problem(e_, scratch_.path())) return why;
  const bool windows = e_.op == results::Op::Read && e_.pattern == results::AccessPattern::Rand && e_.pass_blocks > 0;
  plan_ = make_plan(e_.op, 0, file_length(e_), e_.block_size, e_.pattern,
                    windows && e_.order_seed ? e_.order_seed : config_.seed, e_.op == results::Op::Read && !windows ? e_.rounds : 1);
  if (e_.op == results::Op::Read && e_.pattern == results::AccessPattern::Rand) plan_.stop = e_.stop;
  // Windows: the permutation is kept whole, and each pass takes its next window of it (before_pass).
  if (windows) order_ = std::move(plan_.order), plan_.order.clear();
  record_.file_size = plan_.length;
  if (e_.cache == results::CacheState::Full && plan_.length <= e_.cache_room)
    return "the " + format_bytes(static_cast<double>(plan_.length)) + " file is not larger than the " +
           format_bytes(static_cast<double>(e_.cache_room)) + " page-cache room: a full cache would hold it whole";
  if (plan_.length % plan_.block != 0)
    record_.warn(results::WarningKind::ShortLastCall,
                 "the " + size_label(plan_.length) + " file is not a multiple of " + size_label(plan_.block) +
                     ": the last call moves " + size_label(plan_.length % plan_.block),
                 {size_label(plan_.length % plan_.block)});
  if (plan_.block > plan_.length)
    record_.warn(results::WarningKind::ShortLastCall,
                 "the block (" + size_label(plan_.block) + ") is larger than the file (" + size_label(plan_.length) +
                     "): one call of " + size_label(plan_.length) + " per pass");

  if (e_.op == results::Op::Read) return setup_reads();
  return setup_writes();
}

std::optional<std::string> FileWorkload::setup_reads() {
  const unsigned slots = queued_ ? std::max(1u, opts_.queue_depth) : 1;
  slots_ = std::make_unique<ReadSlots>(slots, plan_.block, buffer_);
  record_.buffer_offset = io::page_offset(slots_->address());
  content_ = std::make_unique<PatternContent>(config_.seed);
  if (!e_.prepared_file.empty()) {
    // The caller's file, shared with the other candidates at this condition: its length is checked here, its
    // bytes by the verification pass. A warm one is made warm again only if it is not wholly resident.
    std::error_code ec;
    const std::uint64_t size = std::filesystem::file_size(e_.prepared_file, ec);
    if (ec || size < plan_.length)
      throw Error("read", e_.prepared_file.string(),
                  "the prepared file holds " + std::to_string(ec ? 0 : size) + " bytes, fewer than the " +
                      std::to_string(plan_.length) + " the experiment reads",
                  EINVAL);
    file_ = e_.prepared_file;
    if (e_.cache == results::CacheState::Warm && !direct_ && resident_fraction(file_) < 1.0) make_warm_from_disk(file_);
  } else {
    file_ = files_.create("exp");
    write_pattern_file(file_, plan_.length, config_.seed);
    if (e_.cache == results::CacheState::Warm && !direct_) make_warm_from_disk(file_);
  }
  if (e_.cache == results::CacheState::Full) full_.emplace(*e_.memory_group, e_.cache_room, file_, plan_.length);
  return preflight(file_, io::Access::Read, slots_->address(), std::nullopt);
}

// A window of the permutation: the next `n` blocks, wrapping around.
void FileWorkload::next_window(std::uint64_t n) {
  n = std::min<std::uint64_t>(std::max<std::uint64_t>(n, 1), order_.size());
  plan_.order.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) plan_.order[i] = order_[(cursor_ + i) % order_.size()];
  cursor_ = (cursor_ + n) % order_.size();
}

std::optional<std::string> FileWorkload::setup_writes() {
  sync_ = resolved(e_.sync, traits_);
  if (sync_.schedule == io::FlushSchedule::AsyncBytes &&
      (sync_.call == io::Durability::Flush || sync_.call == io::Durability::None))
    return "a background flush of user-space buffers would use the File from two threads; async-N needs "
           "fdatasync, fsync, sync_file_range or msync";
  if (queued_ && (sync_.schedule == io::FlushSchedule::EveryWrite || sync_.schedule == io::FlushSchedule::EveryBytes ||
                  sync_.schedule == io::FlushSchedule::EveryOps))
    return "a queued method keeps several writes in flight, so a flush after every write or every N bytes has no "
           "single point to run at; use end or async-N";
  source_ = std::make_unique<WriteSource>(config_.seed, plan_.length, plan_.block, buffer_);
  record_.buffer_offset = io::page_offset(source_->at(0, 0).data());
  std::filesystem::path probe = files_.create("exp");
  std::optional<io::Durability> needs;
  if (sync_.flushes() && sync_.schedule != io::FlushSchedule::AsyncBytes) needs = sync_.call;
  auto why = preflight(probe, io::Access::ReadWrite, source_->at(0, 0).data(), needs);
  files_.remove(probe);
  return why;
}

// Opens the file with the method once, untimed, to learn whether the
// experiment can run here at all: O_DIRECT refused, an alignment the
// buffer or block size breaks, a durability call the method cannot make.
std::optional<std::string> FileWorkload::preflight(const std::filesystem::path& file, io::Access access, const void* buffer,
                                     std::optional<io::Durability> sync) {
  std::unique_ptr<io::File> f;
  try {
    f = method_.open(file, access, opts_);
  } catch (const Error& err) {
    if (err.error_number() == EINVAL || err.error_number() == EOPNOTSUPP) return std::string(err.what());
    throw;
  }
  std::size_t align = f->alignment();
  if (opts_.unaligned == io::UnalignedPolicy::Reject && misaligned(align, buffer, plan_.block))
    return "O_DIRECT needs buffer address, offset and length aligned to " + std::to_string(align) + " bytes here; " +
           (plan_.block % align != 0 ? "a " + std::to_string(plan_.block) + "-byte block is not"
                                     : "the heap buffer is not") +
           " (use an aligned buffer and a block size that is a multiple of " + std::to_string(align) + ")";
  if (opts_.unaligned == io::UnalignedPolicy::Reject && align > 1 && plan_.length % align != 0)
    return "O_DIRECT needs lengths aligned to " + std::to_string(align) + " bytes here; a " +
           std::to_string(plan_.length) + "-byte file ends in a shorter call (use a file size that is a multiple of " +
           std::to_string(align) + ")";
  if (sync && !f->supports(*sync))
    return std::string(method_.name()) + " cannot make the " + std::string(io::to_string(*sync)) + " durability call";
  f->close();
  return std::nullopt;
}

// Writes the pattern into `file` with pwrite and makes it durable (untimed preparation).
void write_pattern_file(const std::filesystem::path& file, std::uint64_t size, std::uint64_t seed) {
  auto f = io::find_file_method("pread").open(file, io::Access::ReadWrite);
  io::Buffer chunk(static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(size, 1), 1 << 20)),
                   io::BufferKind::Aligned);
  for (std::uint64_t off = 0; off < size; off += chunk.size()) {
    auto part = chunk.span().first(static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - off)));
    io::fill_pattern(seed, off, part);
    f->write_at(off, part);
  }
  f->sync(io::Durability::Fdatasync);
  f->close();
}

io::FileOptions experiment_options(const io::Method& method, const FileExperiment& e) {
  io::FileOptions o = e.options;
  if (method.traits(o).direct_optional && e.cache == results::CacheState::Direct) o.direct = true;
  const io::MethodTraits t = method.traits(o);
  if (t.queued && t.bypasses_page_cache && o.submit_batch == 0) o.submit_batch = 1;
  return o;
}

std::uint64_t file_length(const FileExperiment& e) {
  if (e.ops == 0) return e.file_size;
  return e.ops > UINT64_MAX / e.block_size ? UINT64_MAX : e.ops * e.block_size;
}

long double experiment_memory(const FileExperiment& e) {
  const io::Method& method = e.method_object ? *e.method_object : io::find_file_method(e.method);
  const std::uint64_t length = file_length(e), block = std::max<std::uint64_t>(e.block_size, 1);
  const bool queued = method.traits(e.options).queued;
  // Read slots (one per request in flight), or a write source's blocks; a
  // random plan's offsets, one per call (windows: the permutation, and a window of it).
  const long double slots = e.op == results::Op::Read ? (queued ? std::max(1u, e.options.queue_depth) : 1u) : 2u;
  long double memory = static_cast<long double>(block) * slots;
  if (e.pattern == results::AccessPattern::Rand)
    memory += (static_cast<long double>(length / block + 1) * (e.pass_blocks ? 1u : std::max(e.rounds, 1u)) +
               static_cast<long double>(std::max(e.pass_blocks, e.verify_blocks))) *
              sizeof(std::uint64_t);
  return memory;
}

std::optional<std::string> resource_problem(const FileExperiment& e, const std::filesystem::path& scratch_dir) {
  const std::uint64_t length = file_length(e);
  const long double memory = experiment_memory(e);
  if (const std::uint64_t bytes = proc::physical_memory_bytes(); bytes > 0) {
    const auto ram = static_cast<long double>(bytes);
    if (memory > ram / 2)
      return "it needs " + format_bytes(static_cast<double>(memory)) + " of memory (buffers" +
             (e.pattern == results::AccessPattern::Rand ? std::string(" and an offset per call") : "") + "), more than half of the " +
             format_bytes(static_cast<double>(ram)) + " here";
  }
  if (const auto free = io::free_space(scratch_dir); free && length > *free)
    return "its " + format_bytes(static_cast<double>(length)) + " file is larger than the " +
           format_bytes(static_cast<double>(*free)) + " free in " + scratch_dir.string();
  return std::nullopt;
}

std::unique_ptr<Workload> make_file_workload(const FileExperiment& e, const RunConfig& config, io::ScratchDir& scratch,
                                             results::Result& record) {
  return std::make_unique<FileWorkload>(e, config, scratch, record);
}

}  // namespace iolab::harness

