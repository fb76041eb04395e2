// Inside the cli: `iolab run`'s options as parsed (run_command.cpp) and
// the run they make (run_execution.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app.h"
#include "iolab/harness/engine.h"
#include "iolab/harness/runner.h"
#include "iolab/results/thresholds.h"
#include "iolab/suites/suite.h"

namespace iolab::cli {

// As given; every value is parsed and checked when parsing ends (an empty
// string means "not given": empty values are refused by app.cpp).
struct RunOptions : MatrixOptions, FioFileOptions {
  std::vector<std::string> suites;
  std::string scale;
  bool quick = false;
  std::string reps, warmup, seed, min_time, max_time, records, threads, memory_limit;
  std::string dir, out, job;
};

// The run's settings, parsed.
struct Settings {
  unsigned reps = 5;
  unsigned warmup = 1;
  std::uint64_t seed = 0x10AB;
  double min_time = results::thresholds::kDefaultMinTimeSeconds;
  double max_time = results::thresholds::kDefaultMaxTimeSeconds;
};

// What parsing makes of the options (nothing read from the file system yet).
struct RunPlan {
  enum class Source { Suites, Custom, Job, Fio };
  Source source = Source::Suites;
  std::shared_ptr<const RunOptions> given;
  Settings settings;                                // the command line's (a job or fio file may add its own)
  std::vector<harness::FileExperiment> experiments;  // Custom: the matrix
  std::vector<const suites::Suite*> chosen;          // Suites
  suites::SuiteOptions suite_options;
  std::optional<results::Eviction> eviction;
};

inline harness::EngineSettings engine_settings(const Settings& s) {
  harness::EngineSettings engine;
  engine.reps = s.reps;
  engine.warmup = s.warmup;
  engine.min_time = s.min_time;
  engine.max_time = s.max_time;
  return engine;
}

// The runner: the checks that need the file system (the job or fio file
// read, each experiment against the free space and the memory, the output
// location), still before any work, then the work.
int run_plan(RunPlan plan);

}  // namespace iolab::cli
