// The cost model (issue 42) on synthetic sweeps whose costs are known: the
// fit recovers them, finds the crossover where it is, names a knee.
#include "iolab/report/cost_model.h"
#include "iolab/report/html.h"
#include "iolab/results/statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

// Named: the report tests are a unity build.
namespace cost_model_test {

using iolab::results::Result;
using iolab::report::CostTerm;

struct Costs {
  double call = 0, byte = 0, fault = 0, flush = 0;  // seconds each
};

struct Counts {
  double calls = 0, bytes = 0, faults = 0, flushes = 0;  // per pass
};

// A record as `iolab run` writes it: counts per repetition of `passes`
// passes, each repetition's time the costs' sum times a symmetric wobble
// (so the median repetition is exact).
Result record(const std::string& method, iolab::results::Op op, std::uint64_t block, std::uint64_t file, const Counts& n,
              double pass_s, const std::string& sync = "none") {
  Result r;
  r.suite = "packet-sweep";
  r.experiment = "synthetic";
  r.method = method;
  r.op = op;
  r.block_size = block;
  r.file_size = file;
  r.cache = op == iolab::results::Op::Read ? std::optional(iolab::results::CacheState::Warm) : std::nullopt;
  r.sync = iolab::io::parse_flush_policy(sync);
  r.reps = 5;
  r.passes = 3;
  r.bytes = static_cast<std::uint64_t>(n.bytes) * r.passes;
  r.ops = static_cast<std::uint64_t>(n.calls) * r.passes;
  r.io_calls = r.ops;
  r.minor_faults = static_cast<std::int64_t>(n.faults) * r.passes;
  if (n.flushes > 0) r.extra["flushes"] = n.flushes;
  for (double k : {-0.01, 0.004, 0.0, -0.004, 0.01}) r.samples_s.push_back(pass_s * r.passes * (1 + k));
  r.verified = true;
  return r;
}

double cost(const Costs& c, const Counts& n) {
  return n.calls * c.call + n.bytes * c.byte + n.faults * c.fault + n.flushes * c.flush;
}

// A read of `file` bytes in `block`-byte calls.
Result reader(const std::string& method, const Costs& c, std::uint64_t block, std::uint64_t file) {
  Counts n{static_cast<double>(file / block), static_cast<double>(file), 0, 0};
  return record(method, iolab::results::Op::Read, block, file, n, cost(c, n));
}

double coefficient(const iolab::report::CostFit& f, CostTerm t) { return f.coefficients[static_cast<std::size_t>(t)]; }

TEST(CostModel, RecoversKnownCoefficientsOfAllFourTermsWithin2Percent) {
  // Writes with a flush policy, two file sizes, faults that thin out for
  // large calls: four counts no one of which is proportional to another.
  const Costs c{300e-9, 0.2e-9, 0.5e-6, 1e-3};
  std::vector<Result> rs;
  for (std::uint64_t file : {1u << 20, 4u << 20})
    for (std::uint64_t block = 512; block <= (256u << 10); block *= 4) {
      Counts n;
      n.calls = static_cast<double>(file / block);
      n.bytes = static_cast<double>(file);
      n.faults = static_cast<double>(file) / 4096 * (block >= (64u << 10) ? 0.25 : 1.0);
      n.flushes = block <= (16u << 10) ? static_cast<double>(file / (16u << 10)) : n.calls;
      rs.push_back(record("pwrite", iolab::results::Op::Write, block, file, n, cost(c, n), "every-16k"));
    }
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 1u);
  const auto& f = m.fits[0];
  EXPECT_EQ(f.op, "write");
  EXPECT_EQ(f.column, "buffered");
  ASSERT_EQ(f.terms.size(), 4u);
  EXPECT_NEAR(coefficient(f, CostTerm::Calls), c.call, 0.02 * c.call);
  EXPECT_NEAR(coefficient(f, CostTerm::Bytes), c.byte, 0.02 * c.byte);
  EXPECT_NEAR(coefficient(f, CostTerm::Faults), c.fault, 0.02 * c.fault);
  EXPECT_NEAR(coefficient(f, CostTerm::Flushes), c.flush, 0.02 * c.flush);
  for (const auto& t : f.terms) {
    EXPECT_LE(t.seconds.low, t.seconds.estimate * 1.0001) << to_string(t.term);
    EXPECT_GE(t.seconds.high, t.seconds.estimate * 0.9999) << to_string(t.term);
  }
  ASSERT_TRUE(f.loo_median_abs_error && f.loo_p90_abs_error);
  EXPECT_LT(*f.loo_p90_abs_error, 0.05);  // leaving a size out can leave two terms nearly collinear
  EXPECT_FALSE(f.missing);
  ASSERT_TRUE(m.validation.loo_median_abs_error);
  EXPECT_LT(*m.validation.loo_median_abs_error, 0.01);
}

