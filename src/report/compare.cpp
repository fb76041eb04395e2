#include "iolab/report/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "common.h"
#include "iolab/harness/comparison.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace {

// "2026-12-02T05:55:08Z" -> seconds since the epoch; nullopt when it is not that form.
std::optional<std::int64_t> utc_seconds(const std::string& iso) {
  std::tm tm{};
  std::istringstream in(iso);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  return static_cast<std::int64_t>(timegm(&tm));
}

std::string describe(const results::Result& r) {
  std::string s = r.suite + " / " + r.experiment + " / " + r.method;
  if (std::string q = queue_label(r); !q.empty()) s += " " + q;
  s += ": " + std::string(results::to_string(r.op));
  if (r.pattern) s += " " + results::pattern_name(r);
  if (r.block_size) s += " bs=" + size_label(r.block_size);
  if (r.file_size) s += " file=" + size_label(r.file_size);
  if (r.buffer) s += " " + results::buffer_name(r);
  if (r.cache) s += " " + results::cache_name(r);
  if (r.sync.flushes()) s += " sync=" + io::to_string(r.sync);
  if (r.threads != 1) s += " threads=" + std::to_string(r.threads);
  return visible(s);
}

std::string unit(const Matched& m) { return m.bytes ? " MiB/s" : " ops/s"; }

// A record's median repetition ("1e+308 s").
std::string compare_seconds_text(const results::Result& r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", r.seconds().median);
  return buf;
}

// "1.50x faster than A" / "2.00x slower than A" / "as fast as A (1.00x)", and
// the interval the same way round.
struct Stated {
  std::string verdict, interval, estimate;  // estimate: the Hodges-Lehmann estimate the interval is around
};
Stated stated(const Matched& m) {
  bool faster = m.ratio >= 1;
  auto x = [&](double v) { return sig(faster ? v : 1 / v, 3) + "x"; };
  std::string lo = x(faster ? m.lo : m.hi), hi = x(faster ? m.hi : m.lo);
  std::string interval = m.interval ? lo + ".." + hi : "";
  std::string estimate = m.interval ? x(m.hl_estimate) : "";
  if (x(m.ratio) == "1.00x") return {"as fast as A (1.00x)", interval, estimate};
  return {x(m.ratio) + (faster ? " faster than A" : " slower than A"), interval, estimate};
}

std::string warnings_note(const Matched& m) {
  auto side = [](const char* name, const std::vector<std::string>& w) {
    std::string s;
    for (const auto& k : w) s += (s.empty() ? std::string(name) + " " : ", ") + k;
    return s;
  };
  std::string a = side("A", m.warnings_a), b = side("B", m.warnings_b);
  if (a.empty() && b.empty()) return "";
  return a + (a.empty() || b.empty() ? "" : "; ") + b;
}

std::string coverage_text(const Matched& m) { return fmt::format("{:.1f}%", 100 * m.coverage); }

std::string sentence(const Matched& m) {
  if (!m.skipped.empty()) return "not compared: " + visible(m.skipped);
  Stated st = stated(m);
  std::string s = "B is " + st.verdict + " (" + sig(m.rate_b, 3) + unit(m) + " vs " + sig(m.rate_a, 3) + unit(m) + ")";
  if (!m.noise_known) s += "; one repetition: noise unknown, not significant";
  else if (!m.enough)
    s += fmt::format("; too few repetitions ({} vs {}; {} a side are needed), not significant", m.a->samples_s.size(),
                     m.b->samples_s.size(), kMinRepetitions);
  else
    s += "; Hodges-Lehmann estimate " + st.estimate + ", its " + coverage_text(m) + " interval " + st.interval +
         (m.significant ? "" : " (not significant: inside the noise)");
  if (std::string w = warnings_note(m); !w.empty()) s += "; figures with warnings: " + w;
  return s;
}

