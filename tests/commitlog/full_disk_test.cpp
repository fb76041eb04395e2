// A full disk, for every design, on a 4 MiB tmpfs: appends end with a clear
// ENOSPC error (never a SIGBUS from a mapping), the log refuses further
// appends, and after closing and reopening every acknowledged message is there.
#include <cerrno>
#include <cstring>
#include <sys/mount.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/commit_log.h"
#include "iolab/base/error.h"
#include "iolab/io/scratch.h"

namespace iolab::commitlog {
namespace {

using testing::message;

class SmallFilesystem {
 public:
  SmallFilesystem() {
    if (::geteuid() != 0) {
      why_ = "needs root to mount a small tmpfs";
      return;
    }
    mount_ = scratch_.path() / "small-fs";
    std::filesystem::create_directory(mount_);
    if (::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      why_ = std::string("cannot mount tmpfs: ") + std::strerror(errno);
      std::filesystem::remove(mount_);
      mount_.clear();
    }
  }
  ~SmallFilesystem() {
    if (mount_.empty()) return;
    ::umount(mount_.c_str());
    std::filesystem::remove(mount_);
  }
  const std::string& why_not() const { return why_; }
  const std::filesystem::path& path() const { return mount_; }

 private:
  io::ScratchDir scratch_;
  std::filesystem::path mount_;
  std::string why_;
};

class CommitLogFullDisk : public ::testing::TestWithParam<Design> {};

TEST_P(CommitLogFullDisk, AppendFailsCleanlyAndLosesNothingAcknowledged) {
  SmallFilesystem fs;
  if (!fs.why_not().empty()) GTEST_SKIP() << fs.why_not();
  auto dir = fs.path() / "log";
  std::filesystem::create_directory(dir);
  Options o = testing::small_options(GetParam());
  o.segment_size = 1 << 20;  // a few segments fill the 4 MiB
  o.batch_bytes = 8 * 1024;
  std::uint64_t acknowledged = 0;
  bool failed = false;
  std::filesystem::path log_dir;
  {
    auto log = open_commit_log(dir, o);
    log_dir = log->log_dir(0);
    try {
      for (std::uint64_t n = 0; n < 100'000; ++n) {
        log->append(0, message(n, 1000));
        acknowledged = n + 1;
      }
    } catch (const Error& e) {
      failed = true;
      EXPECT_EQ(e.error_number(), ENOSPC) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
    }
    EXPECT_TRUE(failed) << "the 4 MiB filesystem never filled";
    EXPECT_GT(acknowledged, 100u);
    // The failure sticks: no later append may land after a hole.
    EXPECT_THROW(log->append(0, message(acknowledged, 1000)), Error);
    try {
      log->close();  // still commits and syncs what was acknowledged; reports the failure
    } catch (const Error&) {
    }
  }
  auto numbers = testing::numbers_in(log_dir);
  ASSERT_GE(numbers.size(), acknowledged);
  for (std::uint64_t n = 0; n < numbers.size(); ++n) ASSERT_EQ(numbers[n], n);
  // Reopening works on the full filesystem and finds the same.
  auto log = open_commit_log(dir, o);
  EXPECT_GE(log->positions(0).written, acknowledged);
  try {
    log->close();
  } catch (const Error&) {  // the allocation ahead may still find the disk full
  }
  remove_log_files(dir);
  std::filesystem::remove(dir);
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, CommitLogFullDisk, ::testing::ValuesIn(kAllDesigns), testing::test_name);

}  // namespace
}  // namespace iolab::commitlog
