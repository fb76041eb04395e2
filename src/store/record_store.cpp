#include "iolab/store/record_store.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iolab/error.h"
#include "journal_file.h"
#include "key_index.h"
#include "le.h"

namespace iolab::store {

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::Fields: return "fields";
    case Backend::Gather: return "gather";
    case Backend::Mmap: return "mmap";
    case Backend::Buffered: return "buffered";
  }
  return "?";
}

Backend parse_backend(std::string_view name) {
  for (Backend b : kAllBackends)
    if (to_string(b) == name) return b;
  throw UsageError("store backend '" + std::string(name) + "'", "expected fields, gather, mmap or buffered");
}

std::string to_string(const SyncPolicy& p) {
  std::string call(io::to_string(p.call));
  switch (p.when) {
    case SyncPolicy::When::None: return "none";
    case SyncPolicy::When::EveryN: return "every-" + std::to_string(p.every) + ":" + call;
    case SyncPolicy::When::EveryPut: return "every-put:" + call;
    case SyncPolicy::When::AtClose: return "close:" + call;
  }
  return "?";
}

namespace {

// A read-only view of a whole file for the open scan.
class FileView {
 public:
  FileView(int fd, std::uint64_t size, const std::filesystem::path& path) : size_(size) {
    if (size_ == 0) return;
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) throw Error("mmap", path.string(), errno);
    data_ = static_cast<const std::byte*>(p);
  }
  ~FileView() {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  }
  FileView(const FileView&) = delete;
  FileView& operator=(const FileView&) = delete;
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  const std::byte* data_ = nullptr;
  std::uint64_t size_;
};

