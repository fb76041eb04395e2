// fio jobs mapped to iolab experiments: [global] inheritance, fio's suffixes
// and kb_base, ranges and lists, engines, directions, cache and flush
// policies, paths, --fio-set; then every job file of Debian's fio-examples,
// each mapped or refused with one line.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/fio/job.h"
#include "fio_job_fixtures.h"

namespace iolab::fio {
namespace {

using testing::FakeWorld;
using testing::FioMapTest;
using testing::parse;
using testing::refusal;

// ---- values and mapping -------------------------------------------------------

TEST_F(FioMapTest, GlobalInheritanceInOrder) {
  auto jobs = map(
      "[global]\nsize=1m\nbs=8k\n[a]\n[global]\nbs=16k\n[b]\n[c]\nbs=32k\n");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].experiment.block_size, 8u * 1024);   // only the [global] above it
  EXPECT_EQ(jobs[1].experiment.block_size, 16u * 1024);
  EXPECT_EQ(jobs[2].experiment.block_size, 32u * 1024);  // its own wins
  EXPECT_EQ(jobs[2].experiment.file_size, 1u << 20);
}

TEST_F(FioMapTest, SizeSuffixesFollowKbBase) {
  // fio 3.33's parser (checked with fio --debug=parse): k, kb and ki are
  // kb_base; kib is the other one.
  const std::pair<const char*, std::uint64_t> kb1024[] = {
      {"4096", 4096}, {"4k", 4096}, {"4K", 4096}, {"4kb", 4096}, {"4ki", 4096}, {"4kib", 4000}, {"4KiB", 4000},
      {"1m", 1u << 20}, {"1mib", 1000000}, {"2g", 2ull << 30}, {"4b", 4}, {"0x10", 16}};
  for (auto [text, bytes] : kb1024)
    EXPECT_EQ(one(std::string("[j]\nsize=") + text + "\n").experiment.file_size, bytes) << text;
  const std::pair<const char*, std::uint64_t> kb1000[] = {{"4k", 4000}, {"4ki", 4000}, {"4kib", 4096}, {"1m", 1000000}};
  for (auto [text, bytes] : kb1000) {
    // kb_base applies to its section's options wherever it is written, and to the jobs below a [global].
    EXPECT_EQ(one(std::string("[j]\nsize=") + text + "\nkb_base=1000\n").experiment.file_size, bytes) << text;
    EXPECT_EQ(one(std::string("[global]\nkb_base=1000\n[j]\nsize=") + text + "\n").experiment.file_size, bytes) << text;
  }
}

