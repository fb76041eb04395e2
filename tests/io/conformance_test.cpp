// The conformance suite: every file method (and the option settings that
// change its code path) x every buffer kind must round-trip a pseudo-random
// pattern at awkward sizes and offsets, report short counts at end of file,
// and leave a file of exactly the right size that reads back after reopening.
//
// O_DIRECT variants with the default Reject policy must refuse a request
// whose buffer address, offset or length is misaligned, with EINVAL and a
// message naming the culprit, and must change nothing on disk.
//
// Every File is given the test's buffers through register_buffers (a no-op
// but for io_uring with fixed buffers); a variant whose options this kernel
// refuses is skipped with the reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>

#include "io_test_support.h"
#include "iolab/io/pattern.h"

namespace iolab::io {
namespace {

using testing::conformance_variants;
using testing::read_bytes;
using testing::rejects_unaligned;
using testing::Variant;

constexpr std::uint64_t kSeed = 0x10ab;
// 1 MiB is there so that O_DIRECT with Reject also round-trips a large aligned request.
constexpr std::size_t kSizes[] = {1, 511, 4096, std::size_t{1} << 20, (std::size_t{1} << 20) + 7};
constexpr std::uint64_t kOffsets[] = {0, 8192, 4093};  // aligned, aligned, unaligned

class Conformance : public ::testing::TestWithParam<std::tuple<Variant, BufferKind>> {
 protected:
  const Variant& variant() const { return std::get<0>(GetParam()); }
  BufferKind kind() const { return std::get<1>(GetParam()); }
  const Method& method() const { return find_file_method(variant().method); }
  void SetUp() override {
    if (std::string why = testing::unsupported_options(variant(), scratch_.path()); !why.empty()) GTEST_SKIP() << why;
  }
  // Opens the file and registers the buffers the test will use with it.
  std::unique_ptr<File> open(const std::filesystem::path& p, Access a, std::vector<std::span<std::byte>> buffers) const {
    auto f = method().open(p, a, variant().options);
    f->register_buffers(buffers);
    return f;
  }
  // Reject variants get aligned buffers where a test is not about alignment.
  BufferKind kind_for_aligned_io() const { return rejects_unaligned(variant()) ? BufferKind::Aligned : kind(); }

