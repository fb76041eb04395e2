// A wrong byte is no figure: the checks of the verification pass, of the first
// timed pass and of every pass's last block find it, whichever path read or
// wrote it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/harness/requests.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"
#include "iolab/io/registry.h"
#include "iolab/testing/forwarding_file.h"
#include "io/io_test_support.h"
#include "tiny_runs.h"

namespace iolab::harness {
namespace {

using testing::expect_verified_figures;
using testing::tiny;
using testing::tiny_config;

// A method around pread that changes one byte at `bad_offset`, in the middle
// of the file, where the last-block check of a pass cannot see it: of the
// write there, or of the block read there by read_sequence (the sequential
// timed path; its read_at stays right). The full check of the first timed
// pass must find the first, the verification pass the second.
class Corrupting final : public io::Method {
 public:
  enum class What { Write, SequenceRead };
  Corrupting(What what, std::uint64_t bad_offset) : what_(what), bad_(bad_offset) {}
  std::string_view name() const override { return "corrupting"; }
  std::string_view description() const override { return "pread, with one byte at one offset changed"; }
  io::MethodTraits traits(const io::FileOptions&) const override { return {}; }
  io::Availability probe(const std::filesystem::path&) const override { return {}; }
  std::unique_ptr<io::File> open(const std::filesystem::path& p, io::Access a, const io::FileOptions& o) const override {
    return std::make_unique<File>(io::find_file_method("pread").open(p, a, o), what_, bad_);
  }

 private:
  class File final : public testing::ForwardingFile {
   public:
    File(std::unique_ptr<io::File> f, What what, std::uint64_t bad) : ForwardingFile(std::move(f)), what_(what), bad_(bad) {}
    std::uint64_t read_sequence(std::uint64_t o, std::uint64_t count, std::span<std::byte> d) override {
      std::uint64_t bytes = 0;
      for (std::uint64_t i = 0; i < count; ++i, o += d.size()) {
        std::uint64_t got = inner().read_sequence(o, 1, d);
        if (what_ == What::SequenceRead && o == bad_ && got > 0) d[0] ^= std::byte{0x01};
        bytes += got;
        if (got < d.size()) break;
      }
      return bytes;
    }
    void write_at(std::uint64_t o, std::span<const std::byte> s) override {
      if (what_ != What::Write || o != bad_ || s.empty()) return ForwardingFile::write_at(o, s);
      std::vector<std::byte> changed(s.begin(), s.end());
      changed[0] ^= std::byte{0x01};
      ForwardingFile::write_at(o, changed);
    }

