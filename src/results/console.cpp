#include "iolab/results/console.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>

#include <fmt/core.h>

#include "iolab/base/error.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ once it is
// inlined into string-building code like this file's (GCC bugs 105329, 105651).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace iolab::results {

bool use_color(std::FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  // A terminal that says it knows no escape codes (Emacs' shell, a serial console).
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return ::isatty(::fileno(stream)) == 1;
}

namespace {

constexpr const char* kBold = "\033[1m";
constexpr const char* kDim = "\033[2m";
constexpr const char* kGreen = "\033[32m";
constexpr const char* kYellow = "\033[33m";
constexpr const char* kReset = "\033[0m";

// Throughput that ranks rows: bytes/s, or ops/s when a workload moves no bytes.
double figure_of(const Result& r) {
  if (r.skipped || r.samples_s.empty()) return 0;
  return r.bytes > 0 ? r.median_mib_per_s() : r.median_ops_per_s();
}

std::string text_of(const std::optional<AccessPattern>& p) { return p ? std::string(to_string(*p)) : ""; }
std::string text_of(const std::optional<io::BufferKind>& b) { return b ? std::string(io::to_string(*b)) : ""; }
std::string text_of(const std::optional<CacheState>& c) { return c ? std::string(to_string(*c)) : ""; }

// Queued methods say their depth and options on every row: a QD 1 figure is
// a verdict on the queue depth, not on the method.
std::string queue_label(const Result& r) {
  if (!r.queue_depth) return "";
  std::string s = "qd" + std::to_string(*r.queue_depth);
  if (auto it = r.extra.find("io_options"); it != r.extra.end() && it->is_array())
    for (const auto& o : *it)
      if (o.is_string()) s += "+" + o.get<std::string>();
  return s;
}

// What tells rows of one group apart besides the method: only the fields that vary.
std::string row_label(const Result& r, const std::vector<const Result*>& group) {
  auto varies = [&](auto field) {
    std::set<std::string> seen;
    for (const Result* g : group) seen.insert(field(*g));
    return seen.size() > 1;
  };
  std::string s = r.method;
  std::string q = queue_label(r);
  if (!q.empty()) s += " " + q;
  auto add = [&](auto field) {
    std::string v = field(r);
    if (v.empty() || !varies(field)) return;
    s.push_back(' ');
    s.append(v);
  };
  add([](const Result& x) { return std::string(to_string(x.op)); });
  add([](const Result& x) { return text_of(x.pattern); });
  add([](const Result& x) { return size_label(x.block_size); });
  add([](const Result& x) { return x.file_size ? size_label(x.file_size) : std::string(); });
  add([](const Result& x) { return text_of(x.buffer); });
  add([](const Result& x) { return text_of(x.cache); });
  add([](const Result& x) { return to_string(x.sync); });
  add([](const Result& x) { return x.threads > 1 ? std::to_string(x.threads) + "t" : std::string("1t"); });
  return s;
}

std::string group_heading(const std::vector<const Result*>& g) {
  const Result& r = *g.front();
  std::string h = r.suite.empty() ? r.experiment : r.suite + (r.experiment.empty() ? "" : " / " + r.experiment);
  // Facts shared by every row, stated once.
  auto same = [&](auto field) {
    for (const Result* x : g)
      if (field(*x) != field(r)) return false;
    return true;
  };
  std::vector<std::string> facts;
  facts.push_back(std::string(to_string(r.op)));
  if (!same([](const Result& x) { return x.op; })) facts.pop_back();
  if (same([](const Result& x) { return x.pattern; }) && r.pattern && r.op != Op::Copy && r.op != Op::Alloc)
    facts.push_back(text_of(r.pattern));
  if (same([](const Result& x) { return x.block_size; }) && r.block_size) facts.push_back(format_bytes(static_cast<double>(r.block_size)) + " calls");
  if (same([](const Result& x) { return x.file_size; }) && r.file_size) facts.push_back(format_bytes(static_cast<double>(r.file_size)) + " file");
  if (same([](const Result& x) { return x.cache; }) && r.cache) {
    // How the state was made ("fadvise", "drop_caches", "read once"): a cold figure means little without it.
    bool same_how = same([](const Result& x) { return x.cache_method; }) && !r.cache_method.empty();
    facts.push_back(text_of(r.cache) + " cache" + (same_how ? " (" + r.cache_method + ")" : ""));
  }
  if (same([](const Result& x) { return x.buffer; }) && r.buffer) facts.push_back(text_of(r.buffer) + " buffer");
  if (same([](const Result& x) { return destination(x); }) && !destination(r).empty()) facts.push_back(destination(r));
  unsigned reps = 0, passes = 1;
  bool same_passes = same([](const Result& x) { return x.passes; });
  for (const Result* x : g) {
    reps = std::max(reps, x->reps);
    passes = std::max(passes, x->passes);
  }
  facts.push_back(std::to_string(reps) + " reps" +
                  (passes > 1 ? " of " + std::string(same_passes ? "" : "up to ") + std::to_string(passes) + " passes" : ""));
  std::string out = h;
  for (std::size_t i = 0; i < facts.size(); ++i) out += (i == 0 ? " — " : ", ") + facts[i];
  return printable(out);  // names from outside (a fio job's, a path): no escape sequence reaches the terminal
}

std::string reference_line(const Result& r) {
  const Reference& ref = *r.reference;
  std::string ours;
  Summary s = r.seconds();
  if (!r.samples_s.empty()) {
    if (ref.unit == "ms") ours = fmt::format("{:.0f} ms", s.median * 1000);
    else if (ref.unit == "s") ours = fmt::format("{:.2f} s", s.median);
    else if (ref.unit == "MiB/s") ours = fmt::format("{:.0f} MiB/s", r.median_mib_per_s());
    else if (ref.unit == "ops/s") ours = fmt::format("{:.0f} ops/s", r.median_ops_per_s());
  }
  std::string line = fmt::format("theirs: {:g} {} ({})", ref.value, ref.unit, ref.source);
  if (!ours.empty()) line += "; ours: " + ours;
  return line;
}


// The range of a row's repetitions as throughput: slowest, fastest.
std::pair<double, double> range_of(const Result& r) {
  if (r.skipped || r.samples_s.empty()) return {0, 0};
  Summary s = r.seconds();
  double work = r.bytes > 0 ? static_cast<double>(r.bytes) : static_cast<double>(r.ops);
  return {s.max > 0 ? work / s.max : 0, s.min > 0 ? work / s.min : 0};
}

// The warnings of one table, one line per kind, naming the rows. Outlier
// notes appear only where they could change the table's verdict: on the
// best row, or on a row whose spread reaches into the best row's.
std::vector<std::string> table_notes(const std::vector<const Result*>& g, double best) {
  const Result* leader = nullptr;
  for (const Result* r : g)
    if (!r->skipped && best > 0 && figure_of(*r) >= best) leader = r;
  auto [lead_slow, lead_fast] = leader ? range_of(*leader) : std::pair<double, double>{0, 0};
  struct Note {
    WarningKind kind;
    std::vector<std::string> rows;
    std::string text;
  };
  std::vector<Note> notes;
  for (const Result* r : g) {
    if (r->skipped) continue;
    for (const Warning& w : r->warnings) {
      if (w.kind == WarningKind::Outliers && r != leader) {
        auto [slow, fast] = range_of(*r);
        if (fast < lead_slow) continue;  // clearly behind the leader either way
      }
      std::string who = row_label(*r, g);
      auto it = std::find_if(notes.begin(), notes.end(), [&](const Note& n) { return n.kind == w.kind; });
      std::string text = w.text;
      if (w.kind == WarningKind::Outliers) text = "outliers among the repetitions could change which is fastest; run more --reps";
      if (it == notes.end()) notes.push_back({w.kind, {who}, text});
      else if (std::find(it->rows.begin(), it->rows.end(), who) == it->rows.end()) it->rows.push_back(who);
    }
  }
  std::vector<std::string> out;
  for (const Note& n : notes) {
    std::string who = n.rows.front();
    for (std::size_t i = 1; i < n.rows.size() && i < 4; ++i) who += ", " + n.rows[i];
    if (n.rows.size() > 4) who += " and " + std::to_string(n.rows.size() - 4) + " more";
    out.push_back(who + ": " + n.text);
  }
  return out;
}

}  // namespace

