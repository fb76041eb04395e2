// Damaged journals: truncated at every offset, bytes flipped everywhere,
// damage to durable records reported with its offset and salvaged on
// request, crash debris told apart from it by the checkpoint, version 1
// journals, and input that is not a journal at all. Open reports or
// salvages; it never crashes and no get ever returns a record that was not
// written.
#include <cstring>
#include <map>

#include <gtest/gtest.h>

#include "iolab/base/error.h"
#include "iolab/io/scratch.h"
#include "iolab/base/crc32c.h"
#include "iolab/store/journal.h"
#include "iolab/store/record_store.h"
#include "store/store_test_util.h"

namespace iolab::store {
namespace {

using testing::contents;
using testing::key_name;
using testing::read_bytes;
using testing::write_bytes;

Employee small(int i) {
  Employee e;
  e.last = key_name(i);
  e.first = "F" + std::to_string(i);
  e.id = i;
  e.zip = 10000 + i;
  e.employed = i % 2 == 0;
  e.comments = std::string(static_cast<std::size_t>(5 + 7 * i), static_cast<char>('a' + i));
  return e;
}

// A small journal with live records, a removed one and a split hole.
struct SmallJournal {
  std::vector<std::byte> bytes;
  std::map<std::string, Employee> live;
  std::map<std::uint64_t, std::string> record_at;  // offset -> key, for the live records
};

SmallJournal build(io::ScratchDir& scratch) {
  auto path = scratch.create_unique_file("small");
  SmallJournal j;
  {
    StoreOptions o;
    o.backend = Backend::Gather;
    o.sync = io::FlushPolicy{io::FlushSchedule::End, io::Durability::Fdatasync};  // closed cleanly: the checkpoint says every byte is durable
    RecordStore s(path, o);
    for (int i = 0; i < 6; ++i) s.put(small(i));
    s.remove(key_name(4));   // a hole of the largest-but-one record...
    s.put(small(0));         // ...gets split by this replace's new copy
    s.close();
  }
  j.bytes = read_bytes(path);
  for (int i : {0, 1, 2, 3, 5}) j.live[key_name(i)] = small(i);
  ScanResult scan = scan_journal(j.bytes, "small");
  for (const ScannedRecord& r : scan.records)
    if (r.active) {
      Employee e;
      decode(std::span<const std::byte>(j.bytes).subspan(r.offset + kRecordHeaderSize, r.data_length), e);
      j.record_at[r.offset] = e.last;
    }
  return j;
}

// Whatever the store returns must be exactly what was written.
void expect_subset(RecordStore& s, const std::map<std::string, Employee>& live) {
  for (const auto& [key, e] : contents(s)) {
    auto it = live.find(key);
    ASSERT_NE(it, live.end()) << "a record never written: " << key;
    EXPECT_EQ(e, it->second);
  }
}

TEST(StoreCorruption, SmallJournalIsWhatWeThinkItIs) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  SmallJournal j = build(scratch);
  ScanResult scan = scan_journal(j.bytes, "small");
  EXPECT_EQ(j.record_at.size(), 5u);
  EXPECT_GE(scan.records.size(), 7u);  // live + the freed old copy of Key0 + the split remainder
  EXPECT_TRUE(scan.damage.empty());
  EXPECT_EQ(scan.end, j.bytes.size());
}

TEST(StoreCorruption, TruncatedAtEveryOffset) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  SmallJournal j = build(scratch);
  auto path = scratch.create_file("cut");
  for (std::size_t cut = 0; cut <= j.bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    write_bytes(path, std::span<const std::byte>(j.bytes).first(cut));
    if (cut > 0 && cut < kFileHeaderSize) {
      EXPECT_THROW(RecordStore(path, StoreOptions{}), Error);
      continue;
    }
    for (Backend b : kAllBackends) {
      StoreOptions o;
      o.backend = b;
      {
        RecordStore s(path, o);
        const OpenReport& r = s.open_report();
        EXPECT_TRUE(r.salvaged.empty()) << "a truncation is a torn tail, never mid-file damage";
        expect_subset(s, j.live);
        // Every live record that ends before the cut survives.
        for (const auto& [offset, key] : j.record_at) {
          std::uint64_t len = encoded_size(j.live.at(key));
          if (offset + slot_size(len) <= cut) {
            EXPECT_TRUE(s.contains(key)) << key;
          }
        }
        if (cut >= kRecordsStart) {  // the report accounts for every byte dropped
          EXPECT_EQ(r.torn_tail_bytes + r.zero_tail_bytes, cut - s.stats().file_bytes);
        }
        s.close();
      }
      RecordStore again(path, o);  // the tail was truncated: the second open is clean
      EXPECT_EQ(again.open_report().torn_tail_bytes, 0u);
      expect_subset(again, j.live);
      again.close();
      write_bytes(path, std::span<const std::byte>(j.bytes).first(cut));  // next backend: same damage
    }
  }
}

