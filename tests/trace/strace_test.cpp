// strace's output turned into traces, on fixed text: tests/trace/samples/
// holds real strace 6.1 output (paths renamed), and the cases below are
// lines as strace prints them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/trace/import.h"
#include "iolab/trace/trace.h"
#include "internal/trace/strace_line.h"

namespace iolab::trace {
namespace {

const std::filesystem::path kSamples = std::filesystem::path(__FILE__).parent_path() / "samples";

struct Converted {
  Header header;
  std::vector<Op> ops;
  ImportSummary summary;
  std::string text;
};

Converted convert(const std::string& strace_text, StraceSettings settings = {}) {
  std::istringstream in(strace_text);
  std::ostringstream out;
  Converted c;
  c.summary = strace_to_trace(in, "cmd", settings, out);
  c.text = out.str();
  std::istringstream back(c.text);
  Reader r(back, "converted");  // what the converter writes, the reader takes
  c.header = r.header();
  Op op;
  while (r.next(op)) c.ops.push_back(op);
  return c;
}

std::string read_sample(const std::string& name) {
  std::ifstream in(kSamples / name);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << (kSamples / name);
  return s.str();
}

// Ops as "thread file kind offset length flags", time left out.
std::vector<std::string> shapes(const std::vector<Op>& ops) {
  std::vector<std::string> s;
  for (const Op& o : ops)
    s.push_back(std::to_string(o.thread) + " " + std::to_string(o.file) + " " + std::string(to_string(o.kind)) + " " +
                std::to_string(o.offset) + " " + std::to_string(o.length) + " " + flags_to_string(o.flags));
  return s;
}

TEST(StraceLine, SplitsPidTimeAndTheCallsParts) {
  const auto l = strace::split_line("16387 1796573038.594636 write(1</home/u/w/f>, \"\"..., 3) = 3");
  EXPECT_EQ(l.kind, strace::LineKind::Call);
  EXPECT_EQ(l.pid, 16387u);
  EXPECT_EQ(l.time_ns, 1796573038594636000ull);
  const auto c = strace::parse_call(l.text);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->name, "write");
  ASSERT_EQ(c->args.size(), 3u);
  EXPECT_EQ(c->args[2], "3");
  EXPECT_TRUE(c->ok);
  EXPECT_EQ(c->result, 3);
  // A path with '>' (escaped by strace), ',' and parentheses stays one argument.
  const auto w = strace::parse_call("read(3</t/we\\76ird, (name)>, \"\"..., 100) = 11");
  ASSERT_TRUE(w);
  ASSERT_EQ(w->args.size(), 3u);
  EXPECT_EQ(strace::parse_fd(w->args[0])->path, "/t/we>ird, (name)");
  const auto o = strace::parse_call("openat(AT_FDCWD</t>, \"f\", O_RDONLY|O_CLOEXEC) = 3</t/f\\x41>");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->result_path, "/t/fA");
  const auto failed = strace::parse_call("openat(AT_FDCWD</t>, \"g\", O_RDONLY) = -1 ENOENT (No such file or directory)");
  ASSERT_TRUE(failed);
  EXPECT_FALSE(failed->ok);
  EXPECT_EQ(strace::split_line("16 1.5 read(3</f>,  <unfinished ...>").kind, strace::LineKind::Unfinished);
  EXPECT_EQ(strace::split_line("16 1.5 <... read resumed>\"\"..., 4) = 4").kind, strace::LineKind::Resumed);
  EXPECT_EQ(strace::split_line("16 1.5 +++ exited with 0 +++").kind, strace::LineKind::Exited);
  EXPECT_EQ(strace::split_line("16 1.5 --- SIGCHLD {si_signo=SIGCHLD} ---").kind, strace::LineKind::Other);
  EXPECT_EQ(strace::split_line("strace: Process 12 attached").kind, strace::LineKind::Other);
  EXPECT_FALSE(strace::parse_call("read(3</f>, \"\"..., 4"));
}

