// What `iolab replay` and `recommend --trace` share (replay_run.h).
#include "replay_run.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <set>
#include <unordered_set>

#include "iolab/base/error.h"
#include "iolab/base/text_table.h"
#include "iolab/base/units.h"
#include "iolab/harness/job.h"

namespace iolab::cli {

std::vector<const io::Method*> methods_named(const std::string& list) {
  std::vector<const io::Method*> out;
  if (list.empty()) {
    for (const io::Method* m : io::file_methods()) out.push_back(m);
    return out;
  }
  for (const auto& name : harness::split_list(list, "--method")) {
    const io::Method* m = &io::find_file_method(name);
    if (std::find(out.begin(), out.end(), m) != out.end()) throw UsageError("--method " + name, "named twice");
    out.push_back(m);
  }
  return out;
}

std::string trace_summary(const replay::Trace& t, std::size_t methods) {
  constexpr std::size_t kinds = static_cast<std::size_t>(trace::OpKind::Unmap) + 1;
  std::array<std::uint64_t, kinds> by_kind{};
  std::unordered_set<std::uint32_t> threads;
  for (const auto& op : t.ops) {
    ++by_kind[static_cast<std::size_t>(op.kind)];
    threads.insert(op.thread);
  }
  std::string counts;
  for (std::size_t k = 0; k < kinds; ++k)
    if (by_kind[k])
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", trace::to_string(static_cast<trace::OpKind>(k)),
                            by_kind[k]);
  std::uint64_t initial = 0;
  for (const auto& f : t.header.files) initial += f.initial_size;
  return fmt::format("replaying {}: {} operations ({}) on {} file{} of {} at the start, {} thread{} recorded, through "
                     "{} method{}",
                     printable(t.name), t.ops.size(), counts.empty() ? "none" : counts, t.header.files.size(),
                     t.header.files.size() == 1 ? "" : "s", format_bytes(initial), threads.size(),
                     threads.size() == 1 ? "" : "s", methods, methods == 1 ? "" : "s");
}

std::string latency_by_kind_text(const std::vector<results::Result>& records) {
  std::set<std::string> kinds;
  for (const auto& r : records)
    if (auto l = r.extra.find("latency_by_kind"); l != r.extra.end() && l->is_object())
      for (const auto& [k, _] : l->items()) kinds.insert(k);
  if (kinds.empty()) return "";
  TextTable t;
  std::vector<std::string> head = {"latency p50 / p99"};
  for (const auto& k : kinds) head.push_back(printable(k));
  t.add(head);
  for (const auto& r : records) {
    auto l = r.extra.find("latency_by_kind");
    if (l == r.extra.end() || !l->is_object()) continue;
    std::vector<std::string> row = {printable(r.method)};
    for (const auto& k : kinds) {
      auto x = l->find(k);
      row.push_back(x == l->end() ? "-"
                                  : format_duration(x->value("p50_ns", 0.0) / 1e9) + " / " +
                                        format_duration(x->value("p99_ns", 0.0) / 1e9));
    }
    t.add(row);
  }
  return "\n" + t.render();
}

}  // namespace iolab::cli
