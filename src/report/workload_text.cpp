// A decision over a workload as text and JSON (workload_text.h).
#include "iolab/report/workload_text.h"

#include <algorithm>

#include <fmt/format.h>

#include "common.h"
#include "iolab/base/text_table.h"

namespace iolab::report {

namespace {

using decision::ConditionVerdict;
using decision::Stop;

// Workload `w`'s record of candidate `i`, or nullptr.
const results::Result* record_of(const ConditionVerdict& w, std::span<const results::Result> records, std::size_t i) {
  namespace k = decision::keys;
  for (const auto& r : records) {
    auto name = r.extra.find(k::kWorkload);
    auto index = r.extra.find(k::kIndex);
    if (name != r.extra.end() && name->is_string() && *name == w.workload && index != r.extra.end() &&
        index->is_number() && index->get<double>() == static_cast<double>(i))
      return &r;
  }
  return nullptr;
}

std::string stop_words(const ConditionVerdict& w) {
  if (w.stop == Stop::Budget) return fmt::format("stopped by the budget ({})", visible(w.why));
  if (w.stop == Stop::Selected)
    return w.within_zone ? "selected: the survivors are within the zone of each other" : "selected: one survivor";
  return std::string(decision::to_string(w.stop)) + (w.why.empty() ? "" : ": " + visible(w.why));
}

// Opens, closes and mappings (nothing, or a flush, in a replay) have no column of their own; the JSON keeps them.
bool shown_kind(const std::string& kind) { return kind != "open" && kind != "close" && kind != "map" && kind != "unmap"; }

}  // namespace

std::vector<WorkloadMethod> workload_methods(const ConditionVerdict& w, std::span<const results::Result> records) {
  std::vector<WorkloadMethod> out;
  for (std::size_t i = 0; i < w.candidates.size(); ++i) {
    const auto& c = w.candidates[i];
    WorkloadMethod m;
    m.method = c.label;
    m.pick = w.pick == i;
    m.skipped = c.skipped;
    if (!m.skipped.empty()) {
      out.push_back(std::move(m));
      continue;
    }
    const results::Result* r = record_of(w, records, i);
    m.withdrawn = c.withdrawn;
    if (c.eliminated)
      m.ruled_out = fmt::format("out after {} rounds, behind {}", c.eliminated->after_rounds, w.candidates[c.eliminated->by].label);
    m.verified = r && r->verified;
    if (r && r->queue_depth) m.queue_depth = *r->queue_depth;
    m.rounds = c.rounds;
    if (c.pick_over.n_a > 0) m.pick_over = c.pick_over;
    if (r && c.rounds > 0) {
      const double ops = static_cast<double>(r->ops), bytes = static_cast<double>(r->bytes);
      m.ops_per_s = w.counts_bytes ? (bytes > 0 ? c.rate * ops / bytes : 0) : c.rate;
      m.bytes_per_s = w.counts_bytes ? c.rate : 0;
      if (ops > 0) {
        m.cpu_us_per_op = 1e6 * (r->user_s + r->sys_s) / ops;
        if (r->device_read_bytes || r->device_write_bytes)
          m.device_bytes_per_op =
              static_cast<double>(r->device_read_bytes.value_or(0) + r->device_write_bytes.value_or(0)) / ops;
      }
    }
    if (r)
      if (auto l = r->extra.find("latency_by_kind"); l != r->extra.end() && l->is_object()) m.latency_by_kind = *l;
    out.push_back(std::move(m));
  }
  return out;
}

std::string workload_summary(const ConditionVerdict& w) {
  std::string out = fmt::format("trace {}: ", visible(w.workload));
  if (w.pick) {
    out += fmt::format("use {}", visible(w.candidates[*w.pick].label));
    std::string others;
    for (std::size_t k = 1; k < w.within.size(); ++k) others += (others.empty() ? "" : ", ") + visible(w.candidates[w.within[k]].label);
    if (!others.empty()) out += fmt::format(" (or {}: within {:.2f}x of it, not told apart)", others, w.indifference);
  } else {
    out += "no pick";
  }
  // Methods out without being beaten: a pick among fewer than asked for, said so.
  const std::string left_out =
      w.left_out ? fmt::format(" ({} of them left out unbeaten: skipped, or their figures stopped being trusted)", w.left_out) : "";
  out += fmt::format("\n  {} after {} rounds of {} methods{}; guarantee asked: with probability {:.0f}% the pick is "
                     "within {:.2f}x of the best method for this trace{}\n",
                     stop_words(w), w.rounds, w.candidates.size(), left_out, 100 * w.confidence, w.indifference,
                     w.replay_agrees ? "" : " (replayed from the records, the selection ends differently than the run recorded)");
  return out;
}

std::string format_workload_text(const ConditionVerdict& w, std::span<const results::Result> records) {
  const std::vector<WorkloadMethod> methods = workload_methods(w, records);
  std::vector<std::string> kinds;  // every kind any method timed, sorted
  for (const auto& m : methods)
    for (const auto& [kind, _] : m.latency_by_kind.items())
      if (shown_kind(kind) && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  std::sort(kinds.begin(), kinds.end());
  TextTable t;
  std::vector<std::string> head = {"method", "qd", "ops/s", "MiB/s", "pick over it"};
  for (const auto& k : kinds) head.push_back(visible(k) + " p50/p99");
  head.insert(head.end(), {"CPU/op", "device B/op", "verified"});
  t.add(head);
  for (const auto& m : methods) {
    if (!m.skipped.empty()) {
      t.add({visible(m.method), "skipped: " + visible(m.skipped)}, false);
      continue;
    }
    std::vector<std::string> row = {visible(m.method) + (m.pick ? " *" : ""),
                                    m.queue_depth ? std::to_string(m.queue_depth) : "-",
                                    m.rounds ? sig(m.ops_per_s, 3) : "-",
                                    m.bytes_per_s > 0 ? sig(m.bytes_per_s / (1024.0 * 1024.0), 3) : "-",
                                    m.pick_over ? interval_text(*m.pick_over) : (m.pick ? "the pick" : "-")};
    for (const auto& k : kinds) {
      auto l = m.latency_by_kind.find(k);
      row.push_back(l == m.latency_by_kind.end() ? "-"
                                                 : duration_text(l->value("p50_ns", 0.0) / 1e9) + " / " +
                                                       duration_text(l->value("p99_ns", 0.0) / 1e9));
    }
    row.push_back(m.cpu_us_per_op >= 0 ? sig(m.cpu_us_per_op, 3) + " µs" : "-");
    row.push_back(m.device_bytes_per_op >= 0 ? sig(m.device_bytes_per_op, 3) : "-");
    row.push_back(m.verified ? "yes" : "no");
    t.add(row);
    if (!m.withdrawn.empty()) t.add({"", "withdrawn " + visible(m.withdrawn)}, false);
    else if (!m.ruled_out.empty()) t.add({"", visible(m.ruled_out)}, false);
  }
  return workload_summary(w) + t.render() +
         "  * the pick. ops/s: the whole trace replayed as fast as it goes (geometric mean over rounds); latency from "
         "a separate pass timing each operation; qd: requests kept in flight at most (queued methods: the trace's depth); "
         "CPU: user + system of a repetition per operation.\n";
}

nlohmann::json workload_json(const ConditionVerdict& w, std::span<const results::Result> records) {
  nlohmann::json within = nlohmann::json::array(), methods = nlohmann::json::array();
  for (auto i : w.within) within.push_back(w.candidates[i].label);
  std::uint64_t ops = 0;
  for (const auto& r : records)
    if (auto n = r.extra.find(decision::keys::kWorkload); n != r.extra.end() && *n == w.workload) ops = std::max(ops, r.ops);
  for (const auto& m : workload_methods(w, records)) {
    nlohmann::json j = {{"method", m.method}};
    if (!m.skipped.empty()) {
      j["skipped"] = m.skipped;
      methods.push_back(std::move(j));
      continue;
    }
    j["verified"] = m.verified;
    j["rounds"] = m.rounds;
    if (m.queue_depth) j["queue_depth"] = m.queue_depth;
    if (m.rounds > 0) j["ops_per_s"] = m.ops_per_s;
    if (m.bytes_per_s > 0) j["bytes_per_s"] = m.bytes_per_s;
    if (!m.withdrawn.empty()) j["withdrawn"] = m.withdrawn;
    if (!m.ruled_out.empty()) j["ruled_out"] = m.ruled_out;
    if (m.pick_over)
      j["pick_over_it"] = {{"estimate", m.pick_over->estimate}, {"lo", m.pick_over->lo}, {"hi", m.pick_over->hi},
                           {"coverage", m.pick_over->coverage}, {"rounds", m.pick_over->n_a}};
    if (m.cpu_us_per_op >= 0) j["cpu_us_per_op"] = m.cpu_us_per_op;
    if (m.device_bytes_per_op >= 0) j["device_bytes_per_op"] = m.device_bytes_per_op;
    if (!m.latency_by_kind.empty()) j["latency_by_kind"] = m.latency_by_kind;
    methods.push_back(std::move(j));
  }
  return {{"format", "iolab-trace-decision"},
          {"format_version", 1},
          {"trace", w.workload},
          {"ops", ops},
          {"pick", w.pick ? nlohmann::json(w.candidates[*w.pick].label) : nlohmann::json(nullptr)},
          {"within", within},
          {"stop", decision::to_string(w.stop)},
          {"within_zone", w.within_zone},
          {"why", w.why},
          {"rounds", w.rounds},
          {"indifference", w.indifference},
          {"confidence", w.confidence},
          {"first_stage", w.first_stage},
          {"replay_agrees", w.replay_agrees},
          {"methods", methods}};
}

}  // namespace iolab::report