// `sh -c 'printf abc > f; cat f; printf de >> f; dd if=f of=g bs=2 count=2'`
// as strace -f recorded it: three processes, descriptors moved with dup2,
// an O_APPEND write, the loader's files and /dev left out.
TEST(StraceTrace, AShellsRedirectionsCatAndDdBecomeTheirOperations) {
  const Converted c = convert(read_sample("shell.strace"));
  ASSERT_EQ(c.header.files.size(), 2u);  // f and g: the loader's, /dev/null and the tty are not in it
  EXPECT_EQ(c.header.source, "strace");
  EXPECT_EQ(c.header.files[0].initial_size, 0u);  // O_TRUNC at its first open
  EXPECT_EQ(c.header.files[0].open_flags, kCreate | kTruncate);
  EXPECT_EQ(c.header.files[1].open_flags, kCreate | kTruncate);
  const std::vector<std::string> expected{
      "0 0 open 0 0 create|trunc",  // printf abc > f
      "0 0 write 0 3 -",
      "0 0 close 0 0 -",            // dup2 put /dev/null back on stdout: f's last descriptor
      "1 0 open 0 0 -",             // cat f
      "1 0 read 0 3 short",
      "1 0 read 3 0 short",
      "1 0 close 0 0 -",
      "0 0 open 0 0 append|create",  // printf de >> f
      "0 0 write 3 2 append",        // at the end: after abc
      "0 0 close 0 0 -",
      "2 0 open 0 0 -",  // dd if=f of=g bs=2 count=2
      "2 1 open 0 0 create|trunc",
      "2 0 read 0 2 -",
      "2 1 write 0 2 -",
      "2 0 read 2 2 -",
      "2 1 write 2 2 -",
      "2 0 close 0 0 -",
      "2 1 close 0 0 -",
  };
  EXPECT_EQ(shapes(c.ops), expected);
  EXPECT_EQ(c.ops.front().time_ns, 0u);
  EXPECT_EQ(c.ops[1].time_ns, 3115000u);  // 1796573038.594636 - .591521
  EXPECT_EQ(c.summary.threads, 3u);
  EXPECT_EQ(c.summary.ops, expected.size());
  // With the system's files: the loader's reads of libc are there too.
  StraceSettings all;
  all.all_files = true;
  const Converted everything = convert(read_sample("shell.strace"), all);
  EXPECT_GT(everything.header.files.size(), 2u);
  EXPECT_GT(everything.ops.size(), expected.size());
}

// Two threads of one process (clone3 with CLONE_FILES) writing and reading
// one file positionally, their calls interrupted by each other's.
TEST(StraceTrace, ThreadsUnfinishedCallsAndTheirResumptionsAreOneOperationEach) {
  const Converted c = convert(read_sample("threads.strace"));
  ASSERT_EQ(c.header.files.size(), 1u);
  EXPECT_EQ(c.header.files[0].initial_size, 0u);
  std::size_t writes = 0, reads = 0;
  std::set<std::uint32_t> threads;
  for (const Op& o : c.ops) {
    threads.insert(o.thread);
    if (o.kind == OpKind::Write && (o.flags & kPositional)) {
      ++writes;
      EXPECT_EQ(o.length, 100u);
    }
    if (o.kind == OpKind::Read) {
      ++reads;
      EXPECT_EQ(o.flags, kPositional);
      EXPECT_TRUE(o.offset == 0 || o.offset == 4096) << o.offset;
    }
  }
  EXPECT_EQ(writes, 12u);
  EXPECT_EQ(reads, 10u);
  EXPECT_EQ(threads.size(), 3u);
  for (std::size_t i = 1; i < c.ops.size(); ++i) EXPECT_LE(c.ops[i - 1].time_ns, c.ops[i].time_ns);
  // The thread's descriptor is its process's: one open, one close (at the end of the output).
  EXPECT_EQ(c.ops.front().kind, OpKind::Open);
  EXPECT_EQ(c.ops.back().kind, OpKind::Close);
  EXPECT_EQ(std::count_if(c.ops.begin(), c.ops.end(), [](const Op& o) { return o.kind == OpKind::Close; }), 1);
}

