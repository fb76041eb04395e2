// crosscheck's cases and driver: the experiments, fio's files, and the
// interleaved rounds (the text is crosscheck_text.cpp, the JSON crosscheck_json.cpp).
#include "iolab/fio/crosscheck.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "crosscheck_figures.h"
#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/results/statistics.h"
#include "iolab/results/thresholds.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"

namespace iolab::fio {

namespace {

using crosscheck_detail::median_of;

double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0; }

// fio's files, one per size, in the runner's scratch directory; removed with this.
class FioFiles {
 public:
  FioFiles(io::ScratchDir& scratch, std::uint64_t seed) : scratch_(scratch), seed_(seed) {}
  ~FioFiles() {
    for (const auto& [size, file] : files_) {
      try {
        scratch_.remove_file(file);
      } catch (...) {  // the scratch directory removes what is left
      }
    }
  }
  FioFiles(const FioFiles&) = delete;
  FioFiles& operator=(const FioFiles&) = delete;

  const std::filesystem::path& file(std::uint64_t size) {
    auto it = files_.find(size);
    if (it != files_.end()) return it->second;
    std::filesystem::path f = scratch_.create_unique_file("fio");
    files_.emplace(size, f);
    harness::write_pattern_file(f, size, seed_);
    harness::make_warm_from_disk(f);  // as the runner's warm files start
    return files_.at(size);
  }

 private:
  io::ScratchDir& scratch_;
  std::uint64_t seed_;
  std::map<std::uint64_t, std::filesystem::path> files_;
};

// Warms `file` as the runner warms its own before a timed pass (read once,
// again if pages went); returns the fraction resident afterwards.
double make_resident(const std::filesystem::path& file) {
  if (harness::resident_fraction(file) < 1.0) harness::make_warm(file);
  double r = harness::resident_fraction(file);
  if (r < results::thresholds::kWarmResidentMin) {
    harness::make_warm(file);
    r = harness::resident_fraction(file);
  }
  return r;
}

std::vector<std::string> warning_texts(const results::Result& r) {
  std::vector<std::string> out;
  for (const auto& w : r.warnings) out.push_back(w.text);
  return out;
}

}  // namespace

SideFigures side_of(const results::Result& r) {
  SideFigures s;
  s.ops = static_cast<double>(r.ops);
  s.bytes = static_cast<double>(r.bytes);
  s.wall_s = r.samples_s.empty() ? 0 : r.seconds().median;
  s.cpu_s = r.user_s + r.sys_s;
  s.user_s = r.user_s;
  s.context_switches = static_cast<double>(r.voluntary_ctx + r.involuntary_ctx);
  s.page_faults = static_cast<double>(r.minor_faults + r.major_faults);
  s.io_calls = static_cast<double>(r.io_calls);
  return s;
}

SideFigures side_of(const FioFigures& f) {
  SideFigures s;
  s.ops = static_cast<double>(f.ios);
  s.bytes = static_cast<double>(f.bytes);
  s.wall_s = f.runtime_s;
  s.cpu_s = f.cpu_s();
  s.user_s = f.usr_cpu / 100.0 * f.job_runtime_s;
  s.context_switches = static_cast<double>(f.context_switches);
  s.page_faults = static_cast<double>(f.minor_faults + f.major_faults);
  return s;
}

double CrosscheckRound::cpu_ratio() const { return ratio(iolab.per_cpu_s(), fio.per_cpu_s()); }
double CrosscheckRound::wall_ratio() const { return ratio(iolab.per_wall_s(), fio.per_wall_s()); }
double CrosscheckRound::cpu_ratio_without_fio_own() const {
  if (!fio_null || fio_null->ops <= 0 || fio.ops <= 0 || iolab.ops <= 0) return 0;
  const double fio_less_own = fio.cpu_s / fio.ops - fio_null->cpu_s / fio_null->ops;
  return ratio(fio_less_own, iolab.cpu_s / iolab.ops);
}