TEST(StoreCorruption, FlippedBytesEverywhere) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  SmallJournal j = build(scratch);
  auto path = scratch.create_file("flip");
  std::uint64_t refused = 0, salvaged = 0;
  for (std::size_t at = 0; at < j.bytes.size(); ++at) {
    for (unsigned mask : {0x01u, 0x80u, 0xFFu}) {
      SCOPED_TRACE("byte " + std::to_string(at) + " ^ " + std::to_string(mask));
      auto bad = j.bytes;
      bad[at] ^= static_cast<std::byte>(mask);
      for (bool salvage : {false, true}) {
        write_bytes(path, bad);
        StoreOptions o;
        o.backend = at % 2 ? Backend::Mmap : Backend::Gather;
        o.salvage = salvage;
        try {
          RecordStore s(path, o);
          if (!s.open_report().salvaged.empty()) ++salvaged;
          expect_subset(s, j.live);
          // At most the damaged record is gone.
          EXPECT_GE(s.size() + 1, j.live.size());
        } catch (const Error& e) {
          // Only the file header, or mid-file damage without salvage, may refuse to open.
          EXPECT_TRUE(at < kFileHeaderSize || !salvage) << e.what();
          if (at >= kFileHeaderSize) {
            EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
            ++refused;
          }
        }
      }
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(salvaged, 0u);
}

TEST(StoreCorruption, MidFileDamageReportedWithOffsetThenSalvaged) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  SmallJournal j = build(scratch);
  auto [offset, key] = *std::next(j.record_at.begin());  // a record with others after it
  auto bad = j.bytes;
  bad[offset + kRecordHeaderSize + 6] ^= std::byte{0x20};
  auto path = scratch.create_file("mid");
  write_bytes(path, bad);
  try {
    RecordStore s(path, StoreOptions{});
    ADD_FAILURE() << "opened a journal with mid-file damage";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(offset)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("salvage"), std::string::npos) << e.what();
  }
  StoreOptions o;
  o.salvage = true;
  {
    RecordStore s(path, o);
    ASSERT_EQ(s.open_report().salvaged.size(), 1u);
    EXPECT_EQ(s.open_report().salvaged[0].offset, offset);
    EXPECT_FALSE(s.contains(key));
    EXPECT_EQ(s.size(), j.live.size() - 1);
    expect_subset(s, j.live);
    s.put(small(9));  // the salvaged space is a free record now, and reusable
    s.close();
  }
  RecordStore clean(path, StoreOptions{});  // repaired: opens without salvage
  EXPECT_TRUE(clean.open_report().salvaged.empty());
  EXPECT_EQ(clean.size(), j.live.size());
}

TEST(StoreCorruption, NewerVersionOfAKeyWinsAfterACrashMidReplace) {
  // A crash between writing a key's new version and freeing the old one
  // leaves both active: the higher sequence number wins, the other is freed.
  io::ScratchDir scratch(testing::fast_scratch_parent());
  auto path = scratch.create_file("dup");
  {
    RecordStore s(path, StoreOptions{});
    s.put(small(1));
    s.put(small(2));
    s.close();
  }
  auto bytes = read_bytes(path);
  Employee newer = small(1);
  newer.comments = "the newer one";
  std::vector<std::byte> data;
  encode(newer, data);
  auto len = static_cast<std::uint32_t>(data.size());
  std::vector<std::byte> rec(slot_size(len));
  std::memcpy(rec.data() + kRecordHeaderSize, data.data(), len);
  encode_record_header(rec.data(), kKindActive, 99, len, data);
  // The newer copy first in the file, so file order alone would pick the wrong one.
  std::vector<std::byte> crafted(bytes.begin(), bytes.begin() + kRecordsStart);
  crafted.insert(crafted.end(), rec.begin(), rec.end());
  crafted.insert(crafted.end(), bytes.begin() + kRecordsStart, bytes.end());
  write_bytes(path, crafted);
  {
    RecordStore s(path, StoreOptions{});
    EXPECT_EQ(s.open_report().stale_versions_freed, 1u);
    EXPECT_EQ(s.get(key_name(1))->comments, "the newer one");
    EXPECT_TRUE(s.remove(key_name(1)));
    s.close();
  }
  RecordStore s(path, StoreOptions{});  // the stale copy does not come back after the remove
  EXPECT_FALSE(s.contains(key_name(1)));
  EXPECT_EQ(s.size(), 1u);
}

