#include "iolab/harness/console.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/core.h>

#include "iolab/units.h"

// GCC 12 reports a false -Wrestrict inside std::string's operator+ once it is
// inlined into string-building code like this file's (GCC bugs 105329, 105651).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace iolab::harness {

bool use_color(std::FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
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

// What tells rows of one group apart besides the method: only the fields that vary.
std::string row_label(const Result& r, const std::vector<const Result*>& group) {
  auto varies = [&](auto field) {
    std::set<std::string> seen;
    for (const Result* g : group) seen.insert(field(*g));
    return seen.size() > 1;
  };
  std::string s = r.method;
  auto add = [&](auto field) {
    std::string v = field(r);
    if (v.empty() || !varies(field)) return;
    s.push_back(' ');
    s.append(v);
  };
  add([](const Result& x) { return x.op; });
  add([](const Result& x) { return x.pattern; });
  add([](const Result& x) { return size_label(x.block_size); });
  add([](const Result& x) { return x.file_size ? size_label(x.file_size) : std::string(); });
  add([](const Result& x) { return x.buffer; });
  add([](const Result& x) { return x.cache; });
  add([](const Result& x) { return x.sync; });
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
  if (same([](const Result& x) { return x.op; }) && !r.op.empty()) facts.push_back(r.op);
  if (same([](const Result& x) { return x.pattern; }) && !r.pattern.empty() && r.op != "copy" && r.op != "alloc")
    facts.push_back(r.pattern);
  if (same([](const Result& x) { return x.block_size; }) && r.block_size) facts.push_back(format_bytes(static_cast<double>(r.block_size)) + " calls");
  if (same([](const Result& x) { return x.file_size; }) && r.file_size) facts.push_back(format_bytes(static_cast<double>(r.file_size)) + " file");
  if (same([](const Result& x) { return x.cache; }) && !r.cache.empty()) {
    // How the state was made ("fadvise", "drop_caches", "read once"): a cold figure means little without it.
    bool same_how = same([](const Result& x) { return x.cache_method; }) && !r.cache_method.empty();
    facts.push_back(r.cache + " cache" + (same_how ? " (" + r.cache_method + ")" : ""));
  }
  if (same([](const Result& x) { return x.buffer; }) && !r.buffer.empty()) facts.push_back(r.buffer + " buffer");
  if (same([](const Result& x) { return x.sync; }) && !r.sync.empty() && r.sync != "none") facts.push_back("sync " + r.sync);
  unsigned reps = 0;
  for (const Result* x : g) reps = std::max(reps, x->reps);
  facts.push_back(std::to_string(reps) + " reps");
  std::string out = h;
  for (std::size_t i = 0; i < facts.size(); ++i) out += (i == 0 ? " — " : ", ") + facts[i];
  return out;
}

// Width in characters, not bytes: µ, ± and … take several bytes in UTF-8.
std::size_t display_width(const std::string& s) {
  std::size_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return chars;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  std::size_t chars = display_width(s);
  if (chars >= width) return s;
  return right ? std::string(width - chars, ' ') + s : s + std::string(width - chars, ' ');
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
    struct Row {
      std::vector<std::string> cells;
      const Result* r;
    };
    std::vector<Row> rows;
    for (const Result* r : g) {
      Row row{{row_label(*r, g)}, r};
      if (r->skipped) {
        rows.push_back(row);
        continue;
      }
      Summary s = r->seconds();
      bool bytes = r->bytes > 0;
      auto rate = [&](double sec) { return sec > 0 ? static_cast<double>(r->bytes) / sec : 0.0; };
      auto ops = [&](double sec) { return sec > 0 ? static_cast<double>(r->ops) / sec : 0.0; };
      row.cells.push_back(bytes ? format_rate(rate(s.median)) : format_count(ops(s.median)) + " ops/s");
      // Spread: the slowest and fastest repetition, as throughput.
      row.cells.push_back(bytes ? format_rate(rate(s.max)) + " … " + format_rate(rate(s.min))
                                : format_count(ops(s.max)) + " … " + format_count(ops(s.min)));
      row.cells.push_back(format_duration(s.median) + " ± " + format_duration(s.stddev));
      row.cells.push_back(r->ops ? format_count(ops(s.median)) : "");
      row.cells.push_back(r->latency_ns ? format_duration(r->latency_ns->p99 * 1e-9) : "—");
      row.cells.push_back(format_duration(r->user_s + r->sys_s));
      double f = figure_of(*r);
      row.cells.push_back(f <= 0 ? "" : f >= best ? "best" : fmt::format("{:.2f}x slower", best / f));
      rows.push_back(row);
    }
    const std::vector<std::string> header = {"METHOD", "MEDIAN", "SLOWEST … FASTEST", "TIME/REP ± σ", "OPS/S", "P99", "CPU/REP", "VS BEST"};
    std::vector<std::size_t> width(header.size(), 0);
    for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
    for (const Row& row : rows)
      if (!row.r->skipped)
        for (std::size_t i = 0; i < row.cells.size(); ++i) width[i] = std::max(width[i], display_width(row.cells[i]));
    out += "\n" + c(kBold) + group_heading(g) + c(kReset) + "\n";
    std::string line;
    for (std::size_t i = 0; i < header.size(); ++i) line += (i ? "  " : "") + pad(header[i], width[i], i > 0);
    out += c(kDim) + line + c(kReset) + "\n";
    std::vector<std::pair<std::string, std::string>> notes;  // row, warning
    for (const Row& row : rows) {
      const Result& r = *row.r;
      if (r.skipped) {
        out += c(kDim) + pad(row.cells[0], width[0], false) + "  skipped: " + *r.skipped + c(kReset) + "\n";
        continue;
      }
      line.clear();
      for (std::size_t i = 0; i < row.cells.size(); ++i) line += (i ? "  " : "") + pad(row.cells[i], width[i], i > 0);
      bool is_best = figure_of(r) >= best && best > 0 && rows.size() > 1;
      out += (is_best ? c(kGreen) : "") + line + (is_best ? c(kReset) : "") + "\n";
      if (r.reference) out += "    " + c(kDim) + reference_line(r) + c(kReset) + "\n";
      for (const auto& w : r.warnings) notes.emplace_back(row.cells[0], w);
    }
    // Same kind of warning on many rows: say it once, naming the rows.
    struct Note {
      std::vector<std::string> rows;
      std::string text;
    };
    std::vector<Note> merged;
    for (const auto& [row, text] : notes) {
      std::string kind = text.substr(0, text.find(" ("));
      auto it = std::find_if(merged.begin(), merged.end(), [&](const Note& m) { return m.text.substr(0, m.text.find(" (")) == kind; });
      if (it == merged.end()) merged.push_back({{row}, text});
      else it->rows.push_back(row);
    }
    for (const auto& m : merged) {
      std::string who = m.rows.front();
      for (std::size_t i = 1; i < m.rows.size(); ++i) who += ", " + m.rows[i];
      out += c(kYellow) + "  ! " + who + ": " + m.text + c(kReset) + "\n";
    }
  }
  return out;
}

