// read_trace (replay.h): a trace file read whole for a replay, each bad file
// one UsageError naming it, a trace longer than the replay holds refused
// before it takes the memory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "iolab/base/error.h"
#include "iolab/replay/replay.h"
#include "iolab/testing/test_dir.h"

namespace iolab::replay {
namespace {

namespace fs = std::filesystem;

// A trace of `writes` 4 KiB writes to one file, as iolab trace writes it.
fs::path written_trace(const testing::TestDir& dir, std::size_t writes) {
  const fs::path p = dir.path() / "t.iotrace";
  std::ofstream out(p);
  trace::Header h;
  h.source = "iolab";
  h.files = {{0, 0, trace::kCreate}};
  trace::Writer w(out, h);
  for (std::size_t i = 0; i < writes; ++i) {
    trace::Op op;
    op.time_ns = i * 1000;
    op.kind = trace::OpKind::Write;
    op.offset = i * 4096;
    op.length = 4096;
    w.write(op);
  }
  return p;
}

std::string refusal(const fs::path& p, std::size_t max_ops = kMaxOps) {
  try {
    read_trace(p, max_ops);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ReadTrace, ReadsEveryOperationAndNamesTheTraceByItsFile) {
  testing::TestDir dir;
  const Trace t = read_trace(written_trace(dir, 10));
  EXPECT_EQ(t.name, "t.iotrace");
  ASSERT_EQ(t.ops.size(), 10u);
  EXPECT_EQ(t.ops[9].offset, 9u * 4096);
  EXPECT_EQ(t.header.files.size(), 1u);
}

TEST(ReadTrace, MoreOperationsThanAReplayHoldsAreRefused) {
  testing::TestDir dir;
  const fs::path p = written_trace(dir, 11);
  EXPECT_EQ(read_trace(p, 11).ops.size(), 11u) << "at the limit it is read";
  const std::string why = refusal(p, 10);
  EXPECT_NE(why.find("trace " + p.string()), std::string::npos) << why;
  EXPECT_NE(why.find("holds more than 10 operations"), std::string::npos) << why;
}

TEST(ReadTrace, AMissingADirectoryAndAMalformedTraceAreEachOneError) {
  testing::TestDir dir;
  EXPECT_NE(refusal(dir.path() / "none.iotrace").find("no such file"), std::string::npos);
  EXPECT_NE(refusal(dir.path()).find("is not a regular file"), std::string::npos);
  const fs::path bad = dir.path() / "bad.iotrace";
  std::ofstream(bad) << "iolab-trace 1\nsource iolab\ncommand x\nfiles 1\nfile 0 0 -\nops -\n0 0 0 frobnicate 0 0 -\n";
  const std::string why = refusal(bad);
  EXPECT_NE(why.find("line 7"), std::string::npos) << why;
  EXPECT_NE(why.find("frobnicate"), std::string::npos) << why;
}

}  // namespace
}  // namespace iolab::replay
