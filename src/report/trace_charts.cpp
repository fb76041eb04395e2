// The report's view of replayed traces (model.h's TraceSection): each
// trace's timeline, operations by kind over its run and reads and writes by
// size, from the records' extra.trace_timeline (replay.h), and the decision
// `recommend --trace` made for it.
#include <set>

#include "charts.h"
#include "common.h"
#include "model.h"

namespace iolab::report {

namespace {

using nlohmann::json;

// The timeline's two panels: operations per slice of the trace's run,
// stacked by kind; reads and writes by size class.
json timeline_spec(const json& t) {
  const bool by_time = t.value("by", "") == "time";
  const double span = t.value("span", 0.0);
  const auto buckets = t.value("buckets", std::size_t{1});
  const double width = span / static_cast<double>(std::max<std::size_t>(1, buckets));
  // x: ms since the first operation, or the operation's position.
  const double unit = by_time ? 1e6 : 1;
  json rows = json::array(), sizes = json::array();
  if (auto kinds = t.find("kinds"); kinds != t.end() && kinds->is_object())
    for (const auto& [kind, k] : kinds->items()) {
      const auto& ops = k.value("ops", json::array());
      const auto& bytes = k.value("bytes", json::array());
      for (std::size_t b = 0; b < ops.size(); ++b) {
        const auto n = ops[b].get<std::uint64_t>();
        if (n == 0) continue;
        rows.push_back({{"kind", kind},
                        {"from", static_cast<double>(b) * width / unit},
                        {"to", static_cast<double>(b + 1) * width / unit},
                        {"ops", n},
                        {"bytes", b < bytes.size() ? bytes[b].get<std::uint64_t>() : 0}});
      }
    }
  if (auto s = t.find("sizes"); s != t.end() && s->is_object())
    for (const auto& [kind, by] : s->items())
      for (const auto& [size, n] : by.items())
        sizes.push_back({{"kind", kind}, {"size", bytes_text(std::stoull(size))}, {"order", std::stoull(size)}, {"ops", n}});
  const std::string x_title = by_time ? "time since the trace's first operation (ms)" : "operation (the trace has no times)";
  json over_time = {
      {"title", "Operations over the trace's run, by kind"},
      {"width", 640},
      {"height", 160},
      {"mark", {{"type", "bar"}}},
      {"encoding",
       {{"x", {{"field", "from"}, {"type", "quantitative"}, {"title", x_title}}},
        {"x2", {{"field", "to"}}},
        {"y", {{"field", "ops"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "operations"}}},
        {"color", {{"field", "kind"}, {"type", "nominal"}, {"title", "operation"}}},
        {"tooltip", json::array({{{"field", "kind"}}, {{"field", "ops"}}, {{"field", "bytes"}}, {{"field", "from"}}})}}}};
  json by_size = {
      {"title", "Reads and writes by size (the power of two at or above each)"},
      {"width", 640},
      {"height", 120},
      {"data", {{"values", sizes}}},
      {"mark", {{"type", "bar"}}},
      {"encoding",
       {{"x", {{"field", "size"}, {"type", "ordinal"}, {"sort", {{"field", "order"}}}, {"title", "bytes per call"}}},
        {"y", {{"field", "ops"}, {"type", "quantitative"}, {"title", "operations"}}},
        {"color", {{"field", "kind"}, {"type", "nominal"}, {"title", "operation"}}},
        {"xOffset", {{"field", "kind"}}},
        {"tooltip", json::array({{{"field", "kind"}}, {{"field", "size"}}, {{"field", "ops"}}})}}}};
  return stacked_spec(std::move(rows), json::array({over_time, by_size}));
}

}  // namespace

std::vector<TraceSection> trace_sections(const results::Results& results, const std::optional<decision::Decision>& d,
                                         std::size_t run) {
  std::vector<TraceSection> out;
  std::set<std::string> seen;
  for (const auto& r : results.results) {
    if (r.op != results::Op::Replay || !seen.insert(r.experiment).second) continue;
    TraceSection t;
    t.name = r.experiment;
    t.id = "trace-" + std::to_string(run) + "-" + std::to_string(out.size());
    // The first record of the trace carrying its timeline (a skipped method's may not).
    for (const auto& x : results.results)
      if (x.op == results::Op::Replay && x.experiment == t.name)
        if (auto tl = x.extra.find("trace_timeline"); tl != x.extra.end() && tl->is_object()) {
          t.chart_json = script_json(timeline_spec(*tl));
          break;
        }
    if (d)
      for (const auto& w : d->workloads)
        if (w.workload == t.name) {
          t.summary = workload_summary(w);
          t.methods = workload_methods(w, results.results);
        }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace iolab::report
