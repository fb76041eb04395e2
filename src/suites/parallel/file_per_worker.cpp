#include "iolab/suites/file_per_worker.h"

#include "iolab/base/error.h"
#include "iolab/harness/requests.h"
#include "iolab/harness/runner.h"
#include "iolab/io/registry.h"
#include "iolab/suites/parallel.h"

namespace iolab::suites {

results::Result run_file_per_worker(harness::Runner& runner, const harness::FileExperiment& e, unsigned workers) {
  using namespace parallel;
  const std::string what = "experiment '" + e.experiment + "' on " + std::to_string(workers) + " threads";
  if (workers == 0) throw UsageError(what, "at least one worker");
  if (e.ops != 0 || e.file_size == 0) throw UsageError(what, "a file size per worker is needed");
  if (e.cache == results::CacheState::Cold && e.op == results::Op::Read)
    throw UsageError(what, "threads read warm or O_DIRECT files only");
  if (e.sync.schedule != io::FlushSchedule::None && e.sync.schedule != io::FlushSchedule::End)
    throw UsageError(what, "threads flush at the end of a pass or not at all");
  const io::Method& method = io::find_file_method(e.method);
  io::FileOptions options = harness::experiment_options(method, e);
  const bool direct = method.traits(options).bypasses_page_cache;

  results::Result labels = harness::labels_of(e);
  labels.threads = workers;
  labels.buffer = io::BufferKind::Aligned;  // the region workload's buffers
  labels.extra["layout"] = std::string(to_string(Layout::FilePerWorker));
  labels.extra["workers"] = workers;
  labels.extra["region_size"] = e.file_size;
  labels.file_size = e.file_size;
  if (e.sync.schedule == io::FlushSchedule::End) labels.sync.call = io::Durability::None;  // each worker's data sync
  if (e.op == results::Op::Write) {
    labels.cache.reset();
    labels.cache_method = "fresh files, preallocated";
  } else {
    labels.cache = results::CacheState::Warm;
    labels.cache_method = "written, flushed, read once";
  }
  if (direct) {
    labels.cache = results::CacheState::Direct;
    labels.cache_method = "O_DIRECT";
  }

  RegionSpec spec;
  spec.workers = workers;
  spec.region_size = e.file_size;
  spec.block_size = e.block_size;
  spec.layout = Layout::FilePerWorker;
  spec.options = options;
  spec.options.unaligned = io::UnalignedPolicy::Reject;  // never measure a hidden bounce copy
  spec.sync_at_end = e.sync.schedule == io::FlushSchedule::End;
  spec.pattern = e.pattern;
  spec.seed = runner.config().seed;
  harness::LocalTeam team(workers);
  RegionFiles files(team, &runner.scratch(), spec, "threads-" + e.method);
  harness::WriteSource source(runner.config().seed, e.file_size, spec.block_size, io::BufferKind::Aligned);
  if (e.op == results::Op::Read) {
    files.recreate();
    files.fill(source);  // what the reads read and check
  }
  RegionWorkload workload(team, method, spec, e.op, files, source);
  return runner.run(workload, labels, team);
}

}  // namespace iolab::suites