TEST(CostModel, DropsTermsTheRecordsCannotCarryAndSaysWhy) {
  // Reads of one file size: no flushes, and the faults are a handful per
  // pass (the process's own), so only calls and bytes are fitted.
  const Costs c{400e-9, 0.1e-9, 0, 0};
  std::vector<Result> rs;
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
    Result r = reader("pread", c, block, 4u << 20);
    r.minor_faults = 2 * r.passes;
    rs.push_back(r);
  }
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 1u);
  const auto& f = m.fits[0];
  ASSERT_EQ(f.terms.size(), 2u);
  EXPECT_NEAR(coefficient(f, CostTerm::Calls), c.call, 0.02 * c.call);
  EXPECT_NEAR(coefficient(f, CostTerm::Bytes), c.byte, 0.02 * c.byte);
  ASSERT_EQ(f.dropped.size(), 4u);
  EXPECT_EQ(f.dropped[0].term, CostTerm::Faults);
  EXPECT_NE(f.dropped[0].reason.find("fewer than 1 fault per MiB"), std::string::npos);
  EXPECT_EQ(f.dropped[1].term, CostTerm::Flushes);
  EXPECT_EQ(f.dropped[2].term, CostTerm::SystemCalls);  // pread's calls are its system calls
  EXPECT_NE(f.dropped[2].reason.find("proportional to calls"), std::string::npos);
  EXPECT_EQ(f.dropped[3].term, CostTerm::Folios);  // a read allocates no page-cache folio of its own
}

TEST(CostModel, ChargesTheSystemCallsUnderALibrarysCalls) {
  // stdio: 20 ns per fread, a 600 ns read(2) per 4 KiB buffer (one per call
  // from 4 KiB on), 0.1 ns per byte. With one call term the 64 B and 4 KiB
  // records could not both fit.
  const double call = 20e-9, syscall = 600e-9, byte = 0.1e-9;
  std::vector<Result> rs;
  const std::uint64_t file = 4u << 20;
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
    const double calls = double(file / block), syscalls = double(file / std::max<std::uint64_t>(block, 4096));
    Counts n{calls, double(file), 0, 0};
    Result r = record("stdio", iolab::results::Op::Read, block, file, n, calls * call + syscalls * syscall + file * byte);
    r.io_calls = static_cast<std::uint64_t>(syscalls) * r.passes;
    rs.push_back(r);
  }
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 1u);
  const auto& f = m.fits[0];
  EXPECT_NEAR(coefficient(f, CostTerm::Calls), call, 0.02 * call);
  EXPECT_NEAR(coefficient(f, CostTerm::SystemCalls), syscall, 0.02 * syscall);
  EXPECT_NEAR(coefficient(f, CostTerm::Bytes), byte, 0.02 * byte);
  ASSERT_TRUE(f.loo_p90_abs_error);
  EXPECT_LT(*f.loo_p90_abs_error, 0.02);
  EXPECT_NE(iolab::report::format_text(m).find("ns/syscall"), std::string::npos);
  // A script rechecking the fit from `--json` needs every count the fit used.
  const auto j = iolab::report::to_json(m)["fits"][0]["points"][0];
  ASSERT_TRUE(j.contains("system_calls"));
  EXPECT_EQ(j["system_calls"].get<double>(), f.points[0].counts[4]);
}

TEST(CostModel, TakesANeighboursTimeOutOfARecordThatNeverSlept) {
  // Every repetition took 1.5x its CPU time: a neighbour had the core for
  // the rest. A record that never slept is fitted on its CPU time; one that
  // slept (a device wait) keeps its elapsed time.
  const Costs c{400e-9, 0.1e-9, 0, 0};
  for (std::int64_t sleeps : {0, 3}) {
    std::vector<Result> rs;
    for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
      Result r = reader("pread", c, block, 4u << 20);
      const double cpu = iolab::results::median(r.samples_s);
      for (double& x : r.samples_s) x *= 1.5;
      r.sys_s = cpu * 0.9;
      r.user_s = cpu * 0.1;
      r.voluntary_ctx = sleeps;
      r.involuntary_ctx = 40;
      rs.push_back(r);
    }
    auto m = iolab::report::fit_cost_model(rs);
    ASSERT_EQ(m.fits.size(), 1u);
    const double k = sleeps == 0 ? 1.0 : 1.5;
    EXPECT_NEAR(coefficient(m.fits[0], CostTerm::Calls), k * c.call, 0.02 * k * c.call) << sleeps;
    EXPECT_NEAR(coefficient(m.fits[0], CostTerm::Bytes), k * c.byte, 0.02 * k * c.byte) << sleeps;
  }
}

