// The decision rebuilt from records (verdict.h): the replay ends as the
// live selection did, the trust filter withdraws from the round it names,
// older or broken records are refused naming the cause, the safe choice
// per row, the JSON names scripts read; and the seeds' rules size by size.
#include "iolab/decision/verdict.h"

#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "decision/synthetic_decision.h"
#include "iolab/base/error.h"
#include "iolab/decision/schedule.h"
#include "iolab/decision/seed_rules.h"

namespace iolab::decision {
namespace {

using testing::SyntheticCandidate;
using testing::synthetic_condition;

const std::vector<std::string> kMapped{"maps_file", "positional"}, kPositional{"positional"},
    kBuffered{"user_space_buffer", "positional", "library_calls"};

Condition cond(const char* op, std::uint64_t size, const char* flush, Column col) {
  return {Row{std::string(op) == "read" ? results::Op::Read : results::Op::Write, flush, col}, size};
}

std::vector<SyntheticCandidate> three(double mmap, double pread, double stdio) {
  return {{"mmap", kMapped, mmap}, {"pread", kPositional, pread}, {"stdio", kBuffered, stdio}};
}

TEST(Verdict, TheReplayEndsAsTheLiveSelectionDid) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    auto records = synthetic_condition(cond("read", 4096, "none", Column::Warm), three(1000, 980, 500), 0.05, seed);
    Decision d = decision_from_records(records);
    ASSERT_EQ(d.conditions.size(), 1u);
    const auto& c = d.conditions[0];
    EXPECT_TRUE(c.replay_agrees) << seed;
    EXPECT_EQ(c.stop, Stop::Selected);
    ASSERT_TRUE(c.pick);
    EXPECT_NE(c.candidates[*c.pick].label, "stdio") << "half the rate of the best is never picked";
    EXPECT_TRUE(c.candidates[2].eliminated);
    EXPECT_EQ(c.rounds, records[0].extra[keys::kRounds].get<unsigned>());
  }
}

TEST(Verdict, AFarLeaderIsPickedAloneWithItsRunnerUp) {
  auto records = synthetic_condition(cond("read", 64, "none", Column::Cold), three(3000, 1000, 900), 0.02, 7);
  Decision d = decision_from_records(records);
  const auto& c = d.conditions.at(0);
  ASSERT_TRUE(c.pick);
  EXPECT_EQ(c.candidates[*c.pick].label, "mmap");
  EXPECT_EQ(c.within.size(), 1u);
  ASSERT_TRUE(c.runner_up);
  EXPECT_EQ(c.candidates[*c.runner_up].label, "pread");
  EXPECT_NEAR(c.candidates[*c.runner_up].pick_over.estimate, 3.0, 0.15);
  EXPECT_EQ(c.rounds, kFirstStage);
}

TEST(Verdict, EqualCandidatesStopTogetherWithinTheZone) {
  auto records = synthetic_condition(cond("write", 4096, "every", Column::Buffered), three(100, 100, 100), 0.01, 3);
  Decision d = decision_from_records(records);
  const auto& c = d.conditions.at(0);
  EXPECT_TRUE(c.within_zone);
  EXPECT_EQ(c.within.size(), 3u);
  EXPECT_TRUE(c.replay_agrees);
}

TEST(Verdict, ATooShortRepetitionWithdrawsFromItsRound) {
  auto records = synthetic_condition(cond("read", 4096, "none", Column::Warm), three(1000, 1000, 1000), 0.03, 5);
  // pread's third repetition lasted 10 ms: from round 3 on it is not compared (and the replay no longer matches the run).
  records[1].samples_s.at(2) = 0.010;
  Decision d = decision_from_records(records);
  const auto& c = d.conditions.at(0);
  EXPECT_NE(c.candidates[1].withdrawn.find("from round 3"), std::string::npos) << c.candidates[1].withdrawn;
  EXPECT_EQ(c.candidates[1].rounds, 2u);
  EXPECT_EQ(std::find(c.within.begin(), c.within.end(), 1u), c.within.end());
}

