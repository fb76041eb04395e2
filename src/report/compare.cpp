#include "iolab/report/compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>

#include "common.h"
#include "iolab/base/units.h"

namespace iolab::report {

namespace {

// One seed for every pair: a pair's interval does not depend on the others.
constexpr std::uint64_t kBootstrapSeed = 0x10AB;

double median_in_place(std::vector<double>& v) {
  std::size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double hi = v[mid];
  if (n % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + hi) / 2;
}

std::string describe(const harness::Result& r) {
  std::string s = r.suite + " / " + r.experiment + " / " + r.method;
  if (std::string q = queue_label(r); !q.empty()) s += " " + q;
  s += ": " + std::string(harness::to_string(r.op));
  if (r.pattern) s += " " + harness::pattern_name(r);
  if (r.block_size) s += " bs=" + size_label(r.block_size);
  if (r.file_size) s += " file=" + size_label(r.file_size);
  if (r.buffer) s += " " + harness::buffer_name(r);
  if (r.cache) s += " " + harness::cache_name(r);
  if (r.sync.flushes()) s += " sync=" + harness::to_string(r.sync);
  if (r.threads != 1) s += " threads=" + std::to_string(r.threads);
  return visible(s);
}

std::string unit(const Matched& m) { return m.bytes ? " MiB/s" : " ops/s"; }

// "1.50x faster than A" / "2.00x slower than A" / "as fast as A (1.00x)", and
// the interval the same way round.
struct Stated {
  std::string verdict, interval;
};
Stated stated(const Matched& m) {
  bool faster = m.ratio >= 1;
  auto x = [&](double v) { return sig(faster ? v : 1 / v, 3) + "x"; };
  std::string lo = x(faster ? m.lo : m.hi), hi = x(faster ? m.hi : m.lo);
  if (x(m.ratio) == "1.00x") return {"as fast as A (1.00x)", lo + ".." + hi};
  return {x(m.ratio) + (faster ? " faster than A" : " slower than A"), lo + ".." + hi};
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

std::string sentence(const Matched& m) {
  if (!m.skipped.empty()) return "not compared: " + visible(m.skipped);
  Stated st = stated(m);
  std::string s = "B is " + st.verdict + " (" + sig(m.rate_b, 3) + unit(m) + " vs " + sig(m.rate_a, 3) + unit(m) + ")";
  if (!m.noise_known) s += "; one repetition: noise unknown, not significant";
  else s += ", 95% interval " + st.interval + (m.significant ? "" : " (not significant: inside the noise)");
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
  return fmt::format("{} matched experiments: {} faster in B, {} slower in B, {} inside the noise, {} not compared; "
                     "{} only in A, {} only in B",
                     c.matched.size(), faster, slower, same, uncompared, c.only_a.size(), c.only_b.size());
}

constexpr const char* kMethodNote =
    "Ratios: B's median rate over A's, where a rate is bytes (or operations) per second of each repetition; "
    "95% interval from a bootstrap over the repetitions (seeded: the same files give the same intervals). "
    "Significant when the interval excludes 1.";

Matched match(const harness::Result& ra, const harness::Result& rb) {
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
  m.bytes = counts_bytes(ra);
  std::vector<double> a = rates(ra), b = rates(rb);
  RatioInterval ri = bootstrap_median_ratio(a, b, kBootstrapSeed);
  m.ratio = ri.ratio;
  m.lo = ri.lo;
  m.hi = ri.hi;
  m.rate_a = rate(ra).median;
  m.rate_b = rate(rb).median;
  m.noise_known = a.size() >= 2 && b.size() >= 2;
  m.significant = m.noise_known && (m.lo > 1 || m.hi < 1);
  m.warnings_a = distrust(ra);
  m.warnings_b = distrust(rb);
  return m;
}

}  // namespace

RatioInterval bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, std::uint64_t seed) {
  RatioInterval out;
  if (a.empty() || b.empty()) return out;
  std::vector<double> ra(a.begin(), a.end()), rb(b.begin(), b.end());
  double ma = median_in_place(ra), mb = median_in_place(rb);
  out.ratio = out.lo = out.hi = ma > 0 ? mb / ma : 1;
  if (a.size() < 2 && b.size() < 2) return out;
  // Fewer resamples for very long samples: the work stays bounded whatever a file holds.
  std::size_t resamples = std::clamp<std::size_t>(2'000'000 / (a.size() + b.size()), 200, 2000);
  std::mt19937_64 rng(seed);
  auto draw = [&](std::span<const double> from, std::vector<double>& into) {
    for (double& x : into) x = from[rng() % from.size()];
    return median_in_place(into);
  };
  std::vector<double> ratios;
  ratios.reserve(resamples);
  for (std::size_t i = 0; i < resamples; ++i) {
    double da = draw(a, ra), db = draw(b, rb);
    if (da > 0) ratios.push_back(db / da);
  }
  if (ratios.empty()) return out;
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double q) { return ratios[static_cast<std::size_t>(std::round(q * static_cast<double>(ratios.size() - 1)))]; };
  out.lo = std::min(at(0.025), out.ratio);
  out.hi = std::max(at(0.975), out.ratio);
  return out;
}

