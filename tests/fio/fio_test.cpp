// fio as a second opinion: which fio job an iolab experiment becomes (and
// which it cannot), the command line, the parser on fio 3.33's own JSON,
// finding fio on a PATH, and running a program. Only the last test needs
// fio itself; it skips, saying so, when fio is not installed.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "fio_sample.h"
#include "iolab/base/error.h"
#include "iolab/fio/runner.h"
#include "iolab/io/scratch.h"
#include "iolab/testing/test_dir.h"

namespace iolab::fio {
namespace {

harness::FileExperiment read_of(std::string method, results::CacheState cache = results::CacheState::Warm) {
  harness::FileExperiment e;
  e.method = std::move(method);
  e.op = results::Op::Read;
  e.pattern = results::AccessPattern::Seq;
  e.block_size = 4096;
  e.file_size = 1 << 20;
  e.cache = cache;
  return e;
}

bool has(const std::vector<std::string>& args, const std::string& arg) {
  return std::find(args.begin(), args.end(), arg) != args.end();
}

std::string path_env() {
  const char* p = std::getenv("PATH");
  return p ? p : "";
}

TEST(FioMapping, EachMethodWithAnEngineBecomesThatEngine) {
  const std::vector<std::pair<std::string, std::string>> engines{
      {"pread", "psync"}, {"direct", "psync"}, {"vectored", "pvsync2"},
      {"syscall", "sync"}, {"mmap", "mmap"},   {"io_uring", "io_uring"}};
  for (const auto& [method, engine] : engines) {
    FioMapping m = fio_job_for(read_of(method));
    ASSERT_TRUE(m.job) << method << ": " << m.why_not;
    EXPECT_EQ(m.job->engine, engine) << method;
    EXPECT_FALSE(m.engine_note.empty()) << method;
    EXPECT_EQ(m.job->file_size, 1u << 20);
    EXPECT_EQ(m.job->block_size, 4096u);
  }
}

TEST(FioMapping, DirectQueueDepthAndBuffersComeFromTheMethodsTraits) {
  // pread: buffered, one call at a time, heap buffer unless asked.
  FioJob pread = *fio_job_for(read_of("pread")).job;
  EXPECT_FALSE(pread.direct);
  EXPECT_EQ(pread.iodepth, 1u);
  EXPECT_FALSE(pread.aligned_buffers);
  harness::FileExperiment aligned = read_of("pread");
  aligned.buffer = io::BufferKind::Aligned;
  EXPECT_TRUE(fio_job_for(aligned).job->aligned_buffers);

  // direct: O_DIRECT always, so its natural buffer is aligned.
  FioJob direct = *fio_job_for(read_of("direct")).job;
  EXPECT_TRUE(direct.direct);
  EXPECT_TRUE(direct.aligned_buffers);

  // io_uring: O_DIRECT only when the cache is 'direct'; its queue depth either way.
  harness::FileExperiment uring = read_of("io_uring", results::CacheState::Direct);
  uring.pattern = results::AccessPattern::Rand;
  uring.options.queue_depth = 32;
  uring.options.submit_batch = 8;
  uring.options.uring.registered_files = true;
  FioJob q = *fio_job_for(uring).job;
  EXPECT_TRUE(q.direct);
  EXPECT_EQ(q.iodepth, 32u);
  EXPECT_EQ(q.submit_batch, 8u);
  EXPECT_TRUE(q.register_files);
  EXPECT_FALSE(q.fixed_buffers);
  EXPECT_EQ(q.pattern, results::AccessPattern::Rand);
  FioJob buffered = *fio_job_for(read_of("io_uring")).job;
  EXPECT_FALSE(buffered.direct);
  EXPECT_EQ(buffered.iodepth, 32u);  // FileOptions' default depth
  // iolab's default queue hands every freed slot over in one call: fio
  // submits up to its depth at once too, not one request per call.
  EXPECT_EQ(buffered.submit_batch, 32u);
  EXPECT_TRUE(has(fio_arguments(buffered, "/s/f"), "--iodepth_batch_submit=32"));
  EXPECT_TRUE(has(fio_arguments(buffered, "/s/f"), "--iodepth_batch_complete_max=32"));  // reaps all that are done
  EXPECT_TRUE(has(fio_null_arguments(buffered, 1000), "--iodepth_batch_complete_max=32"));
  // O_DIRECT with no batch set: iolab refills each freed slot as its
  // completion is taken, fio's default loop, so fio runs unbatched.
  FioJob each = *fio_job_for(read_of("io_uring", results::CacheState::Direct)).job;
  EXPECT_EQ(each.submit_batch, 1u);
  EXPECT_FALSE(has(fio_arguments(each, "/s/f"), "--iodepth_batch_submit=32"));
  EXPECT_EQ(fio_job_for(read_of("libaio", results::CacheState::Direct)).job->submit_batch, 1u);
  // fio's io_uring engine sets these ring flags itself; libaio has no ring.
  FioMapping ring = fio_job_for(read_of("io_uring"));
  EXPECT_TRUE(ring.ring_flags_fio_sets.single_issuer);
  EXPECT_TRUE(ring.ring_flags_fio_sets.coop_taskrun);
  EXPECT_FALSE(fio_job_for(read_of("libaio", results::CacheState::Direct)).ring_flags_fio_sets.single_issuer);
  harness::FileExperiment one = read_of("libaio", results::CacheState::Direct);
  one.options.queue_depth = 1;
  FioJob qd1 = *fio_job_for(one).job;
  EXPECT_EQ(qd1.iodepth, 1u);
  for (const auto& arg : fio_arguments(qd1, "/s/f")) EXPECT_EQ(arg.find("--iodepth_batch"), std::string::npos) << arg;

  // ops x block size is the file, as for the runner.
  harness::FileExperiment by_ops = read_of("pread");
  by_ops.ops = 10;
  EXPECT_EQ(fio_job_for(by_ops).job->file_size, 40960u);
}

TEST(FioMapping, MmapAdviceBecomesFiosHint) {
  harness::FileExperiment e = read_of("mmap");
  EXPECT_EQ(fio_job_for(e).job->fadvise_hint, "0");
  e.options.mmap_advice = io::Advice::Sequential;
  EXPECT_EQ(fio_job_for(e).job->fadvise_hint, "sequential");
  e.options.mmap_advice = io::Advice::Random;
  EXPECT_EQ(fio_job_for(e).job->fadvise_hint, "random");
  e.options.mmap_advice = io::Advice::WillNeed;
  FioMapping m = fio_job_for(e);
  EXPECT_FALSE(m.job);
  EXPECT_NE(m.why_not.find("WILLNEED"), std::string::npos) << m.why_not;
  // Other methods ignore the mapping advice.
  harness::FileExperiment pread = read_of("pread");
  pread.options.mmap_advice = io::Advice::WillNeed;
  EXPECT_TRUE(fio_job_for(pread).job);
}

TEST(FioMapping, WhatFioCannotExpressSaysWhy) {
  for (const char* method : {"iostream", "stdio"}) {
    FioMapping m = fio_job_for(read_of(method));
    EXPECT_FALSE(m.job) << method;
    EXPECT_NE(m.why_not.find(method), std::string::npos) << m.why_not;
  }
  harness::FileExperiment write = read_of("pread");
  write.op = results::Op::Write;
  FioMapping w = fio_job_for(write);
  EXPECT_FALSE(w.job);
  EXPECT_NE(w.why_not.find("only reads"), std::string::npos) << w.why_not;

  FioMapping cold = fio_job_for(read_of("pread", results::CacheState::Cold));
  EXPECT_FALSE(cold.job);
  EXPECT_NE(cold.why_not.find("invalidate"), std::string::npos) << cold.why_not;
  // O_DIRECT has no cache state: cold is no obstacle.
  EXPECT_TRUE(fio_job_for(read_of("direct", results::CacheState::Cold)).job);

  FioMapping direct_cache = fio_job_for(read_of("mmap", results::CacheState::Direct));
  EXPECT_FALSE(direct_cache.job);
  EXPECT_NE(direct_cache.why_not.find("O_DIRECT"), std::string::npos);

  harness::FileExperiment empty = read_of("pread");
  empty.file_size = 0;
  EXPECT_FALSE(fio_job_for(empty).job);
  EXPECT_FALSE(fio_job_for(read_of("frobnicate")).job);  // not even a method (the matrix refuses it earlier)
}

TEST(FioArguments, SayEverythingThatMakesTheRunComparable) {
  FioJob job;
  job.engine = "io_uring";
  job.pattern = results::AccessPattern::Rand;
  job.block_size = 4096;
  job.file_size = 64 << 20;
  job.direct = true;
  job.iodepth = 32;
  job.aligned_buffers = true;
  job.loops = 7;
  auto args = fio_arguments(job, "/scratch/fio-0");
  for (const char* expected : {"--filename=/scratch/fio-0", "--size=64m", "--rw=randread", "--bs=4k",
                               "--ioengine=io_uring", "--iodepth=32", "--direct=1", "--invalidate=0",
                               "--iomem_align=4k", "--fadvise_hint=0", "--gtod_reduce=1", "--loops=7",
                               "--output-format=json"})
    EXPECT_TRUE(has(args, expected)) << expected;
  EXPECT_FALSE(has(args, "--registerfiles=1"));

  job.direct = false;
  job.aligned_buffers = false;
  job.time_every_io = true;
  job.pattern = results::AccessPattern::Seq;
  job.register_files = job.fixed_buffers = job.sqpoll = true;
  job.submit_batch = 4;
  args = fio_arguments(job, "/scratch/fio-0");
  EXPECT_TRUE(has(args, "--rw=read"));
  EXPECT_FALSE(has(args, "--direct=1"));
  EXPECT_FALSE(has(args, "--iomem_align=4k"));
  EXPECT_FALSE(has(args, "--gtod_reduce=1"));
  for (const char* expected : {"--registerfiles=1", "--fixedbufs=1", "--sqthread_poll=1", "--iodepth_batch_submit=4"})
    EXPECT_TRUE(has(args, expected)) << expected;
}

TEST(ShellCommand, QuotesWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(shell_command("/usr/bin/fio", {"--bs=4k", "--filename=/tmp/a b", "it's"}),
            "/usr/bin/fio --bs=4k '--filename=/tmp/a b' 'it'\\''s'");
  EXPECT_EQ(shell_command("fio", {""}), "fio ''");
}

TEST(FioJson, TheSampleOfFio333ParsesToItsFigures) {
  FioFigures f = parse_fio_json(testing::kFio333IoUringJson, "sample");
  EXPECT_EQ(f.version, "fio-3.33");
  EXPECT_EQ(f.ios, 16384u);
  EXPECT_EQ(f.bytes, 67108864u);
  EXPECT_DOUBLE_EQ(f.runtime_s, 0.821);
  EXPECT_DOUBLE_EQ(f.job_runtime_s, 0.820);
  EXPECT_DOUBLE_EQ(f.usr_cpu, 4.634146);
  EXPECT_DOUBLE_EQ(f.sys_cpu, 20.853659);
  EXPECT_NEAR(f.cpu_s(), (4.634146 + 20.853659) / 100 * 0.820, 1e-12);
  EXPECT_EQ(f.context_switches, 443u);
  EXPECT_EQ(f.minor_faults, 39u);
  EXPECT_EQ(f.major_faults, 0u);
}

TEST(FioJson, NotesBeforeTheJsonAreSkipped) {
  std::string text = std::string("note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be "
                                 "capped at 1") +
                     testing::kFio333IoUringJson;
  EXPECT_EQ(parse_fio_json(text, "sample").ios, 16384u);
}

TEST(FioJson, WhatIsMissingOrWrongIsNamed) {
  auto message = [](const std::string& text) {
    try {
      parse_fio_json(text, "out.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("fio: engine not loadable").find("no JSON object"), std::string::npos);
  EXPECT_NE(message("{\"fio version\": \"fio-3.33\", \"jobs\": [").find("does not parse"), std::string::npos);
  EXPECT_NE(message("{\"fio version\": \"fio-3.33\", \"jobs\": []}").find("no job"), std::string::npos);

  nlohmann::json j = nlohmann::json::parse(testing::kFio333IoUringJson);
  j["jobs"][0]["read"].erase("total_ios");
  std::string missing = message(j.dump());
  EXPECT_NE(missing.find("jobs[0].read.total_ios"), std::string::npos) << missing;
  EXPECT_NE(missing.find("out.json"), std::string::npos) << missing;

  j = nlohmann::json::parse(testing::kFio333IoUringJson);
  j["jobs"][0]["usr_cpu"] = "a lot";
  EXPECT_NE(message(j.dump()).find("jobs[0].usr_cpu is not a number"), std::string::npos);

  j = nlohmann::json::parse(testing::kFio333IoUringJson);
  j["jobs"][0]["error"] = 5;
  EXPECT_NE(message(j.dump()).find("error 5"), std::string::npos);
}

TEST(FindProgram, LooksInEachDirectoryOfThePathForAnExecutableFile) {
  testing::TestDir place;
  const auto dir = place.path();
  std::filesystem::create_directory(dir / "bin");
  std::filesystem::create_directory(dir / "empty");
  { std::ofstream(dir / "bin" / "fio") << "#!/bin/sh\n"; }
  { std::ofstream(dir / "empty" / "fio") << "not executable\n"; }
  const std::string empty = (dir / "empty").string(), bin = (dir / "bin").string();

  EXPECT_FALSE(find_program("fio", empty));  // there, but not executable
  EXPECT_FALSE(find_program("fio", "/nonexistent"));
  EXPECT_FALSE(find_program("fio", ""));
  ::chmod((dir / "bin" / "fio").c_str(), 0755);
  auto found = find_program("fio", "/nonexistent::" + empty + ":" + bin);
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, dir / "bin" / "fio");
  // A name with a slash is that file, wherever PATH points.
  EXPECT_TRUE(find_program((dir / "bin" / "fio").string(), "/nonexistent"));
  EXPECT_FALSE(find_program((dir / "empty" / "fio").string(), bin));
  EXPECT_FALSE(find_program(bin, bin));  // a directory is not a program
}

TEST(RunProgram, CapturesOutputAndExitCodeAndLeavesNoFiles) {
  io::ScratchDir scratch;
  ProgramOutput r = run_program("/bin/sh", {"-c", "echo out; echo err >&2; exit 3"}, scratch);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_TRUE(scratch.created().empty());

  EXPECT_THROW(run_program("/bin/sh", {"-c", "kill -KILL $$"}, scratch), Error);
  EXPECT_THROW(run_program(scratch.path() / "no-such-program", {}, scratch), Error);
  EXPECT_TRUE(scratch.created().empty());
}

TEST(RunFio, AFailingFioIsAnErrorWithItsMessage) {
  io::ScratchDir scratch;
  // Any program in fio's place that fails the way fio does: a message on stderr, exit code 1.
  try {
    run_fio("/bin/sh", {"-c", "echo 'fio: unrecognized option' >&2; exit 1"}, scratch);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("exit code 1: fio: unrecognized option"), std::string::npos) << what;
  }
}

TEST(RunFio, RealFioReadsTheFileAsAskedIfInstalled) {
  auto fio = find_program("fio", path_env());
  if (!fio) GTEST_SKIP() << "fio is not installed (apt-get install fio); the mapping and parser tests above do not need it";
  io::ScratchDir scratch;
  auto file = scratch.create_file("data");
  harness::write_pattern_file(file, 256 * 1024, 1);
  FioJob job = *fio_job_for(read_of("pread")).job;
  job.file_size = 256 * 1024;
  job.loops = 3;
  FioFigures f = run_fio(*fio, fio_arguments(job, file), scratch);
  EXPECT_EQ(f.ios, 3u * 64);
  EXPECT_EQ(f.bytes, 3u * 256 * 1024);
  EXPECT_EQ(f.version.rfind("fio-", 0), 0u) << f.version;
  EXPECT_EQ(fio_version(*fio, scratch), f.version);
  EXPECT_EQ(std::filesystem::file_size(file), 256u * 1024);  // fio read it; it did not lay it out again
  EXPECT_EQ(scratch.created().size(), 1u);                   // only the data file: fio's outputs are gone
}

}  // namespace
}  // namespace iolab::fio