// A condition run by the real schedule on a fake clock, its records
// written as the live run writes them: seeded rates around each candidate's,
// and one candidate's repetition in one round lasting 10 ms, which the trust
// filter withdraws (as the run's trial reports it) in that round.
class ShortRepetitionTrial final : public ConditionTrial {
 public:
  // `out` gets the records, `ended_by_withdrawal` whether the withdrawal ended the selection (both outlive the trial).
  ShortRepetitionTrial(const Condition& c, std::vector<double> mib_s, std::uint64_t seed, std::size_t short_candidate,
                       unsigned short_round, std::vector<results::Result>& out, bool& ended_by_withdrawal)
      : c_(c), mib_s_(std::move(mib_s)), rng_(seed), short_candidate_(short_candidate), short_round_(short_round),
        samples_(mib_s_.size()), out_(out), ended_by_withdrawal_(ended_by_withdrawal) {}
  std::vector<std::string> start() override { return std::vector<std::string>(mib_s_.size()); }
  Round round(const std::vector<bool>& in_play, const std::function<bool()>&) override {
    Round r;
    r.complete = true;
    r.rates.assign(mib_s_.size(), 0);
    r.untrusted.assign(mib_s_.size(), std::nullopt);
    std::normal_distribution<double> normal(0, 1);
    for (std::size_t i = 0; i < mib_s_.size(); ++i) {
      if (!in_play[i]) continue;
      double s = kBytes / (mib_s_[i] * (1 << 20) * std::exp(0.08 * normal(rng_)));
      if (i == short_candidate_ && rounds_ == short_round_) s = 0.010;
      samples_[i].push_back(s);
      r.rates[i] = kBytes / s;
      if (i == short_candidate_ && rounds_ >= short_round_) r.untrusted[i] = "a repetition under 50 ms";
    }
    ++rounds_;
    return r;
  }
  void finish(const Selection& s, const Ending& ending) override {
    for (std::size_t i = 0; i < mib_s_.size(); ++i) {
      results::Result r;
      r.op = c_.row.op;
      r.block_size = c_.size;
      r.bytes = static_cast<std::uint64_t>(kBytes);
      r.ops = r.bytes / c_.size;
      r.passes = 1;
      r.verified = true;
      r.samples_s = samples_[i];
      r.reps = static_cast<unsigned>(r.samples_s.size());
      r.extra[keys::kCondition] = c_.key();
      r.extra[keys::kCandidate] = label(i);
      r.extra[keys::kIndex] = i;
      r.extra[keys::kStop] = to_string(ending.stop);
      r.extra[keys::kRounds] = s.rounds();
      r.extra[keys::kIndifference] = s.guarantee().indifference;
      r.extra[keys::kConfidence] = s.guarantee().confidence;
      r.extra[keys::kFirstStage] = s.first_stage();
      if (auto p = s.pick()) r.extra[keys::kPick] = label(*p);
      nlohmann::json within = nlohmann::json::array();
      for (auto w : s.survivors()) within.push_back(label(w));
      r.extra[keys::kWithin] = within;
      out_.push_back(std::move(r));
    }
    ended_by_withdrawal_ = s.rounds() == short_round_ && ending.stop == Stop::Selected;
  }

 private:
  static std::string label(std::size_t i) { return fmt::format("m{}", i); }
  static constexpr double kBytes = 1 << 30;  // about a second a repetition: only the one made short is
  Condition c_;
  std::vector<double> mib_s_;
  std::mt19937_64 rng_;
  std::size_t short_candidate_;
  unsigned short_round_, rounds_ = 0;
  std::vector<std::vector<double>> samples_;
  std::vector<results::Result>& out_;
  bool& ended_by_withdrawal_;
};