// Damage a crash can leave is told from damage to durable data by the
// checkpoint: a record header newer than it, or bytes past its end.
TEST(StoreCorruption, CheckpointTellsCrashDebrisFromDurableDamage) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  SmallJournal j = build(scratch);
  ScanResult scan = scan_journal(j.bytes, "small");
  ASSERT_TRUE(scan.has_checkpoint);
  EXPECT_FALSE(scan.checkpoint.unordered);
  EXPECT_EQ(scan.checkpoint.end, j.bytes.size());
  auto [offset, key] = *std::next(j.record_at.begin());
  // The same torn data under a header older than the checkpoint (durable:
  // refused) and under one newer (a half-done write into a hole: repaired).
  for (bool newer : {false, true}) {
    SCOPED_TRACE(newer ? "newer" : "older");
    auto bad = j.bytes;
    bad[offset + kRecordHeaderSize + 6] ^= std::byte{0x20};
    if (newer) {
      RecordHeader h = decode_record_header(bad.data() + offset);
      std::byte head[kRecordHeaderSize];
      encode_record_header(head, kKindActive, scan.checkpoint.sequence + 1, h.data_length,
                           std::span<const std::byte>(j.bytes).subspan(offset + kRecordHeaderSize, h.data_length));
      std::memcpy(bad.data() + offset, head, kRecordHeaderSize);
    }
    ScanResult r = scan_journal(bad, "bad");
    ASSERT_EQ(r.damage.size(), 1u);
    EXPECT_EQ(r.damage[0].crash_debris, newer);
    auto path = scratch.create_unique_file("debris");
    write_bytes(path, bad);
    if (!newer) {
      EXPECT_THROW(RecordStore(path, StoreOptions{}), Error);
      continue;
    }
    {
      RecordStore s(path, StoreOptions{});
      ASSERT_EQ(s.open_report().repaired.size(), 1u);
      EXPECT_EQ(s.open_report().repaired[0].offset, offset);
      EXPECT_FALSE(s.contains(key));
      expect_subset(s, j.live);
    }
    RecordStore clean(path, StoreOptions{});  // repaired for good
    EXPECT_TRUE(clean.open_report().repaired.empty());
  }
}

// A journal written by a store whose writes no sync orders (policy none):
// after a crash any range may be half-written, so open repairs damage
// anywhere and reports it instead of refusing.
TEST(StoreCorruption, UnorderedJournalsAreRepairedNotRefused) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  SmallJournal j = build(scratch);
  auto path = scratch.create_file("unordered");
  write_bytes(path, j.bytes);
  {
    RecordStore s(path, StoreOptions{});  // policy none: the first change marks the journal unordered
    s.put(small(7));
    s.close();
  }
  auto bytes = read_bytes(path);
  ScanResult scan = scan_journal(bytes, "unordered");
  ASSERT_TRUE(scan.has_checkpoint);
  EXPECT_TRUE(scan.checkpoint.unordered);
  auto [offset, key] = *std::next(j.record_at.begin());
  bytes[offset + kRecordHeaderSize + 6] ^= std::byte{0x20};
  write_bytes(path, bytes);
  RecordStore s(path, StoreOptions{});
  ASSERT_EQ(s.open_report().repaired.size(), 1u);
  EXPECT_TRUE(s.open_report().salvaged.empty());
  EXPECT_FALSE(s.contains(key));
  EXPECT_TRUE(s.contains(key_name(7)));
}