std::string format_tables(const std::vector<Result>& results, bool color) {
  auto c = [&](const char* code) { return color ? std::string(code) : std::string(); };
  // Group by (suite, experiment), keeping first-seen order.
  std::vector<std::vector<const Result*>> groups;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const Result& r : results) {
    auto key = std::make_pair(r.suite, r.experiment);
    auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, groups.size());
      groups.push_back({&r});
    } else {
      groups[it->second].push_back(&r);
    }
  }
  std::string out;
  for (const auto& g : groups) {
    double best = 0;
    for (const Result* r : g) best = std::max(best, figure_of(*r));
    bool show_flushes = false;
    for (const Result* r : g) show_flushes = show_flushes || r->extra.contains("flushes");
    // Work counted in operations, not bytes (the store's phases): the time of
    // one operation, what another tool's figure for the same work is compared
    // with (a repetition is `passes` passes of `ops / passes` operations).
    bool show_per_op = false;
    for (const Result* r : g)
      show_per_op = show_per_op || (!r->skipped && r->bytes == 0 && r->ops > 0 && !reported_as_time(r->op));
    // P99 of one call and of one queued request (submission to completion)
    // are different quantities: the header names the one a table holds, and
    // a table holding both marks each cell.
    std::set<LatencySource> sources;
    for (const Result* r : g)
      if (!r->skipped && r->latency_ns) sources.insert(r->latency_ns->source);
    auto source_word = [](LatencySource src) -> std::string {
      switch (src) {
        case LatencySource::EveryCall: return "call";
        case LatencySource::EveryRequest: return "request";
        case LatencySource::EveryOp: return "op";
      }
      return "call";
    };
    const bool mixed_sources = sources.size() > 1;
    struct Row {
      std::vector<std::string> cells;
      const Result* r;
    };
    std::vector<Row> rows;
    for (const Result* r : g) {
      Row row{{printable(row_label(*r, g))}, r};
      if (r->skipped) {
        rows.push_back(row);
        continue;
      }
      Summary s = r->seconds();
      bool bytes = r->bytes > 0;
      auto rate = [&](double sec) { return sec > 0 ? static_cast<double>(r->bytes) / sec : 0.0; };
      auto ops = [&](double sec) { return sec > 0 ? static_cast<double>(r->ops) / sec : 0.0; };
      const double passes = std::max(1u, r->passes);
      // An operation that is a whole piece of work (reopen) shows the time each took.
      const bool as_time = reported_as_time(r->op) && r->ops > 0;
      auto each = [&](double sec) { return format_duration(sec / static_cast<double>(r->ops)); };
      // Spread: of single passes, as throughput (Result::spread_seconds).
      const auto [slow_s, fast_s] = r->spread_seconds();
      if (as_time) {
        row.cells.push_back(format_duration(r->ns_per_op().value_or(0) * 1e-9) + " each");
        row.cells.push_back(each(slow_s) + " … " + each(fast_s));
      } else {
        row.cells.push_back(bytes ? format_rate(rate(s.median)) : format_count(ops(s.median)) + " ops/s");
        row.cells.push_back(bytes ? format_rate(rate(slow_s)) + " … " + format_rate(rate(fast_s))
                                  : format_count(ops(slow_s)) + " … " + format_count(ops(fast_s)));
      }
      // One pass is the workload done once: what a reader compares with their
      // own loop. Its spread is that of single passes (each timed alone): a
      // repetition's σ divided by its passes would shrink with the passes.
      if (r->pass_s)
        row.cells.push_back(format_duration(r->pass_s->median) + " ± " + format_duration(r->pass_s->stddev));
      else
        row.cells.push_back(format_duration(r->seconds_per_pass()) + " ± " + format_duration(s.stddev / passes));
      row.cells.push_back(r->ops && !as_time ? format_count(ops(s.median)) : "");
      if (show_per_op) row.cells.push_back(r->ns_per_op() && !as_time ? format_duration(*r->ns_per_op() * 1e-9) : "");
      std::string p99 = r->latency_ns ? format_duration(r->latency_ns->p99 * 1e-9) : "—";
      if (r->latency_ns && mixed_sources) p99 += " " + source_word(r->latency_ns->source);
      row.cells.push_back(p99);
      row.cells.push_back(format_duration((r->user_s + r->sys_s) / passes));
      if (show_flushes) {
        std::string f;
        if (auto it = r->extra.find("flushes"); it != r->extra.end() && it->is_number()) {
          f = format_count(it->get<double>());
          if (auto b = r->extra.find("bytes_per_flush"); b != r->extra.end() && b->is_number() && b->get<double>() > 0)
            f += " × " + format_bytes(b->get<double>());
        }
        row.cells.push_back(f);
      }
      double f = figure_of(*r);
      row.cells.push_back(f <= 0 ? "" : f >= best ? "best" : fmt::format("{:.2f}x slower", best / f));
      rows.push_back(row);
    }
    std::string p99_header = "P99";
    if (sources.size() == 1)
      for (char ch : "/" + source_word(*sources.begin())) p99_header += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    std::vector<std::string> header = {"METHOD", "MEDIAN", "SLOWEST … FASTEST", "TIME/PASS ± σ", "OPS/S"};
    if (show_per_op) header.push_back("TIME/OP");
    header.insert(header.end(), {p99_header, "CPU/PASS"});
    if (show_flushes) header.push_back("FLUSHES/PASS");
    header.push_back("VS BEST");
    std::vector<std::size_t> width(header.size(), 0);
    for (std::size_t i = 0; i < header.size(); ++i) width[i] = display_width(header[i]);
    for (const Row& row : rows)
      if (!row.r->skipped)
        for (std::size_t i = 0; i < row.cells.size(); ++i) width[i] = std::max(width[i], display_width(row.cells[i]));
    out += "\n" + c(kBold) + group_heading(g) + c(kReset) + "\n";
    std::string line;
    for (std::size_t i = 0; i < header.size(); ++i) line += (i ? "  " : "") + pad(header[i], width[i], i > 0);
    out += c(kDim) + line + c(kReset) + "\n";
    for (const Row& row : rows) {
      const Result& r = *row.r;
      if (r.skipped) {
        out += c(kDim) + pad(row.cells[0], width[0], false) + "  skipped: " + printable(*r.skipped) + c(kReset) + "\n";
        continue;
      }
      line.clear();
      for (std::size_t i = 0; i < row.cells.size(); ++i) line += (i ? "  " : "") + pad(row.cells[i], width[i], i > 0);
      bool is_best = figure_of(r) >= best && best > 0 && rows.size() > 1;
      out += (is_best ? c(kGreen) : "") + line + (is_best ? c(kReset) : "") + "\n";
      if (r.reference) out += "    " + c(kDim) + printable(reference_line(r)) + c(kReset) + "\n";
    }
    for (const std::string& note : table_notes(g, best)) out += c(kYellow) + "  ! " + printable(note) + c(kReset) + "\n";
  }
  return out;
}

