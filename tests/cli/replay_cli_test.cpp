// `iolab replay` and `iolab recommend --trace` as a user runs them: a small
// trace replayed through methods (one that cannot replay it skipped with the
// reason), the decision's JSON names scripts read, bad traces and options
// refused in one line, nothing left in the scratch directory.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cli/run_program.h"
#include "iolab/trace/trace.h"

// A named namespace: the CLI tests are a unity build.
namespace replay_cli_test {

using iolab::testing::json_of;
using iolab::testing::joined;
using iolab::testing::ProgramRun;
using iolab::testing::run_iolab;
using iolab::testing::start_iolab;
using iolab::testing::wait_until;
using iolab::testing::Workspace;
namespace fs = std::filesystem;
namespace trace = iolab::trace;

// A trace of one new file, its operations from `ops`, which calls
// put(kind, thread, offset, length) for each, 1 µs apart.
using Put = std::function<void(trace::OpKind, std::uint32_t, std::uint64_t, std::uint64_t)>;
fs::path write_trace(const fs::path& p, const std::string& command, const std::function<void(const Put&)>& ops) {
  std::ofstream out(p);
  trace::Header h;
  h.source = "iolab";
  h.command = command;
  h.files = {{0, 0, trace::kCreate}};
  trace::Writer wr(out, h);
  std::uint64_t t = 0;
  ops([&](trace::OpKind kind, std::uint32_t thread, std::uint64_t offset, std::uint64_t length) {
    trace::Op op;
    op.time_ns = t += 1000;
    op.thread = thread;
    op.kind = kind;
    op.offset = offset;
    op.length = length;
    wr.write(op);
  });
  return p;
}

// A program's log: 64 appends of 1000 bytes (not 4096-aligned: O_DIRECT
// cannot replay them), an fdatasync every 16, reads of the first 8 KiB.
fs::path log_trace(const Workspace& w) {
  return write_trace(w / "log.iotrace", "a test's log", [](const Put& put) {
    put(trace::OpKind::Open, 0, 0, 0);
    for (std::uint64_t i = 0; i < 64; ++i) {
      put(trace::OpKind::Write, 0, i * 1000, 1000);
      if (i % 16 == 15) put(trace::OpKind::Fdatasync, 0, 0, 0);
    }
    put(trace::OpKind::Read, 0, 0, 8192);
    put(trace::OpKind::Close, 0, 0, 0);
  });
}

TEST(ReplayCli, ReplaysThroughEachMethodAndSkipsOneThatCannotWithTheReason) {
  Workspace w;
  const fs::path t = log_trace(w), out = w / "r.json";
  ProgramRun o = run_iolab({"replay", t.string(), "--method", "pread,stdio,direct", "--rounds", "2", "--min-time", "0",
                            "--dir", w.scratch().string(), "--out", out.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("replaying log.iotrace: 71 operations (open 1, close 1, read 1, write 64, fdatasync 4)"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.out.find("pread"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("fdatasync"), std::string::npos) << "p50/p99 per kind\n" << o.out;
  const nlohmann::json j = json_of(out);
  ASSERT_EQ(j["results"].size(), 3u);
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["suite"], "replay");
    if (r["method"] == "direct") {
      EXPECT_NE(r["skipped"].get<std::string>().find("op 2 (write at 0, 1000 bytes) is not"), std::string::npos) << r;
    } else {
      EXPECT_TRUE(r["verified"].get<bool>()) << r;
      EXPECT_EQ(r["ops"], 71);
    }
  }
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

TEST(ReplayCli, RecommendForATraceGivesPickWithinStopAndMethods) {
  Workspace w;
  const fs::path t = log_trace(w);
  ProgramRun o = run_iolab({"recommend", "--trace", t.string(), "--method", "pread,syscall,stdio,direct", "--json",
                            "--min-time", "0.06", "--max-rounds", "8", "--dir", w.scratch().string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["trace"], "log.iotrace");
  ASSERT_TRUE(j["pick"].is_string()) << j.dump(1);
  ASSERT_FALSE(j["within"].empty());
  EXPECT_EQ(j["within"][0], j["pick"]) << "the pick first";
  EXPECT_TRUE(j["stop"] == "selected" || j["stop"] == "budget") << j["stop"];
  ASSERT_EQ(j["methods"].size(), 4u);
  for (const auto& m : j["methods"]) {
    if (m["method"] == "direct") {
      EXPECT_TRUE(m.contains("skipped")) << m;
      continue;
    }
    EXPECT_TRUE(m["verified"].get<bool>()) << m;
    EXPECT_GT(m["ops_per_s"].get<double>(), 0) << m;
    EXPECT_EQ(m["queue_depth"], 1) << "synchronous methods: one request at a time\n" << m;
  }
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

// Two threads writing blocks of their own, then reading them back, an
// fdatasync between: io_uring replays at depth 2, pread at 1, both say so.
TEST(ReplayCli, QueuedMethodsReplayAtTheDepthTheTracesThreadsReached) {
  Workspace w;
  const fs::path out = w / "r.json";
  const fs::path t = write_trace(w / "two.iotrace", "two threads", [](const Put& put) {
    for (std::uint32_t b = 0; b < 16; ++b) put(trace::OpKind::Write, b % 2, b * 4096, 4096);
    put(trace::OpKind::Fdatasync, 0, 0, 0);
    for (std::uint32_t b = 0; b < 16; ++b) put(trace::OpKind::Read, b % 2, b * 4096, 4096);
  });
  ProgramRun o = run_iolab({"replay", t.string(), "--method", "pread,io_uring", "--rounds", "1", "--min-time", "0",
                            "--dir", w.scratch().string(), "--out", out.string()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("pread qd1"), std::string::npos) << o.out;
  const nlohmann::json j = json_of(out);
  ASSERT_EQ(j["results"].size(), 2u);
  for (const auto& r : j["results"]) {
    if (r.contains("skipped") && !r["skipped"].is_null()) continue;  // io_uring not available here
    EXPECT_TRUE(r["verified"].get<bool>()) << r;
    EXPECT_EQ(r["extra"]["trace_depth"], 2) << r;
    EXPECT_EQ(r["queue_depth"], r["method"] == "io_uring" ? 2 : 1) << r;
    if (r["method"] == "io_uring") {
      EXPECT_EQ(r["extra"]["depth_reached"], 2) << r;
      EXPECT_NE(o.out.find("io_uring qd2"), std::string::npos) << o.out;
    }
  }
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

TEST(ReplayCli, BadTracesAndOptionsAreOneLineEach) {
  Workspace w;
  const fs::path bad = w / "bad.iotrace";
  std::ofstream(bad) << "iolab-trace 1\nsource iolab\ncommand x\nfiles 1\nfile 0 0 -\nops -\n0 0 7 write 0 10 -\n";
  const std::string dir = w.scratch().string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"replay", (w / "none.iotrace").string(), "--dir", dir}, "no such file"},
      {{"replay", w.path().string(), "--dir", dir}, "is not a regular file"},
      {{"replay", bad.string(), "--dir", dir}, "file 7"},
      {{"replay", bad.string(), "--method", "pread,bogus"}, "bogus"},
      {{"replay", bad.string(), "--method", "pread,pread"}, "named twice"},
      {{"replay", bad.string(), "--rounds", "0"}, "--rounds"},
      {{"recommend", "--trace", bad.string(), "--op", "read"}, "--op, --bs, --flush and --cache do not apply"},
      {{"recommend", "--method", "pread"}, "applies with --trace"},
      {{"recommend", "--trace", bad.string(), "--dir", dir}, "file 7"},
  };
  for (const auto& [args, says] : cases) {
    ProgramRun o = run_iolab(args);
    EXPECT_EQ(o.exit_code, 2) << joined(args) << "\n" << o.err;
    EXPECT_EQ(o.err_lines(), 1u) << joined(args) << "\n" << o.err;
    EXPECT_NE(o.err.find(says), std::string::npos) << joined(args) << "\n" << o.err;
  }
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
}

// Ctrl-C mid-replay: one line saying so, the process ends by the signal,
// its scratch files and --out's lock gone, no results written.
TEST(ReplayCli, CtrlCMidReplayLeavesNothingBehind) {
  Workspace w;
  const fs::path t = log_trace(w), out = w / "r.json";
  auto run = start_iolab({"replay", t.string(), "--method", "pread", "--rounds", "10000", "--min-time", "1", "--dir",
                          w.scratch().string(), "--out", out.string()});
  ASSERT_TRUE(wait_until([&] { return !w.leftovers().empty(); })) << "never started replaying";
  run->send(SIGINT);
  ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGINT) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_NE(o.err.find("iolab: replay interrupted by SIGINT; scratch files removed, nothing written"), std::string::npos)
      << o.err;
  EXPECT_TRUE(w.leftovers().empty()) << "left: " << joined(w.leftovers());
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(w / ".r.json.lock"));
}

}  // namespace replay_cli_test