void pwrite_fixup(int fd, std::span<const std::byte> src, std::uint64_t offset, const std::filesystem::path& path) {
  while (!src.empty()) {
    ssize_t n = ::pwrite(fd, src.data(), src.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("pwrite", path.string(), n < 0 ? errno : ENOSPC);
    src = src.subspan(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

bool sync_mode(const SyncPolicy& p) {
  return p.when == SyncPolicy::When::EveryN || p.when == SyncPolicy::When::EveryPut;
}

}  // namespace

class RecordStore::Index : public KeyIndex {};

class RecordStore::FreeList {
 public:
  std::multimap<std::uint64_t, std::uint64_t> by_size;  // slot bytes -> offset
  std::uint64_t bytes = 0;
};

RecordStore::RecordStore(const std::filesystem::path& path, StoreOptions options)
    : path_(path), options_(std::move(options)), index_(std::make_unique<Index>()),
      free_(std::make_unique<FreeList>()) {
  if (options_.sync.when == SyncPolicy::When::EveryN && options_.sync.every == 0)
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

void RecordStore::open_journal() {
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("open journal", path_.string(), errno);
  try {
    struct stat st {};
    if (::fstat(fd, &st) < 0) throw Error("fstat", path_.string(), errno);
    if (!S_ISREG(st.st_mode)) throw Error("open journal", path_.string(), "not a regular file");
    report_ = OpenReport{};
    index_->clear();
    free_->by_size.clear();
    free_->bytes = 0;
    holes_unsynced_.clear();
    free_after_sync_.clear();
    auto size = static_cast<std::uint64_t>(st.st_size);
    if (size == 0) {
      std::byte header[kFileHeaderSize];
      write_file_header(header);
      pwrite_fixup(fd, header, 0, path_);
      if (options_.sync.when != SyncPolicy::When::None && ::fdatasync(fd) < 0)
        throw Error("fdatasync", path_.string(), errno);
      report_.created = true;
      end_ = kFileHeaderSize;
      sequence_ = 0;
    } else {
      std::vector<std::pair<std::uint64_t, std::uint64_t>> to_free;  // offset, slot: fixed up below
      {
        FileView view(fd, size, path_);
        ScanResult scan = scan_journal(view.bytes(), path_.string());
        if (!scan.damage.empty() && !options_.salvage) {
          const Damage& d = scan.damage.front();
          std::string more = scan.damage.size() > 1
                                 ? " (and " + std::to_string(scan.damage.size() - 1) + " more damaged ranges)"
                                 : "";
          throw Error("open journal", path_.string(),
                      "corrupt data at offset " + std::to_string(d.offset) + " (" + std::to_string(d.length) +
                          " bytes, followed by valid records)" + more + "; open with salvage to skip it");
        }
        Index& index = *index_;
        index.reserve(scan.records.size());
        for (const ScannedRecord& r : scan.records) {
          std::uint64_t slot = slot_size(r.data_length);
          if (!r.active) {
            add_hole(r.offset, slot);
            ++report_.free_records;
            continue;
          }
          // The key is the first field; scan_journal checked its length.
          const std::byte* d = view.bytes().data() + r.offset + kRecordHeaderSize;
          std::string_view key(reinterpret_cast<const char*>(d + 4), le::get32(d));
          auto [found, inserted] = index.try_emplace(key, IndexLocation{r.offset, r.data_length});
          if (inserted) continue;
          // A crash between writing a new version and freeing the old one: keep the newer.
          IndexLocation& cur = *found;
          auto seq_of = [&](std::uint64_t off) {
            auto found = std::lower_bound(scan.records.begin(), scan.records.end(), off,
                                          [](const ScannedRecord& a, std::uint64_t o) { return a.offset < o; });
            return found->sequence;
          };
          if (r.sequence > seq_of(cur.offset)) {
            to_free.emplace_back(cur.offset, slot_size(cur.data_length));
            cur = IndexLocation{r.offset, r.data_length};
          } else {
            to_free.emplace_back(r.offset, slot);
          }
          ++report_.stale_versions_freed;
        }
        for (const Damage& dmg : scan.damage) to_free.emplace_back(dmg.offset, dmg.length);
        report_.salvaged = scan.damage;
        report_.torn_tail_bytes = scan.torn_tail_bytes;
        report_.torn_tail_records = scan.torn_tail_records;
        report_.zero_tail_bytes = scan.zero_tail_bytes;
        end_ = scan.end;
        sequence_ = scan.max_sequence;
      }
      // Repairs, durable before anything new is written: stale versions and
      // salvaged damage become free records; the torn tail goes.
      for (auto [offset, slot] : to_free) {
        // A free record's length is 32 bits: a huge damaged range becomes several.
        constexpr std::uint64_t kMaxFreeSlot = 0xFFFFFFF0u;
        while (slot > 0) {
          std::uint64_t part = std::min(slot, kMaxFreeSlot);
          if (slot - part != 0 && slot - part < kRecordHeaderSize) part -= kRecordAlign;
          std::byte h[kRecordHeaderSize];
          encode_record_header(h, kKindFree, 0, static_cast<std::uint32_t>(part - kRecordHeaderSize));
          pwrite_fixup(fd, h, offset, path_);
          add_hole(offset, part);
          ++report_.free_records;
          offset += part;
          slot -= part;
        }
      }
      if (end_ < size && ::ftruncate(fd, static_cast<off_t>(end_)) < 0)
        throw Error("ftruncate", path_.string(), errno);
      if ((!to_free.empty() || end_ < size) && ::fdatasync(fd) < 0)
        throw Error("fdatasync", path_.string(), errno);
    }
    report_.records = index_->size();
    report_.free_bytes = free_->bytes;
  } catch (...) {
    ::close(fd);
    throw;
  }
  journal_ = make_journal(options_, fd, path_, end_);
  closed_ = false;
  unsynced_ = 0;
}

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

void RecordStore::free_record(const Location& loc) {
  std::uint64_t slot = slot_size(loc.data_length);
  std::byte h[kRecordHeaderSize];
  encode_record_header(h, kKindFree, 0, static_cast<std::uint32_t>(slot - kRecordHeaderSize));
  journal_->write_header(loc.offset, h);
  if (sync_mode(options_.sync))
    holes_unsynced_.emplace_back(loc.offset, slot);  // reusable once the free mark is durable
  else
    add_hole(loc.offset, slot);
}

void RecordStore::put(const Employee& e) {
  if (closed_) throw Error("put", path_.string(), "the store is closed");
  validate(e);
  image_.clear();
  image_.resize(kRecordHeaderSize);
  encode(e, image_);
  auto data_length = static_cast<std::uint32_t>(image_.size() - kRecordHeaderSize);
  std::uint64_t need = slot_size(data_length);
  image_.resize(need);  // zero padding
  if (sequence_ >= kMaxSequence) throw Error("put", path_.string(), "sequence numbers exhausted; compact the journal");
  encode_record_header(image_.data(), kKindActive, ++sequence_, data_length,
                       {image_.data() + kRecordHeaderSize, data_length});

  std::uint64_t slot = 0;
  std::uint64_t offset = take_hole(need, slot);
  if (offset != UINT64_MAX) {
    std::byte leftover[kRecordHeaderSize];
    std::span<const std::byte> rest;
    if (slot > need) {
      encode_record_header(leftover, kKindFree, 0, static_cast<std::uint32_t>(slot - need - kRecordHeaderSize));
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

  auto [slot_loc, inserted] = index_->try_emplace(e.last, IndexLocation{offset, data_length});
  if (!inserted) {
    Location old{slot_loc->offset, slot_loc->data_length};
    *slot_loc = IndexLocation{offset, data_length};
    if (sync_mode(options_.sync))
      free_after_sync_.push_back(old);  // the old version stays valid until the new one is durable
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

bool RecordStore::contains(std::string_view last) const { return index_->find(last) != nullptr; }

bool RecordStore::remove(std::string_view last) {
  if (closed_) throw Error("remove", path_.string(), "the store is closed");
  IndexLocation found{};
  if (!index_->erase(last, found)) return false;
  free_record(Location{found.offset, found.data_length});
  after_mutation();
  return true;
}

std::uint64_t RecordStore::size() const noexcept { return index_->size(); }

void RecordStore::after_mutation() {
  switch (options_.sync.when) {
    case SyncPolicy::When::None:
    case SyncPolicy::When::AtClose: return;
    case SyncPolicy::When::EveryPut: sync_now(); return;
    case SyncPolicy::When::EveryN:
      if (++unsynced_ >= options_.sync.every) sync_now();
      return;
  }
}

void RecordStore::sync_now() {
  journal_->sync(options_.sync.call);
  ++syncs_;
  unsynced_ = 0;
  // Free marks written before this sync are durable now: their holes may be reused.
  for (auto [offset, slot] : holes_unsynced_) add_hole(offset, slot);
  holes_unsynced_.clear();
  // New versions are durable now: the old ones may be freed.
  std::vector<Location> pending;
  pending.swap(free_after_sync_);
  for (const Location& loc : pending) free_record(loc);
}

void RecordStore::commit() {
  if (closed_) return;
  journal_->flush();
  if (sync_mode(options_.sync) && (unsynced_ > 0 || !free_after_sync_.empty())) sync_now();
}

void RecordStore::for_each(const std::function<void(const Employee&)>& fn) {
  std::vector<Location> order;
  order.reserve(index_->size());
  index_->for_each([&](std::string_view, const IndexLocation& loc) { order.push_back({loc.offset, loc.data_length}); });
  std::sort(order.begin(), order.end(), [](const Location& a, const Location& b) { return a.offset < b.offset; });
  Employee e;
  for (const Location& loc : order) {
    journal_->read(loc.offset, loc.data_length, e);
    fn(e);
  }
}

void RecordStore::compact() {
  if (closed_) throw Error("compact", path_.string(), "the store is closed");
  commit();
  const std::filesystem::path& tmp = options_.compact_path;
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("open", tmp.string(), errno);
  try {
    std::vector<std::byte> out(kFileHeaderSize);
    write_file_header(out.data());
    std::uint64_t written = 0, seq = 0;
    auto drain = [&](bool all) {
      if (out.size() < (std::size_t{1} << 20) && !all) return;
      pwrite_fixup(fd, out, written, tmp);
      written += out.size();
      out.clear();
    };
    for_each([&](const Employee& e) {
      std::size_t at = out.size();
      out.resize(at + kRecordHeaderSize);
      encode(e, out);
      auto len = static_cast<std::uint32_t>(out.size() - at - kRecordHeaderSize);
      out.resize(at + slot_size(len));
      encode_record_header(out.data() + at, kKindActive, ++seq, len, {out.data() + at + kRecordHeaderSize, len});
      drain(false);
    });
    drain(true);
    if ((options_.sync.call == io::Durability::Fsync ? ::fsync(fd) : ::fdatasync(fd)) < 0)
      throw Error("fdatasync", tmp.string(), errno);
    if (::close(fd) < 0) {
      fd = -1;
      throw Error("close", tmp.string(), errno);
    }
    fd = -1;
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  journal_->close(end_);
  journal_.reset();
  closed_ = true;
  if (::rename(tmp.c_str(), path_.c_str()) < 0) throw Error("rename", tmp.string() + " -> " + path_.string(), errno);
  // The rename is durable once the directory is synced.
  auto dir = path_.parent_path().empty() ? std::filesystem::path(".") : path_.parent_path();
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  open_journal();
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
    s.syscalls = journal_->counters().syscalls;
    s.bytes_written = journal_->counters().bytes_written;
    s.bytes_read = journal_->counters().bytes_read;
  }
  s.syncs = syncs_;
  s.holes_reused = holes_reused_;
  return s;
}

void RecordStore::close() {
  if (closed_ || !journal_) return;
  closed_ = true;
  switch (options_.sync.when) {
    case SyncPolicy::When::None: break;
    case SyncPolicy::When::AtClose: journal_->sync(options_.sync.call); break;
    case SyncPolicy::When::EveryN:
    case SyncPolicy::When::EveryPut:
      if (unsynced_ > 0 || !free_after_sync_.empty()) sync_now();
      if (!holes_unsynced_.empty()) sync_now();  // the free marks written by the sync above
      break;
  }
  journal_->close(end_);
}

}  // namespace iolab::store
