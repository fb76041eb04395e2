// `iolab trace` as a user runs it: a tiny program recorded through strace
// (skipped where strace is not installed: scripts/install-deps.sh installs
// it), its failure, a fio iolog imported, strace missing, bad usage.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_program.h"
#include "iolab/trace/trace.h"

// A named namespace: the CLI tests are a unity build.
namespace trace_cli_test {

using iolab::testing::ProgramRun;
using iolab::testing::run_iolab;
using iolab::testing::StartOptions;
using iolab::testing::Workspace;
namespace trace = iolab::trace;

bool strace_installed() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((dir + "/strace").c_str(), X_OK) == 0) return true;
  return false;
}

struct Read {
  trace::Header header;
  std::vector<trace::Op> ops;
};
Read read_trace_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  trace::Reader r(in, file.string());
  Read t;
  t.header = r.header();
  trace::Op op;
  while (r.next(op)) t.ops.push_back(op);
  return t;
}

// The ops of one file as "kind offset length flags".
std::vector<std::string> ops_of(const Read& t, std::uint32_t file) {
  std::vector<std::string> s;
  for (const auto& o : t.ops)
    if (o.file == file)
      s.push_back(std::string(trace::to_string(o.kind)) + " " + std::to_string(o.offset) + " " + std::to_string(o.length) +
                  " " + trace::flags_to_string(o.flags));
  return s;
}

TEST(TraceCli, RecordsATinyProgramsReadsAndWrites) {
  if (!strace_installed()) GTEST_SKIP() << "strace is not installed (scripts/install-deps.sh installs it)";
  Workspace w;
  StartOptions in_workspace;
  in_workspace.cwd = w.path();
  const auto out = w / "t.iotrace";
  const ProgramRun r = run_iolab({"trace", "--dir", w.scratch().string(), "--out", out.string(), "--", "sh", "-c",
                                  "printf abc > f; dd if=f of=g bs=2 count=2 2>/dev/null"},
                                 in_workspace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("trace: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(out.string()), std::string::npos) << r.out;
  EXPECT_TRUE(w.leftovers().empty());  // strace's output went with the scratch directory
  const Read t = read_trace_file(out);
  EXPECT_EQ(t.header.source, "strace");
  EXPECT_NE(t.header.command.find("printf abc > f"), std::string::npos);
  ASSERT_EQ(t.header.files.size(), 2u);  // f and g: the loader's files, /dev/null are not in it
  EXPECT_EQ(ops_of(t, 0), (std::vector<std::string>{"open 0 0 create|trunc", "write 0 3 -", "close 0 0 -",
                                                   "open 0 0 -", "read 0 2 -", "read 2 1 short", "close 0 0 -"}));  // abc: 1 byte left
  EXPECT_EQ(ops_of(t, 1), (std::vector<std::string>{"open 0 0 create|trunc", "write 0 2 -", "write 2 1 -", "close 0 0 -"}));
  std::ifstream text(out);
  const std::string whole((std::istreambuf_iterator<char>(text)), std::istreambuf_iterator<char>());
  EXPECT_EQ(whole.find(w.path().string()), std::string::npos) << "a path is in the trace";
}

TEST(TraceCli, AFailingProgramIsReportedAndWhatItDidIsStillWritten) {
  if (!strace_installed()) GTEST_SKIP() << "strace is not installed";
  Workspace w;
  StartOptions in_workspace;
  in_workspace.cwd = w.path();
  const auto out = w / "t.iotrace";
  const ProgramRun r =
      run_iolab({"trace", "--dir", w.scratch().string(), "--out", out.string(), "--", "sh", "-c", "printf abc > f; exit 3"},
                in_workspace);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("iolab trace: the traced program exited with status 3; the trace holds what it did until then"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_trace_file(out).header.files.size(), 1u);
  // Nothing recorded: said, and no trace written.
  const auto none = w / "none.iotrace";
  const ProgramRun n = run_iolab({"trace", "--dir", w.scratch().string(), "--out", none.string(), "--", "false"});
  EXPECT_EQ(n.exit_code, 1);
  EXPECT_NE(n.err.find("nothing recorded"), std::string::npos) << n.err;
  EXPECT_FALSE(std::filesystem::exists(none));
  EXPECT_TRUE(w.leftovers().empty());
}

TEST(TraceCli, WithoutStraceSaysHowToInstallIt) {
  Workspace w;
  StartOptions no_strace;
  no_strace.environment = {"PATH=" + w.path().string()};  // a directory with no strace
  const ProgramRun r = run_iolab({"trace", "--", "true"}, no_strace);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "iolab trace: strace is not installed (Debian: apt-get install strace)\n");
}

TEST(TraceCli, ImportsAFioIolog) {
  Workspace w;
  const auto log = w / "job.iolog", out = w / "job.iotrace";
  std::ofstream(log) << "fio version 3 iolog\n0 /dev/sdz add\n10 /dev/sdz open\n20 /dev/sdz read 4096 4096\n30 /dev/sdz close\n";
  const ProgramRun r = run_iolab({"trace", "--from-fio-iolog", log.string(), "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Read t = read_trace_file(out);
  EXPECT_EQ(t.header.source, "fio-iolog-v3");
  EXPECT_EQ(ops_of(t, 0), (std::vector<std::string>{"open 0 0 -", "read 4096 4096 pos", "close 0 0 -"}));
  // Bad input: one line naming the log, the line and the cause; exit 2, nothing written.
  std::ofstream(log) << "fio version 3 iolog\n0 /dev/sdz add\n10 /dev/sdz scribble 0 1\n";
  const auto bad = w / "bad.iotrace";
  const ProgramRun b = run_iolab({"trace", "--from-fio-iolog", log.string(), "--out", bad.string()});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("line 3: unknown action 'scribble'"), std::string::npos) << b.err;
  EXPECT_EQ(b.err_lines(), 1u);
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST(TraceCli, BadUsageIsOneLineAndExit2) {
  Workspace w;
  const auto mine = w / "mine.iotrace";
  std::ofstream(mine) << "not iolab's\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"trace"}, "nothing to record"},
      {{"trace", "--pid", "1", "--", "true"}, "give one of"},
      {{"trace", "--pid", "x1"}, "--pid"},
      {{"trace", "--pid", "0"}, "--pid"},
      {{"trace", "--out", (w / "t.json").string(), "--", "true"}, "ending in .iotrace"},
      {{"trace", "--out", mine.string(), "--", "true"}, "exists and is not one iolab wrote"},
      {{"trace", "--from-fio-iolog", (w / "missing.iolog").string()}, "no such file"},
      {{"trace", "--from-fio-iolog", w.path().string()}, "is not a regular file"},
      {{"trace", "--all-files", "--from-fio-iolog", "x"}, "--all-files"},
  };
  for (const auto& [args, expected] : cases) {
    const ProgramRun r = run_iolab(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err_lines(), 1u) << r.err;
  }
  std::ifstream kept(mine);
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "not iolab's");
}

}  // namespace trace_cli_test