CrosscheckRow::Medians CrosscheckRow::medians() const {
  Medians m;
  m.iolab_per_cpu_s = median_of(rounds, [](const CrosscheckRound& r) { return r.iolab.per_cpu_s(); });
  m.fio_per_cpu_s = median_of(rounds, [](const CrosscheckRound& r) { return r.fio.per_cpu_s(); });
  m.iolab_per_wall_s = median_of(rounds, [](const CrosscheckRound& r) { return r.iolab.per_wall_s(); });
  m.fio_per_wall_s = median_of(rounds, [](const CrosscheckRound& r) { return r.fio.per_wall_s(); });
  m.cpu_ratio = median_of(rounds, [](const CrosscheckRound& r) { return r.cpu_ratio(); });
  m.wall_ratio = median_of(rounds, [](const CrosscheckRound& r) { return r.wall_ratio(); });
  m.fio_own_cpu_per_op = median_of(rounds, [](const CrosscheckRound& r) {
    return r.fio_null && r.fio_null->ops > 0 ? r.fio_null->cpu_s / r.fio_null->ops : 0;
  });
  m.cpu_ratio_without_fio_own = median_of(rounds, [](const CrosscheckRound& r) { return r.cpu_ratio_without_fio_own(); });
  return m;
}

bool CrosscheckRow::within(double tolerance) const {
  double r = medians().cpu_ratio;
  return r > 0 && std::abs(r - 1.0) <= tolerance + 1e-12;
}

std::vector<harness::FileExperiment> crosscheck_cases(std::optional<std::uint64_t> file_size) {
  constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * 1024;
  auto make = [&](std::string method, results::AccessPattern pattern, std::uint64_t block, std::uint64_t size, results::CacheState cache) {
    harness::FileExperiment e;
    e.suite = "crosscheck";
    e.method = std::move(method);
    e.op = results::Op::Read;
    e.pattern = pattern;
    e.block_size = block;
    e.file_size = file_size.value_or(size);
    e.cache = cache;
    // Page-aligned on both sides: fio's default buffers start wherever
    // malloc put them, and a copy into a buffer off a cache line is slower.
    e.buffer = io::BufferKind::Aligned;
    e.options.queue_depth = 32;
    e.experiment = fmt::format("read {} {} {}", to_string(pattern), size_label(block), to_string(cache));
    return e;
  };
  return {
      make("pread", results::AccessPattern::Seq, 4 * kKiB, 256 * kMiB, results::CacheState::Warm),
      make("pread", results::AccessPattern::Seq, 1 * kMiB, 256 * kMiB, results::CacheState::Warm),
      make("mmap", results::AccessPattern::Seq, 4 * kKiB, 256 * kMiB, results::CacheState::Warm),
      // 16k random O_DIRECT reads take ~0.3 s at the device's ~60k IOPS.
      make("io_uring", results::AccessPattern::Rand, 4 * kKiB, 64 * kMiB, results::CacheState::Direct),
      make("io_uring", results::AccessPattern::Seq, 1 * kMiB, 256 * kMiB, results::CacheState::Direct),
  };
}

namespace {
constexpr NameTable<RingFlags, 2> kRingFlags{{{RingFlags::Iolab, "iolab"}, {RingFlags::Fio, "fio"}}};
}  // namespace

std::string_view to_string(RingFlags f) { return name_of(kRingFlags, f); }

RingFlags parse_ring_flags(std::string_view s) { return parse_name(kRingFlags, s, "--ring-flags"); }

