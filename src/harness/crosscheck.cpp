#include "iolab/harness/crosscheck.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "iolab/base/error.h"
#include "iolab/harness/statistics.h"
#include "iolab/harness/thresholds.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"

namespace iolab::harness {

namespace {

// Blocks from this size up are shown as bytes per second, smaller ones as I/Os.
constexpr std::uint64_t kShowBytesFrom = 64 * 1024;

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
    write_pattern_file(f, size, seed_);
    make_warm_from_disk(f);  // as the runner's warm files start
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
  if (resident_fraction(file) < 1.0) make_warm(file);
  double r = resident_fraction(file);
  if (r < thresholds::kWarmResidentMin) {
    make_warm(file);
    r = resident_fraction(file);
  }
  return r;
}

std::vector<std::string> warning_texts(const Result& r) {
  std::vector<std::string> out;
  for (const auto& w : r.warnings) out.push_back(w.text);
  return out;
}

template <typename F>
double median_of(const std::vector<CrosscheckRound>& rounds, F value) {
  std::vector<double> v;
  for (const auto& r : rounds) {
    double x = value(r);
    if (x > 0 && std::isfinite(x)) v.push_back(x);
  }
  return median(v);
}

bool shows_bytes(const CrosscheckRow& row) { return row.labels.block_size >= kShowBytesFrom; }

// A rate for the table: bytes for large blocks, I/Os for small ones.
std::string rate_text(const CrosscheckRow& row, double ops_per_s) {
  if (ops_per_s <= 0) return "-";
  if (shows_bytes(row)) return format_bytes(ops_per_s * static_cast<double>(row.labels.block_size));
  return format_count(ops_per_s) + " IO";
}

std::string ratio_text(double r) { return r > 0 ? fmt::format("{:.2f}x", r) : "-"; }


nlohmann::json number_or_null(double v) { return v > 0 && std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json side_json(const SideFigures& s) {
  nlohmann::json j{{"ops", s.ops},
                   {"bytes", s.bytes},
                   {"wall_s", s.wall_s},
                   {"cpu_s", s.cpu_s},
                   {"user_s", s.user_s},
                   {"per_cpu_s", number_or_null(s.per_cpu_s())},
                   {"per_wall_s", number_or_null(s.per_wall_s())},
                   {"context_switches", s.context_switches},
                   {"page_faults", s.page_faults}};
  j["io_calls"] = s.io_calls ? nlohmann::json(*s.io_calls) : nlohmann::json(nullptr);
  return j;
}

// Columns padded to their widest cell; the first left-aligned, the rest right-aligned.
std::string aligned_table(const std::vector<std::vector<std::string>>& rows) {
  TextTable table;
  for (const auto& r : rows) table.add(r);
  return table.render();
}

}  // namespace

SideFigures side_of(const Result& r) {
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

std::vector<FileExperiment> crosscheck_cases(std::optional<std::uint64_t> file_size) {
  constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * 1024;
  auto make = [&](std::string method, AccessPattern pattern, std::uint64_t block, std::uint64_t size, CacheState cache) {
    FileExperiment e;
    e.suite = "crosscheck";
    e.method = std::move(method);
    e.op = Op::Read;
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
      make("pread", AccessPattern::Seq, 4 * kKiB, 256 * kMiB, CacheState::Warm),
      make("pread", AccessPattern::Seq, 1 * kMiB, 256 * kMiB, CacheState::Warm),
      make("mmap", AccessPattern::Seq, 4 * kKiB, 256 * kMiB, CacheState::Warm),
      // 16k random O_DIRECT reads take ~0.3 s at the device's ~60k IOPS.
      make("io_uring", AccessPattern::Rand, 4 * kKiB, 64 * kMiB, CacheState::Direct),
      make("io_uring", AccessPattern::Seq, 1 * kMiB, 256 * kMiB, CacheState::Direct),
  };
}

std::vector<CrosscheckRow> crosscheck(const std::vector<FileExperiment>& experiments, const CrosscheckSettings& settings,
                                      Runner& runner, const FioRunner& fio, const RoundDone& on_round) {
  if (settings.rounds == 0) throw UsageError("--rounds 0", "at least one round is needed");
  std::vector<FileExperiment> runs = experiments;
  std::vector<CrosscheckRow> rows;
  for (auto& e : runs) {
    e.latency = false;  // the figures compared come from the timed repetitions
    // One iovec per vectored call, as fio's pvsync2 makes (other methods ignore it).
    e.options.iov_segment = static_cast<std::size_t>(e.block_size);
    // iolab runs the ring the suites run (no setup flags); the ones fio's
    // engine sets on its own are named in the row's engine note.
    FioMapping m = fio_job_for(e);
    CrosscheckRow row;
    row.labels = labels_of(e);
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
        Result r = runner.run(runs[i]);
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
        try {
          round.fio = side_of(fio(args));
          if (settings.null_ios != 0) {
            std::vector<std::string> null_args = fio_null_arguments(job, settings.null_ios);
            round.fio_null_command = shell_command(settings.fio, null_args);
            round.fio_null = side_of(fio(null_args));
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

std::vector<std::string> differences(const CrosscheckRow& row) {
  std::vector<std::string> out;
  if (!row.job || row.rounds.empty()) return out;
  const FioJob& job = *row.job;
  const auto& rounds = row.rounds;
  auto per_op = [&](auto side, auto field) {
    return median_of(rounds, [&](const CrosscheckRound& r) {
      const SideFigures& s = r.*side;
      return s.ops > 0 ? field(s) / s.ops : 0;
    });
  };
  auto cpu = [](const SideFigures& s) { return s.cpu_s; };
  auto user = [](const SideFigures& s) { return s.user_s; };
  auto ctx = [](const SideFigures& s) { return s.context_switches; };
  auto faults = [](const SideFigures& s) { return s.page_faults; };
  auto calls = [](const SideFigures& s) { return s.io_calls.value_or(0); };
  using Side = SideFigures CrosscheckRound::*;
  const Side iolab = &CrosscheckRound::iolab, fio = &CrosscheckRound::fio;

  std::vector<std::string> loops;
  for (const auto& r : rounds) loops.push_back(std::to_string(std::uint64_t{r.iolab_reps} * r.iolab_passes));
  out.push_back(fmt::format("work: the same bytes; fio's --loops = iolab's timed passes (repetitions x passes) in its "
                            "latest run: {} per round",
                            fmt::join(loops, ", ")));
  const double iolab_cpu = per_op(iolab, cpu), fio_cpu = per_op(fio, cpu);
  out.push_back(fmt::format("CPU per I/O: iolab {} (user space {}), fio {} (user space {}); the kernel samples the "
                            "user/system split at each timer tick",
                            format_duration(iolab_cpu), format_duration(per_op(iolab, user)), format_duration(fio_cpu),
                            format_duration(per_op(fio, user))));
  const auto m = row.medians();
  if (m.fio_own_cpu_per_op > 0)
    out.push_back(fmt::format("fio's own work: {} of CPU per I/O on its null engine (the same job, no file, no system "
                              "call); fio's CPU per I/O less that: {}, against iolab's {} ({} per CPU second)",
                              format_duration(m.fio_own_cpu_per_op), format_duration(fio_cpu - m.fio_own_cpu_per_op),
                              format_duration(iolab_cpu), ratio_text(m.cpu_ratio_without_fio_own)));
  const double iolab_calls = per_op(iolab, calls);
  out.push_back(fmt::format("per I/O, iolab / fio: {:.3f} / {:.3f} context switches, {:.3f} / {:.3f} page faults; "
                            "iolab's system calls {:.2f} (fio does not count its own)",
                            per_op(iolab, ctx), per_op(fio, ctx), per_op(iolab, faults), per_op(fio, faults),
                            iolab_calls));
  // O_DIRECT pins fio's buffers and copies fill them during its run: their
  // first-touch faults land in its CPU; iolab allocates and zeroes its own
  // before the timed passes.
  const double buffer_pages = static_cast<double>(job.iodepth) * static_cast<double>(job.block_size) / io::kPageSize;
  const double fio_faults = median_of(rounds, [](const CrosscheckRound& r) { return r.fio.page_faults; });
  if (buffer_pages >= 256 && fio_faults >= buffer_pages / 2)
    out.push_back(fmt::format("page faults: fio took {:.0f} in its run; its I/O buffers (iodepth x block = {}, {:.0f} "
                              "pages) are first touched inside it, iolab's before its timed passes",
                              fio_faults, format_bytes(buffer_pages * io::kPageSize), buffer_pages));
  out.push_back(job.time_every_io
                    ? "clock reads: fio timed every I/O for its latency statistics (its default); iolab's timed "
                      "passes read the clock twice per pass"
                    : "clock reads: fio ran with --gtod_reduce=1 (it reads the clock for a small share of its I/Os); "
                      "iolab's timed passes read it twice per pass");
  if (job.direct) {
    out.push_back("cache: O_DIRECT for both: the page cache is bypassed");
  } else {
    double iolab_least = 1, fio_least = 1;
    for (const auto& r : rounds) {
      iolab_least = std::min(iolab_least, r.iolab_resident.value_or(1.0));
      fio_least = std::min(fio_least, r.fio_resident.value_or(1.0));
    }
    out.push_back(fmt::format("cache: warm for both (fio --invalidate=0 keeps the pages; its default drops them when it "
                              "opens the file); resident before the timed reads: iolab {} at least, fio {}",
                              format_percent(iolab_least), format_percent(fio_least)));
  }
  out.push_back(job.aligned_buffers
                    ? "buffers: page-aligned for both (fio --iomem_align=4k)"
                    : "buffers: neither page-aligned (iolab's heap buffer from operator new, fio's from malloc): where "
                      "each starts within a cache line differs, and a copy into a misaligned buffer is slower");
  if (!row.engine_note.empty()) out.push_back("engine: " + row.engine_note);
  if (row.labels.queue_depth) {
    std::vector<std::string> options;
    if (auto it = row.labels.extra.find("io_options"); it != row.labels.extra.end() && it->is_array())
      for (const auto& o : *it)
        if (o.is_string()) options.push_back(o.get<std::string>());
    const unsigned iolab_batch = row.labels.extra.value("submit_batch", 0u);
    out.push_back(fmt::format("queue: iolab kept up to {} in flight, {}, ring options: {}; {:.3f} system calls per "
                              "request; fio kept up to {}, submitting {}",
                              *row.labels.queue_depth,
                              iolab_batch == 0   ? "every freed slot handed over in one call that also waits"
                              : iolab_batch == 1 ? "each freed slot handed over as its completion is taken"
                                                 : fmt::format("at most {} requests per submission", iolab_batch),
                              options.empty() ? "none" : fmt::format("{}", fmt::join(options, ", ")), iolab_calls,
                              job.iodepth,
                              job.submit_batch > 1
                                  ? fmt::format("up to {} and reaping up to {} per call (--iodepth_batch_submit, "
                                                "--iodepth_batch_complete_max)",
                                                job.submit_batch, job.submit_batch)
                                  : std::string("and reaping one request per call (its default)")));
    if (*row.labels.queue_depth > 1 && iolab_batch != 1 && iolab_calls >= 0.9)
      out.push_back(fmt::format("queue: at {:.2f} system calls per request iolab's requests were not batched (the "
                                "method's File::stream ran them one at a time)",
                                iolab_calls));
  }
  out.push_back("CPU counted: iolab's whole process over its timed repetitions (it opens the file before each pass, "
                "untimed); fio's job process over its run (usr_cpu + sys_cpu of job_runtime), which reopens the file "
                "every loop");
  return out;
}

std::string row_name(const CrosscheckRow& row) {
  const Result& r = row.labels;
  std::string s = r.method;
  if (r.queue_depth) s += " qd" + std::to_string(*r.queue_depth);
  s += " " + pattern_name(r) + " " + size_label(r.block_size) + " " + size_label(r.file_size);
  if (r.cache) s += " " + cache_name(r);
  if (r.buffer) s += " " + buffer_name(r);
  return s;
}

std::string format_round(const CrosscheckRow& row, const CrosscheckRound& round) {
  return fmt::format("round {} ({} first)  {}: per CPU second iolab {} / fio {} = {}; per second iolab {} / fio {} = {}",
                     round.number, round.iolab_first ? "iolab" : "fio", row_name(row),
                     rate_text(row, round.iolab.per_cpu_s()), rate_text(row, round.fio.per_cpu_s()),
                     ratio_text(round.cpu_ratio()), rate_text(row, round.iolab.per_wall_s()),
                     rate_text(row, round.fio.per_wall_s()), ratio_text(round.wall_ratio()));
}

std::string format_crosscheck(const std::vector<CrosscheckRow>& rows, const CrosscheckSettings& settings) {
  std::vector<std::vector<std::string>> table{{"EXPERIMENT", "FIO ENGINE", "IOLAB/CPU-S", "FIO/CPU-S", "RATIO",
                                               "ROUNDS", "FIO OWN/IO", "RATIO W/O", "IOLAB/S", "FIO/S", "RATIO"}};
  for (const auto& row : rows) {
    std::string engine = row.job ? row.job->engine : "-";
    if (row.rounds.empty()) {
      table.push_back({row_name(row), engine, "-", "-", "-", "", "-", "-", "-", "-", "-"});
      continue;
    }
    auto m = row.medians();
    std::vector<std::string> cpu_rounds;
    for (const auto& r : row.rounds) cpu_rounds.push_back(fmt::format("{:.2f}", r.cpu_ratio()));
    table.push_back({row_name(row), engine, rate_text(row, m.iolab_per_cpu_s), rate_text(row, m.fio_per_cpu_s),
                     ratio_text(m.cpu_ratio), fmt::format("{}", fmt::join(cpu_rounds, " ")),
                     m.fio_own_cpu_per_op > 0 ? format_duration(m.fio_own_cpu_per_op) : "-",
                     ratio_text(m.cpu_ratio_without_fio_own), rate_text(row, m.iolab_per_wall_s),
                     rate_text(row, m.fio_per_wall_s), ratio_text(m.wall_ratio)});
  }
  std::string out = aligned_table(table);
  out += fmt::format("(medians of the rounds. RATIO = iolab / fio, ROUNDS = each round's CPU ratio; FIO OWN/IO = fio's "
                     "CPU per I/O on its null engine, RATIO W/O = the CPU ratio with that taken out of fio's; rates "
                     "are operations, or bytes for blocks of {} and more, per CPU second and per wall second)\n",
                     size_label(kShowBytesFrom));

  std::size_t within = 0, measured = 0;
  for (const auto& row : rows) {
    out += "\n" + row_name(row) + "\n";
    if (row.skipped) {
      out += "  skipped: " + *row.skipped + "\n";
      if (row.rounds.empty()) continue;
    }
    if (!row.rounds.empty()) {
      out += "  fio: " + row.rounds.back().fio_command + "\n";
      if (!row.rounds.back().fio_null_command.empty())
        out += "  fio's own work: " + row.rounds.back().fio_null_command + "\n";
    }
    std::vector<std::string> warnings;
    for (const auto& r : row.rounds)
      for (const auto& w : r.iolab_warnings)
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    for (const auto& w : warnings) out += "  ! iolab: " + w + "\n";
    ++measured;
    const auto m = row.medians();
    const bool cpu_ok = row.within(settings.tolerance);
    const bool wall_ok = m.wall_ratio > 0 && std::abs(m.wall_ratio - 1.0) <= settings.tolerance + 1e-12;
    within += cpu_ok;
    if (cpu_ok && wall_ok) {
      out += fmt::format("  within {} per CPU second ({}) and per wall second ({})\n", format_percent(settings.tolerance),
                         ratio_text(m.cpu_ratio), ratio_text(m.wall_ratio));
      continue;
    }
    out += fmt::format("  gap: per CPU second {} ({}), per wall second {} ({}); what differs and what each measured:\n",
                       ratio_text(m.cpu_ratio), cpu_ok ? "within " + format_percent(settings.tolerance) : "outside",
                       ratio_text(m.wall_ratio), wall_ok ? "within " + format_percent(settings.tolerance) : "outside");
    for (const auto& d : differences(row)) out += "    - " + d + "\n";
  }
  out += fmt::format("\n{} of {} measured experiments within {} per CPU second (the goal); {} rounds, order "
                     "alternating.\n",
                     within, measured, format_percent(settings.tolerance), settings.rounds);
  return out;
}

nlohmann::json to_json(const CrosscheckRow& row, double tolerance) {
  const Result& l = row.labels;
  nlohmann::json j{{"name", row_name(row)},
                   {"method", l.method},
                   {"op", to_string(l.op)},
                   {"pattern", pattern_name(l)},
                   {"block_size", l.block_size},
                   {"file_size", l.file_size},
                   {"cache", cache_name(l)},
                   {"buffer", buffer_name(l)}};
  j["queue_depth"] = l.queue_depth ? nlohmann::json(*l.queue_depth) : nlohmann::json(nullptr);
  j["skipped"] = row.skipped ? nlohmann::json(*row.skipped) : nlohmann::json(nullptr);
  j["fio_engine"] = row.job ? nlohmann::json(row.job->engine) : nlohmann::json(nullptr);
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& r : row.rounds) {
    nlohmann::json jr{{"round", r.number},
                      {"first", r.iolab_first ? "iolab" : "fio"},
                      {"fio_command", r.fio_command},
                      {"iolab", side_json(r.iolab)},
                      {"fio", side_json(r.fio)},
                      {"iolab_reps", r.iolab_reps},
                      {"iolab_passes", r.iolab_passes},
                      {"cpu_ratio", number_or_null(r.cpu_ratio())},
                      {"wall_ratio", number_or_null(r.wall_ratio())},
                      {"iolab_warnings", r.iolab_warnings}};
    jr["fio_null"] = r.fio_null ? side_json(*r.fio_null) : nlohmann::json(nullptr);
    jr["fio_null_command"] = r.fio_null_command;
    jr["cpu_ratio_without_fio_own"] = number_or_null(r.cpu_ratio_without_fio_own());
    jr["iolab_resident"] = r.iolab_resident ? nlohmann::json(*r.iolab_resident) : nlohmann::json(nullptr);
    jr["fio_resident"] = r.fio_resident ? nlohmann::json(*r.fio_resident) : nlohmann::json(nullptr);
    rounds.push_back(std::move(jr));
  }
  j["rounds"] = std::move(rounds);
  const auto m = row.medians();
  j["median"] = {{"iolab_per_cpu_s", number_or_null(m.iolab_per_cpu_s)},
                 {"fio_per_cpu_s", number_or_null(m.fio_per_cpu_s)},
                 {"iolab_per_wall_s", number_or_null(m.iolab_per_wall_s)},
                 {"fio_per_wall_s", number_or_null(m.fio_per_wall_s)},
                 {"cpu_ratio", number_or_null(m.cpu_ratio)},
                 {"wall_ratio", number_or_null(m.wall_ratio)},
                 {"fio_own_cpu_per_op_s", number_or_null(m.fio_own_cpu_per_op)},
                 {"cpu_ratio_without_fio_own", number_or_null(m.cpu_ratio_without_fio_own)}};
  j["within_tolerance"] = row.within(tolerance);
  j["differences"] = differences(row);
  return j;
}

}  // namespace iolab::harness
