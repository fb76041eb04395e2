// The memory suite's charts (issue 24): one chart per workload (random
// 4 KiB reads, the 256 KiB scan, the writes) at one memory limit, every
// working set of it together. Above: MiB/s against working set / memory
// limit (log-log), one line per method, a rule where the file outgrows the
// limit. Below, for each working set: MiB/s in each second of the timed
// pass (extra.per_second, drawn as the commit log's series are:
// append_per_second_rows), with a rule where the group's page cache filled
// (extra.cache_full_at_s, from the series' page-cache bytes), and the page
// cache itself against the limit. Under the chart, the counters that say
// why: major faults per MiB, kernel CPU per GiB, bytes read per byte
// delivered, TLB shootdowns per second.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "charts.h"
#include "charts_commitlog.h"
#include "common.h"
#include "family_charts.h"

namespace iolab::report {

namespace {

using nlohmann::json;

// A finite, non-negative number from the record's extra, or nothing.
std::optional<double> mem_extra(const results::Result& r, const char* key) {
  auto it = r.extra.find(key);
  if (it == r.extra.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// sig() without trailing zeros: 1.50 -> "1.5", 250 -> "250".
std::string mem_sig(double v, int digits) {
  std::string s = sig(v, digits);
  if (s.find('.') == std::string::npos || s.find('e') != std::string::npos) return s;
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

bool mem_claims(const results::Result& r) { return working_set_ratio(r) > 0; }

// A pass whose group's cache never filled (extra.cache_never_full) did not
// reach past memory: its time course is drawn, but it is no point on the
// curve and no party to who leads.
bool never_full(const results::Result& r) {
  auto it = r.extra.find("cache_never_full");
  return it != r.extra.end() && it->is_boolean() && it->get<bool>();
}

std::string mem_series(const results::Result& r) {
  std::string s = r.method;
  if (std::string q = queue_label(r); !q.empty()) s += " " + q;
  return s;
}

// The workload at one limit: every working set of it is one chart.
std::string mem_group(const results::Result& r) {
  const bool random = r.pattern && *r.pattern == results::AccessPattern::Rand;
  std::string s = std::string(random ? "random " : "sequential ") + bytes_text(r.block_size) +
                  (r.op == results::Op::Read ? (random ? " reads" : " scan") : " " + std::string(results::to_string(r.op)) + "s");
  if (auto limit = mem_extra(r, "memory_limit_bytes"); limit && *limit >= 1)
    s += ", memory limit " + bytes_text(static_cast<std::uint64_t>(std::min(*limit, 1.8e19)));
  return s;
}

// The counters of one record, worded; empty pieces left out.
struct MemCounters {
  std::string faults, kernel, amplification, tlb, cache_full, bound;
};
MemCounters mem_counters(const results::Result& r) {
  MemCounters c;
  if (auto v = mem_extra(r, "major_faults_per_mib")) c.faults = mem_sig(*v, 3) + " major faults per MiB";
  if (auto v = mem_extra(r, "sys_s_per_mib")) c.kernel = mem_sig(*v * 1024, 2) + " s kernel CPU per GiB";
  const bool reads = r.op == results::Op::Read;
  auto own = mem_extra(r, "storage_read_bytes_per_byte");
  auto device = mem_extra(r, reads ? "device_read_bytes_per_byte" : "device_write_bytes_per_byte");
  if (reads && own) {
    c.amplification = mem_sig(*own, 3) + " bytes read by the block layer per byte delivered (this process)";
    if (device) c.amplification += ", " + mem_sig(*device, 3) + " by the device (machine-wide)";
  } else if (device) {
    c.amplification = mem_sig(*device, 3) + (reads ? " device bytes read" : " device bytes written") +
                      " per byte delivered (machine-wide)";
  }
  if (auto v = mem_extra(r, "tlb_shootdowns_per_s")) c.tlb = mem_sig(*v, 3) + " TLB shootdowns per second (machine-wide)";
  if (auto v = mem_extra(r, "cache_full_at_s"))
    c.cache_full = *v == 0 ? std::string("the group's page cache proven full before the pass")
                           : "the group's page cache full at " + mem_sig(*v, 2) + " s";
  auto stopped = r.extra.find("stopped_at_time_bound");
  if (stopped != r.extra.end() && stopped->is_boolean() && stopped->get<bool>()) {
    c.bound = "ended by its time bound";
    if (auto reads_of = mem_extra(r, "working_set_reads")) c.bound += " after reading " + mem_sig(*reads_of, 2) + "x the working set";
  }
  return c;
}

std::string mem_join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// Whether every record is one timed pass (the memory suite's records are).
bool mem_one_pass_each(const Family& f) {
  return std::all_of(f.points.begin(), f.points.end(), [](const Point& p) { return p.result->samples_s.size() == 1; });
}

json mem_spec(const Family& f, const std::vector<PointFacts>& points) {
  json rows = json::array(), seconds = json::array(), full = json::array(), limits = json::array();
  std::set<double> ratios;
  std::map<double, double> limit_mib;  // by working set
  for (std::size_t i = 0; i < points.size() && i < f.points.size(); ++i) {
    const PointFacts& p = points[i];
    const results::Result& r = *f.points[i].result;
    MemCounters c = mem_counters(r);
    ratios.insert(p.x);
    if (!never_full(r))
      rows.push_back({{"series", p.series}, {"x", p.x}, {"xl", p.x_text}, {"rate", p.rate}, {"rate_t", p.rate_t},
                    {"reps_t", p.reps_t}, {"cpu_t", p.cpu_t}, {"faults_t", p.faults_t}, {"cache_t", p.cache_t},
                    {"why", mem_join({c.faults, c.kernel, c.amplification, c.tlb})},
                    {"when", mem_join({c.cache_full, c.bound})}, {"exp", p.experiment}});
    json base{{"series", p.series}, {"ratio", p.x}, {"xl", p.x_text}, {"exp", p.experiment}};
    const std::size_t before = seconds.size();
    if (auto it = r.extra.find("per_second"); it != r.extra.end())
      append_per_second_rows(*it, "mib_per_s",
                             {{"mib_per_s", "mib_per_s", SecondField::Over::Mean},
                              {"page_cache_bytes", "cache_bytes", SecondField::Over::Last},
                              {"major_faults", "major_faults", SecondField::Over::Mean},
                              {"tlb_shootdowns", "tlb", SecondField::Over::Mean}},
                             base, seconds);
    for (std::size_t k = before; k < seconds.size(); ++k) {  // the page shows MiB
      json& row = seconds[k];
      row["cache_mib"] = row["cache_bytes"].is_number() ? json(row["cache_bytes"].get<double>() / kMiB) : json(nullptr);
      row.erase("cache_bytes");
    }
    if (auto t = mem_extra(r, "cache_full_at_s")) {
      json row = base;
      row["t"] = *t;
      full.push_back(std::move(row));
    }
    if (auto limit = mem_extra(r, "memory_limit_bytes")) limit_mib[p.x] = *limit / kMiB;
  }
  for (const auto& [ratio, mib] : limit_mib) limits.push_back({{"ratio", ratio}, {"limit_mib", mib}});

  json color = series_color(f);
  std::vector<double> xs(ratios.begin(), ratios.end());
  json x = x_encoding(f, xs);
  json tips = field_tooltip({{"series", "method"}, {"xl", "working set / memory limit"}, {"rate_t", "throughput"},
                             {"reps_t", "repetitions"}, {"why", "counters"}, {"when", "time course"}, {"cpu_t", "CPU"},
                             {"faults_t", "page faults"}, {"cache_t", "cache"}, {"exp", "experiment"}});
  std::string unit = f.bytes_metric ? "MiB/s" : "ops/s";
  json curve_layers = json::array();
  // Where the file outgrows the limit.
  curve_layers.push_back({{"data", {{"values", json::array({{{"x", 1}, {"label", "file = memory limit"}}})}}},
                          {"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}, {"color", "#888"}}},
                          {"encoding", {{"x", {{"field", "x"}, {"type", "quantitative"}}},
                                        {"tooltip", {{"field", "label"}}}}}});
  curve_layers.push_back({{"mark", {{"type", "line"}, {"point", true}}},
                          {"encoding", {{"x", x},
                                        {"y", {{"field", "rate"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}},
                                               {"title", unit + (mem_one_pass_each(f) ? " (one timed pass each)" : " (median)")}}},
                                        {"color", color},
                                        {"tooltip", tips}}}});
  json parts = json::array({{{"title", unit + " against working set / memory limit (log-log)"},
                             {"width", 560},
                             {"height", 260},
                             {"layer", curve_layers}}});

  if (!seconds.empty()) {
    json t{{"field", "t"}, {"type", "quantitative"}, {"title", "second of the timed pass"}};
    json time_tooltip = json::array({{{"field", "series"}, {"title", "method"}},
                                     {{"field", "xl"}, {"title", "working set / memory limit"}},
                                     {{"field", "t"}, {"title", "second"}},
                                     {{"field", "mib_per_s"}, {"title", "MiB/s"}, {"format", ",.3~f"}},
                                     {{"field", "cache_mib"}, {"title", "group's page cache (MiB)"}, {"format", ",.1f"}},
                                     {{"field", "major_faults"}, {"title", "major faults in the second"}, {"format", ",.0f"}},
                                     {{"field", "tlb"}, {"title", "TLB shootdowns in the second (machine-wide)"}, {"format", ",.0f"}},
                                     {{"field", "exp"}, {"title", "experiment"}}});
    json rows_by_ratio = json::array();
    // What each working set has to draw: a layer whose data is empty draws
    // nothing and makes the chart library warn of an infinite extent.
    auto any = [](const json& list, double ratio, const char* field, bool positive) {
      for (const auto& row : list)
        if (row["ratio"] == ratio && row.contains(field) && row[field].is_number() && (!positive || row[field].get<double>() > 0))
          return true;
      return false;
    };
    for (double ratio : xs) {
      if (!any(seconds, ratio, "mib_per_s", true)) continue;
      json only{{"filter", {{"field", "ratio"}, {"equal", ratio}}}};
      std::string at = x_text(f, ratio) + " the limit";
      json throughput_layers = json::array();
      throughput_layers.push_back(
          {{"transform", json::array({only, {{"filter", "isValid(datum.mib_per_s) && datum.mib_per_s > 0"}}})},
           {"mark", {{"type", "line"}, {"point", true}}},
           {"encoding", {{"x", t},
                         {"y", {{"field", "mib_per_s"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", "MiB/s"}}},
                         {"color", color},
                         {"tooltip", time_tooltip}}}});
      if (any(full, ratio, "t", false))
        throughput_layers.push_back(
            {{"data", {{"values", full}}},
             {"transform", json::array({only})},
             {"mark", {{"type", "rule"}, {"strokeDash", {6, 3}}, {"strokeWidth", 1.5}}},
             {"encoding", {{"x", {{"field", "t"}, {"type", "quantitative"}}},
                           {"color", color},
                           {"tooltip", field_tooltip({{"series", "method"}, {"t", "page cache full at second"}})}}}});
      json cache_layers = json::array();
      cache_layers.push_back(
          {{"transform", json::array({only, {{"filter", "isValid(datum.cache_mib)"}}})},
           {"mark", {{"type", "line"}, {"point", true}}},
           {"encoding", {{"x", t},
                         {"y", {{"field", "cache_mib"}, {"type", "quantitative"}, {"title", "MiB"}}},
                         {"color", color},
                         {"tooltip", time_tooltip}}}});
      if (any(limits, ratio, "limit_mib", false))
        cache_layers.push_back({{"data", {{"values", limits}}},
                                {"transform", json::array({only})},
                                {"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}, {"color", "#888"}}},
                                {"encoding", {{"y", {{"field", "limit_mib"}, {"type", "quantitative"}}},
                                              {"tooltip", {{"field", "limit_mib"}, {"title", "memory limit (MiB)"}}}}}});
      json panels = json::array({{{"title", "File " + at + ": MiB/s in each second (log; dashed: page cache full)"},
                                  {"width", 300},
                                  {"height", 150},
                                  {"layer", throughput_layers}}});
      if (any(seconds, ratio, "cache_mib", false))
        panels.push_back({{"title", "The group's page cache (dashed: the limit)"},
                          {"width", 220},
                          {"height", 150},
                          {"layer", cache_layers}});
      rows_by_ratio.push_back({{"hconcat", panels}});
    }
    if (!rows_by_ratio.empty()) parts.push_back({{"data", {{"values", seconds}}}, {"vconcat", rows_by_ratio}});
  }
  return stacked_spec(std::move(rows), std::move(parts));
}

// The sentences under the chart: who leads where, then each method's
// counters at the largest working set measured.
std::vector<std::string> mem_explain(const Family& f) {
  std::vector<std::string> out;
  std::map<double, std::vector<const Point*>> by_x;
  std::string left_out;
  for (const auto& p : f.points) {
    if (never_full(*p.result)) {
      left_out += (left_out.empty() ? "" : ", ") + p.series + " at " + x_text(f, p.x);
      continue;
    }
    by_x[p.x].push_back(&p);
  }
  if (by_x.empty()) return out;
  auto median = [&](const Point* p) { return f.bytes_metric ? rate(*p->result).median : ops_rate(*p->result).median; };
  auto figure = [&](const Point* p) { return sig(median(p), 3) + (f.bytes_metric ? " MiB/s" : " ops/s"); };
  auto lead = [&](double x) {
    const auto& ps = by_x[x];
    auto [lo, hi] = std::minmax_element(ps.begin(), ps.end(), [&](auto* a, auto* b) { return median(a) < median(b); });
    std::string s = x_text(f, x) + " the limit: " + (*hi)->series + " fastest at " + figure(*hi);
    if (ps.size() > 1 && median(*lo) > 0)
      s += ", " + times(median(*hi) / median(*lo)) + " " + (*lo)->series + "'s " + figure(*lo);
    return s;
  };
  const double smallest = by_x.begin()->first, largest = by_x.rbegin()->first;
  std::string first = "At " + lead(smallest);
  if (largest != smallest) first += "; at " + lead(largest);
  out.push_back(first + (mem_one_pass_each(f) ? ". One timed pass per record (no spread over repetitions): up to 1x "
                                                 "the limit from a cold file, past it from the group's page cache proven "
                                                 "full of the file (O_DIRECT beside it)."
                                               : "."));
  if (!left_out.empty())
    out.push_back("Left out, as their group's page cache never filled during the pass: " + left_out + ".");
  for (const Point* p : by_x[largest]) {
    MemCounters c = mem_counters(*p->result);
    std::string why = mem_join({c.faults, c.kernel, c.amplification, c.tlb});
    std::string when = mem_join({c.cache_full, c.bound});
    if (why.empty() && when.empty()) continue;
    out.push_back(p->series + " at " + x_text(f, largest) + ": " + (why.empty() ? when : why + (when.empty() ? "" : "; " + when)) + ".");
  }
  if (by_x.size() > 1) out.push_back("Every working set's counters are in the tooltips of the upper chart.");
  return out;
}

}  // namespace

const FamilyChart kMemoryCurve{mem_claims, Axis::WorkingSetRatio, mem_series, /*bytes_metric=*/true, mem_spec, mem_group,
                               mem_explain};

}  // namespace iolab::report