  ScratchDir scratch_;
};

// Why a request breaks the file's O_DIRECT alignment ("" when it does not):
// the same order of checks the method promises (address, offset, length).
std::string misaligned_part(std::size_t alignment, const void* buffer, std::uint64_t offset, std::size_t length) {
  if (reinterpret_cast<std::uintptr_t>(buffer) % alignment != 0) return "buffer address";
  if (offset % alignment != 0) return "offset";
  if (length % alignment != 0) return "length";
  return "";
}

TEST_P(Conformance, RoundTripAtSizesAndOffsets) {
  for (std::size_t size : kSizes) {
    for (std::uint64_t offset : kOffsets) {
      SCOPED_TRACE("size " + std::to_string(size) + " at offset " + std::to_string(offset));
      // Recorded in --gtest_output=xml: the conformance matrix, case by case.
      const std::string case_key = "case_" + std::to_string(size) + "_at_" + std::to_string(offset);
      auto path = scratch_.create_unique_file("rt");
      Buffer src_buffer(size + 1, kind()), dst(size, kind());
      std::span<std::byte> src = src_buffer.span().first(size);
      if (kind() == BufferKind::Heap && rejects_unaligned(variant())) {
        // A heap block is not promised to be aligned, but malloc sometimes
        // returns one that is: one byte in (an odd address), every run takes
        // the same path, the refusal naming the buffer address.
        src = src_buffer.span().subspan(1, size);
      }
      fill_pattern(kSeed, offset, src);

      auto f = open(path, Access::ReadWrite, {src_buffer.span(), dst.span()});
      if (rejects_unaligned(variant())) {
        std::string bad = misaligned_part(f->alignment(), src.data(), offset, size);
        if (!bad.empty()) {
          auto e = testing::expect_error([&] { f->write_at(offset, src); });
          f->close();
          ASSERT_TRUE(e);
          EXPECT_EQ(e->error_number(), EINVAL) << e->what();
          EXPECT_NE(std::string(e->what()).find(bad), std::string::npos) << e->what();
          EXPECT_NE(std::string(e->what()).find(std::to_string(f->alignment())), std::string::npos) << e->what();
          EXPECT_EQ(std::filesystem::file_size(path), 0u) << "a refused write changed the file";
          RecordProperty(case_key, "rejected: " + bad);
          scratch_.remove_file(path);
          continue;
        }
      }
      f->write_at(offset, src);
      EXPECT_EQ(f->size(), offset + size);
      // Read back through the same File: a write followed by a read.
      ASSERT_EQ(f->read_at(offset, dst.span()), size);
      EXPECT_TRUE(matches_pattern(kSeed, offset, dst.span())) << "read back on the same File differs";
      f->close();
      f->close();  // harmless twice

      // The referee: the file on disk has exactly the bytes written, zeros before them.
      auto disk = read_bytes(path);
      ASSERT_EQ(disk.size(), offset + size) << "file size on disk after close";
      for (std::uint64_t i = 0; i < offset; ++i) ASSERT_EQ(disk[i], std::byte{0}) << "byte " << i << " of the hole";
      EXPECT_TRUE(matches_pattern(kSeed, offset, std::span(disk).subspan(offset)));

      // Reopen for reading and verify through the method.
      auto r = open(path, Access::Read, {dst.span()});
      std::memset(dst.data(), 0, dst.size());
      ASSERT_EQ(r->read_at(offset, dst.span()), size);
      EXPECT_TRUE(matches_pattern(kSeed, offset, dst.span())) << "read after reopen differs";
      EXPECT_EQ(r->size(), offset + size);
      r->close();
      RecordProperty(case_key, "round-trip");
      scratch_.remove_file(path);
    }
  }
}

// Short counts at end of file, on the writing File and after reopening.
TEST_P(Conformance, ReadPastEndOfFileIsShort) {
  auto path = scratch_.create_file("eof");
  constexpr std::size_t kFile = 8192;
  Buffer src(kFile, kind_for_aligned_io()), dst(8192, kind_for_aligned_io());
  fill_pattern(kSeed, 0, src.span());
  auto check = [&](File& f, const char* which) {
    SCOPED_TRACE(which);
    EXPECT_EQ(f.read_at(4096, dst.span()), 4096u) << "read straddling the end";
    EXPECT_TRUE(matches_pattern(kSeed, 4096, dst.span().first(4096)));
    EXPECT_EQ(f.read_at(kFile, dst.span().first(4096)), 0u) << "read at the end";
    EXPECT_EQ(f.read_at(kFile + 4096, dst.span().first(4096)), 0u) << "read past the end";
    if (!rejects_unaligned(variant())) {
      EXPECT_EQ(f.read_at(kFile - 2, dst.span().first(100)), 2u);
      EXPECT_TRUE(matches_pattern(kSeed, kFile - 2, dst.span().first(2)));
      EXPECT_EQ(f.read_at(kFile + 10, dst.span().first(10)), 0u);
    }
  };
  auto f = open(path, Access::ReadWrite, {src.span(), dst.span()});
  f->write_at(0, src.span());
  check(*f, "same File after writing");
  f->close();
  auto r = open(path, Access::Read, {dst.span()});
  check(*r, "reopened for reading");
  r->close();
}

// A sequential read pass in one call: every block arrives (the buffer holds
// the last), the count is the bytes read, and a pass that runs past the end
// stops at the first short block.
TEST_P(Conformance, ReadSequenceReadsEveryBlockAndStopsShortAtTheEnd) {
  auto path = scratch_.create_file("sequence");
  constexpr std::size_t kFile = 64 * 1024, kBlock = 4096;
  Buffer src(kFile, kind_for_aligned_io()), dst(kBlock, kind_for_aligned_io());
  fill_pattern(kSeed, 0, src.span());
  auto w = open(path, Access::ReadWrite, {src.span()});
  w->write_at(0, src.span());
  w->close();
  auto r = open(path, Access::Read, {dst.span()});
  EXPECT_EQ(r->read_sequence(0, kFile / kBlock, dst.span()), kFile);
  EXPECT_TRUE(matches_pattern(kSeed, kFile - kBlock, dst.span())) << "the last block";
  EXPECT_EQ(r->read_sequence(kBlock, 2, dst.span()), 2 * kBlock);
  EXPECT_TRUE(matches_pattern(kSeed, 2 * kBlock, dst.span()));
  EXPECT_EQ(r->read_sequence(kFile - 2 * kBlock, 5, dst.span()), 2 * kBlock) << "past the end";
  EXPECT_EQ(r->read_sequence(0, 0, dst.span()), 0u);
  EXPECT_EQ(r->counters().bytes_read, kFile + 4 * kBlock);
  // Every block of a pass lands where it should: a pass of k blocks leaves
  // block k - 1 in the buffer.
  for (std::size_t k = 1; k <= kFile / kBlock; ++k) {
    ASSERT_EQ(r->read_sequence(0, k, dst.span()), k * kBlock);
    EXPECT_TRUE(matches_pattern(kSeed, (k - 1) * kBlock, dst.span())) << "block " << k - 1;
  }
  r->close();
}

// A file whose end is not on an alignment boundary: aligned reads across it
// must come back short, not fail (O_DIRECT returns a short read there, and a
// retry at the unaligned remainder would be refused by the kernel).
TEST_P(Conformance, AlignedReadAcrossUnalignedEnd) {
  auto path = scratch_.create_file("odd-end");
  constexpr std::size_t kFile = 4096 + 7;
  {
    Buffer src(kFile, BufferKind::Aligned);
    fill_pattern(kSeed, 0, src.span());
    auto w = find_file_method("pread").open(path, Access::ReadWrite);
    w->write_at(0, src.span());
    w->close();
  }
  Buffer dst(8192, kind_for_aligned_io());
  auto r = open(path, Access::Read, {dst.span()});
  ASSERT_EQ(r->read_at(0, dst.span()), kFile);
  EXPECT_TRUE(matches_pattern(kSeed, 0, dst.span().first(kFile)));
  ASSERT_EQ(r->read_at(4096, dst.span().first(4096)), 7u);
  EXPECT_TRUE(matches_pattern(kSeed, 4096, dst.span().first(7)));
  r->close();
}

// Writes and reads interleaved on one File: stream methods must reposition
// between a write and a read, and buffered data must be visible to the read.
TEST_P(Conformance, InterleavedWritesAndReads) {
  auto path = scratch_.create_file("mixed");
  Buffer a(4096, kind_for_aligned_io()), b(4096, kind_for_aligned_io()), dst(4096, kind_for_aligned_io());
  fill_pattern(kSeed, 0, a.span());
  fill_pattern(kSeed, 12288, b.span());
  auto f = open(path, Access::ReadWrite, {a.span(), b.span(), dst.span()});
  f->write_at(0, a.span());
  ASSERT_EQ(f->read_at(0, dst.span()), 4096u);
  EXPECT_TRUE(matches_pattern(kSeed, 0, dst.span()));
  f->write_at(12288, b.span());  // leaves a hole at [4096, 12288)
  ASSERT_EQ(f->read_at(4096, dst.span()), 4096u);
  EXPECT_EQ(dst.span()[0], std::byte{0}) << "the hole reads as zeros";
  EXPECT_EQ(dst.span()[4095], std::byte{0});
  ASSERT_EQ(f->read_at(12288, dst.span()), 4096u);
  EXPECT_TRUE(matches_pattern(kSeed, 12288, dst.span()));
  // Overwrite the first block, then read it again: the new data, not a stale buffer.
  fill_pattern(kSeed + 1, 0, a.span());
  f->write_at(0, a.span());
  ASSERT_EQ(f->read_at(0, dst.span()), 4096u);
  EXPECT_TRUE(matches_pattern(kSeed + 1, 0, dst.span()));
  EXPECT_EQ(f->size(), 16384u);
  f->close();
  auto disk = read_bytes(path);
  ASSERT_EQ(disk.size(), 16384u);
  EXPECT_TRUE(matches_pattern(kSeed + 1, 0, std::span(disk).first(4096)));
  EXPECT_TRUE(matches_pattern(kSeed, 12288, std::span(disk).subspan(12288)));
}

// The batch interface: every method must run a batch, io_uring keeps several
// requests in flight (queue depth below the batch size forces several rounds).
TEST_P(Conformance, SubmitBatch) {
  auto path = scratch_.create_file("batch");
  constexpr int kRequests = 9;
  std::vector<Buffer> bufs, back;
  std::vector<std::span<std::byte>> all;
  for (int i = 0; i < 2 * kRequests + 1; ++i) {
    (i < kRequests ? bufs : back).emplace_back(4096, kind_for_aligned_io());
    all.push_back((i < kRequests ? bufs : back).back().span());
  }
  std::vector<IoRequest> writes;
  for (int i = 0; i < kRequests; ++i) {
    std::uint64_t off = static_cast<std::uint64_t>((kRequests - 1 - i) * 4096);  // out of order
    fill_pattern(kSeed, off, bufs[i].span());
    writes.push_back({IoRequest::Kind::Write, off, bufs[i].span(), 0});
  }
  auto f = open(path, Access::ReadWrite, all);
  f->submit(writes);
  for (const auto& w : writes) EXPECT_EQ(w.result, 4096u);
  std::vector<IoRequest> reads;
  for (int i = 0; i <= kRequests; ++i)  // one more: past the end, comes back 0
    reads.push_back({IoRequest::Kind::Read, static_cast<std::uint64_t>(i) * 4096, back[i].span(), 0});
  f->submit(reads);
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(reads[i].result, 4096u) << "request " << i;
    EXPECT_TRUE(matches_pattern(kSeed, reads[i].offset, back[i].span())) << "request " << i;
  }
  EXPECT_EQ(reads[kRequests].result, 0u) << "read past the end";
  f->close();
  EXPECT_EQ(std::filesystem::file_size(path), kRequests * 4096u);
}

// Requests pulled from a source: written and read back in any completion
// order, each handed to done() once with its full count (short only past
// the end), timestamps filled when asked: submission, then completion.
class BlockStream final : public RequestSource {
 public:
  BlockStream(std::vector<Buffer>& buffers, IoRequest::Kind kind, std::size_t count)
      : buffers_(buffers), kind_(kind), count_(count), done_(count, 0) {}
  bool next(IoRequest& r) override {
    if (issued_ == count_) return false;
    // Odd then even blocks: an order the file does not have.
    std::size_t block = issued_ < (count_ + 1) / 2 ? 2 * issued_ : 2 * (issued_ - (count_ + 1) / 2) + 1;
    r.kind = kind_;
    r.offset = block * 4096;
    r.data = buffers_[block % buffers_.size()].span();
    r.tag = block;
    ++issued_;
    return true;
  }
  void done(IoRequest& r) override {
    ++done_[r.tag];
    results.push_back(r);
  }
  int times_done(std::size_t block) const { return done_[block]; }
  std::vector<IoRequest> results;

