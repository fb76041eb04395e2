// The queue-depth curve, as fio users plot it by hand: random 4 KiB O_DIRECT
// reads at each number of requests in flight (extra.total_depth), one line
// per method. A queued method (io_uring, libaio) keeps that many requests in
// flight from one thread; a method that is not queued reaches the same depth
// with that many threads of one request each, and is its own line ("direct,
// N threads"). Above: IOPS (median, with the slowest..fastest pass);
// below: latency per request, p50 solid and p99 dashed, against the depth
// (Little's law: depth / IOPS is the mean, so p50 should grow with depth
// once the device is saturated).
#include <set>
#include <utility>

#include "charts.h"
#include "common.h"
#include "family_charts.h"
#include "iolab/io/registry.h"

namespace iolab::report {

namespace {

using nlohmann::json;

bool queued(const results::Result& r) {
  for (const io::Method* m : io::file_methods())
    if (m->name() == r.method) return m->traits().queued;
  return r.queue_depth && *r.queue_depth > 1;  // a method this build does not know: what the record says
}

bool claims(const results::Result& r) { return total_depth(r) > 0 && r.op == results::Op::Read; }

std::string series(const results::Result& r) {
  std::string s = r.method;
  return queued(r) ? s + io_options_text(r) : s.append(", N threads");
}

json spec(const Family& f, const std::vector<PointFacts>& points) {
  json rows = json::array();
  std::set<double> xset;
  bool any_latency = false;
  for (const auto& p : points) {
    xset.insert(p.x);
    json row{{"series", p.series}, {"x", p.x},         {"xl", p.x_text},         {"rate", p.rate},
             {"lo", p.slowest},    {"hi", p.fastest},  {"rate_t", p.rate_t},     {"spread_t", p.spread_t},
             {"reps_t", p.reps_t}, {"cpu_t", p.cpu_t}, {"calls_t", p.calls_t},   {"exp", p.experiment},
             {"latency_t", p.latency_t + (p.latency_source_t.empty() ? "" : " (" + p.latency_source_t + ")")}};
    row["p50"] = p.p50 ? json(*p.p50) : json(nullptr);
    row["p99"] = p.p99 ? json(*p.p99) : json(nullptr);
    any_latency |= p.p50.has_value();
    rows.push_back(row);
  }
  std::vector<double> xs(xset.begin(), xset.end());
  json x = x_encoding(f, xs);
  json color = series_color(f);
  json tips = field_tooltip({{"series", "method"}, {"xl", "depth"}, {"rate_t", "median"}, {"spread_t", "spread"},
                             {"reps_t", "repetitions"}, {"latency_t", "latency p50 / p99"}, {"cpu_t", "CPU"},
                             {"calls_t", "I/O calls"}, {"exp", "experiment"}});
  std::string unit = f.bytes_metric ? "MiB/s" : "IOPS";
  json layers = json::array();
  layers.push_back({{"mark", {{"type", "rule"}, {"strokeWidth", 2}, {"opacity", 0.6}}},
                    {"encoding", {{"x", x}, {"y", {{"field", "lo"}, {"type", "quantitative"}}}, {"y2", {{"field", "hi"}}}, {"color", color}}}});
  layers.push_back({{"mark", {{"type", "line"}, {"point", true}}},
                    {"encoding", {{"x", x},
                                  {"y", {{"field", "rate"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}},
                                         {"title", unit + " (median; bars: slowest..fastest pass)"}}},
                                  {"color", color},
                                  {"tooltip", tips}}}});
  json parts = json::array({{{"title", unit + " against requests in flight (log-log)"}, {"width", 560}, {"height", 260}, {"layer", layers}}});
  if (any_latency)
    parts.push_back({{"title", "Latency per request: p50 (solid), p99 (dashed), against requests in flight"},
                     {"width", 560},
                     {"height", 200},
                     {"transform", json::array({{{"fold", {"p50", "p99"}}, {"as", {"percentile", "ns"}}},
                                                {{"filter", "isValid(datum.ns) && datum.ns > 0"}}})},
                     {"mark", {{"type", "line"}, {"point", true}, {"strokeWidth", 1.5}}},
                     {"encoding", {{"x", x},
                                   {"y", {{"field", "ns"}, {"type", "quantitative"}, {"scale", {{"type", "log"}}}, {"title", nullptr},
                                          {"axis", duration_axis()}}},
                                   {"color", color},
                                   {"strokeDash", {{"field", "percentile"}, {"type", "nominal"}, {"sort", {"p50", "p99"}}, {"legend", {{"symbolType", "stroke"}}}}},
                                   {"detail", {{"field", "percentile"}}},
                                   {"tooltip", json::array({{{"field", "series"}, {"title", "method"}},
                                                            {{"field", "xl"}, {"title", "depth"}},
                                                            {{"field", "percentile"}},
                                                            {{"field", "ns"}, {"type", "quantitative"}, {"format", ",.0f"}},
                                                            {{"field", "latency_t"}, {"title", "latency"}}})}}}});
  return stacked_spec(std::move(rows), std::move(parts));
}

}  // namespace

const FamilyChart kQueueDepthCurve{claims, Axis::TotalDepth, series, /*bytes_metric=*/false, spec};

}  // namespace iolab::report
