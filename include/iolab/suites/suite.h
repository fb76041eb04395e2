// The seed experiments, each a named suite that yields Result records.
// Suites register themselves (see SuiteRegistration); `iolab suites` lists them.
#pragma once

#include <cstdint>
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

class Suite {
 public:
  virtual ~Suite() = default;
  virtual std::string_view name() const = 0;         // "seq-read"
  virtual std::string_view seed() const = 0;         // "001", "002 #1-#2", ...
  virtual std::string_view description() const = 0;  // one line: what it measures
  // Throws UsageError for options this suite cannot run with (a record
  // count out of range). `iolab run` calls it for every chosen suite before
  // any work starts.
  virtual void check(const SuiteOptions&) const {}
  // Whether this suite reads the run option `flag` ("--threads", "--records"):
  // `iolab run` refuses one that none of the chosen suites reads.
  virtual bool reads_option(std::string_view /*flag*/) const { return false; }
  // How the suite repeats a measurement when it does not take the run's
  // repetition settings (--reps, --warmup, --min-time, --max-time, the
  // latency pass): one line the run header prints instead of them for this
  // suite. Empty: it takes them.
  virtual std::string_view own_repetitions() const { return {}; }
  // Runs every experiment through the runner; results in a stable order.
  virtual std::vector<results::Result> run(harness::Runner& runner, const SuiteOptions& options) const = 0;
};

// Every registered suite, in registration order sorted by `order`.
std::vector<const Suite*> all_suites();
// The `seeds` group (what `iolab run` runs by default, every seed's
// experiments): the suites registered with SuiteGroup::Seeds.
std::vector<const Suite*> seed_suites();
// Throws UsageError naming the unknown suite and listing the known ones.
const Suite& find_suite(std::string_view name);

// Whether a suite runs by default (`seeds`) or only when named.
enum class SuiteGroup { Seeds, ByName };

// A suite's .cpp defines one static instance:
// `const SuiteRegistration seq_read_registration{10, SuiteGroup::Seeds, &seq_read_suite_instance};`
// (order: seq-read 10, write-buffering 20, buffer-alloc 30, write-path 40, copy 50,
// direct 60, packet-sweep 70, store 80, parallel 90, commitlog 110). Names are
// unique per file because a unity build compiles several suites as one unit.
struct SuiteRegistration {
  SuiteRegistration(int order, SuiteGroup group, const Suite* suite);
};

}  // namespace iolab::suites