// Every call of trace.h, as python's os module made them.
TEST(StraceTrace, EachKindOfCallBecomesItsOperation) {
  const Converted c = convert(read_sample("calls.strace"));
  const std::vector<std::string> expected{
      "0 0 open 0 0 -",  // python reading a module: the size fstat showed, asked one byte more
      "0 0 read 0 4004 short",
      "0 0 read 4004 0 short",
      "0 0 close 0 0 -",
      "0 1 open 0 0 create|trunc",
      "0 1 write 0 8192 -",
      "0 1 fsync 0 0 -",
      "0 1 fdatasync 0 0 -",
      "0 1 truncate 4096 0 -",
      "0 1 map 0 4096 mapwrite",
      "0 1 msync 0 4096 -",
      "0 1 unmap 0 4096 -",
      "0 1 read 10 12 vec",           // lseek to 10, then readv
      "0 1 write 22 4 vec",           // writev after it
      "0 1 read 100 3 pos|vec",       // preadv2 at 100
      "0 1 write 5 2 pos|vec",        // pwritev2 at 5
      "0 1 read 26 3 vec",            // preadv2 at -1: the current position
      "0 1 allocate 0 10000 -",
      "0 1 sync_file_range 0 4096 -",
      "0 1 close 0 0 -",
      "0 2 open 0 0 append|create",
      "0 2 write 5 5 append",         // after the 5 bytes fstat showed
      "0 2 close 0 0 -",
      "0 3 open 0 0 -",
      "0 3 read 0 11 short",
      "0 3 read 11 0 short",
      "0 3 close 0 0 -",
  };
  EXPECT_EQ(shapes(c.ops), expected);
  ASSERT_EQ(c.header.files.size(), 4u);
  EXPECT_EQ(c.header.files[0].initial_size, 4004u);
  EXPECT_EQ(c.header.files[2].initial_size, 5u);   // fstat before its first write
  EXPECT_EQ(c.header.files[3].initial_size, 11u);  // the short read's end: never changed, fstat not called
}

// cat's copy_file_range and sendfile, as strace 6.1 printed them: a read
// of one file and a write of the other, positions followed.
TEST(StraceTrace, CopiesBetweenFilesAreAReadAndAWrite) {
  const std::string text =
      "7 1.000000 openat(AT_FDCWD</d>, \"f\", O_RDONLY) = 3</d/f>\n"
      "7 1.000001 openat(AT_FDCWD</d>, \"o\", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4</d/o>\n"
      "7 1.000002 copy_file_range(3</d/f>, NULL, 4</d/o>, NULL, 9223372035781033984, 0) = 5\n"
      "7 1.000003 copy_file_range(3</d/f>, NULL, 4</d/o>, NULL, 9223372035781033984, 0) = 0\n"
      "7 1.000004 sendfile(4</d/o>, 3</d/f>, [1] => [3], 2) = 2\n"
      "7 1.000005 sendfile(4</d/o>, 3</d/f>, NULL, 3) = 0\n";
  const std::vector<std::string> expected{
      "0 0 open 0 0 -",
      "0 1 open 0 0 create|trunc",
      "0 0 read 0 5 short",
      "0 1 write 0 5 -",
      "0 0 read 5 0 short",
      "0 1 write 5 0 -",
      "0 0 read 1 2 pos",  // sendfile with an offset: f's position stays at 5
      "0 1 write 5 2 -",
      "0 0 read 5 0 short",
      "0 1 write 7 0 -",
      "0 0 close 0 0 -",  // the end of the output closes what is open
      "0 1 close 0 0 -",
  };
  const Converted c = convert(text);
  EXPECT_EQ(shapes(c.ops), expected);
  EXPECT_EQ(c.header.files.at(0).initial_size, 5u);  // the short copy: the end of f
}