std::vector<CrosscheckRow> crosscheck(const std::vector<harness::FileExperiment>& experiments, const CrosscheckSettings& settings,
                                      harness::Runner& runner, const FioRunner& fio, const RoundDone& on_round) {
  if (settings.rounds == 0) throw UsageError("--rounds 0", "at least one round is needed");
  std::vector<harness::FileExperiment> runs = experiments;
  std::vector<CrosscheckRow> rows;
  for (auto& e : runs) {
    e.latency = false;  // the figures compared come from the timed repetitions
    // One iovec per vectored call, as fio's pvsync2 makes (other methods ignore it).
    e.options.iov_segment = static_cast<std::size_t>(e.block_size);
    // iolab runs the ring the suites run (no setup flags), or, asked for
    // RingFlags::Fio, the flags fio's engine sets on its own; the row names
    // both (differences()).
    FioMapping m = fio_job_for(e);
    CrosscheckRow row;
    row.fio_ring_flags = m.ring_flags_fio_sets;
    row.ring_flags = settings.ring_flags;
    if (settings.ring_flags == RingFlags::Fio) {
      e.options.uring.single_issuer = e.options.uring.single_issuer || m.ring_flags_fio_sets.single_issuer;
      e.options.uring.coop_taskrun = e.options.uring.coop_taskrun || m.ring_flags_fio_sets.coop_taskrun;
    }
    row.iolab_ring_flags.single_issuer = e.options.uring.single_issuer;
    row.iolab_ring_flags.coop_taskrun = e.options.uring.coop_taskrun;
    row.labels = harness::labels_of(e);
    if (m.job) {
      row.job = *m.job;
      row.job->time_every_io = settings.fio_times_every_io;
      if (settings.fio_unbatched) row.job->submit_batch = 0;
      row.engine_note = m.engine_note;
    } else {
      row.skipped = m.why_not;
    }
    rows.push_back(std::move(row));
  }

  FioFiles files(runner.scratch(), runner.config().seed);
  std::vector<std::uint64_t> fio_loops(rows.size(), 0);  // iolab's timed passes in its latest run
  for (unsigned number = 1; number <= settings.rounds; ++number) {
    const bool iolab_first = number % 2 == 1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CrosscheckRow& row = rows[i];
      if (row.skipped) continue;
      CrosscheckRound round;
      round.number = number;
      round.iolab_first = iolab_first;

      auto run_iolab = [&] {
        results::Result r = runner.run(runs[i]);
        if (r.skipped) {
          row.skipped = "iolab: " + *r.skipped;
          return false;
        }
        round.iolab = side_of(r);
        round.iolab_reps = r.reps;
        round.iolab_passes = r.passes;
        round.iolab_resident = r.resident_fraction;
        round.iolab_warnings = warning_texts(r);
        row.labels.buffer = r.buffer;
        row.labels.cache = r.cache;
        row.labels.queue_depth = r.queue_depth;
        row.labels.extra = r.extra;  // a queued method's ring options and submission batch
        fio_loops[i] = std::max<std::uint64_t>(1, std::uint64_t{r.reps} * r.passes);
        return true;
      };
      auto run_fio = [&] {
        FioJob job = *row.job;
        job.loops = static_cast<unsigned>(std::max<std::uint64_t>(1, fio_loops[i]));
        const std::filesystem::path& file = files.file(job.file_size);
        if (!job.direct) round.fio_resident = make_resident(file);
        std::vector<std::string> args = fio_arguments(job, file);
        round.fio_command = shell_command(settings.fio, args);
        // A fio that read nothing measured nothing: no ratio can come of it,
        // so the row fails rather than show "-" as if compared.
        auto measured = [&](const std::vector<std::string>& a) {
          const FioFigures f = fio(a);
          if (f.ios == 0 || f.bytes == 0)
            throw Error("run", shell_command(settings.fio, a),
                        "fio reported " + std::to_string(f.ios) + " I/Os and " + std::to_string(f.bytes) +
                            " bytes read: it measured nothing");
          return side_of(f);
        };
        try {
          round.fio = measured(args);
          if (settings.null_ios != 0) {
            std::vector<std::string> null_args = fio_null_arguments(job, settings.null_ios);
            round.fio_null_command = shell_command(settings.fio, null_args);
            round.fio_null = measured(null_args);
          }
        } catch (const Error& err) {
          row.skipped = std::string("fio failed: ") + err.what();
          return false;
        }
        return true;
      };
      // The first round always starts with iolab: fio's loops come from its passes.
      bool ok = (iolab_first || fio_loops[i] == 0) ? run_iolab() && run_fio() : run_fio() && run_iolab();
      if (!ok) continue;
      row.rounds.push_back(round);
      if (on_round) on_round(row, row.rounds.back());
    }
  }
  return rows;
}

}  // namespace iolab::fio
