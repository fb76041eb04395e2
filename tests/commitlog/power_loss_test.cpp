// Power loss, for every design, on the fault-injecting file system: the log
// runs on a FaultEnv that records every write, sync and directory change;
// after each append the test notes how far the log says it is durable (and
// how many operations had been recorded by then). Then crash states are
// materialized at every sync point and at points between (unsynced writes
// kept, dropped or torn at 512-byte sectors; unsynced creates lost), and the
// log is reopened on each. Every message the log had called durable before
// the crash point must be there; nothing may be read that was not written
// (the recovered log is a prefix of what was appended, every body intact);
// reopening always succeeds.
#include <cstdlib>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "commitlog/commitlog_test_util.h"
#include "internal/commitlog/designs.h"
#include "internal/commitlog/segment_reader.h"
#include "iolab/testing/fault_env.h"

namespace iolab::commitlog {
namespace {

using testing::message;

constexpr std::uint32_t kPowerLossTopics = 2;
const std::filesystem::path kDir = "/cl";

// What the log said was durable, per log, once `operations` were recorded.
struct Claim {
  std::size_t operations = 0;
  std::vector<std::uint64_t> durable;  // sequence, per log
};

struct Run {
  std::vector<std::vector<std::uint64_t>> appended;  // message numbers per log, in append order
  std::vector<Claim> claims;
};

Run run_on(io::FaultEnv& env, const Options& o, std::uint64_t messages) {
  detail::LogFs fs(env);
  auto log = detail::open_commit_log(fs, kDir, o);
  Run run;
  run.appended.resize(log->log_count());
  auto claim = [&] {
    Claim c;
    for (std::uint32_t l = 0; l < log->log_count(); ++l) c.durable.push_back(log->positions(l).durable);
    env.settle();  // stores through mappings become recorded writes: crash states can hold them
    c.operations = env.operations();  // after reading `durable`: the syncs behind it are among these
    run.claims.push_back(std::move(c));
  };
  const bool batches = traits(o.design).batches;
  for (std::uint64_t n = 0; n < messages;) {
    std::uint32_t topic = static_cast<std::uint32_t>((n / 3) % kPowerLossTopics);
    std::vector<std::vector<std::byte>> bodies;
    std::uint64_t count = batches ? 3 - n % 3 : 1;
    for (std::uint64_t k = 0; k < count; ++k) bodies.push_back(message(n + k));
    std::vector<std::span<const std::byte>> spans(bodies.begin(), bodies.end());
    Ack a = log->append(topic, spans);
    for (std::uint64_t k = 0; k < count; ++k) run.appended[a.log].push_back(n + k);
    n += count;
    claim();
  }
  log->close();
  claim();
  return run;
}

// Crash states drawn per point: 2 in ctest; IOLAB_COMMITLOG_SEEDS=N explores more.
std::uint64_t seeds_per_point() {
  const char* v = std::getenv("IOLAB_COMMITLOG_SEEDS");
  return v != nullptr && *v != '\0' ? std::max<std::uint64_t>(1, std::strtoull(v, nullptr, 10)) : 2;
}

struct Tally {
  std::uint64_t states = 0, lost = 0, foreign = 0, failed_reopens = 0;
  std::uint64_t points = 0, operations = 0;  // crash points explored, of the file operations the run made
  std::string first_problem;
  void problem(std::string what) {
    if (first_problem.empty()) first_problem = std::move(what);
  }
};

// Reopens one crash state and checks it against the claims made by `point`.
void check_state(const io::CrashState& state, std::size_t point, const Options& o, const Run& run, Tally& t,
                 const std::string& where) {
  ++t.states;
  io::FaultEnv after(state);
  detail::LogFs fs(after);
  std::unique_ptr<CommitLog> log;
  try {
    log = detail::open_commit_log(fs, kDir, o);
  } catch (const std::exception& e) {
    ++t.failed_reopens;
    t.problem(where + ": reopen failed: " + e.what());
    return;
  }
  std::vector<std::uint64_t> required(run.appended.size(), 0);
  for (const Claim& c : run.claims)
    if (c.operations <= point)
      for (std::size_t l = 0; l < c.durable.size(); ++l) required[l] = std::max(required[l], c.durable[l]);
  for (std::uint32_t l = 0; l < log->log_count(); ++l) {
    std::vector<std::uint64_t> got;
    detail::scan_log(fs, log->log_dir(l), [&](const MessageView& m) { got.push_back(testing::message_number(m.body)); });
    const auto& appended = run.appended[l];
    bool prefix = got.size() <= appended.size() && std::equal(got.begin(), got.end(), appended.begin());
    if (!prefix) {
      ++t.foreign;
      t.problem(where + ": log " + std::to_string(l) + " holds something never appended there");
    }
    if (got.size() < required[l]) {
      ++t.lost;
      t.problem(where + ": log " + std::to_string(l) + " lost durable messages: " + std::to_string(got.size()) +
                " left, " + std::to_string(required[l]) + " were durable");
    }
  }
  try {
    log->close();
  } catch (const std::exception& e) {
    ++t.failed_reopens;
    t.problem(where + ": close after reopen failed: " + e.what());
  }
}

Tally explore(Design design, std::uint64_t messages, std::size_t random_points, const io::CrashOptions& crash) {
  Options o = testing::small_options(design, kPowerLossTopics);
  o.segment_size = 16 * 1024;  // rolls, and segments created ahead, within a few hundred messages
  o.index_entries_per_file = 64;
  io::FaultEnv env(std::uint64_t{1} << 20);
  Run run = run_on(env, o, messages);

  std::vector<std::size_t> points = env.sync_points();
  std::mt19937_64 rng(static_cast<unsigned>(design) + 1);
  // `random_points` distinct points, or every one when there are no more.
  std::set<std::size_t> chosen;
  while (chosen.size() < std::min(random_points, env.operations() + 1)) chosen.insert(rng() % (env.operations() + 1));
  points.insert(points.end(), chosen.begin(), chosen.end());
  points.push_back(env.operations());
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());

