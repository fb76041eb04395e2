#include "iolab/base/names.h"
#include "iolab/store/record_store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "iolab/base/error.h"
#include "journal_file.h"
#include "key_index.h"
#include "record_store_parts.h"
#include "iolab/base/le.h"

namespace iolab::store {

namespace {
constexpr NameTable<Backend, 4> kBackendNames{
    {{Backend::Fields, "fields"}, {Backend::Gather, "gather"}, {Backend::Mmap, "mmap"}, {Backend::Buffered, "buffered"}}};
}  // namespace

std::string_view to_string(Backend b) { return name_of(kBackendNames, b); }
Backend parse_backend(std::string_view name) { return parse_name(kBackendNames, name, "store backend"); }

namespace {

bool sync_mode(const io::FlushPolicy& p) {
  return p.schedule == io::FlushSchedule::EveryOps || p.schedule == io::FlushSchedule::EveryWrite;
}

std::uint64_t key_hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

}  // namespace

RecordStore::RecordStore(const std::filesystem::path& path, StoreOptions options)
    : path_(path), options_(std::move(options)),
      env_(options_.env != nullptr ? *options_.env : io::Env::posix()),
      index_(std::make_unique<Index>()), free_(std::make_unique<FreeList>()) {
  const io::FlushSchedule when = options_.sync.schedule;
  if (when != io::FlushSchedule::None && when != io::FlushSchedule::EveryOps && when != io::FlushSchedule::EveryWrite &&
      when != io::FlushSchedule::End)
    throw UsageError("store sync '" + io::to_string(options_.sync) + "'", "expected none, every-N-ops, every or end");
  if (options_.sync.call == io::Durability::None) options_.sync.call = io::Durability::Fdatasync;  // the store's own data sync
  if (options_.sync.schedule == io::FlushSchedule::EveryOps && options_.sync.interval == 0)
    throw UsageError("sync every 0 puts", "the interval must be at least 1");
  if (options_.sync.call != io::Durability::Fdatasync && options_.sync.call != io::Durability::Fsync)
    throw UsageError("store sync call '" + std::string(io::to_string(options_.sync.call)) + "'",
                     "expected fdatasync or fsync");
  if (options_.compact_path.empty()) options_.compact_path = path_.string() + ".compact";
  open_journal();
}

RecordStore::~RecordStore() {
  try {
    close();
  } catch (...) {  // close() quietly; callers wanting errors call close() themselves
  }
}

bool RecordStore::ordered() const noexcept { return sync_mode(options_.sync); }

void RecordStore::add_hole(std::uint64_t offset, std::uint64_t slot) {
  free_->by_size.emplace(slot, offset);
  free_->bytes += slot;
}

std::uint64_t RecordStore::take_hole(std::uint64_t need, std::uint64_t& slot) {
  // The smallest hole that fits (the seed took the first in its list).
  auto it = free_->by_size.lower_bound(need);
  if (it == free_->by_size.end()) return UINT64_MAX;
  slot = it->first;
  std::uint64_t offset = it->second;
  free_->by_size.erase(it);
  free_->bytes -= slot;
  return offset;
}

std::uint64_t RecordStore::next_sequence() {
  if (sequence_ >= kMaxSequence)
    throw Error("write", path_.string(), "sequence numbers exhausted; compact the journal");
  return ++sequence_;
}

void RecordStore::free_record(const Location& loc) {
  std::uint64_t slot = slot_size(loc.data_length);
  std::byte h[kRecordHeaderSize];
  // A sequence number of its own: open tells a free mark newer than the
  // checkpoint (and what a crash left after it) from durable data.
  encode_record_header(h, kKindFree, next_sequence(), static_cast<std::uint32_t>(slot - kRecordHeaderSize));
  journal_->write_header(loc.offset, h);
  if (ordered())
    holes_unsynced_.emplace_back(loc.offset, slot);  // reusable once the free mark is durable
  else
    add_hole(loc.offset, slot);
}

void RecordStore::before_mutation(const char* what) {
  if (closed_) throw Error(what, path_.string(), "the store is closed");
  if (!failed_.empty())
    throw Error(what, path_.string(), "refused: an earlier write or sync failed (" + failed_ + "); reopen the store");
  if (!ordered() && !marked_unordered_ && version_ >= 2) {
    // This store's writes are not ordered by syncs: before the first one,
    // the journal says so durably, so that open after a crash repairs
    // half-done writes anywhere instead of taking them for damage.
    write_checkpoint(true);
    journal_->sync(options_.sync.call);
    marked_unordered_ = true;
    durable_mutations_ = mutations_;
    durable_ = true;
  }
}

void RecordStore::put(const Employee& e) {
  if (closed_) throw Error("put", path_.string(), "the store is closed");
  validate(e);
  try {
    before_mutation("put");
    put_unguarded(e);
  } catch (const Error& err) {
    if (failed_.empty() && err.error_number() != 0 && journal_) failed_ = one_line(err.what());
    throw;
  }
}

void RecordStore::put_unguarded(const Employee& e) {
  // The index slot's cache miss overlaps the encoding and the CRC below.
  const std::uint64_t key_hash_in_index = index_->prefetch(e.last);
  image_.clear();
  image_.resize(kRecordHeaderSize);
  encode(e, image_);
  auto data_length = static_cast<std::uint32_t>(image_.size() - kRecordHeaderSize);
  std::uint64_t need = slot_size(data_length);
  image_.resize(need);  // zero padding
  encode_record_header(image_.data(), kKindActive, next_sequence(), data_length,
                       {image_.data() + kRecordHeaderSize, data_length});

  std::uint64_t slot = 0;
  std::uint64_t offset = take_hole(need, slot);
  if (offset != UINT64_MAX) {
    std::byte leftover[kRecordHeaderSize];
    std::span<const std::byte> rest;
    if (slot > need) {
      encode_record_header(leftover, kKindFree, sequence_, static_cast<std::uint32_t>(slot - need - kRecordHeaderSize));
      rest = leftover;
    }
    try {
      journal_->write_in_hole(offset, image_, rest);
    } catch (...) {
      add_hole(offset, slot);
      throw;
    }
    if (slot > need) add_hole(offset + need, slot - need);
    ++holes_reused_;
  } else {
    offset = end_;
    journal_->append(offset, image_);
    end_ += need;
  }

  ++mutations_;
  durable_ = false;
  auto [entry, inserted] = index_->try_emplace_hashed(e.last, key_hash_in_index, IndexLocation{offset, data_length},
                                                       [this](IndexLocation l) { return key_at(l); });
  if (!inserted) {
    IndexLocation was = entry.get();
    Location old{was.offset, was.data_length};
    entry.set(IndexLocation{offset, data_length});
    if (ordered())
      free_after_sync_.push_back({old, key_hash(e.last)});  // valid until the new version is durable
    else
      free_record(old);
  }
  after_mutation();
}

bool RecordStore::get(std::string_view last, Employee& out) {
  // The record's own key decides (the index compares hashes only): exact,
  // and one cache miss fewer than comparing the index's copy of the key.
  return index_->find_hashed(last, [&](const IndexLocation& loc) {
    journal_->read(loc.offset, loc.data_length, out);
    return out.last == last;
  });
}

std::optional<Employee> RecordStore::get(std::string_view last) {
  Employee e;
  if (!get(last, e)) return std::nullopt;
  return e;
}

std::string_view RecordStore::key_at(const IndexLocation& l) const {
  return journal_->key(l.offset, l.data_length, key_scratch_);
}

bool RecordStore::contains(std::string_view last) const {
  return index_->find(last, [this](IndexLocation l) { return key_at(l); }).has_value();
}

bool RecordStore::remove(std::string_view last) {
  if (closed_) throw Error("remove", path_.string(), "the store is closed");
  std::optional<IndexLocation> at = index_->find(last, [this](IndexLocation l) { return key_at(l); });
  if (!at) return false;
  Location found{at->offset, at->data_length};
  try {
    before_mutation("remove");
    remove_found(last, found);
  } catch (const Error& err) {
    if (failed_.empty() && err.error_number() != 0 && journal_) failed_ = one_line(err.what());
    throw;
  }
  return true;
}

void RecordStore::remove_found(std::string_view last, const Location& found) {
  if (ordered()) {
    std::uint64_t h = key_hash(last);
    // An older version whose free mark is not durable yet would outlive
    // this remove if a power loss kept the remove's free mark and lost its
    // own: make it durable first (rare: a remove right after a replace).
    while (stale_unsynced_.count(h) != 0) sync_now();
    // Older versions still waiting to be freed are superseded by the
    // remove: freed now, with it.
    std::vector<Stale> rest;
    for (const Stale& s : free_after_sync_) {
      if (s.key_hash == h) {
        free_record(s.location);
        stale_unsynced_.insert(h);
      } else {
        rest.push_back(s);
      }
    }
    free_after_sync_.swap(rest);
  }
  IndexLocation gone{};
  index_->erase(last, gone, [this](IndexLocation l) { return key_at(l); });
  free_record(found);
  ++mutations_;
  durable_ = false;
  after_mutation();
}

std::uint64_t RecordStore::size() const noexcept { return index_->size(); }

void RecordStore::after_mutation() {
  switch (options_.sync.schedule) {
    case io::FlushSchedule::None:
    case io::FlushSchedule::End:
    case io::FlushSchedule::EveryBytes:  // refused by the constructor
    case io::FlushSchedule::AsyncBytes: return;
    case io::FlushSchedule::EveryWrite: sync_now(); return;
    case io::FlushSchedule::EveryOps:
      if (++unsynced_ >= options_.sync.interval) sync_now();
      return;
  }
}

void RecordStore::sync_now() {
  journal_->sync(options_.sync.call);
  ++syncs_;
  unsynced_ = 0;
  durable_mutations_ = mutations_;
  durable_ = true;
  // What is durable now, for open after a crash (itself durable at the next sync).
  if (version_ >= 2) write_checkpoint(false);
  // Free marks written before this sync are durable now: their holes may be reused.
  for (auto [offset, slot] : holes_unsynced_) add_hole(offset, slot);
  holes_unsynced_.clear();
  stale_unsynced_.clear();
  // New versions are durable now: the old ones may be freed.
  std::vector<Stale> pending;
  pending.swap(free_after_sync_);
  for (const Stale& s : pending) {
    free_record(s.location);
    stale_unsynced_.insert(s.key_hash);
  }
}

void RecordStore::commit() {
  if (closed_) return;
  if (!failed_.empty())
    throw Error("commit", path_.string(), "refused: an earlier write or sync failed (" + failed_ + "); reopen the store");
  try {
    journal_->flush();
    if (ordered() && (unsynced_ > 0 || !free_after_sync_.empty())) sync_now();
  } catch (const Error& err) {
    if (failed_.empty() && err.error_number() != 0) failed_ = one_line(err.what());
    throw;
  }
}

void RecordStore::for_each(const std::function<void(const Employee&)>& fn) {
  std::vector<Location> order;
  order.reserve(index_->size());
  index_->for_each([&](const IndexLocation& loc) { order.push_back({loc.offset, loc.data_length}); });
  std::sort(order.begin(), order.end(), [](const Location& a, const Location& b) { return a.offset < b.offset; });
  Employee e;
  for (const Location& loc : order) {
    journal_->read(loc.offset, loc.data_length, e);
    fn(e);
  }
}

StoreStats RecordStore::stats() const {
  StoreStats s;
  s.records = index_->size();
  s.file_bytes = end_;
  s.free_bytes = free_->bytes;
  s.free_holes = free_->by_size.size();
  for (auto [offset, slot] : holes_unsynced_) {
    s.free_bytes += slot;
    ++s.free_holes;
  }
  if (journal_) {
    JournalCounters c = journal_->counters();
    s.syscalls = c.syscalls;
    s.bytes_written = c.bytes_written;
    s.bytes_read = c.bytes_read;
  }
  s.syncs = syncs_;
  s.holes_reused = holes_reused_;
  s.mutations = mutations_;
  s.durable_mutations = durable_mutations_;
  return s;
}

void RecordStore::close() {
  if (closed_ || !journal_) return;
  closed_ = true;
  // After a failed write or sync: no sync (one proves nothing then), but
  // what is staged still goes to the kernel and a partial tail is trimmed
  // (a write that failed once may succeed now). Quietly: the failure was
  // reported when it happened.
  auto close_after_failure = [&] {
    try {
      journal_->close(end_);
    } catch (const Error&) {
    }
    journal_.reset();
  };
  if (!failed_.empty()) {
    close_after_failure();
    return;
  }
  try {
    switch (options_.sync.schedule) {
      case io::FlushSchedule::None:
      case io::FlushSchedule::EveryBytes:  // refused by the constructor
      case io::FlushSchedule::AsyncBytes: break;
      case io::FlushSchedule::End:
        journal_->sync(options_.sync.call);
        durable_mutations_ = mutations_;
        durable_ = true;
        if (version_ >= 2) write_checkpoint(false);  // true from now on; durable once written back
        break;
      case io::FlushSchedule::EveryOps:
      case io::FlushSchedule::EveryWrite:
        if (unsynced_ > 0 || !free_after_sync_.empty()) sync_now();
        if (!holes_unsynced_.empty()) sync_now();  // the free marks written by the sync above
        break;
    }
    journal_->close(end_);
  } catch (const Error& err) {
    failed_ = one_line(err.what());
    close_after_failure();
    throw;
  }
}

}  // namespace iolab::store
