// crosscheck's text: each round as it ends, the summary table, and what
// differs between the two sides wherever they part.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "crosscheck_figures.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"
#include "iolab/fio/crosscheck.h"
#include "iolab/results/thresholds.h"

namespace iolab::fio {

namespace {

using crosscheck_detail::kShowBytesFrom;
using crosscheck_detail::median_of;

bool shows_bytes(const CrosscheckRow& row) { return row.labels.block_size >= kShowBytesFrom; }

// A rate for the table: bytes for large blocks, I/Os for small ones.
std::string rate_text(const CrosscheckRow& row, double ops_per_s) {
  if (ops_per_s <= 0) return "-";
  if (shows_bytes(row)) return format_bytes(ops_per_s * static_cast<double>(row.labels.block_size));
  return format_count(ops_per_s) + " IO";
}

std::string ratio_text(double r) { return r > 0 ? fmt::format("{:.2f}x", r) : "-"; }

// Columns padded to their widest cell; the first left-aligned, the rest right-aligned.
std::string aligned_table(const std::vector<std::vector<std::string>>& rows) {
  TextTable table;
  for (const auto& r : rows) table.add(r);
  return table.render();
}

}  // namespace

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
  if (row.fio_ring_flags.single_issuer || row.fio_ring_flags.coop_taskrun) {
    // The ring flags of each side, and whether they differ (--ring-flags).
    auto flags = [](const io::UringOptions& o) {
      std::vector<std::string> f = io::option_names(o);
      return f.empty() ? std::string("none") : fmt::format("{}", fmt::join(f, ", "));
    };
    const io::UringOptions& iolab_side = row.iolab_ring_flags;
    const bool same = iolab_side == row.fio_ring_flags;
    out.push_back(fmt::format("ring flags (--ring-flags {}): iolab {}; fio's engine {}: {}", to_string(row.ring_flags),
                              flags(iolab_side), flags(row.fio_ring_flags),
                              same ? "the same ring setup" : "they differ (--ring-flags fio gives iolab's side fio's)"));
  }
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
  const results::Result& r = row.labels;
  std::string s = r.method;
  if (r.queue_depth) s += " qd" + std::to_string(*r.queue_depth);
  s += " " + results::pattern_name(r) + " " + size_label(r.block_size) + " " + size_label(r.file_size);
  if (r.cache) s += " " + results::cache_name(r);
  if (r.buffer) s += " " + results::buffer_name(r);
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

}  // namespace iolab::fio