  Tally t;
  t.points = points.size();
  t.operations = env.operations();
  io::CrashReplay replay(env, crash);
  for (std::size_t point : points) {
    replay.advance_to(point);
    for (std::uint64_t seed = 0; seed < seeds_per_point(); ++seed) {
      std::string where = std::string(to_string(design)) + " point " + std::to_string(point) + " seed " +
                          std::to_string(seed) + (point > 0 ? " (after: " + env.describe(point - 1) + ")" : "");
      check_state(replay.state(seed), point, o, run, t, where);
    }
  }
  return t;
}

class CommitLogPowerLoss : public ::testing::TestWithParam<Design> {};

TEST_P(CommitLogPowerLoss, DurableMessagesSurviveEveryCrashState) {
  Tally t = explore(GetParam(), 300, 60, io::CrashOptions{});
  // Every point where the run made 60 file operations or fewer (activemq
  // writes a whole batch per call), at least 60 points otherwise.
  EXPECT_GE(t.points, std::min<std::uint64_t>(60, t.operations + 1));
  EXPECT_EQ(t.lost, 0u) << t.first_problem;
  EXPECT_EQ(t.foreign, 0u) << t.first_problem;
  EXPECT_EQ(t.failed_reopens, 0u) << t.first_problem;
  std::printf("%s: %llu crash states, %llu lost, %llu foreign, %llu failed reopens\n",
              std::string(to_string(GetParam())).c_str(), static_cast<unsigned long long>(t.states),
              static_cast<unsigned long long>(t.lost), static_cast<unsigned long long>(t.foreign),
              static_cast<unsigned long long>(t.failed_reopens));
}

INSTANTIATE_TEST_SUITE_P(AllDesigns, CommitLogPowerLoss, ::testing::ValuesIn(kAllDesigns), testing::test_name);

// The checker can fail: on a disk that ignores syncs, messages the log
// called durable go missing, and the check says so.
TEST(CommitLogPowerLossChecker, CatchesADiskThatIgnoresSyncs) {
  io::CrashOptions liar;
  liar.honour_syncs = false;
  Tally t = explore(Design::GroupCommit, 100, 20, liar);
  EXPECT_GT(t.lost, 0u);
}

}  // namespace
}  // namespace iolab::commitlog