namespace trace_cli_test {

using iolab::testing::start_iolab;
using iolab::testing::wait_until;

std::uint64_t size_of(const std::filesystem::path& p) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : n;
}

// Stopped while the program runs: the program and strace are killed, the
// scratch directory (strace's output) goes, no trace is written.
TEST(TraceCli, ASignalEndsTheProgramAndStraceAndLeavesNothing) {
  if (!strace_installed()) GTEST_SKIP() << "strace is not installed";
  Workspace w;
  const auto started = w / "started", out = w / "t.iotrace";
  auto run = start_iolab({"trace", "--dir", w.scratch().string(), "--out", out.string(), "--", "sh", "-c",
                          "echo $$ > '" + started.string() + "'; exec sleep 1000"});
  ASSERT_TRUE(wait_until([&] { return size_of(started) > 0; })) << "the program never started";
  run->send(SIGTERM);
  const ProgramRun o = run->finish();
  EXPECT_EQ(o.signal, SIGTERM) << "exit " << o.exit_code << ": " << o.err;
  EXPECT_NE(o.err.find("iolab: trace interrupted by SIGTERM; the program and strace stopped, scratch files removed, "
                       "no trace written"),
            std::string::npos)
      << o.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(w.leftovers().empty());
  std::ifstream pid_file(started);
  pid_t program = 0;
  pid_file >> program;
  ASSERT_GT(program, 0);
  // Gone (or a zombie its new parent has yet to reap: not running).
  EXPECT_TRUE(wait_until([&] {
    std::ifstream stat("/proc/" + std::to_string(program) + "/stat");
    std::string pid, name, state;
    return !(stat >> pid >> name >> state) || state == "Z";
  }, std::chrono::seconds(10)));
}

// --pid: strace attaches to a running process; Ctrl-C (here SIGINT to
// strace, as the terminal sends it to the foreground group) stops the
// recording, the process goes on, and the trace is written.
TEST(TraceCli, AttachesToAProcessUntilCtrlC) {
  if (!strace_installed()) GTEST_SKIP() << "strace is not installed";
  Workspace w;
  const auto log = w / "log", out = w / "p.iotrace";
  const std::string loop = "while :; do printf x >> '" + log.string() + "'; sleep 0.01; done";
  pid_t target = ::fork();
  if (target == 0) {
    ::execl("/bin/sh", "sh", "-c", loop.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(target, 0);
  auto run = start_iolab({"trace", "--pid", std::to_string(target), "--dir", w.scratch().string(), "--out", out.string()});
  // strace's output grows once it is attached and the loop writes.
  std::filesystem::path strace_output;
  ASSERT_TRUE(wait_until([&] {
    for (const auto& name : w.leftovers())
      if (name.ends_with("strace.txt")) strace_output = w.scratch() / name;
    return !strace_output.empty() && size_of(strace_output) > 2000;
  })) << "strace never recorded";
  std::ifstream children("/proc/" + std::to_string(run->pid()) + "/task/" + std::to_string(run->pid()) + "/children");
  pid_t strace = 0;
  children >> strace;
  ASSERT_GT(strace, 0);
  ::kill(strace, SIGINT);
  const ProgramRun o = run->finish();
  EXPECT_EQ(::kill(target, 0), 0) << "the traced process was ended";
  ::kill(target, SIGKILL);
  ::waitpid(target, nullptr, 0);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const Read t = read_trace_file(out);
  EXPECT_EQ(t.header.command, "--pid " + std::to_string(target));
  ASSERT_EQ(t.header.files.size(), 1u);
  std::size_t appends = 0;
  for (const auto& op : t.ops) appends += op.kind == trace::OpKind::Write && (op.flags & trace::kAppend) != 0;
  EXPECT_GT(appends, 0u);
  EXPECT_TRUE(w.leftovers().empty());
}

}  // namespace trace_cli_test