// ---- progress ----------------------------------------------------------------

Progress::Progress(bool enabled, unsigned planned, bool ansi) : enabled_(enabled), planned_(planned), ansi_(ansi) {
  start_ = std::chrono::steady_clock::now();
}
Progress::~Progress() { clear(); }

void Progress::set_context(std::string context) {
  context_ = std::move(context);
  draw();
}

void Progress::begin(const std::string& label, unsigned reps) {
  label_ = label;
  reps_ = reps;
  rep_done_ = 0;
  exp_start_ = std::chrono::steady_clock::now();
  draw();
}

void Progress::repetition(unsigned done) {
  rep_done_ = done;
  draw();
}

void Progress::end() {
  ++finished_;
  rep_done_ = reps_ = 0;
  draw();
}

// Back to the start of the line and blank it: an escape code, or spaces without ANSI.
std::string Progress::erase() const {
  if (ansi_) return "\r\033[2K";
  std::string s(1, '\r');
  s.append(last_width_, ' ');
  s.push_back('\r');
  return s;
}

void Progress::clear() {
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

void Progress::draw() {
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
  std::string reps = reps_ ? fmt::format(" rep {}/{}", rep_done_, reps_) : std::string(" done");
  std::string text = fmt::format("{}{}{} {}{} · {}{}", context_.empty() ? "" : context_ + " ", counts, bar, label_, reps,
                                 clock_text(elapsed), eta);
  std::string line = erase() + text;
  last_width_ = display_width(text);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
  last_draw_ = now;
}

}  // namespace iolab::harness
