// libFuzzer target for TOML job files (iolab run --job): any text is either
// refused with a UsageError (one line naming the file and the key or the
// TOML error's line) or read into a job whose values are within their
// limits, and whose matrix expands (when it is small enough to expand).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "iolab/base/error.h"
#include "iolab/harness/job.h"

using namespace iolab::harness;

using iolab::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Job job;
  try {
    job = parse_job(text, "fuzz.toml");
  } catch (const iolab::UsageError& e) {
    require(std::string_view(e.what()).find("job file fuzz.toml") != std::string_view::npos);
    require(std::string_view(e.what()).find('\n') == std::string_view::npos);  // one line
    return 0;
  }
  const Matrix& m = job.matrix;
  require(!m.methods.empty());
  for (unsigned qd : m.queue_depths) require(qd >= 1 && qd <= 4096);
  for (auto b : m.block_sizes) require(b >= 1);
  if (job.reps) require(*job.reps >= 1);
  std::size_t combinations = m.methods.size() * m.ops.size() * m.patterns.size() * m.block_sizes.size() *
                             m.caches.size() * m.buffers.size() * m.syncs.size() *
                             std::max<std::size_t>(1, m.queue_depths.size());
  if (combinations <= 4096) {
    try {
      auto experiments = expand(m);
      require(experiments.size() <= combinations);
    } catch (const iolab::Error&) {  // a combination expand refuses is refused cleanly
    }
  }
  return 0;
}
