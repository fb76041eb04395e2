// What libaio does (its depth limit, one request per submit, a forked
// child), how both queued methods fail mid-stream, and the registry's list.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "io_test_support.h"
#include "iolab/io/call_injection.h"
#include "iolab/io/pattern.h"
#include "iolab/testing/files.h"
#include "iolab/testing/test_dir.h"

namespace iolab::io {
namespace {

using testing::expect_error;
using testing::read_bytes;

// ---- both queued methods ------------------------------------------------------

// A request failing mid-stream (a write on a read-only File: io_uring fails
// the completion, libaio the io_submit call): the stream stops issuing,
// waits for what is in flight and throws; the File works afterwards.
TEST(QueuedMethods, ErrorMidStreamDrainsAndThrows) {
  for (const char* method : {"io_uring", "libaio"}) {
    for (bool direct : {false, true}) {
      if (std::string(method) == "libaio" && !direct) continue;
      SCOPED_TRACE(std::string(method) + (direct ? " O_DIRECT" : " buffered"));
      ScratchDir scratch;
      auto p = testing::write_pattern_file(scratch, "ref", 64 * 4096, 90);
      FileOptions o;
      o.direct = direct;
      o.queue_depth = 4;
      auto f = find_file_method(method).open(p, Access::Read, o);
      Buffer buf(8 * 4096, BufferKind::Aligned);
      ReadBlocks src(buf, 64, 10);
      auto e = expect_error([&] { f->stream(src); });
      ASSERT_TRUE(e);
      EXPECT_EQ(e->error_number(), EBADF) << e->what();
      EXPECT_LT(src.issued(), 64u) << "kept issuing after the failure";
      EXPECT_LT(src.completed, 11u);
      EXPECT_TRUE(src.all_whole);
      Buffer after(4096, BufferKind::Aligned);
      ASSERT_EQ(f->read_at(8192, after.span()), 4096u);
      EXPECT_TRUE(matches_pattern(90, 8192, after.span()));
      f->close();
      EXPECT_EQ(digest_file(p), pattern_digest(90, 0, 64 * 4096)) << "the refused write changed the file";
    }
  }
}

// ---- libaio -----------------------------------------------------------------

// ramfs takes neither O_TMPFILE nor O_DIRECT: the probe of each O_DIRECT
// method says O_DIRECT is refused, every time, and leaves no file there
// (issue 44 finding 12: an open with O_DIRECT created a probe file before it
// failed, and the next probe's O_EXCL reported "File exists").
TEST(DirectProbe, ARamfsRefusingODirectSaysSoEachTimeKeepsNothingAndCountsNoSpace) {
  testing::TestDir parent{"/tmp"};
  testing::TmpfsMount ramfs(parent.path(), "", "ramfs");
  if (!ramfs.mounted()) GTEST_SKIP() << ramfs.why_not();
  for (const char* name : {"direct", "libaio", "direct", "libaio"}) {
    Availability a = find_file_method(name).probe(ramfs.dir());
    EXPECT_FALSE(a.available) << name;
    EXPECT_NE(a.reason.find("refuses O_DIRECT"), std::string::npos) << name << ": " << a.reason;
    EXPECT_EQ(a.reason.find("File exists"), std::string::npos) << name << ": " << a.reason;
  }
  EXPECT_TRUE(std::filesystem::is_empty(ramfs.dir()));
  // Nor does ramfs count its space: unknown, not "0 B free" (the figure that refused every experiment there).
  EXPECT_FALSE(free_space(ramfs.dir()));
  testing::TmpfsMount tmpfs(parent.path(), "size=1m");
  ASSERT_TRUE(tmpfs.mounted()) << tmpfs.why_not();
  ASSERT_TRUE(free_space(tmpfs.dir()));
  EXPECT_EQ(*free_space(tmpfs.dir()), 1u << 20);
}

TEST(Libaio, TraitsAndDepthLimit) {
  ScratchDir scratch;
  const Method& m = find_file_method("libaio");
  Availability a = m.probe(scratch.path());
  ASSERT_TRUE(a.available) << a.reason;  // ext4 in /tmp takes O_DIRECT here
  MethodTraits t = m.traits();
  EXPECT_TRUE(t.queued && t.bypasses_page_cache && t.needs_alignment);
  EXPECT_FALSE(t.direct_optional) << "O_DIRECT only";
  FileOptions deep;
  deep.queue_depth = 1u << 20;  // above fs.aio-max-nr (65536 by default)
  a = m.supports_options(deep, scratch.path());
  EXPECT_FALSE(a.available);
  EXPECT_NE(a.reason.find("aio-max-nr"), std::string::npos) << a.reason;
  auto p = testing::write_pattern_file(scratch, "ref", 4096, 94);
  auto e = expect_error([&] { m.open(p, Access::Read, deep); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("io_setup"), std::string::npos) << e->what();
}

// One request per io_submit at depth 2: batches cut short are handed over
// without waiting, and reaped at the next wait.
TEST(Libaio, OneRequestPerSubmit) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 64 * 4096, 90);
  FileOptions o;
  o.queue_depth = 2;
  o.submit_batch = 1;
  auto f = find_file_method("libaio").open(p, Access::Read, o);
  Buffer buf(4 * 4096, BufferKind::Aligned);
  ReadBlocks src(buf, 64);
  f->stream(src, true);
  EXPECT_EQ(src.completed, 64u);
  EXPECT_TRUE(src.all_whole);
  EXPECT_GE(f->counters().calls, 64u) << "an io_submit per request";
}

// A closed file parks its context for the next open; a child forked after
// that (the decision table's larger-than-memory cell runs in one) must set
// up its own: its parent's context gave io_submit's EINVAL there.
TEST(Libaio, AForkedChildDoesNotTakeItsParentsParkedContext) {
  ScratchDir scratch;
  auto p = testing::write_pattern_file(scratch, "ref", 16 * 4096, 90);  // ReadBlocks checks seed 90
  FileOptions o;
  o.queue_depth = 3;  // a depth no other test parks
  auto read_file = [&] {
    auto f = find_file_method("libaio").open(p, Access::Read, o);
    Buffer buf(3 * 4096, BufferKind::Aligned);
    ReadBlocks src(buf, 16);
    f->stream(src, false);
    f->close();
    return src.completed == 16 && src.all_whole;
  };
  ASSERT_TRUE(read_file());  // parks a context of depth 3
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = false;
    try {
      ok = read_file();
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child could not read through libaio";
  EXPECT_TRUE(read_file()) << "the parent's parked context is still its own";
}

// ---- registry -----------------------------------------------------------------

TEST(Registry, NineFileMethodsInDocumentedOrderAllAvailableHere) {
  std::vector<std::string> names;
  ScratchDir scratch;
  for (const auto* m : file_methods()) {
    names.emplace_back(m->name());
    Availability a = m->probe(scratch.path());
    EXPECT_TRUE(a.available) << m->name() << ": " << a.reason;
    EXPECT_FALSE(m->description().empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"iostream", "stdio", "syscall", "pread", "vectored", "mmap", "direct",
                                             "io_uring", "libaio"}));
  EXPECT_TRUE(scratch.created().empty()) << "probing leaves no file behind";
  EXPECT_TRUE(testing::names_in(scratch.path()).empty()) << "probing leaves no file behind";
  auto e = expect_error([] { find_file_method("aio"); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("aio"), std::string::npos);
  EXPECT_NE(std::string(e->what()).find("io_uring"), std::string::npos) << "lists the known ones";
}

}  // namespace
}  // namespace iolab::io