   private:
    What what_;
    std::uint64_t bad_;
  };
  What what_;
  std::uint64_t bad_;
};

// A tiny sequential run of a Corrupting method, with the latency pass off so
// only the verification and timed passes' checks stand between the byte and
// a figure: the error that stopped it, or "" when it gave a figure.
std::string corrupted_run_error(io::ScratchDir& scratch, Corrupting::What what, results::Op op) {
  RunConfig c = tiny_config();
  c.latency = false;
  Runner runner(c, scratch);
  Corrupting corrupting(what, 8 * 4096);
  FileExperiment e = tiny("corrupting", op, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
  e.method_object = &corrupting;
  try {
    runner.run(e);
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

TEST(Runner, AWrongByteInTheMiddleOfAWrittenFileIsNoFigure) {
  io::ScratchDir scratch("/tmp");
  std::string err = corrupted_run_error(scratch, Corrupting::What::Write, results::Op::Write);
  EXPECT_NE(err.find("at offset 32768 does not match"), std::string::npos)
      << (err.empty() ? "a file with a wrong byte gave a figure" : err);
  EXPECT_TRUE(scratch.created().empty()) << "the bad file is removed";
}

TEST(Runner, AWrongByteFromTheSequentialReadPathIsNoFigure) {
  io::ScratchDir scratch("/tmp");
  std::string err = corrupted_run_error(scratch, Corrupting::What::SequenceRead, results::Op::Read);
  EXPECT_NE(err.find("at offset 32768 does not match"), std::string::npos)
      << (err.empty() ? "a wrong byte from read_sequence gave a figure" : err);
}

// The file itself changed during the timed passes (a device or filesystem
// error, another writer): the timed passes check each pass's last block
// only, so the verification pass that runs again after them, untimed, must
// find it in the middle of the file; and a record whose data was checked
// again says so.
TEST(Runner, AFileCorruptedDuringTheTimedPassesIsNoFigure) {
  io::ScratchDir scratch("/tmp");
  RunConfig c = tiny_config();
  bool corrupt = false;
  c.on_pass_end = [&](PassKind kind) {
    if (!corrupt || kind != PassKind::Timed) return;
    for (const auto& f : scratch.created()) testing::overwrite_byte(f, 8 * 4096 + 5);
    corrupt = false;  // once
  };
  Runner runner(c, scratch);
  FileExperiment e = tiny("pread", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
  results::Result clean = runner.run(e);
  EXPECT_TRUE(clean.verified);
  EXPECT_EQ(clean.extra.value("verified_after_timing", false), true) << "checked again after timing";
  corrupt = true;
  std::string err;
  try {
    runner.run(e);
  } catch (const Error& x) {
    err = x.what();
  }
  EXPECT_NE(err.find("data read by pread at offset 32768 does not match"), std::string::npos)
      << (err.empty() ? "a file corrupted during the timed passes gave a figure" : err);
}

// A queued method (one request at a time, through File::stream) whose
// requests after its first stream call, the verification pass, come back
// with the last block's first byte changed: only a timed pass's check of
// the last completed request can see it.
class QueuedLastBlockWrong final : public io::Method {
 public:
  explicit QueuedLastBlockWrong(std::uint64_t last_offset) : last_(last_offset) {}
  std::string_view name() const override { return "queued-last-block-wrong"; }
  std::string_view description() const override { return "pread as a queue, the last block wrong after the first pass"; }
  io::MethodTraits traits(const io::FileOptions&) const override {
    io::MethodTraits t;
    t.queued = true;
    return t;
  }
  io::Availability probe(const std::filesystem::path&) const override { return {}; }
  std::unique_ptr<io::File> open(const std::filesystem::path& p, io::Access a, const io::FileOptions& o) const override {
    return std::make_unique<File>(io::find_file_method("pread").open(p, a, o), last_, streams_);
  }

 private:
  class Spoiler final : public io::RequestSource {
   public:
    Spoiler(io::RequestSource& inner, std::uint64_t last) : inner_(inner), last_(last) {}
    bool next(io::IoRequest& r) override { return inner_.next(r); }
    void done(io::IoRequest& r) override {
      if (r.offset == last_ && r.result > 0) r.data[0] ^= std::byte{0x01};
      inner_.done(r);
    }

   private:
    io::RequestSource& inner_;
    std::uint64_t last_;
  };
  class File final : public testing::ForwardingFile {
   public:
    File(std::unique_ptr<io::File> f, std::uint64_t last, int& streams)
        : ForwardingFile(std::move(f)), last_(last), streams_(streams) {}
    void stream(io::RequestSource& source, bool time_requests) override {
      if (streams_++ == 0) return io::File::stream(source, time_requests);
      Spoiler spoiled(source, last_);
      io::File::stream(spoiled, time_requests);
    }

   private:
    std::uint64_t last_;
    int& streams_;
  };
  std::uint64_t last_;
  mutable int streams_ = 0;
};

TEST(Runner, AQueuedMethodsLastBlockIsCheckedAfterEveryTimedPass) {
  io::ScratchDir scratch("/tmp");
  Runner runner(tiny_config(), scratch);
  FileExperiment e = tiny("queued", results::Op::Read, results::AccessPattern::Seq, io::BufferKind::Heap, results::CacheState::Warm);
  e.file_size = 16 * 4096;
  QueuedLastBlockWrong method(15 * 4096);
  e.method_object = &method;
  std::string err;
  try {
    runner.run(e);
  } catch (const Error& x) {
    err = x.what();
  }
  EXPECT_NE(err.find("the last block read in a timed pass at offset 61440 does not match"), std::string::npos)
      << (err.empty() ? "a wrong last block from a queued method gave a figure" : err);
}

// A written file checked in full finds a wrong byte anywhere; the tail check
// reads the last block only (and the runner checks the length every pass).
TEST(WriteSourceCheck, FullFindsAnyByteTailTheLastBlock) {
  io::ScratchDir scratch("/tmp");
  const std::uint64_t block = 4096, length = 10 * block;
  WriteSource source(5, length, block, io::BufferKind::Heap);
  auto path = scratch.create_unique_file("check");
  {
    auto f = io::find_file_method("pread").open(path, io::Access::ReadWrite);
    for (std::uint64_t off = 0; off < length; off += block) f->write_at(off, source.at(off, block));
    f->close();
  }
  EXPECT_FALSE(source.mismatch(path, 0, length, DataCheck::Full));
  EXPECT_FALSE(source.mismatch(path, 0, length, DataCheck::Tail));
  testing::overwrite_byte(path, 3 * block + 17);
  EXPECT_EQ(source.mismatch(path, 0, length, DataCheck::Full), 3 * block + 17);
  EXPECT_FALSE(source.mismatch(path, 0, length, DataCheck::Tail)) << "the tail check reads the last block only";
  testing::overwrite_byte(path, length - 1);
  EXPECT_EQ(source.mismatch(path, 0, length, DataCheck::Tail), length - 1);
  EXPECT_EQ(check_start(DataCheck::Tail, 100, 4096), 0u);  // a file shorter than the tail is read whole
}

}  // namespace
}  // namespace iolab::harness
