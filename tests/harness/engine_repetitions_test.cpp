// How the engine makes repetitions of passes: passes per repetition from the
// fastest warm-up pass, repetitions far under min_time redone with more
// passes, the data checked in full once every repetition, max_time bounding
// the wall time including untimed work (on a fake clock), and a repetition in
// parts.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/harness/engine.h"
#include "iolab/results/thresholds.h"

namespace iolab::harness {
namespace {

// Passes that sleep: the first warm-up pass `first_ms`, later warm-ups
// `warmup_ms`; timed passes follow `phases` ({count, ms} in order), then
// sleep `other_ms`. Sleeps are lower bounds, so a loaded machine only makes
// passes longer.
class SleepingPasses final : public Workload {
 public:
  SleepingPasses(int first_ms, int warmup_ms, int other_ms, std::vector<std::pair<int, int>> phases = {})
      : first_(first_ms), warmup_(warmup_ms), other_(other_ms), phases_(std::move(phases)) {}
  PassBody pass(PassKind kind) override {
    PassBody b;
    b.timed = [this, kind](unsigned) {
      int ms = other_;
      if (kind == PassKind::Warmup) ms = warmups++ == 0 ? first_ : warmup_;
      if (kind == PassKind::Timed) {
        int at = timed++;
        for (auto [count, phase_ms] : phases_) {
          if (at < count) {
            ms = phase_ms;
            break;
          }
          at -= count;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return WorkerTally{4096, 1, 1};
    };
    return b;
  }
  int warmups = 0, timed = 0;

 private:
  int first_, warmup_, other_;
  std::vector<std::pair<int, int>> phases_;
};

EngineSettings calibrating(unsigned reps) {
  EngineSettings s;
  s.reps = reps;
  s.warmup = 1;
  s.min_time = 0.1;
  s.latency = false;
  return s;
}

// The first warm-up pass often pays for page faults: passes per repetition
// come from the fastest warm-up pass, not the first. Here the first pass
// sleeps 60 ms and every later one 5 ms; judged by the first, 2 passes would
// make a 100 ms repetition (and repetitions of ~10 ms). The bound below fails
// only if every later warm-up pass overslept by 15 ms.
TEST(Engine, PassesPerRepetitionComeFromTheFastestWarmupPass) {
  SleepingPasses w(60, 5, 5);
  LocalTeam team(1);
  results::Result r;
  ASSERT_TRUE(measure(w, team, calibrating(1), r));
  EXPECT_GE(w.warmups, 2);
  EXPECT_GE(r.passes, 5u);
}

// Warm-up passes slower than every timed one (40 ms against 2 ms): the first
// repetition comes in far under min_time, is taken as a warm-up, and the
// passes are recomputed from it. Judged by the warm-ups alone, 3 passes
// would make a repetition (~6 ms). The bound below fails only if the first
// repetition's passes overslept by 8 ms each.
TEST(Engine, AFirstRepetitionFarUnderMinTimeIsRedoneWithMorePasses) {
  SleepingPasses w(40, 40, 2);
  LocalTeam team(1);
  results::Result r;
  ASSERT_TRUE(measure(w, team, calibrating(2), r));
  EXPECT_EQ(r.samples_s.size(), 2u);  // the discarded repetition is not among them
  EXPECT_GE(r.passes, 10u);
}

// Passes that speed up only after the first repetition: warm-ups and the
// first repetition's 3 passes sleep 40 ms (3 passes make 100 ms), every
// later pass 2 ms, so the second repetition comes in far under min_time
// (~6 ms). It is the one that has the repetitions redone with more passes.
// The bound below fails only if the second repetition's passes overslept by
// 23 ms each.
TEST(Engine, ALaterRepetitionFarUnderMinTimeHasThemRedoneWithMorePasses) {
  SleepingPasses w(40, 40, 2, {{3, 40}});
  LocalTeam team(1);
  results::Result r;
  ASSERT_TRUE(measure(w, team, calibrating(3), r));
  EXPECT_EQ(r.samples_s.size(), 3u);  // the repetitions before the redo are not among them
  EXPECT_GE(r.passes, 10u);
}

// Passes that speed up twice (as overwrites do while writeback settles):
// 40 ms for the warm-ups and the first repetition's 3 passes, then 10 ms
// (the second repetition, ~30 ms, has them redone with 10 passes), then,
// after one repetition of those, 1 ms (10 ms repetitions: redone again,
// with about 100 passes). With one redo only, 10 passes stay.
TEST(Engine, PassesThatSpeedUpTwiceAreRecalibratedTwice) {
  SleepingPasses w(40, 40, 1, {{3, 40}, {13, 10}});
  LocalTeam team(1);
  results::Result r;
  ASSERT_TRUE(measure(w, team, calibrating(3), r));
  EXPECT_EQ(r.samples_s.size(), 3u);
  EXPECT_GE(r.passes, 30u);
}

// At a min_time of 50 ms, 3/4 of it (37.5 ms) would keep repetitions that
// a comparison then leaves out as too short (under 50 ms). Warm-ups of
// 30 ms make 2 passes a repetition, and timed passes of 19 ms make 38 ms:
// kept by 3/4, redone by the too-short bound with 3 passes. The check fails
// only if every timed pass overslept by 6 ms.
TEST(Engine, RepetitionsUnderTheTooShortBoundAreRedoneWhenMinTimeAskedForThatMuch) {
  SleepingPasses w(30, 30, 19);
  LocalTeam team(1);
  results::Result r;
  EngineSettings s = calibrating(2);
  s.min_time = 0.05;
  ASSERT_TRUE(measure(w, team, s, r));
  EXPECT_GE(r.passes, 3u);
  for (double t : r.samples_s) EXPECT_GE(t, results::thresholds::kTooShortSeconds);
  EXPECT_FALSE(r.has_warning(results::WarningKind::TooShort));
}

// Records the data check the engine asked for before each pass.
class CheckRecorder final : public Workload {
 public:
  PassBody pass(PassKind) override {
    PassBody b;
    b.timed = [](unsigned) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return WorkerTally{4096, 1, 1};
    };
    return b;
  }
  void after_pass(PassKind kind) override { seen.emplace_back(kind, data_check()); }
  std::vector<std::pair<PassKind, DataCheck>> seen;
};

// Every byte is checked on the verify and latency passes and on the first
// pass of every repetition; warm-ups and the other passes get the tail check.
TEST(Engine, DataIsCheckedInFullOnceEveryRepetition) {
  CheckRecorder w;
  LocalTeam team(1);
  results::Result r;
  EngineSettings s = calibrating(3);
  s.min_time = 0.02;
  s.latency = true;
  ASSERT_TRUE(measure(w, team, s, r));
  ASSERT_GT(r.passes, 1u) << "passes of 2 ms make a 20 ms repetition of several";
  ASSERT_GE(w.seen.size(), 3u);
  EXPECT_EQ(w.seen.front(), std::make_pair(PassKind::Verify, DataCheck::Full));
  EXPECT_EQ(w.seen.back(), std::make_pair(PassKind::Latency, DataCheck::Full));
  std::vector<unsigned> groups;  // timed passes per run starting at a full check
  for (const auto& [kind, check] : w.seen) {
    if (kind == PassKind::Warmup) {
      EXPECT_EQ(check, DataCheck::Tail);
    }
    if (kind != PassKind::Timed) continue;
    if (check == DataCheck::Full) groups.push_back(0);
    ASSERT_FALSE(groups.empty()) << "the first timed pass is checked in full";
    ++groups.back();
  }
  ASSERT_GE(groups.size(), 3u);  // one per repetition (and a redone first repetition's)
  for (std::size_t g = groups.size() - 3; g < groups.size(); ++g) EXPECT_EQ(groups[g], r.passes);
}

// state, checks, a fresh file), all on a fake clock the engine budgets by.
// The team runs the pass inline and reports the fixed 1 us, so nothing
// here depends on how fast the machine is.
struct FakeClock {
  double now = 0;
};
class FixedTimeTeam final : public Team {
 public:
  explicit FixedTimeTeam(FakeClock& clock) : clock_(clock) {}
  unsigned workers() const override { return 1; }
  std::vector<unsigned> local_workers() const override { return {0}; }
  PassTiming run(const PassBody& body) override {
    if (body.prepare) body.prepare(0);
    PassTiming t;
    t.tally = body.timed(0);
    if (body.finish) body.finish(0);
    t.seconds = t.first_done_s = t.last_done_s = kTimed;
    t.worker_s = {kTimed};
    clock_.now += kTimed;
    ++passes;
    return t;
  }
  std::string clock_description() const override { return "fake"; }
  static constexpr double kTimed = 1e-6;
  unsigned passes = 0;

