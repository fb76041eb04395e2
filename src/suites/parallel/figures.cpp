// From timed passes to a results record: shared by the thread suite and iolab-mpi.
#include <vector>

#include "iolab/harness/statistics.h"
#include "iolab/suites/parallel.h"
#include "iolab/units.h"

namespace iolab::suites::parallel {

void fill_result(harness::Result& r, std::span<const PassTiming> passes) {
  std::vector<double> first, last, user, sys, minf, majf, vcs, ivcs, sr, sw, calls;
  for (const PassTiming& p : passes) {
    first.push_back(p.first_done_s);
    last.push_back(p.last_done_s);
    user.push_back(p.usage.user_s);
    sys.push_back(p.usage.sys_s);
    minf.push_back(static_cast<double>(p.usage.minor_faults));
    majf.push_back(static_cast<double>(p.usage.major_faults));
    vcs.push_back(static_cast<double>(p.usage.voluntary_ctx));
    ivcs.push_back(static_cast<double>(p.usage.involuntary_ctx));
    sr.push_back(static_cast<double>(p.usage.storage_read_bytes));
    sw.push_back(static_cast<double>(p.usage.storage_write_bytes));
    calls.push_back(static_cast<double>(p.io_calls));
  }
  // The pass is over when its slowest worker is: aggregate bandwidth is bytes / last done.
  r.samples_s = last;
  r.reps = static_cast<unsigned>(passes.size());
  if (!passes.empty()) {
    r.bytes = passes.front().bytes;
    r.ops = passes.front().ops;
  }
  r.user_s = harness::median(user);
  r.sys_s = harness::median(sys);
  r.minor_faults = static_cast<std::int64_t>(harness::median(minf));
  r.major_faults = static_cast<std::int64_t>(harness::median(majf));
  r.voluntary_ctx = static_cast<std::int64_t>(harness::median(vcs));
  r.involuntary_ctx = static_cast<std::int64_t>(harness::median(ivcs));
  r.storage_read_bytes = static_cast<std::uint64_t>(harness::median(sr));
  r.storage_write_bytes = static_cast<std::uint64_t>(harness::median(sw));
  r.io_calls = static_cast<std::uint64_t>(harness::median(calls));
  r.extra["first_done_s"] = harness::median(first);
  r.extra["last_done_s"] = harness::median(last);
  r.extra["first_done_samples_s"] = first;
  if (last.empty()) return;
  harness::Summary s = harness::summarize(last);
  if (s.min < 0.05)
    r.warnings.push_back("timed repetitions as short as " + format_duration(s.min) +
                         " are too short to trust (< 50 ms); use a larger size");
  if (!s.outliers.empty())
    r.warnings.push_back(std::to_string(s.outliers.size()) + " statistical outlier" + (s.outliers.size() > 1 ? "s" : "") +
                         " among " + std::to_string(s.n) +
                         " repetitions (median absolute deviation rule); consider more --reps, a quieter machine, "
                         "or closing other programs");
}

}  // namespace iolab::suites::parallel