// ---- progress ----------------------------------------------------------------

ProgressLine::ProgressLine(bool enabled, unsigned planned, bool ansi) : enabled_(enabled), planned_(planned), ansi_(ansi) {
  start_ = std::chrono::steady_clock::now();
}
ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::set_context(std::string context) {
  context_ = std::move(context);
  draw();
}

void ProgressLine::begin(const std::string& label) {
  label_ = label;
  reps_ = 0;
  rep_done_ = 0;
  exp_start_ = std::chrono::steady_clock::now();
  draw();
}

void ProgressLine::pass(unsigned done, unsigned total) {
  rep_done_ = done;
  reps_ = total;
  // Fast experiments run thousands of passes: redraw at most ten times a second.
  if (total > 100 && done < total && std::chrono::steady_clock::now() - last_draw_ < std::chrono::milliseconds(100))
    return;
  draw();
}

void ProgressLine::end() {
  ++finished_;
  rep_done_ = reps_ = 0;
  draw();
}

// Back to the start of the line and blank it: an escape code, or spaces without ANSI.
std::string ProgressLine::erase() const {
  if (ansi_) return "\r\033[2K";
  std::string s(1, '\r');
  s.append(last_width_, ' ');
  s.push_back('\r');
  return s;
}

void ProgressLine::clear() {
  if (!enabled_ || !drawn_) return;
  std::fputs(erase().c_str(), stderr);
  std::fflush(stderr);
  drawn_ = false;
}

