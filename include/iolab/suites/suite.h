// The seed experiments, each a named suite that yields Result records.
// What each suite is sits in one catalogue (registry.cpp); the class that
// runs it registers itself (see SuiteRegistration); `iolab suites` lists them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "iolab/results/record.h"
#include "iolab/harness/runner.h"

namespace iolab::suites {

// How big to make the experiments: tiny (tests, seconds), quick (<= 60 s for
// the seeds), default (<= 5 min for the seeds), full (the seeds' own sizes).
enum class Scale { Tiny, Quick, Default, Full };
std::string_view to_string(Scale);
Scale parse_scale(std::string_view);

struct SuiteOptions {
  Scale scale = Scale::Default;
  std::uint64_t records = 0;           // store: records (0 = the suite's default for the scale)
  std::vector<unsigned> threads;       // parallel: worker counts (empty = the suite's default)
  std::optional<std::uint64_t> memory_limit = std::nullopt;  // memory: the cgroup's limit in bytes (none: the suite's default for the scale)
};

// Whether a suite runs by default (`seeds`) or only when named.
enum class SuiteGroup { Seeds, ByName };

// What a suite is, for `iolab suites` and `iolab run`: data the Suite base
// answers with, from the catalogue.
struct SuiteInfo {
  std::string_view name;         // "seq-read"
  std::string_view seed;         // "001", "002 #1-#2", ...
  std::string_view description;  // one line: what it measures
  // The run option this suite reads ("--threads", "--records"), if any:
  // `iolab run` refuses one that none of the chosen suites reads.
  std::string_view reads_option = {};
  // How the suite repeats a measurement when it does not take the run's
  // repetition settings (--reps, --warmup, --min-time, --max-time, the
  // latency pass): one line the run header prints instead of them for this
  // suite. Empty: it takes them.
  std::string_view own_repetitions = {};
  SuiteGroup group = SuiteGroup::Seeds;  // most suites are a seed's, run by default
};

class Suite {
 public:
  explicit Suite(const SuiteInfo& info) : info_(info) {}
  virtual ~Suite() = default;
  std::string_view name() const { return info_.name; }
  std::string_view seed() const { return info_.seed; }
  std::string_view description() const { return info_.description; }
  bool reads_option(std::string_view flag) const { return !info_.reads_option.empty() && flag == info_.reads_option; }
  std::string_view own_repetitions() const { return info_.own_repetitions; }
  // Throws UsageError for options this suite cannot run with (a record
  // count out of range). `iolab run` calls it for every chosen suite before
  // any work starts.
  virtual void check(const SuiteOptions&) const {}
  // Runs every experiment through the runner; results in a stable order.
  virtual std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const = 0;

 private:
  SuiteInfo info_;
};

// Every registered suite, in catalogue order.
std::vector<const Suite*> all_suites();
// The `seeds` group (what `iolab run` runs by default, every seed's
// experiments): the suites catalogued with SuiteGroup::Seeds.
std::vector<const Suite*> seed_suites();
// Throws UsageError naming the unknown suite and listing the known ones.
const Suite& find_suite(std::string_view name);

// The catalogue's entry for the suite `name` (std::logic_error if it has none).
const SuiteInfo& catalogued(std::string_view name);

// A suite's .cpp registers one instance, which the registry keeps:
// `const SuiteRegistration direct_registration{std::make_unique<DirectSuite>(catalogued("direct"))};`
// Names are unique per file because a unity build compiles several suites as one unit.
struct SuiteRegistration {
  explicit SuiteRegistration(std::unique_ptr<const Suite> suite);
};

}  // namespace iolab::suites