TEST_F(FioMapTest, NumbersFioWouldReadOtherwiseAreRefused) {
  EXPECT_NE(refused("[j]\nsize= 4k\n").find("'bs= 4k' is 4 bytes to fio"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1.5k\n").find("whole numbers"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=10%\n").find("percentage"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=4kfoo\n").find("unknown unit"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=99999999999999999999999\n").find("too large"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nrw = read\n").find("blank"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\ndirect\n").find("needs a value"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\ndirect=2\n").find("0 or 1"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=$SIZE\n").find("write ${NAME}"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=${UNSET}\n").find("unset variable"), std::string::npos);
}

TEST_F(FioMapTest, BlockSizeListsAndRanges) {
  // bs=READ,WRITE (also split at ':' and '-': fio reads 4k-8k as read 4k, write 8k).
  for (const char* bs : {"4k,8k", "4k:8k", "4k-8k"}) {
    EXPECT_EQ(one(std::string("[j]\nsize=1m\nrw=read\nbs=") + bs + "\n").experiment.block_size, 4096u) << bs;
    EXPECT_EQ(one(std::string("[j]\nsize=1m\nrw=write\nbs=") + bs + "\n").experiment.block_size, 8192u) << bs;
  }
  EXPECT_EQ(one("[j]\nsize=1m\nrw=write\nbs=,16k\n").experiment.block_size, 16384u);
  EXPECT_EQ(one("[j]\nsize=1m\nrw=read\nbs=,16k\n").experiment.block_size, 4096u);  // fio's default stays
  auto job = one("[j]\nsize=1m\nbs=64k\nbsrange=4k-4k\n");
  EXPECT_EQ(job.experiment.block_size, 4096u);  // bsrange wins
  EXPECT_NE(mapping(job, "bs=64k").find("replaced by bsrange"), std::string::npos);
  std::string e = refused("[j]\nsize=1m\n\nbsrange=16k-4k\n");
  EXPECT_NE(e.find("job.fio:4"), std::string::npos) << e;
  EXPECT_NE(e.find("4k to 16k"), std::string::npos) << e;  // swapped, as fio swaps
}

TEST_F(FioMapTest, AFioSeqReadJob) {
  // fio-examples' fio-seq-read.fio, sized down.
  auto job = one("[global]\nname=fio-seq-reads\nfilename=fio-seq-reads\nrw=read\nbs=256K\ndirect=1\nnumjobs=1\n"
                 "time_based\nruntime=900\n\n[file1]\nsize=10G\nioengine=libaio\niodepth=16\n");
  const harness::FileExperiment& e = job.experiment;
  EXPECT_EQ(job.name, "fio-seq-reads");
  EXPECT_EQ(job.section, "file1");
  EXPECT_EQ(e.suite, "fio");
  EXPECT_EQ(e.method, "libaio");
  EXPECT_EQ(e.op, results::Op::Read);
  EXPECT_EQ(e.pattern, results::AccessPattern::Seq);
  EXPECT_EQ(e.block_size, 256u * 1024);
  EXPECT_EQ(e.file_size, 10ull << 30);
  EXPECT_EQ(e.cache, results::CacheState::Direct);
  EXPECT_EQ(e.options.queue_depth, 16u);
  EXPECT_EQ(e.options.submit_batch, 1u);  // fio's iodepth_batch default: one request per io_submit
  EXPECT_EQ(job.threads, 1u);
  EXPECT_EQ(job.time_based_s, 900.0);
  EXPECT_EQ(job.scratch_parent, scratch_.path());  // where fio would create fio-seq-reads
  // iolab's queue reaps up to its submission batch: fio's defaults (1 and 1) are its loop.
  EXPECT_NE(mapping(job, "iodepth_batch_complete_max=1").find("reap up to 1 completion per call, as iolab's queue"),
            std::string::npos);
  EXPECT_NE(mapping(job, "size=10G").find("10 GiB"), std::string::npos);
  for (const auto& o : job.options) EXPECT_FALSE(o.mapping.empty()) << o.option;
  // Where each option came from.
  bool found = false;
  for (const auto& o : job.options)
    if (o.option == "ioengine=libaio") {
      found = true;
      EXPECT_EQ(o.place, (FioPlace{"dir/job.fio", 13}));
    }
  EXPECT_TRUE(found);
}

TEST_F(FioMapTest, EnginesAndDirect) {
  const std::tuple<const char*, const char*, const char*> cases[] = {
      {"psync", "0", "pread"},     {"psync", "1", "direct"},    {"sync", "0", "syscall"},
      {"pvsync", "0", "vectored"}, {"pvsync2", "0", "vectored"}, {"mmap", "0", "mmap"},
      {"libaio", "1", "libaio"},   {"io_uring", "0", "io_uring"}, {"io_uring", "1", "io_uring"}};
  for (auto [engine, direct, method] : cases) {
    auto job = one(std::string("[j]\nsize=1m\nioengine=") + engine + "\ndirect=" + direct + "\n");
    EXPECT_EQ(job.experiment.method, method) << engine << " direct=" << direct;
    EXPECT_EQ(job.experiment.cache == results::CacheState::Direct, std::string(direct) == "1") << engine;
  }
  EXPECT_TRUE(one("[j]\nsize=1m\nioengine=io_uring\ndirect=1\n").experiment.options.direct);
  EXPECT_EQ(one("[j]\nsize=1m\n").experiment.method, "pread");  // fio's default engine: psync
  // buffered= is direct='s inverse; the later one wins.
  EXPECT_EQ(one("[j]\nsize=1m\nbuffered=0\n").experiment.method, "direct");
  EXPECT_EQ(one("[j]\nsize=1m\nbuffered=0\ndirect=0\n").experiment.method, "pread");
  std::string e = refused("[j]\nsize=1m\nioengine=libaio\n");
  EXPECT_NE(e.find("job.fio:3"), std::string::npos) << e;
  EXPECT_NE(e.find("O_DIRECT only"), std::string::npos) << e;
  EXPECT_NE(refused("[j]\nsize=1m\nioengine=sync\ndirect=1\n").find("ioengine=psync"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nioengine=posixaio\n").find("POSIX AIO"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nioengine=null\n").find("ioengine=null"), std::string::npos);
}

TEST_F(FioMapTest, Directions) {
  EXPECT_EQ(one("[j]\nsize=1m\nrw=randwrite\n").experiment.op, results::Op::Write);
  EXPECT_EQ(one("[j]\nsize=1m\nreadwrite=randread\n").experiment.pattern, results::AccessPattern::Rand);
  EXPECT_EQ(one("[j]\nsize=1m\nrw=read:0\n").experiment.op, results::Op::Read);
  EXPECT_NE(refused("[j]\nsize=1m\nrw=randrw\n").find("mixed"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nrw=trim\n").find("trim"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nrw=read:-8k\n").find("consecutive"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nrw=sideways\n").find("not one of fio's directions"), std::string::npos);
}

TEST_F(FioMapTest, CacheStates) {
  EXPECT_EQ(one("[j]\nsize=1m\n").experiment.cache, results::CacheState::Cold);  // invalidate=1 is fio's default
  EXPECT_EQ(one("[j]\nsize=1m\ninvalidate=0\n").experiment.cache, results::CacheState::Warm);
  EXPECT_EQ(one("[j]\nsize=1m\npre_read=1\n").experiment.cache, results::CacheState::Warm);
  EXPECT_EQ(one("[j]\nsize=1m\ndirect=1\ninvalidate=0\n").experiment.cache, results::CacheState::Direct);
}

TEST_F(FioMapTest, FlushPolicies) {
  auto sync = [&](const std::string& opts) {
    return to_string(one("[j]\nsize=1m\nrw=write\nbs=4k\n" + opts).experiment.sync);
  };
  EXPECT_EQ(sync(""), "none");
  EXPECT_EQ(sync("fsync=1\n"), "every:fsync");
  EXPECT_EQ(sync("fdatasync=4\n"), "every-16k:fdatasync");  // every 4 writes of 4 KiB
  EXPECT_EQ(sync("end_fsync=1\n"), "end:fsync");
  EXPECT_EQ(sync("fsync_on_close=1\n"), "end:fsync");
  EXPECT_EQ(sync("ioengine=mmap\nfsync=1\n"), "every");  // the method's own: msync, as fio's mmap engine
  EXPECT_EQ(to_string(one("[j]\nsize=1m\nrw=read\nfsync=1\n").experiment.sync), "none");
  EXPECT_NE(refused("[j]\nsize=1m\nrw=write\nfsync=1\nfdatasync=1\n").find("one flush policy"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nrw=write\nfsync=8\nend_fsync=1\n").find("one flush policy"), std::string::npos);
}

TEST_F(FioMapTest, Repetitions) {
  auto loops = one("[j]\nsize=1m\nloops=3\n");
  EXPECT_EQ(loops.reps, 3u);
  EXPECT_EQ(loops.min_time, 0.0);
  auto timed = one("[j]\nsize=1m\ntime_based\nruntime=2m\n");
  EXPECT_EQ(timed.time_based_s, 120.0);
  EXPECT_FALSE(timed.reps);
  auto capped = one("[j]\nsize=1m\ntimeout=500ms\n");
  EXPECT_EQ(capped.max_time, 0.5);
  EXPECT_FALSE(capped.time_based_s);
  EXPECT_NE(refused("[j]\nsize=1m\nruntime=10min\n").find("10 microseconds"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\ntime_based\n").find("without a runtime"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nloops=0\n").find("loops from 1"), std::string::npos);
}

TEST_F(FioMapTest, Threads) {
  auto job = one("[j]\nsize=1m\nnumjobs=4\ninvalidate=0\ngroup_reporting\nthread\n");
  EXPECT_EQ(job.threads, 4u);
  EXPECT_NE(job.experiment.experiment.find("x4"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nnumjobs=4\nfilename=shared\ninvalidate=0\n").find("share the file"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nnumjobs=4\n").find("cold"), std::string::npos);
}

TEST_F(FioMapTest, PathsOnlyPlaceTheScratchDirectory) {
  const std::string existing = (scratch_.path() / "data").string();
  std::ofstream(existing) << "x";
  std::string e = refused("[j]\nsize=1m\nfilename=" + existing + "\n");
  EXPECT_NE(e.find("names an existing file"), std::string::npos) << e;
  std::filesystem::remove(existing);
  EXPECT_NE(refused("[j]\nsize=1m\nfilename=/dev/null\n").find("device"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nfilename=/dev/nvme9n9\n").find("device"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\nfilename=a:b\n").find("several files"), std::string::npos);
  EXPECT_NE(refused("[j]\nsize=1m\ndirectory=/nonexistent-dir\n").find("does not exist"), std::string::npos);
  EXPECT_EQ(one("[j]\nsize=1m\nfilename=" + existing + "\n").scratch_parent, scratch_.path());
  EXPECT_EQ(one("[j]\nsize=1m\ndirectory=/tmp\nfilename=iolab-fio-test-no-such-file\n").scratch_parent, std::filesystem::path("/tmp"));
  EXPECT_EQ(one("[j]\nsize=1m\ndirectory=/tmp\n").scratch_parent, std::filesystem::path("/tmp"));
  EXPECT_EQ(one("[j]\nsize=1m\nfilename=x\n").scratch_parent, scratch_.path());  // relative: the working directory
}

TEST_F(FioMapTest, UnknownOptionsNameTheOptionFileAndLine) {
  std::string e = refused("[global]\nsize=1m\n[j]\nrw=read\nverify=md5\n");
  EXPECT_EQ(e, std::string("invalid fio job dir/job.fio:5: 'verify=md5': iolab does not map this fio option "
                           "(docs/fio-jobs.md lists those it maps); --fio-lenient ignores it"));
  FioMapSettings lenient = settings();
  lenient.lenient = true;
  auto jobs = map("[global]\nsize=1m\nrandrepeat=0\n[j]\nverify=md5\n[k]\n", lenient);
  ASSERT_EQ(jobs.size(), 2u);
  ASSERT_EQ(jobs[0].ignored.size(), 2u);
  EXPECT_EQ(jobs[0].ignored[0].option, "randrepeat=0");
  EXPECT_EQ(jobs[0].ignored[1].place, (FioPlace{"dir/job.fio", 5}));
  EXPECT_EQ(jobs[1].ignored.size(), 1u);  // [k] inherits [global]'s only
  // A bad value is refused even under lenient.
  EXPECT_NE(refused("[j]\nsize=1q\n", lenient).find("unknown unit"), std::string::npos);
}

// --fio-lenient lists an ignored option once per name, with how many times
// it was written; a job file that is mostly options iolab does not map is
// refused rather than carried into every record.
TEST_F(FioMapTest, LenientReportsIgnoredOptionsOncePerNameWithACount) {
  FioMapSettings lenient = settings();
  lenient.lenient = true;
  std::string text = "[global]\nsize=1m\n";
  for (int i = 0; i < 5000; ++i) text += "randrepeat=" + std::to_string(i % 2) + "\n";
  text += "[j]\n";
  for (int i = 0; i < 80000; ++i) text += "verify=md5\n";  // 880 KB: within the 1 MiB limit
  auto jobs = map(text, lenient);
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(jobs[0].ignored.size(), 2u);
  EXPECT_EQ(jobs[0].ignored[0].option, "randrepeat=0");
  EXPECT_EQ(jobs[0].ignored[0].count, 5000u);
  EXPECT_EQ(jobs[0].ignored[0].place, (FioPlace{"dir/job.fio", 3}));
  EXPECT_EQ(jobs[0].ignored[1].option, "verify=md5");
  EXPECT_EQ(jobs[0].ignored[1].count, 80000u);
  EXPECT_NE(jobs[0].ignored[1].mapping.find("written 80000 times"), std::string::npos) << jobs[0].ignored[1].mapping;
  const nlohmann::json j = to_json(jobs[0], "job.fio");
  EXPECT_EQ(j["ignored"].size(), 2u);
  EXPECT_EQ(j["ignored"][1]["count"], 80000);

  std::string many = "[j]\nsize=1m\n";
  for (int i = 0; i < 100; ++i) many += "no_such_option_" + std::to_string(i) + "=1\n";
  EXPECT_NE(refused(many, lenient).find("more than 64 different options iolab does not map"), std::string::npos);
}

// A job file within the limits, of 4,096 sections under a [global] of
// 60,000 bs= lines: each job holds the options in effect, not every line
// (this took minutes and gigabytes when each job copied them all).
TEST_F(FioMapTest, ManySectionsUnderALongGlobalMapAsOneOptionEach) {
  std::string text = "[global]\nsize=64k\ninvalidate=0\n";
  for (int i = 0; i < 60000; ++i) text += i % 2 ? "bs=4k\n" : "bs=8k\n";
  for (int i = 0; i < 4095; ++i) text += "[j" + std::to_string(i) + "]\n";
  auto jobs = map(text, settings());
  ASSERT_EQ(jobs.size(), 4095u);
  for (const auto& job : {jobs.front(), jobs.back()}) {
    EXPECT_EQ(job.experiment.block_size, 4096u);
    EXPECT_EQ(std::count_if(job.options.begin(), job.options.end(),
                            [](const FioMappedOption& o) { return o.option.starts_with("bs="); }),
              1)
        << "one bs=, the one in effect";
  }
}

TEST_F(FioMapTest, FioSetOverridesEveryJob) {
  FioMapSettings s = settings();
  s.overrides = {"size=64m", "runtime=2", "directory=/tmp"};
  auto jobs = map("[global]\nsize=10g\ntime_based\nruntime=900\n[a]\n[b]\nsize=20g\n", s);
  for (const auto& j : jobs) {
    EXPECT_EQ(j.experiment.file_size, 64u << 20);
    EXPECT_EQ(j.time_based_s, 2.0);
    EXPECT_EQ(j.scratch_parent, std::filesystem::path("/tmp"));
    EXPECT_NE(mapping(j, "size=64m").find("64 MiB"), std::string::npos);
  }
  bool listed = false;
  for (const auto& o : jobs[1].options) listed |= o.option == "size=64m" && o.place == FioPlace{"--fio-set", 0};
  EXPECT_TRUE(listed);
  s.overrides = {"verify=md5"};
  EXPECT_NE(refused("[a]\nsize=1m\n", s).find("--fio-set"), std::string::npos);
  s.overrides = {"size=lots"};
  EXPECT_NE(refused("[a]\nsize=1m\n", s).find("--fio-set"), std::string::npos);
}

TEST_F(FioMapTest, JobsFioRunsTogetherSaySo) {
  auto jobs = map("[global]\nsize=1m\n[a]\n[b]\n[c]\nstonewall\n");
  auto has = [](const FioMappedJob& j, const std::string& text) {
    for (const auto& n : j.notes)
      if (n.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has(jobs[0], "at the same time as [b]"));
  EXPECT_TRUE(has(jobs[1], "at the same time as [a]"));
  EXPECT_FALSE(has(jobs[2], "at the same time"));
  EXPECT_TRUE(jobs[2].stonewall);
  EXPECT_NE(refused("[global]\nsize=1m\n").find("no job"), std::string::npos);
}

TEST_F(FioMapTest, RecordCarriesTheMapping) {
  auto job = one("[j]\nsize=1m\nrw=randread\n");
  nlohmann::json j = to_json(job, "x.fio");
  EXPECT_EQ(j["job_file"], "x.fio");
  EXPECT_EQ(j["section"], "j");
  EXPECT_EQ(j["at"], "dir/job.fio:1");
  ASSERT_TRUE(j["options"].is_array());
  EXPECT_EQ(j["options"][1]["option"], "rw=randread");
  EXPECT_EQ(j["options"][1]["at"], "dir/job.fio:3");
  EXPECT_FALSE(j["notes"].empty());
}

// Jobs whose files go in two directories: one filesystem per run, unless a
// directory is given for all (--dir); the refusal names the job that differs.
TEST_F(FioMapTest, JobsInTwoDirectoriesAreOneRunOnlyWithAGivenDirectory) {
  const std::filesystem::path file = scratch_.path() / "two-places.fio";
  std::ofstream(file) << "[a]\nsize=1m\ndirectory=/tmp\n[b]\nsize=1m\ndirectory=" << scratch_.path().string() << "\n";
  const std::string e = refusal([&] { map_fio_jobs_in_one_directory(file, settings(), ""); });
  EXPECT_NE(e.find("its files go in " + scratch_.path().string() + ", job [a]'s in /tmp"), std::string::npos) << e;
  EXPECT_NE(e.find("two-places.fio"), std::string::npos) << "names the job's file and line: " << e;
  FioJobsInOneDirectory given = map_fio_jobs_in_one_directory(file, settings(), scratch_.path());
  EXPECT_EQ(given.dir, scratch_.path());
  ASSERT_EQ(given.jobs.size(), 2u);
  for (const auto& j : given.jobs) EXPECT_EQ(j.scratch_parent, scratch_.path()) << j.section;
  FioJobsInOneDirectory one_place =
      map_fio_jobs_in_one_directory(file, [&] { auto s = settings(); s.overrides = {"directory=/tmp"}; return s; }(), "");
  EXPECT_EQ(one_place.dir, std::filesystem::path("/tmp")) << "the jobs' own directory when they share one";
}

// directory= naming a plain file is "not a directory", not "does not exist".
TEST_F(FioMapTest, ADirectoryThatIsAPlainFileIsRefusedAsNotADirectory) {
  const std::filesystem::path plain = scratch_.path() / "plain";
  std::ofstream(plain) << "x";
  const std::string e = refused("[j]\nsize=1m\ndirectory=" + plain.string() + "\n");
  EXPECT_NE(e.find(plain.string() + " is not a directory"), std::string::npos) << e;
  EXPECT_EQ(e.find("does not exist"), std::string::npos) << e;
}

// --dir is iolab's own option, one directory whatever it holds: a ':' in it
// is a name's, as plain `iolab run --dir` takes it, not fio's separator.
TEST_F(FioMapTest, AGivenDirectoryHoldingAColonIsOneDirectory) {
  const std::filesystem::path colon = scratch_.path() / "a:b";
  std::filesystem::create_directory(colon);
  const std::filesystem::path file = scratch_.path() / "j.fio";
  std::ofstream(file) << "[j]\nsize=1m\n";
  FioJobsInOneDirectory given = map_fio_jobs_in_one_directory(file, settings(), colon);
  EXPECT_EQ(given.dir, colon);
  ASSERT_EQ(given.jobs.size(), 1u);
  EXPECT_EQ(given.jobs[0].scratch_parent, colon);
  EXPECT_NE(refused("[j]\nsize=1m\ndirectory=/tmp:/var/tmp\n").find("several directories"), std::string::npos)
      << "a job file's own ':' still separates directories, as fio's does";
}

// ---- the corpus: Debian's fio-examples ---------------------------------------------

TEST_F(FioMapTest, EveryFioExampleMapsOrIsRefusedInOneLine) {
  const std::filesystem::path dir = "/usr/share/doc/fio/examples";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    GTEST_SKIP() << dir << " is missing: install Debian's fio-examples (scripts/install-deps.sh test does)";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".fio") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 50u);
  unsigned mapped = 0;
  for (const auto& f : files) {
    // With their paths moved into a scratch directory, as a user trying them would.
    FioMapSettings s = settings();
    s.overrides = {"directory=" + scratch_.path().string()};
    try {
      auto jobs = map_fio_jobs(read_fio_job(f), s);
      EXPECT_FALSE(jobs.empty()) << f;
      ++mapped;
      std::printf("MAPPED  %s: %zu job(s)\n", f.filename().c_str(), jobs.size());
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(f.filename().string()), std::string::npos) << what;
      std::printf("REFUSED %s: %s\n", f.filename().c_str(), what.c_str());
    }
  }
  EXPECT_GT(mapped, 0u);
}

}  // namespace
}  // namespace iolab::fio