// The run's selection may end on a withdrawal, before the round that
// withdrew counts: the replay stops there too (CI saw a run stop at 13
// rounds and its replay run on to "budget").
TEST(Verdict, AWithdrawalThatEndsTheSelectionReplaysAsItRan) {
  const Condition c = cond("read", 4096, "none", Column::Warm);
  unsigned ended_by_withdrawal = 0, runs = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed)
    for (unsigned short_round : {2u, 6u, 7u, 9u}) {
      std::vector<results::Result> records;
      bool ended = false;
      ScheduleSettings s;
      s.budget_s = 1e6;
      DesignRequest request;
      request.sizes = {c.size};
      double clock = 0;
      auto make = [&](const Condition& at) {
        ScheduledCondition sc;
        sc.condition = at;
        sc.candidates = 2;
        sc.make = [&, at](double) -> std::unique_ptr<ConditionTrial> {
          return std::make_unique<ShortRepetitionTrial>(at, std::vector<double>{1000, 1030}, seed, seed % 2, short_round,
                                                        records, ended);
        };
        return sc;
      };
      auto tick = [&] { return clock += 0.01; };
      Schedule out = run_schedule({c.row}, request, make, s, tick);
      ASSERT_EQ(out.outcomes.size(), 1u);
      ended_by_withdrawal += ended;
      ++runs;
      const Decision d = decision_from_records(records);
      ASSERT_EQ(d.conditions.size(), 1u);
      EXPECT_TRUE(d.conditions[0].replay_agrees) << "seed " << seed << ", short round " << short_round << ": run stopped "
                                                 << to_string(out.outcomes[0].stop) << " after " << out.outcomes[0].rounds
                                                 << " rounds, replay " << to_string(d.conditions[0].stop) << " after "
                                                 << d.conditions[0].rounds;
    }
  // The case this test is for happened (else it would pass without it).
  EXPECT_GT(ended_by_withdrawal, 0u) << "of " << runs << " runs";
}

TEST(Verdict, ANotWarmWarningWithdrawsFromTheRoundTheJudgeRecorded) {
  auto records = synthetic_condition(cond("read", 4096, "none", Column::Warm), three(1000, 400, 300), 0.03, 9);
  records[0].cache = results::CacheState::Warm;
  records[0].warn(results::WarningKind::NotWarm, "not warm");
  records[0].extra["untrusted_from_round"] = 4;
  Decision d = decision_from_records(records);
  EXPECT_NE(d.conditions[0].candidates[0].withdrawn.find("from round 5"), std::string::npos)
      << d.conditions[0].candidates[0].withdrawn;
}

TEST(Verdict, RecordsOfTheOlderPerBandTableAreRefusedNamingTheCause) {
  results::Result r;
  r.extra["decision_cell"] = "read|< 64 B|none|warm";
  r.extra["decision_candidate"] = "mmap";
  const std::vector<results::Result> rs{r};
  EXPECT_TRUE(holds_decision(rs));
  try {
    decision_from_records(rs);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("older iolab"), std::string::npos) << e.what();
  }
}

TEST(Verdict, BrokenKeysAndGuaranteesAreRefusedNamingTheCause) {
  auto records = synthetic_condition(cond("read", 4096, "none", Column::Warm), three(1000, 400, 300), 0.03, 9);
  for (const char* key : {"read|x|none|warm", "read|4096|sometimes|warm", "read|4096|none|buffered", "scan|1|none|warm", "a|b"}) {
    auto bad = records;
    bad[0].extra[keys::kCondition] = key;
    EXPECT_THROW(decision_from_records(bad), Error) << key;
  }
  for (double indifference : {1.0, -1.0, 0.5}) {
    auto bad = records;
    for (auto& r : bad) r.extra[keys::kIndifference] = indifference;
    EXPECT_THROW(decision_from_records(bad), Error) << indifference;
  }
  auto twice = records;
  twice.push_back(records[0]);
  EXPECT_THROW(decision_from_records(twice), Error);
  auto no_index = records;
  no_index[1].extra.erase(keys::kIndex);
  EXPECT_THROW(decision_from_records(no_index), Error);
  // Counts the replay runs by are whole numbers in range, or the file is refused naming the key (issue 44 finding 9).
  for (const nlohmann::json& bad : {nlohmann::json(-5), nlohmann::json(1.5), nlohmann::json("7"), nlohmann::json(2e6)}) {
    auto r = records;
    for (auto& x : r) x.extra[keys::kRounds] = bad;
    try {
      decision_from_records(r);
      ADD_FAILURE() << "rounds " << bad.dump() << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(keys::kRounds), std::string::npos) << e.what();
    }
  }
  for (const nlohmann::json& bad : {nlohmann::json(0), nlohmann::json(1), nlohmann::json(5000), nlohmann::json(-1)}) {
    auto r = records;
    for (auto& x : r) x.extra[keys::kFirstStage] = bad;
    EXPECT_THROW(decision_from_records(r), Error) << "first stage " << bad.dump();
  }
}

