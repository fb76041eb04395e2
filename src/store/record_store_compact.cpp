// RecordStore::compact(): the live records rewritten into a new journal,
// which replaces the old one atomically (docs/store-format.md).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "iolab/base/error.h"
#include "iolab/base/le.h"
#include "journal_file.h"
#include "record_store_parts.h"

namespace iolab::store {

bool looks_like_leftover(io::Env& env, const std::filesystem::path& p) {
  try {
    auto f = env.open(p, io::OpenMode::OpenExisting, io::Access::Read);
    std::byte magic[8];
    std::size_t n = f->read_at(0, magic);
    static constexpr std::byte kZeros[8] = {};
    return n == 0 || (n == 8 && (std::memcmp(magic, kJournalMagic, 8) == 0 || std::memcmp(magic, kZeros, 8) == 0));
  } catch (const Error&) {  // a directory, a symlink...: not ours
    return false;
  }
}

void RecordStore::compact() {
  if (closed_) throw Error("compact", path_.string(), "the store is closed");
  commit();
  const std::filesystem::path& tmp = options_.compact_path;
  if (env_.exists(tmp)) {
    if (!looks_like_leftover(env_, tmp))
      throw Error("compact", tmp.string(), "exists and is not a journal iolab left; remove it or set compact_path",
                  EEXIST);
    env_.remove(tmp);
  }
  const io::Durability call = options_.sync.call;
  // 1. The live records into a new journal, synced. A failure here leaves
  //    the store as it was.
  {
    auto out = env_.open(tmp, io::OpenMode::CreateNew);
    try {
      std::vector<std::byte> buf(kRecordsStart);
      std::uint64_t written = 0, seq = 0;
      auto drain = [&](bool all) {
        if (buf.size() < (std::size_t{1} << 20) && !all) return;
        if (written == 0) {  // the header and checkpoint go last, once the end is known
          out->write_at(kRecordsStart, std::span<const std::byte>(buf).subspan(kRecordsStart));
          written = buf.size();
        } else {
          out->write_at(written, buf);
          written += buf.size();
        }
        buf.clear();
      };
      for_each([&](const Employee& e) {
        std::size_t at = buf.size();
        buf.resize(at + kRecordHeaderSize);
        encode(e, buf);
        auto len = static_cast<std::uint32_t>(buf.size() - at - kRecordHeaderSize);
        buf.resize(at + slot_size(len));
        encode_record_header(buf.data() + at, kKindActive, ++seq, len, {buf.data() + at + kRecordHeaderSize, len});
        drain(false);
      });
      drain(true);
      std::byte start[kRecordsStart];
      write_file_header(start);
      encode_checkpoint(start + kCheckpointOffset, Checkpoint{false, seq, std::max<std::uint64_t>(written, kRecordsStart)});
      out->write_at(0, start);
      out->sync(call);
      out->close();
    } catch (...) {
      out.reset();
      try {
        env_.remove(tmp);
      } catch (const Error&) {  // the first failure is the one to report
      }
      throw;
    }
  }
  // 2. The switch. A failed rename leaves the store as it was, too.
  try {
    env_.rename(tmp, path_);
  } catch (...) {
    try {
      env_.remove(tmp);
    } catch (const Error&) {
    }
    throw;
  }
  // 3. The rename is durable once the directory is synced. Past the rename
  //    the store's open journal is the old file: a failure here leaves the
  //    store refusing changes until reopened.
  try {
    env_.sync_dir(dir_of(path_));
    if (dir_of(tmp) != dir_of(path_)) env_.sync_dir(dir_of(tmp));
    journal_.reset();  // the old, unlinked journal: nothing to keep
    closed_ = true;
    open_journal();
  } catch (const Error& err) {
    if (failed_.empty()) failed_ = one_line(err.what());
    throw;
  }
  durable_mutations_ = mutations_;
  durable_ = true;
}


}  // namespace iolab::store