 private:
  FakeClock& clock_;
};
class SlowUntimedWork final : public Workload {
 public:
  explicit SlowUntimedWork(FakeClock& clock) : clock_(clock) {}
  void before_pass(PassKind) override { clock_.now += kUntimed; }
  PassBody pass(PassKind) override {
    PassBody b;
    b.timed = [](unsigned) { return WorkerTally{4096, 1, 1}; };
    return b;
  }
  static constexpr double kUntimed = 1e-3;

 private:
  FakeClock& clock_;
};

EngineSettings budgeted(FakeClock& clock) {
  EngineSettings s;
  s.reps = 5;
  s.warmup = 1;
  s.min_time = 0.1;
  s.max_time = 1.0;
  s.latency = false;
  s.clock = [&clock] { return clock.now; };
  return s;
}

// Sized by the timed microsecond alone, a repetition would be 100000
// passes (500 s of untimed work for 5 of them); the budget counts the
// untimed millisecond, so the experiment ends within max_time and one pass,
// and the record says why its repetitions are too short.
TEST(Engine, MaxTimeBoundsTheWallTimeIncludingUntimedWork) {
  FakeClock clock;
  FixedTimeTeam team(clock);
  SlowUntimedWork w(clock);
  results::Result r;
  const EngineSettings s = budgeted(clock);
  ASSERT_TRUE(measure(w, team, s, r));
  const double per_pass = FixedTimeTeam::kTimed + SlowUntimedWork::kUntimed;
  EXPECT_LE(clock.now, s.max_time + per_pass);
  EXPECT_EQ(r.samples_s.size(), 5u);
  EXPECT_GE(r.passes, 100u);  // still lengthened, as far as the budget goes
  bool said_why = false;
  for (const auto& warning : r.warnings)
    said_why |= warning.kind == results::WarningKind::TooShort && warning.text.find("untimed") != std::string::npos;
  EXPECT_TRUE(said_why);
  EXPECT_NEAR(r.extra.at("untimed_s_per_pass").get<double>(), SlowUntimedWork::kUntimed, 1e-9);
}

// The same in interleaved rounds: start()'s calibration repetition comes
// out of the budget too.
TEST(Engine, MaxTimeBoundsAMeasurementsCalibrationAndRepetitions) {
  FakeClock clock;
  FixedTimeTeam team(clock);
  SlowUntimedWork w(clock);
  results::Result r;
  const EngineSettings s = budgeted(clock);
  Measurement m(w, team, s, r);
  ASSERT_TRUE(m.start());
  for (unsigned i = 0; i < s.reps; ++i) ASSERT_TRUE(m.repetition());
  ASSERT_TRUE(m.finish());
  EXPECT_LE(clock.now, s.max_time + FixedTimeTeam::kTimed + SlowUntimedWork::kUntimed);
  EXPECT_EQ(r.samples_s.size(), 5u);
  EXPECT_GE(r.passes, 100u);
}

// A repetition in parts (Rounds alternates candidates a few passes at a
// time): the parts add up to one recorded repetition of exactly the
// passes start() sized, a part asking for more than are left runs only
// those, and an abandoned one is not recorded.
TEST(Engine, ARepetitionInPartsIsOneRepetitionOfItsPasses) {
  FakeClock clock;
  FixedTimeTeam team(clock);
  SlowUntimedWork w(clock);
  results::Result r;
  EngineSettings s = budgeted(clock);
  s.max_time = 1e6;  // no budget cap: passes from min_time alone
  s.min_time = 10 * FixedTimeTeam::kTimed;
  Measurement m(w, team, s, r);
  ASSERT_TRUE(m.start());
  const unsigned passes = m.passes();
  ASSERT_EQ(passes, 10u);
  const unsigned before = team.passes;
  ASSERT_TRUE(m.repetition_part(3));
  EXPECT_EQ(m.passes_left(), 7u);
  EXPECT_EQ(m.repetitions(), 0u);
  ASSERT_TRUE(m.repetition_part(3));
  ASSERT_TRUE(m.repetition_part(100));
  EXPECT_EQ(team.passes - before, passes);
  EXPECT_EQ(m.repetitions(), 1u);
  EXPECT_EQ(m.passes_left(), passes);
  ASSERT_TRUE(m.repetition_part(4));
  m.abandon_repetition();
  EXPECT_EQ(m.passes_left(), passes);
  ASSERT_TRUE(m.repetition());
  EXPECT_EQ(m.repetitions(), 2u);
  ASSERT_TRUE(m.finish());
  ASSERT_EQ(r.samples_s.size(), 2u);
  for (double t : r.samples_s) EXPECT_NEAR(t, passes * FixedTimeTeam::kTimed, 1e-12);
  EXPECT_EQ(r.passes, passes);
}


}  // namespace
}  // namespace iolab::harness