std::string counts_line(const Comparison& c) {
  int faster = 0, slower = 0, same = 0, uncompared = 0;
  for (const auto& m : c.matched) {
    if (!m.skipped.empty()) ++uncompared;
    else if (!m.significant) ++same;
    else if (m.ratio > 1) ++faster;
    else ++slower;
  }
  std::string unverified = c.unverified ? fmt::format(" ({} unverified)", c.unverified) : "";
  return fmt::format("{} matched experiments: {} faster in B, {} slower in B, {} inside the noise, {} not compared{}; "
                     "{} only in A, {} only in B",
                     c.matched.size(), faster, slower, same, uncompared, unverified, c.only_a.size(), c.only_b.size());
}

constexpr const char* kMethodNote =
    "Ratios: B's median rate over A's (the ratio of medians), where a rate is bytes (or operations) per second of "
    "each repetition. Estimate and interval: the Hodges-Lehmann estimate of the factor between B's rates and A's "
    "(the median of every B rate over every A rate, not the ratio of medians, which the interval need not contain) "
    "and its exact distribution-free interval (Mann-Whitney), asked at 95%; shown with the coverage it really has "
    "at those repetitions. Significant when the interval excludes 1 and both sides have at least 5 repetitions.";

Matched match(const results::Result& ra, const results::Result& rb) {
  Matched m;
  m.a = &ra;
  m.b = &rb;
  if (ra.skipped || rb.skipped) {
    m.skipped = ra.skipped ? "skipped in A: " + *ra.skipped : "skipped in B: " + *rb.skipped;
    return m;
  }
  if (!measured(ra) || !measured(rb)) {
    m.skipped = !measured(ra) ? "no usable figures in A: " + unusable_reason(ra) : "no usable figures in B: " + unusable_reason(rb);
    return m;
  }
  if (counts_bytes(ra) != counts_bytes(rb)) {
    m.skipped = "one run counted bytes, the other operations";
    return m;
  }
  if (!ra.verified || !rb.verified) {
    m.skipped = !ra.verified ? "data not verified in A" : "data not verified in B";
    return m;
  }
  m.bytes = counts_bytes(ra);
  std::vector<double> a = rates(ra), b = rates(rb);
  harness::RatioInterval ri = harness::ratio_interval(a, b);
  m.rate_a = rate(ra).median;
  m.rate_b = rate(rb).median;
  m.ratio = m.rate_b / m.rate_a;
  // Rates so small (repetitions of 1e308 s) or so far apart that a factor between them, either
  // way round, is not a finite positive number: no factor to state ("n/ax" otherwise).
  auto factor = [](double v) { return std::isfinite(v) && v > 0 && std::isfinite(1 / v); };
  if (!factor(m.ratio) || (ri.available && !(factor(ri.lo) && factor(ri.hi)))) {
    m.skipped = "no factor between the rates: A's median " + sig(m.rate_a, 3) + unit(m) + ", B's " + sig(m.rate_b, 3) +
                unit(m) + " (repetitions of " + compare_seconds_text(ra) + " and " + compare_seconds_text(rb) + ")";
    return m;
  }
  m.interval = ri.available;
  m.lo = ri.lo;
  m.hi = ri.hi;
  m.hl_estimate = ri.estimate;
  m.coverage = ri.coverage;
  m.noise_known = a.size() >= 2 && b.size() >= 2;
  m.enough = a.size() >= kMinRepetitions && b.size() >= kMinRepetitions;
  m.significant = m.enough && m.interval && (m.lo > 1 || m.hi < 1);
  m.warnings_a = distrust(ra);
  m.warnings_b = distrust(rb);
  return m;
}

}  // namespace

