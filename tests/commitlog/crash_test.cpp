// SIGKILL during appends, for every design. A child appends messages and,
// after each acknowledgement, reports through a pipe how many messages are
// acknowledged and how many are in the kernel (committed); the parent kills
// it after reading K reports. Nothing here waits on a clock: where the kill
// lands varies, what is checked does not. After reopening, the log must hold
// a prefix of what the child appended, in order, every body intact, at least
// every message that had reached the kernel (for all designs but
// rocketmq-transient that is every acknowledged one), and end in at most a
// torn tail.
#include <csignal>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "iolab/commitlog/commit_log.h"

namespace iolab::commitlog {
namespace {

using testing::message;

constexpr std::uint32_t kCrashTopics = 2;
constexpr std::uint64_t kBatch = 4;  // kafka: 4 consecutive messages per append, to one topic

struct Report {
  std::uint64_t acknowledged = 0;  // messages [0, acknowledged) are acknowledged
  std::uint64_t committed = 0;     // messages [0, committed) are in the kernel
};

std::uint32_t log_of_message(Design d, std::uint64_t n) {
  return traits(d).log_per_topic ? static_cast<std::uint32_t>((n / kBatch) % kCrashTopics) : 0;
}

// Messages [first, first + count) in order, kBatch per append (one topic each).
[[noreturn]] void child(const std::filesystem::path& dir, const Options& o, std::uint64_t first, int report_fd) {
  try {
    auto log = open_commit_log(dir, o);
    bool batches = traits(o.design).batches;
    std::uint64_t n = first;
    for (;;) {
      std::vector<std::vector<std::byte>> bodies;
      std::uint64_t count = batches ? kBatch - n % kBatch : 1;
      for (std::uint64_t k = 0; k < count; ++k) bodies.push_back(message(n + k));
      std::vector<std::span<const std::byte>> spans(bodies.begin(), bodies.end());
      std::uint32_t topic = static_cast<std::uint32_t>((n / kBatch) % kCrashTopics);
      Ack a = log->append(topic, spans);
      n += count;
      Report r;
      r.acknowledged = n;
      // In a shared log, sequence s holds message s - 1; a per-topic log
      // commits as it writes (its acknowledgement is Written).
      r.committed = a.level == AckLevel::Buffered ? log->positions(0).committed : n;
      if (::write(report_fd, &r, sizeof r) != sizeof r) ::_exit(3);
    }
  } catch (...) {
    ::_exit(2);
  }
}

// The numbers a log must hold, in order, if it holds messages [0, upto).
std::vector<std::uint64_t> expected_in_log(Design d, std::uint32_t log, std::uint64_t upto) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t n = 0; n < upto; ++n)
    if (log_of_message(d, n) == log) v.push_back(n);
  return v;
}

class CommitLogCrash : public ::testing::TestWithParam<Design> {};

TEST_P(CommitLogCrash, KilledWriterLosesNothingItHadWritten) {
  const Design design = GetParam();
  Options o = testing::small_options(design, kCrashTopics);
  std::mt19937 rng(static_cast<unsigned>(design) * 31 + 7);
  for (unsigned trial = 0; trial < 6; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    testing::TestDir scratch(testing::fast_scratch_parent());
    // Half the trials start from a log holding a prefix, so the killed child
    // has recovered a log before appending to it.
    std::uint64_t first = 0;
    if (trial % 2 == 1) {
      auto log = open_commit_log(scratch.path(), o);
      first = 200;
      for (std::uint64_t n = 0; n < first; n += kBatch) {
        std::vector<std::vector<std::byte>> bodies;
        for (std::uint64_t k = 0; k < kBatch; ++k) bodies.push_back(message(n + k));
        std::vector<std::span<const std::byte>> spans(bodies.begin(), bodies.end());
        if (traits(design).batches) {
          log->append(static_cast<std::uint32_t>((n / kBatch) % kCrashTopics), spans);
        } else {
          for (auto s : spans) log->append(static_cast<std::uint32_t>((n / kBatch) % kCrashTopics), s);
        }
      }
      log->close();
    }
    const std::uint64_t kill_after = 20 + rng() % 2000;  // reports read before the kill
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      child(scratch.path(), o, first, fds[1]);
    }
    ::close(fds[1]);
    Report last{first, first}, r;
    std::uint64_t reports = 0;
    while (reports < kill_after && ::read(fds[0], &r, sizeof r) == sizeof r) {
      last = r;
      ++reports;
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    while (::read(fds[0], &r, sizeof r) == sizeof r) last = r;
    ::close(fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child failed before the kill, status " << status;
    ASSERT_EQ(reports, kill_after);

    auto log = open_commit_log(scratch.path(), o);
    for (const auto& rec : log->open_report().logs) {
      if (rec.damage) {
        EXPECT_TRUE(rec.damage->torn_tail()) << rec.damage->describe();
      }
    }
    auto got = testing::numbers_in(*log);
    std::uint64_t must_have = last.committed;
    for (std::uint32_t l = 0; l < log->log_count(); ++l) {
      auto& numbers = got[l];
      auto want = expected_in_log(design, l, numbers.empty() ? 0 : numbers.back() + 1);
      EXPECT_EQ(numbers, want) << "log " << l << ": a prefix of what was appended, in order, intact";
      auto required = expected_in_log(design, l, must_have);
      EXPECT_GE(numbers.size(), required.size())
          << "log " << l << ": " << must_have << " messages had reached the kernel (" << last.acknowledged
          << " acknowledged)";
    }
    // The recovered log takes appends again.
    Ack a = log->append(0, message(999'999));
    log->close();
    EXPECT_EQ(testing::numbers_in(log->log_dir(a.log)).back(), 999'999u);
  }
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, CommitLogCrash, ::testing::ValuesIn(kAllDesigns), testing::test_name);

}  // namespace
}  // namespace iolab::commitlog