// Version 1 journals (no checkpoint, records from offset 16) still open,
// take writes, and compact() rewrites them as the current version.
TEST(StoreFormat, VersionOneStillOpensAndCompactsToTheCurrentVersion) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  std::vector<std::byte> v1(kFileHeaderSize);
  write_file_header(v1.data(), 1);
  for (int i : {1, 2}) {
    std::vector<std::byte> data;
    encode(small(i), data);
    auto len = static_cast<std::uint32_t>(data.size());
    std::vector<std::byte> rec(slot_size(len));
    std::memcpy(rec.data() + kRecordHeaderSize, data.data(), len);
    encode_record_header(rec.data(), kKindActive, static_cast<std::uint64_t>(i), len, data);
    v1.insert(v1.end(), rec.begin(), rec.end());
  }
  auto path = scratch.create_file("v1");
  write_bytes(path, v1);
  {
    RecordStore s(path, StoreOptions{});
    EXPECT_EQ(s.size(), 2u);
    EXPECT_EQ(*s.get(key_name(2)), small(2));
    s.put(small(3));
    s.close();
  }
  EXPECT_EQ(scan_journal(read_bytes(path), "v1").version, 1u);
  {
    RecordStore s(path, StoreOptions{});
    EXPECT_EQ(s.size(), 3u);
    s.compact();
    s.close();
  }
  ScanResult now = scan_journal(read_bytes(path), "v1");
  EXPECT_EQ(now.version, kJournalVersion);
  EXPECT_TRUE(now.has_checkpoint);
  RecordStore s(path, StoreOptions{});
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(*s.get(key_name(1)), small(1));
}

TEST(StoreBadInput, ClearErrors) {
  io::ScratchDir scratch(testing::fast_scratch_parent());
  auto path = scratch.create_file("j");
  RecordStore s(path, StoreOptions{});
  // A missing key is not an error: absent.
  EXPECT_FALSE(s.get("nobody").has_value());
  EXPECT_FALSE(s.remove("nobody"));
  EXPECT_FALSE(s.contains("nobody"));
  Employee e = small(1);
  e.last.clear();
  try {
    s.put(e);
    ADD_FAILURE() << "an empty key was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("key"), std::string::npos) << err.what();
  }
  e = small(1);
  e.comments.assign(kMaxFieldBytes, 'x');
  EXPECT_NO_THROW(s.put(e));  // exactly 64 KiB is allowed
  EXPECT_EQ(s.get(e.last)->comments.size(), kMaxFieldBytes);
  e.comments.push_back('x');
  try {
    s.put(e);
    ADD_FAILURE() << "a 64 KiB + 1 field was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("comments is 65537 bytes"), std::string::npos) << err.what();
  }
  e = small(2);
  e.last.assign(kMaxFieldBytes + 1, 'k');
  EXPECT_THROW(s.put(e), Error);
  EXPECT_EQ(s.size(), 1u);
  s.close();

  auto not_journal = scratch.create_file("text");
  write_bytes(not_journal, std::as_bytes(std::span(std::string_view("hello, this is not a journal file\n"))));
  try {
    RecordStore bad(not_journal, StoreOptions{});
    ADD_FAILURE() << "opened a text file";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("not a journal: bad magic"), std::string::npos) << err.what();
  }

  auto newer = scratch.create_file("newer");
  std::byte h[kFileHeaderSize];
  std::memcpy(h, kJournalMagic, 8);
  std::uint32_t v2 = kJournalVersion + 1;
  std::memcpy(h + 8, &v2, 4);
  std::uint32_t crc = crc32c({h, 12});
  std::memcpy(h + 12, &crc, 4);
  write_bytes(newer, h);
  try {
    RecordStore bad(newer, StoreOptions{});
    ADD_FAILURE() << "opened a newer format";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("format version " + std::to_string(v2) + " is newer"), std::string::npos)
        << err.what();
  }

  EXPECT_THROW(RecordStore(scratch.path(), StoreOptions{}), Error);  // a directory
  EXPECT_THROW(parse_backend("tape"), UsageError);
  StoreOptions zero;
  zero.sync = io::FlushPolicy{io::FlushSchedule::EveryOps, io::Durability::Fdatasync, 0};
  EXPECT_THROW(RecordStore(scratch.create_file("z"), zero), UsageError);
}

}  // namespace
}  // namespace iolab::store