TEST(StraceTrace, InitialSizesFollowTheDocumentedRule) {
  // Never changed, no size shown: the size now (size_now) if it is known.
  const std::string read_only =
      "1 1.000000 openat(AT_FDCWD</d>, \"a\", O_RDONLY) = 3</d/a>\n"
      "1 1.000001 pread64(3</d/a>, \"\"..., 10, 100) = 10\n";
  StraceSettings now;
  now.size_now = [](const std::string& path) -> std::optional<std::uint64_t> {
    if (path == "/d/a") return 5000;
    return std::nullopt;
  };
  EXPECT_EQ(convert(read_only, now).header.files.at(0).initial_size, 5000u);
  EXPECT_EQ(convert(read_only).header.files.at(0).initial_size, 110u);  // unknown: the furthest byte read
  // Changed, nothing shown before: the furthest byte read before the change.
  const std::string changed =
      "1 1.000000 openat(AT_FDCWD</d>, \"a\", O_RDWR|O_CREAT, 0644) = 3</d/a>\n"
      "1 1.000001 pread64(3</d/a>, \"\"..., 10, 100) = 10\n"
      "1 1.000002 pwrite64(3</d/a>, \"\"..., 10, 9000) = 10\n"
      "1 1.000003 newfstatat(3</d/a>, \"\", {st_mode=S_IFREG|0644, st_size=9010, ...}, AT_EMPTY_PATH) = 0\n";
  EXPECT_EQ(convert(changed, now).header.files.at(0).initial_size, 110u);
  // A descriptor fstat says is a directory or a FIFO is no file of the trace.
  const std::string dir =
      "1 1.000000 openat(AT_FDCWD</d>, \"x\", O_RDONLY) = 3</d/x>\n"
      "1 1.000001 fstat(3</d/x>, {st_mode=S_IFDIR|0755, st_size=4096, ...}) = 0\n"
      "1 1.000002 close(3</d/x>) = 0\n";
  EXPECT_TRUE(convert(dir).header.files.empty());
  // Nor is a path that is a directory when the recording ends (opened
  // without O_DIRECTORY, never fstat-ed: SQLite syncing its directory).
  const std::string synced_dir =
      "1 1.000000 openat(AT_FDCWD</d>, \"/d\", O_RDONLY|O_CLOEXEC) = 3</d>\n"
      "1 1.000001 fdatasync(3</d>) = 0\n"
      "1 1.000002 close(3</d>) = 0\n";
  EXPECT_EQ(convert(synced_dir).header.files.size(), 1u);
  StraceSettings dirs;
  dirs.directory_now = [](const std::string& path) { return path == "/d"; };
  EXPECT_TRUE(convert(synced_dir, dirs).header.files.empty());
}

TEST(StraceTrace, FailedCallsNoiseAndOtherDescriptorsAreIgnoredAndCounted) {
  const std::string text =
      "strace: Process 5 attached\n"
      "5 1.000000 openat(AT_FDCWD</d>, \"a\", O_RDONLY) = -1 ENOENT (No such file or directory)\n"
      "5 1.000001 read(0<pipe:[123]>, \"\"..., 10) = 10\n"
      "5 1.000002 write(1</dev/pts/0>, \"\"..., 10) = 10\n"
      "5 1.000003 read(4<socket:[9]>, \"\"..., 10) = 10\n"
      "5 1.000004 read(3</proc/self/stat>, \"\"..., 10) = 10\n"
      "5 1.000005 read(3</d/b>, \"\"..., 10) = -1 EBADF (Bad file descriptor)\n"
      "5 1.000006 --- SIGCHLD {si_signo=SIGCHLD} ---\n"
      "5 1.000007 <... read resumed>\"\"..., 10) = 10\n"
      "garbage (((( = \n"
      "5 1.000008 read(3</d/c>, \"\"..., 10) = ?\n"
      "5 1.000009 +++ exited with 0 +++\n";
  const Converted c = convert(text);
  EXPECT_TRUE(c.header.files.empty());
  EXPECT_TRUE(c.ops.empty());
  EXPECT_EQ(c.summary.lines, 12u);
  EXPECT_GE(c.summary.ignored, 6u);
}

}  // namespace
}  // namespace iolab::trace