std::string match_key(const harness::Result& r) {
  nlohmann::json k = {r.suite, r.experiment, r.method, harness::to_string(r.op), harness::pattern_name(r),
                      r.block_size, r.file_size, harness::buffer_name(r), harness::cache_name(r),
                      harness::to_string(r.sync), r.threads, r.queue_depth.value_or(0)};
  return k.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Comparison compare(const harness::Results& a, const harness::Results& b) {
  Comparison out;
  // The same key twice in one file pairs in order of appearance.
  std::map<std::string, std::vector<const harness::Result*>> in_b;
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
  }
  for (const auto& [k, list] : in_b) {
    std::size_t n = used.count(k) ? used[k] : 0;
    for (std::size_t i = n; i < list.size(); ++i) out.only_b.push_back(list[i]);
  }
  // Keep B's unmatched records in file order.
  std::map<const harness::Result*, std::size_t> order;
  for (std::size_t i = 0; i < b.results.size(); ++i) order[&b.results[i]] = i;
  std::sort(out.only_b.begin(), out.only_b.end(), [&](auto* x, auto* y) { return order[x] < order[y]; });
  return out;
}

std::string format_text(const Comparison& c, std::string_view a, std::string_view b) {
  std::string out = "A = " + visible(a) + "\nB = " + visible(b) + "\n\n";
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

std::string format_markdown(const Comparison& c, std::string_view a, std::string_view b) {
  auto cell = [](std::string_view s) {
    std::string o;
    for (char ch : visible(s)) {
      if (ch == '|') o += "\\|";
      else o += ch;
    }
    return o;
  };
  std::string out = "A = `" + cell(a) + "`, B = `" + cell(b) +
                    "`\n\n| experiment | A (median) | B (median) | B vs A | 95% interval | significant | warnings |\n"
                    "|---|---|---|---|---|---|---|\n";
  for (const auto& m : c.matched) {
    if (!m.skipped.empty()) {
      out += "| " + cell(describe(*m.a)) + " | | | — | | " + cell(m.skipped) + " | |\n";
      continue;
    }
    Stated st = stated(m);
    out += "| " + cell(describe(*m.a)) + " | " + sig(m.rate_a, 3) + unit(m) + " | " + sig(m.rate_b, 3) + unit(m) + " | " +
           st.verdict + " | " + (m.noise_known ? st.interval : "—") + " | " +
           (m.significant ? "yes" : m.noise_known ? "no (inside the noise)" : "no (1 rep)") + " | " + warnings_note(m) + " |\n";
  }
  if (!c.only_a.empty() || !c.only_b.empty()) {
    out += "\n**Unmatched experiments**\n\n";
    for (const auto* r : c.only_a) out += "- only in A: " + cell(describe(*r)) + "\n";
    for (const auto* r : c.only_b) out += "- only in B: " + cell(describe(*r)) + "\n";
  }
  return out + "\n" + counts_line(c) + ".\n\n" + kMethodNote + "\n";
}

}  // namespace iolab::report