std::string match_key(const results::Result& r) {
  nlohmann::json k = {r.suite, r.experiment, r.method, results::to_string(r.op), results::pattern_name(r),
                      r.block_size, r.file_size, results::buffer_name(r), results::cache_name(r),
                      io::to_string(r.sync), r.threads, r.queue_depth.value_or(0)};
  return k.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Comparison compare(const results::Results& a, const results::Results& b) {
  Comparison out;
  // The same key twice in one file pairs in order of appearance.
  std::map<std::string, std::vector<const results::Result*>> in_b;
  for (const auto& r : b.results) in_b[match_key(r)].push_back(&r);
  std::map<std::string, std::size_t> used;
  for (const auto& ra : a.results) {
    std::string k = match_key(ra);
    auto it = in_b.find(k);
    std::size_t& n = used[k];
    if (it == in_b.end() || n >= it->second.size()) {
      out.only_a.push_back(&ra);
      continue;
    }
    out.matched.push_back(match(ra, *it->second[n++]));
    out.unverified += out.matched.back().skipped.rfind("data not verified", 0) == 0;
  }
  // Drift: a comparison across hosts or hours measures the machine's change as much as the code's.
  if (a.environment.hostname != b.environment.hostname)
    out.drift.push_back("the runs come from different hosts (" + visible(a.environment.hostname) + ", " +
                        visible(b.environment.hostname) + ")");
  auto ta = utc_seconds(a.environment.created), tb = utc_seconds(b.environment.created);
  if (ta && tb && std::llabs(*ta - *tb) > 3600)
    out.drift.push_back(fmt::format("the runs were made {:.1f} hours apart: the machine may have drifted",
                                    static_cast<double>(std::llabs(*ta - *tb)) / 3600));
  for (const auto& [k, list] : in_b) {
    std::size_t n = used.count(k) ? used[k] : 0;
    for (std::size_t i = n; i < list.size(); ++i) out.only_b.push_back(list[i]);
  }
  // Keep B's unmatched records in file order.
  std::map<const results::Result*, std::size_t> order;
  for (std::size_t i = 0; i < b.results.size(); ++i) order[&b.results[i]] = i;
  std::sort(out.only_b.begin(), out.only_b.end(), [&](auto* x, auto* y) { return order[x] < order[y]; });
  return out;
}

std::string format_text(const Comparison& c, std::string_view a, std::string_view b) {
  std::string out = "A = " + visible(a) + "\nB = " + visible(b) + "\n\n";
  for (const auto& d : c.drift) out += "warning: " + d + "\n";
  if (!c.drift.empty()) out += "\n";
  for (const auto& m : c.matched) out += describe(*m.a) + "\n  " + sentence(m) + "\n";
  if (!c.only_a.empty()) {
    out += "\nOnly in A (" + visible(a) + "):\n";
    for (const auto* r : c.only_a) out += "  " + describe(*r) + "\n";
  }
  if (!c.only_b.empty()) {
    out += "\nOnly in B (" + visible(b) + "):\n";
    for (const auto* r : c.only_b) out += "  " + describe(*r) + "\n";
  }
  return out + "\n" + counts_line(c) + ".\n" + kMethodNote + "\n";
}

namespace {
std::string drift_lines(const Comparison& c) {
  std::string s;
  for (const auto& d : c.drift) s += "**Warning:** " + d + "\n\n";
  return s;
}
}  // namespace

std::string format_markdown(const Comparison& c, std::string_view a, std::string_view b) {
  auto cell = markdown_cell;
  MarkdownTable table({"experiment", "A (median)", "B (median)", "B vs A (ratio of medians)", "Hodges-Lehmann estimate",
                       "interval (coverage)", "significant", "warnings"});
  for (const auto& m : c.matched) {
    if (!m.skipped.empty()) {
      table.add({describe(*m.a), "", "", "—", "", "", m.skipped, ""});
      continue;
    }
    Stated st = stated(m);
    table.add({describe(*m.a), sig(m.rate_a, 3) + unit(m), sig(m.rate_b, 3) + unit(m), st.verdict,
               m.interval ? st.estimate : "—", m.interval ? st.interval + " (" + coverage_text(m) + ")" : "—",
               m.significant     ? "yes"
               : !m.noise_known ? "no (1 rep)"
               : !m.enough      ? "no (too few repetitions)"
                                : "no (inside the noise)",
               warnings_note(m)});
  }
  std::string out = "A = `" + cell(a) + "`, B = `" + cell(b) + "`\n\n" + drift_lines(c) + table.render();
  if (!c.only_a.empty() || !c.only_b.empty()) {
    out += "\n**Unmatched experiments**\n\n";
    for (const auto* r : c.only_a) out += "- only in A: " + cell(describe(*r)) + "\n";
    for (const auto* r : c.only_b) out += "- only in B: " + cell(describe(*r)) + "\n";
  }
  return out + "\n" + counts_line(c) + ".\n\n" + kMethodNote + "\n";
}

}  // namespace iolab::report
