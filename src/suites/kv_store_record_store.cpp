// The record store as a KvStore: one of its backends, its sync schedule
// from the suite's durability and batch.
#include "kv_adapters.h"

#include <algorithm>

#include "iolab/base/error.h"

namespace iolab::suites::kv {
namespace {

using store::Backend;
using store::Employee;
using store::RecordStore;
using store::StoreOptions;


class RecordStoreKvStore final : public KvStore {
 public:
  RecordStoreKvStore(std::string name, const std::filesystem::path& path, StoreOptions o, std::uint32_t batch)
      : name_(std::move(name)), store_(path, std::move(o)), batch_(batch) {}
  std::string_view name() const override { return name_; }
  void put(const Employee& e) override {
    store_.put(e);
    mutated();
  }
  bool get(std::string_view last, Employee& out) override { return store_.get(last, out); }
  bool remove(std::string_view last) override {
    bool removed = store_.remove(last);
    if (removed) mutated();
    return removed;
  }
  std::uint64_t size() override { return store_.size(); }
  // Hands staged bytes to the kernel; with sync, the store's policy syncs what it owes.
  void commit() override {
    store_.commit();
    if (pending_ > 0) ++commits_;
    pending_ = 0;
  }
  void close() override {
    commit();
    store_.close();
  }
  KvStoreCounters counters() const override {
    store::StoreStats s = store_.stats();
    return {s.syscalls, s.bytes_written, s.bytes_read, s.holes_reused, s.free_bytes, commits_, s.syncs};
  }
  KvStoreTraits traits() const override { return {true, true}; }
  static CommitSemantics semantics(Backend b, bool sync) {
    CommitSemantics s;
    s.atomicity = "not atomic across records";
    std::string hands;
    switch (b) {
      case Backend::Fields:
      case Backend::Gather: hands = "nothing to hand over (each put's calls left it in the page cache)"; break;
      case Backend::Mmap: hands = "nothing to hand over (each put is stored into the shared mapping: the page cache)"; break;
      case Backend::Buffered: hands = "the staged bytes written to the kernel (pwrite)"; break;
    }
    if (!sync) {
      s.commit = "not atomic across records: each record is all or nothing (CRC-checked at open), a crash can keep "
                 "any part of a batch; a commit: " + hands +
                 ", nothing flushed: a process crash keeps every record " +
                 (b == Backend::Buffered ? "committed" : "put") + ", a power loss can lose any";
    } else {
      s.commit = "not atomic across records: each record is all or nothing (CRC-checked at open), a power loss can "
                 "keep any part of a batch; a commit: " + hands + ", then " +
                 (b == Backend::Mmap ? "msync(MS_SYNC) of the dirty range" : "fdatasync") +
                 ": every mutation before it is durable";
    }
    switch (b) {
      case Backend::Fields:
      case Backend::Gather: s.close = "closes the journal file"; break;
      case Backend::Mmap: s.close = "unmaps the journal and trims its preallocated growth step (ftruncate)"; break;
      case Backend::Buffered: s.close = "unmaps the read-only map and closes the journal file"; break;
    }
    if (sync) s.close += "; a sync only when the last commit left a mutation unsynced";
    return s;
  }
  std::string describe() const override {
    const StoreOptions& o = store_.options();
    std::string s = "iolab::store backend " + name_;
    if (o.backend == Backend::Mmap) s += ", " + std::to_string(o.mmap_grow_step >> 10) + " KiB growth step";
    if (o.backend == Backend::Buffered) s += ", " + std::to_string(o.stage_buffer >> 10) + " KiB staging buffer";
    return s + (o.sync.schedule == io::FlushSchedule::None ? ", no sync" : ", fdatasync at each commit");
  }

 private:
  void mutated() {
    ++pending_;
    if (batch_ != 0 && pending_ >= batch_) commit();
  }

  std::string name_;
  RecordStore store_;
  std::uint32_t batch_;
  std::uint32_t pending_ = 0;  // mutations since the last commit
  std::uint64_t commits_ = 0;
};

}  // namespace

std::unique_ptr<KvStore> open_record_store(std::string name, const std::filesystem::path& path, StoreOptions options,
                                           std::uint32_t batch) {
  return std::make_unique<RecordStoreKvStore>(std::move(name), path, std::move(options), batch);
}

CommitSemantics record_store_semantics(Backend backend, bool sync) { return RecordStoreKvStore::semantics(backend, sync); }

}  // namespace iolab::suites::kv