// Call-dear: 1 µs per call, 2 GB/s; byte-dear: 100 ns per call, 1 GB/s. Per
// byte they are equal where 0.9 µs / s = 0.5 ns: s = 1800 bytes; the byte-dear
// one is cheaper below.
const Costs kCallDear{1e-6, 0.5e-9, 0, 0}, kByteDear{100e-9, 1e-9, 0, 0};

void expect_one_crossover_at_their_size(const iolab::report::CostModel& m, std::size_t fits, const std::string& below,
                                        const std::string& above) {
  ASSERT_EQ(m.fits.size(), fits);
  ASSERT_EQ(m.crossovers.size(), 1u);
  EXPECT_EQ(m.crossovers[0].below, below);
  EXPECT_EQ(m.crossovers[0].above, above);
  EXPECT_NEAR(m.crossovers[0].size_bytes.estimate, 1800, 1800 * 0.02);
}

TEST(CostModel, FindsTheCrossoverWhereItIs) {
  std::vector<Result> rs;
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
    rs.push_back(reader("a", kCallDear, block, 4u << 20));
    rs.push_back(reader("b", kByteDear, block, 4u << 20));
  }
  auto m = iolab::report::fit_cost_model(rs);
  expect_one_crossover_at_their_size(m, 2, "b", "a");
  if (HasFatalFailure()) return;
  const auto& x = m.crossovers[0];
  EXPECT_LE(x.size_bytes.low, x.size_bytes.estimate);
  EXPECT_GE(x.size_bytes.high, x.size_bytes.estimate);
  EXPECT_GT(x.size_bytes.low, 1200);
  EXPECT_LT(x.size_bytes.high, 2700);
  EXPECT_GE(x.resamples_crossing, 0.5);
}

TEST(CostModel, ComparesEachMethodsOwnDataSyncOnOneScheduleNotFsync) {
  // A mapping's msync and pread's fdatasync after every write make the data
  // durable alike: the two cross (at 1800 bytes, as above) and the crossover
  // names the schedule. syscall's fsync also writes metadata: not compared.
  auto writer = [](const std::string& method, const Costs& c, std::uint64_t block, const std::string& sync) {
    const std::uint64_t file = 4u << 20;
    Counts n{static_cast<double>(file / block), static_cast<double>(file), 0, 0};
    return record(method, iolab::results::Op::Write, block, file, n, cost(c, n), sync);
  };
  std::vector<Result> rs;
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
    rs.push_back(writer("mmap", kCallDear, block, "every:msync"));
    rs.push_back(writer("pread", kByteDear, block, "every:fdatasync"));
    rs.push_back(writer("syscall", kByteDear, block, "every:fsync"));
  }
  auto m = iolab::report::fit_cost_model(rs);
  expect_one_crossover_at_their_size(m, 3, "pread", "mmap");
  if (HasFatalFailure()) return;
  EXPECT_EQ(m.crossovers[0].flush, "every");
}

TEST(CostModel, NamesTheKneeTheFormulaLacks) {
  // A copy that slows to a quarter of its speed from 1 MiB calls on (the
  // buffer out of a CPU cache): one byte term cannot fit both sides.
  std::vector<Result> rs;
  const std::uint64_t file = 64u << 20;
  for (std::uint64_t block = 4096; block <= file; block *= 4) {
    const Costs c{500e-9, block >= (1u << 20) ? 0.4e-9 : 0.1e-9, 0, 0};
    rs.push_back(reader("copy", c, block, file));
  }
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 1u);
  const auto& f = m.fits[0];
  ASSERT_TRUE(f.missing);
  EXPECT_EQ(f.missing->term, "bytes_above_knee");
  EXPECT_EQ(f.missing->knee_bytes, 1u << 20);
  EXPECT_EQ(f.missing->below_bytes, 256u << 10);
  EXPECT_NEAR(f.missing->extra_seconds_per_byte, 0.3e-9, 0.02 * 0.3e-9);
  EXPECT_GE(f.missing->residual_p90, 0.10);
  EXPECT_LT(f.missing->residual_p90_with_term, 0.01);
  EXPECT_NE(iolab::report::format_text(m).find("missing term bytes_above_knee"), std::string::npos);
}