TEST(Verdict, TheSafeChoiceIsTheLeastWorstRatioOverTheRow) {
  // mmap wins small sizes by far and loses big ones by a little; pread is never far behind.
  std::vector<results::Result> all;
  auto add = [&](std::uint64_t size, double mmap, double pread, double stdio, std::uint64_t seed) {
    auto rs = synthetic_condition(cond("read", size, "none", Column::Warm), three(mmap, pread, stdio), 0.02, seed);
    all.insert(all.end(), rs.begin(), rs.end());
  };
  add(64, 2000, 1500, 300, 1);
  add(4096, 2000, 1900, 400, 2);
  add(1 << 20, 900, 1000, 500, 3);
  Decision d = decision_from_records(all);
  ASSERT_EQ(d.rows.size(), 1u);
  ASSERT_TRUE(d.rows[0].safe);
  // mmap's worst is ~1.1x behind at 1 MiB, pread's ~1.33x at 64 B.
  EXPECT_EQ(d.rows[0].safe->method, "mmap");
  EXPECT_NEAR(d.rows[0].safe->worst_ratio, 1.11, 0.05);
  EXPECT_EQ(d.rows[0].safe->worst_at, 1u << 20);
  EXPECT_EQ(d.rows[0].conditions.size(), 3u);
}

TEST(Verdict, JsonNamesWhatScriptsRead) {
  auto records = synthetic_condition(cond("write", 700, "every-16k", Column::Buffered), three(100, 300, 290), 0.02, 4);
  nlohmann::json j = to_json(decision_from_records(records));
  EXPECT_EQ(j["format"], "iolab-decision");
  EXPECT_EQ(j["format_version"], 5);
  ASSERT_EQ(j["conditions"].size(), 1u);
  const auto& c = j["conditions"][0];
  EXPECT_EQ(c["op"], "write");
  EXPECT_EQ(c["size"], 700);
  EXPECT_EQ(c["flush"], "every-16k");
  EXPECT_EQ(c["column"], "buffered");
  EXPECT_EQ(c["stop"], "selected");
  ASSERT_TRUE(c["pick"].is_string());
  ASSERT_TRUE(c["within"].is_array());
  EXPECT_EQ(c["within"][0], c["pick"]);
  EXPECT_EQ(j["rows"][0]["picks"][0]["pick"], c["pick"]);
}

TEST(SeedRules, JudgedSizeBySizeByTheKindOfThePick) {
  std::vector<results::Result> all;
  auto add = [&](std::uint64_t size, double mmap, double pread, double stdio, std::uint64_t seed) {
    auto rs = synthetic_condition(cond("read", size, "none", Column::Cold), three(mmap, pread, stdio), 0.02, seed);
    all.insert(all.end(), rs.begin(), rs.end());
  };
  add(8, 3000, 1000, 900, 1);       // mmap: "reads under 4 KiB: mmap wins" holds here
  add(512, 800, 2000, 700, 2);      // ... and fails here
  add(32768, 800, 2000, 700, 3);    // "over 4 KiB: the others beat mmap" holds
  add(1 << 20, 800, 2000, 700, 4);  // "at 1 MiB pread beats mmap" holds
  auto rules = seed_rules(decision_from_records(all));
  auto find = [&](const std::string& says, const std::string& seed) {
    for (const auto& r : rules)
      if (r.says.find(says) != std::string::npos && r.seed == seed) return r;
    ADD_FAILURE() << says;
    return SeedRuleRow{};
  };
  auto under = find("reads under 4 KiB", "004");
  EXPECT_EQ(under.agrees, "partly") << under.machine;
  EXPECT_NE(under.machine.find("at 8 B: mmap"), std::string::npos) << under.machine;
  EXPECT_NE(under.machine.find("at 512 B: pread"), std::string::npos) << under.machine;
  EXPECT_EQ(find("reads over 4 KiB", "004").agrees, "yes");
  EXPECT_EQ(find("at 1 MiB buffers", "001").agrees, "yes");
  EXPECT_EQ(find("writes under 64 B", "004").agrees, "not in this table");
}

}  // namespace
}  // namespace iolab::decision
