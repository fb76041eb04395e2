#include "iolab/report/compare.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common.h"
#include "iolab/units.h"

namespace iolab::report {

namespace {

std::string describe(const harness::Result& r) {
  std::string s = r.suite + " / " + r.experiment + " / " + r.method + ": " + std::string(harness::to_string(r.op));
  if (r.pattern) s += " " + harness::pattern_name(r);
  if (r.block_size) s += " bs=" + size_label(r.block_size);
  if (r.file_size) s += " file=" + size_label(r.file_size);
  if (r.buffer) s += " " + harness::buffer_name(r);
  if (r.cache) s += " " + harness::cache_name(r);
  if (r.sync.flushes()) s += " sync=" + harness::to_string(r.sync);
  if (r.threads != 1) s += " threads=" + std::to_string(r.threads);
  return s;
}

// "B is 1.42 ± 0.06x faster than A"; slower cases are stated the same way round.
std::string sentence(const Matched& m, std::string_view a, std::string_view b) {
  if (!m.skipped.empty()) return "not compared: " + m.skipped;
  bool faster = m.ratio >= 1;
  double r = faster ? m.ratio : 1 / m.ratio;
  double sd = faster ? m.stddev : m.stddev / (m.ratio * m.ratio);  // first-order error of 1/x
  std::string s = fmt::format("{} is {} ± {}x {} than {}", b, sig(r, 3), sig(sd, sd < 0.1 ? 1 : 2),
                              faster ? "faster" : "slower", a);
  if (!m.noise_known) s += " (one repetition: noise unknown, not significant)";
  else if (!m.significant) s += " (not significant: inside the noise)";
  return s;
}

std::string counts_line(const Comparison& c, std::string_view a, std::string_view b) {
  int faster = 0, slower = 0, same = 0;
  for (const auto& m : c.matched) {
    if (!m.skipped.empty()) continue;
    if (!m.significant) ++same;
    else if (m.ratio > 1) ++faster;
    else ++slower;
  }
  return fmt::format("{} matched experiments: {} faster in {}, {} slower in {}, {} inside the noise; {} only in {}, {} only in {}",
                     c.matched.size(), faster, b, slower, b, same, c.only_a.size(), a, c.only_b.size(), b);
}

}  // namespace

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
    const harness::Result* rb = it->second[n++];
    Matched m;
    m.a = &ra;
    m.b = rb;
    if (ra.skipped || rb->skipped) {
      m.skipped = ra.skipped ? "skipped in A: " + *ra.skipped : "skipped in B: " + *rb->skipped;
    } else if (!measured(ra) || !measured(*rb)) {
      m.skipped = "no samples";
    } else {
      Speedup s = speedup(*rb, ra);  // > 1: B faster
      m.ratio = s.ratio;
      m.stddev = s.stddev;
      m.noise_known = s.noise_known;
      if (s.noise_known) {
        Speedup rev = speedup(ra, *rb);
        m.significant = s.beyond_noise || rev.beyond_noise;
      }
    }
    out.matched.push_back(m);
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
  std::string out = fmt::format("A = {}\nB = {}\n\n", a, b);
  for (const auto& m : c.matched) out += describe(*m.a) + "\n  " + sentence(m, "A", "B") + "\n";
  if (!c.only_a.empty()) {
    out += "\nOnly in A (" + std::string(a) + "):\n";
    for (const auto* r : c.only_a) out += "  " + describe(*r) + "\n";
  }
  if (!c.only_b.empty()) {
    out += "\nOnly in B (" + std::string(b) + "):\n";
    for (const auto* r : c.only_b) out += "  " + describe(*r) + "\n";
  }
  out += "\n" + counts_line(c, "A", "B") + ".\nRatios: mean time per unit of work, ± one standard deviation propagated "
                                           "from both runs' relative standard deviations.\n";
  return out;
}

std::string format_markdown(const Comparison& c, std::string_view a, std::string_view b) {
  auto cell = [](std::string s) {
    std::string o;
    for (char ch : s) {
      if (ch == '|') o += "\\|";
      else if (ch == '\n') o += ' ';
      else o += ch;
    }
    return o;
  };
  std::string out = fmt::format("A = `{}`, B = `{}`\n\n| experiment | A | B | B vs A | significant |\n|---|---|---|---|---|\n",
                                cell(std::string(a)), cell(std::string(b)));
  for (const auto& m : c.matched) {
    auto fig = [](const harness::Result& r) {
      if (r.skipped) return std::string("skipped");
      Rate rt = rate(r);
      return sig(rt.median, 3) + (counts_bytes(r) ? " MiB/s" : " ops/s");
    };
    std::string verdict;
    if (!m.skipped.empty()) verdict = "—";
    else if (m.ratio >= 1) verdict = sig(m.ratio, 3) + " ± " + sig(m.stddev, m.stddev < 0.1 ? 1 : 2) + "x faster";
    else verdict = sig(1 / m.ratio, 3) + " ± " + sig(m.stddev / (m.ratio * m.ratio), 1) + "x slower";
    out += "| " + cell(describe(*m.a)) + " | " + fig(*m.a) + " | " + fig(*m.b) + " | " + verdict + " | " +
           (!m.skipped.empty() ? cell(m.skipped) : m.significant ? "yes" : m.noise_known ? "no (inside the noise)" : "no (1 rep)") +
           " |\n";
  }
  if (!c.only_a.empty() || !c.only_b.empty()) {
    out += "\n**Unmatched experiments**\n\n";
    for (const auto* r : c.only_a) out += "- only in A: " + cell(describe(*r)) + "\n";
    for (const auto* r : c.only_b) out += "- only in B: " + cell(describe(*r)) + "\n";
  }
  out += "\n" + counts_line(c, "A", "B") + ".\n";
  return out;
}

}  // namespace iolab::report