namespace {
std::string clock_text(double s) {
  auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}
}  // namespace

void ProgressLine::draw() {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  // Fraction of the whole run when the plan is known, else of this experiment.
  double exp_part = reps_ ? static_cast<double>(rep_done_) / reps_ : 0;
  double frac = planned_ ? std::min(1.0, (finished_ + exp_part) / planned_) : exp_part;
  constexpr int kBar = 20;
  int filled = static_cast<int>(frac * kBar);
  std::string bar;
  for (int i = 0; i < kBar; ++i) bar += i < filled ? "█" : "░";
  std::string eta;
  if (planned_ && frac > 0.02) {
    eta = " eta " + clock_text(elapsed / frac - elapsed);
  } else if (!planned_ && rep_done_ > 0 && rep_done_ < reps_) {
    // Suites learn their experiments as they go: only this experiment's end can be foreseen.
    double in_exp = std::chrono::duration<double>(now - exp_start_).count();
    eta = " · this one ends in " + clock_text(in_exp / rep_done_ * (reps_ - rep_done_));
  }
  std::string counts = planned_ ? fmt::format("[{}/{}] ", std::min(finished_ + 1, planned_), planned_) : "";
  std::string reps = reps_ ? fmt::format(" pass {}/{}", rep_done_, reps_) : std::string(" done");
  std::string text = fmt::format("{}{}{} {}{} · {}{}", context_.empty() ? "" : context_ + " ", counts, bar, label_, reps,
                                 clock_text(elapsed), eta);
  std::string line = erase() + text;
  last_width_ = display_width(text);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
  last_draw_ = now;
}

}  // namespace iolab::results