TEST(CostModel, SaysWhichLeftOutSizesWerePredictedByExtrapolation) {
  // Left out, the smallest and the largest size are predicted beyond the
  // sizes the other fits had; the sizes between are not.
  const Costs c{400e-9, 0.1e-9, 0, 0};
  std::vector<Result> rs;
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) rs.push_back(reader("pread", c, block, 4u << 20));
  auto m = iolab::report::fit_cost_model(rs);
  ASSERT_EQ(m.fits.size(), 1u);
  for (const auto& p : m.fits[0].points) {
    ASSERT_TRUE(p.loo_predicted_s) << p.size;
    EXPECT_EQ(p.loo_extrapolated, p.size == 64 || p.size == (1u << 20)) << p.size;
  }
  EXPECT_EQ(m.validation.range_points, 8u);
  EXPECT_EQ(m.validation.range_extrapolated_points, 2u);
  EXPECT_NE(iolab::report::validation_text(m.validation).find("(2 of them a fit's smallest or largest size"), std::string::npos);
  const auto j = iolab::report::to_json(m);
  EXPECT_EQ(j["validation"]["range"]["extrapolated_points"], 2);
  EXPECT_EQ(j["fits"][0]["points"][0]["loo_extrapolated"], true);
  EXPECT_EQ(j["fits"][0]["points"][1]["loo_extrapolated"], false);
}

TEST(CostModel, IsDeterministicAndIgnoresWhatIsNotASweep) {
  const Costs c{400e-9, 0.1e-9, 0, 0};
  std::vector<Result> rs;
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) rs.push_back(reader("pread", c, block, 4u << 20));
  // Two sizes only, a random pattern, several threads: no fit of their own.
  rs.push_back(reader("mmap", c, 4096, 4u << 20));
  rs.push_back(reader("mmap", c, 65536, 4u << 20));
  Result random = reader("pread", c, 4096, 4u << 20);
  random.pattern = iolab::results::AccessPattern::Rand;
  rs.push_back(random);
  Result threads = reader("pread", c, 4096, 4u << 20);
  threads.threads = 2;
  rs.push_back(threads);
  auto one = iolab::report::to_json(iolab::report::fit_cost_model(rs));
  auto two = iolab::report::to_json(iolab::report::fit_cost_model(rs));
  EXPECT_EQ(one.dump(), two.dump());
  ASSERT_EQ(one["fits"].size(), 1u);
  EXPECT_EQ(one["fits"][0]["method"], "pread");
  EXPECT_EQ(one["fits"][0]["points"].size(), 8u);
  for (const char* name : {"loo_median_abs_error", "loo_p90_abs_error", "coefficients", "readable", "missing_term"})
    EXPECT_TRUE(one["fits"][0].contains(name)) << name;
  EXPECT_NEAR(one["fits"][0]["readable"]["ns_per_call"]["estimate"].get<double>(), 400, 8);
  EXPECT_NEAR(one["fits"][0]["readable"]["gb_per_s"]["estimate"].get<double>(), 10, 0.2);
  EXPECT_TRUE(one["validation"].contains("loo_median_abs_error"));
  EXPECT_TRUE(one["validation"].contains("loo_p90_abs_error"));

  std::vector<Result> none(rs.end() - 4, rs.end());
  EXPECT_TRUE(iolab::report::fit_cost_model(none).fits.empty());
}

TEST(CostModel, TheHtmlReportTablesTheModelOfASweep) {
  const Costs a{1e-6, 0.5e-9, 0, 0}, b{100e-9, 1e-9, 0, 0};
  iolab::results::Results run;
  for (std::uint64_t block = 64; block <= (1u << 20); block *= 4) {
    run.results.push_back(reader("a", a, block, 4u << 20));
    run.results.push_back(reader("b", b, block, 4u << 20));
  }
  std::string page = iolab::report::render_html_report({run});
  EXPECT_NE(page.find("<section id=\"model\">"), std::string::npos);
  EXPECT_NE(page.find("<table class=\"model\">"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"num\">1,000 ("), std::string::npos);
  EXPECT_NE(page.find("ns/call"), std::string::npos);
  EXPECT_NE(page.find("read, warm, flush none: b below 1.76 KiB"), std::string::npos);
  iolab::results::Results none;
  none.results.push_back(reader("a", a, 4096, 4u << 20));
  EXPECT_NE(iolab::report::render_html_report({none}).find("No sweep in this run"), std::string::npos);
}

}  // namespace cost_model_test