 private:
  std::vector<Buffer>& buffers_;
  IoRequest::Kind kind_;
  std::size_t count_, issued_ = 0;
  std::vector<int> done_;
};

TEST_P(Conformance, StreamInAnyOrderWithTimes) {
  auto path = scratch_.create_file("stream");
  constexpr std::size_t kBlocks = 11;  // + 1 read past the end
  std::vector<Buffer> bufs;
  std::vector<std::span<std::byte>> spans;
  for (std::size_t i = 0; i <= kBlocks; ++i) {
    bufs.emplace_back(4096, kind_for_aligned_io());
    spans.push_back(bufs.back().span());
    fill_pattern(kSeed, i * 4096, bufs.back().span());
  }
  auto f = open(path, Access::ReadWrite, spans);
  BlockStream writes(bufs, IoRequest::Kind::Write, kBlocks);
  f->stream(writes);
  ASSERT_EQ(writes.results.size(), kBlocks);
  for (std::size_t i = 0; i < kBlocks; ++i) EXPECT_EQ(writes.times_done(i), 1) << i;
  for (const auto& r : writes.results) {
    EXPECT_EQ(r.result, 4096u) << r.tag;
    EXPECT_EQ(r.submitted_ns + r.completed_ns, 0u) << "times only when asked";
  }
  for (auto& b : bufs) std::memset(b.data(), 0, b.size());
  BlockStream reads(bufs, IoRequest::Kind::Read, kBlocks + 1);
  f->stream(reads, /*time_requests=*/true);
  ASSERT_EQ(reads.results.size(), kBlocks + 1);
  for (const auto& r : reads.results) {
    SCOPED_TRACE("block " + std::to_string(r.tag));
    EXPECT_EQ(reads.times_done(r.tag), 1);
    EXPECT_EQ(r.result, r.tag < kBlocks ? 4096u : 0u);
    if (r.tag < kBlocks) {
      EXPECT_TRUE(matches_pattern(kSeed, r.offset, bufs[r.tag].span()));
    }
    EXPECT_GT(r.submitted_ns, 0u);
    EXPECT_GE(r.completed_ns, r.submitted_ns);
  }
  EXPECT_GE(f->counters().bytes_read, kBlocks * 4096u) << "bounce reads count the aligned range";
  f->close();
  EXPECT_EQ(read_bytes(path).size(), kBlocks * 4096u);
}

// Counters move: a benchmark reports calls and bytes from them.
TEST_P(Conformance, CountersCountBytes) {
  auto path = scratch_.create_file("counters");
  Buffer buf(8192, kind_for_aligned_io());
  fill_pattern(kSeed, 0, buf.span());
  auto f = open(path, Access::ReadWrite, {buf.span()});
  f->write_at(0, buf.span());
  f->sync(Durability::Fsync);
  EXPECT_EQ(f->counters().bytes_written, 8192u);
  ASSERT_EQ(f->read_at(0, buf.span()), 8192u);
  EXPECT_EQ(f->counters().bytes_read, 8192u);
  EXPECT_GE(f->counters().calls, 1u) << "fsync at least is a system call";
  f->close();
}

std::string param_name(const ::testing::TestParamInfo<Conformance::ParamType>& info) {
  return std::get<0>(info.param).label + "_" + std::string(to_string(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(AllMethods, Conformance,
                         ::testing::Combine(::testing::ValuesIn(conformance_variants()),
                                            ::testing::Values(BufferKind::Heap, BufferKind::Aligned)),
                         param_name);

}  // namespace
}  // namespace iolab::io
