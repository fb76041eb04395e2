#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/trace/trace.h"

namespace iolab::trace {
namespace {

constexpr const char* kHeader =
    "iolab-trace 1\n"
    "source strace\n"
    "command sh -c 'printf abc > f'\n"
    "files 2\n"
    "file 0 0 create|trunc\n"
    "file 7 4096 -\n";

std::vector<Op> read_trace(const std::string& text, Header* header = nullptr) {
  std::istringstream in(text);
  Reader r(in, "t.iotrace");
  if (header != nullptr) *header = r.header();
  std::vector<Op> ops;
  Op op;
  while (r.next(op)) ops.push_back(op);
  return ops;
}

// The message of the UsageError reading `text` throws, "" when none.
std::string trace_refusal(const std::string& text) {
  try {
    read_trace(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(TraceFormat, NamesGoBothWays) {
  for (OpKind k : {OpKind::Open, OpKind::Close, OpKind::Read, OpKind::Write, OpKind::Fsync, OpKind::Fdatasync,
                   OpKind::SyncFileRange, OpKind::Msync, OpKind::Truncate, OpKind::Allocate, OpKind::Map, OpKind::Unmap})
    EXPECT_EQ(parse_op_kind(to_string(k)), k);
  EXPECT_FALSE(parse_op_kind("lseek"));
  EXPECT_EQ(flags_to_string(0), "-");
  EXPECT_EQ(flags_to_string(kPositional | kVectored), "pos|vec");
  EXPECT_EQ(flags_to_string(kCreate | kTruncate | kAppend | kDirect | kMapWrite | kShort),
            "append|create|trunc|direct|mapwrite|short");
}

TEST(TraceFormat, WhatIsWrittenReadsBackTheSame) {
  Header h;
  h.source = "strace";
  h.command = "sqlite3 t.db 'insert\ninto'";  // a newline in the command stays on its line
  h.files = {FileInfo{0, 0, kCreate | kTruncate}, FileInfo{3, 8192, 0}};
  h.op_count = 4;
  const std::vector<Op> ops{{0, 0, 0, OpKind::Open, 0, 0, kCreate | kTruncate},
                            {1500, 0, 0, OpKind::Write, 0, 4096, kAppend},
                            {1500, 1, 3, OpKind::Read, 4096, 100, kPositional | kShort},
                            {9000, 1, 3, OpKind::Map, 0, 8192, kMapWrite}};
  std::ostringstream out;
  Writer w(out, h);
  for (const Op& op : ops) w.write(op);
  EXPECT_EQ(w.written(), 4u);
  Header back;
  EXPECT_EQ(read_trace(out.str(), &back), ops);
  EXPECT_EQ(back.source, "strace");
  EXPECT_EQ(back.command, "sqlite3 t.db 'insert\\ninto'");
  ASSERT_EQ(back.files.size(), 2u);
  EXPECT_EQ(back.files[1].id, 3u);
  EXPECT_EQ(back.files[1].initial_size, 8192u);
  EXPECT_EQ(back.files[0].open_flags, kCreate | kTruncate);
  EXPECT_EQ(back.op_count, 4u);
  EXPECT_NE(out.str().find("1500 0 0 write 0 4096 append\n"), std::string::npos);
}

TEST(TraceFormat, AnUnknownCountAndBlankLinesAreRead) {
  const auto ops = read_trace(std::string(kHeader) + "ops -\n0 0 7 read 0 10 -\n\n5 0 0 close 0 0 -");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].kind, OpKind::Close);
}

TEST(TraceFormat, EachMalformedTraceIsRefusedNamingItsLineAndCause) {
  const std::string h = kHeader, ops = h + "ops -\n";
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases{
      {"", "t.iotrace line 1: the header ends early: expected a 'iolab-trace' line"},
      {"iolab-trace 1\nsource strace\n", "line 3: the header ends early: expected a 'command' line"},
      {h, "line 7: the header ends early: expected a 'ops' line"},
      {"iolab-trace 1\nsource strace\ncommand x\nfiles 2\nfile 0 0 -\nops 0\n", "line 6: expected a 'file' line"},
      {"iolab-trace 2\n", "line 1: format version 2 is not one this iolab reads"},
      {"iolog 1\n", "line 1: expected a 'iolab-trace' line in the header"},
      {ops + "0 0 0 lseek 0 0 -\n", "line 8: unknown operation 'lseek'"},
      {ops + "0 0 0 read 0 1 pos|fast\n", "line 8: unknown flag 'fast'"},
      {ops + "0 0 0 read 0 1 pos|\n", "line 8: unknown flag ''"},
      {ops + "0 0 1 read 0 1 -\n", "line 8: file 1 was never declared"},
      {ops + "0 0 0 read 4611686018427387903 1 -\n", "line 8: offset 4611686018427387903 + length 1 is not below 2^62"},
      {ops + "0 0 0 read 18446744073709551615 18446744073709551615 -\n", "is not below 2^62"},
      {ops + "0 0 0 read 0 18446744073709551616 -\n", "line 8: length '18446744073709551616' is not a whole number below 2^64"},
      {ops + "5 0 0 read 0 1 -\n4 0 0 read 0 1 -\n", "line 9: time 4 goes back before the previous operation's 5"},
      {ops + "0 0 0 read 0 1 -\n" + std::string(5000, 'x') + "\n", "line 9: line longer than 4096 bytes"},
      {ops + "0 0 0 read -1 1 -\n", "line 8: offset '-1' is not a whole number"},
      {ops + "0 0 0 read 0x10 1 -\n", "line 8: offset '0x10' is not a whole number"},
      {ops + "zero 0 0 read 0 1 -\n", "line 8: time 'zero' is not a whole number"},
      {ops + "0 0 0 read 0 1\n", "line 8: expected 7 fields"},
      {ops + "0 4294967296 0 read 0 1 -\n", "line 8: thread 4294967296 is above 2^32 - 1"},
      {"iolab-trace 1\nsource s\ncommand c\nfiles 2\nfile 3 0 -\nfile 3 0 -\nops -\n", "line 6: file 3 is declared twice"},
      {"iolab-trace 1\nsource s\ncommand c\nfiles 65537\n", "line 4: 65537 files: a trace names at most 65536"},
      {"iolab-trace 1\nsource s\ncommand c\nfiles 1\nfile 0 0 sparse\n", "line 5: unknown flag 'sparse'"},
      {"iolab-trace 1\nsource s\ncommand c\nfiles 1\nfile 0 4611686018427387904 -\n", "line 5: initial size 4611686018427387904 is not below 2^62"},
      {h + "ops 2\n0 0 0 read 0 1 -\n", "line 8: the trace ends after 1 operations; its header says 2 (truncated?)"},
      {h + "ops 1\n0 0 0 read 0 1 -\n0 0 0 read 0 1 -\n", "line 9: more operations than the header's 1"},
      {"iolab-trace 1\nsource s\ncommand c\nfiles 1\nfile 0 0 -\nops -\n0 0 0 read 0 1 -\x1b[31m\n", "unknown flag '-\\x1b[31m'"},
  };
  for (const Case& c : cases) {
    const std::string message = trace_refusal(c.text);
    EXPECT_NE(message.find(c.expected), std::string::npos) << "input:\n" << c.text << "\nmessage: " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find("t.iotrace"), std::string::npos) << message;
  }
}

// A long trace is read one line at a time: the reader holds no operation
// but the current one (memory is the test's: a stream that makes lines as
// they are read, 200,000 operations without ever holding them).
TEST(TraceFormat, ReadsAStreamOfManyOperationsOneAtATime) {
  class Lines : public std::streambuf {
   public:
    explicit Lines(std::uint64_t n) : n_(n) { header_ = std::string(kHeader) + "ops " + std::to_string(n) + "\n"; }

   protected:
    int_type underflow() override {
      if (!header_.empty()) {
        line_ = std::move(header_);
        header_.clear();
      } else if (i_ < n_) {
        line_ = std::to_string(i_) + " 0 7 read " + std::to_string(i_ * 4096) + " 4096 pos\n";
        ++i_;
      } else {
        return traits_type::eof();
      }
      setg(line_.data(), line_.data(), line_.data() + line_.size());
      return traits_type::to_int_type(line_[0]);
    }

   private:
    std::uint64_t n_, i_ = 0;
    std::string header_, line_;
  } lines(200000);
  std::istream in(&lines);
  Reader r(in, "stream");
  Op op;
  std::uint64_t count = 0, bytes = 0;
  while (r.next(op)) {
    ++count;
    bytes += op.length;
  }
  EXPECT_EQ(count, 200000u);
  EXPECT_EQ(bytes, 200000ull * 4096);
  EXPECT_EQ(r.line(), 7u + 200000u);
}

}  // namespace
}  // namespace iolab::trace
