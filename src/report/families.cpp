#include "families.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common.h"

namespace iolab::report {

namespace {

using Member = std::pair<const harness::Result*, std::size_t>;  // record, source index

double x_of(Axis axis, const harness::Result& r) {
  switch (axis) {
    case Axis::BlockSize: return static_cast<double>(r.block_size);
    case Axis::Threads: return static_cast<double>(r.threads);
    case Axis::Work: return work(r);
    case Axis::None: return 0;
  }
  return 0;
}

template <typename F>
std::size_t distinct(const std::vector<Member>& members, F key) {
  std::set<decltype(key(*members.front().first))> seen;
  for (const auto& m : members) seen.insert(key(*m.first));
  return seen.size();
}

// Labels that tell the lines apart: the method, plus what varies between
// records of the same method (buffer, the sync call, the results file).
std::vector<std::string> series_labels(const std::vector<Member>& members, const std::vector<Source>& sources) {
  // Buffers only for methods measured with more than one.
  std::map<std::string, std::set<std::string>> buffers_of;
  for (const auto& m : members) buffers_of[m.first->method].insert(harness::buffer_name(*m.first));
  bool syncs = distinct(members, [](const harness::Result& r) { return harness::to_string(r.sync); }) > 1;
  std::set<std::size_t> files;
  for (const auto& m : members) files.insert(m.second);
  std::vector<std::string> out;
  for (const auto& [r, src] : members) {
    std::string s = r->method;
    if (buffers_of[r->method].size() > 1 && r->buffer) s += " (" + harness::buffer_name(*r) + ")";
    if (syncs) s += " [" + harness::to_string(r->sync) + "]";
    if (files.size() > 1) s += " — " + sources[src].label;
    out.push_back(s);
  }
  return out;
}

std::string sync_text(const std::vector<Member>& members) {
  std::set<std::string> syncs;
  for (const auto& m : members) syncs.insert(harness::to_string(m.first->sync));
  std::string out;
  for (const auto& s : syncs) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Writes go to a fresh file, buffered (no cache label) or O_DIRECT: one chart.
std::string family_cache(const harness::Result& r) {
  if (r.op == harness::Op::Write && (!r.cache || r.cache == harness::CacheState::Direct)) return "fresh";
  return cache_class(r);
}

std::string title_of(const std::vector<Member>& members, const std::string& experiment) {
  const harness::Result& r = *members.front().first;
  std::string op(harness::to_string(r.op));
  std::string t = experiment.empty() ? op : experiment + " — " + op;
  if (r.pattern) t += ", " + std::string(*r.pattern == harness::AccessPattern::Seq ? "sequential" : "random");
  std::set<std::string> labels;
  for (const auto& m : members) labels.insert(harness::cache_name(*m.first));
  if (family_cache(r) == "fresh") {
    t += labels.count("direct") ? (labels.size() > 1 ? ", to a fresh file, buffered and O_DIRECT" : ", O_DIRECT to a fresh file")
                                : ", to a fresh file";
  } else if (!family_cache(r).empty()) {
    std::string l;
    for (const auto& x : labels) l += (l.empty() ? "" : "/") + x;
    t += ", " + l + " cache";
  }
  t += ", sync " + sync_text(members);
  if (distinct(members, [](const harness::Result& x) { return x.file_size; }) == 1 && r.file_size)
    t += ", " + bytes_text(r.file_size) + " file";
  if (distinct(members, [](const harness::Result& x) { return x.threads; }) == 1 && r.threads > 1)
    t += ", " + std::to_string(r.threads) + " threads";
  return t;
}

// What must differ between two points of one chart drawn with block size on x.
using PointKey = std::tuple<std::string, std::string, std::string, std::size_t, std::uint64_t, unsigned>;
PointKey point_key(const Member& m) {
  const harness::Result& r = *m.first;
  return {r.method, harness::buffer_name(r), harness::to_string(r.sync), m.second, r.block_size, r.threads};
}

// A family from `members` if some axis gives one point per line and x; else false.
bool try_family(const std::vector<Member>& members, const std::vector<Source>& sources, const std::string& experiment,
                bool force, Family& out) {
  std::vector<std::string> labels = series_labels(members, sources);
  auto unique_on = [&](Axis axis) {
    std::set<std::pair<std::string, double>> seen;
    for (std::size_t i = 0; i < members.size(); ++i)
      if (!seen.insert({labels[i], x_of(axis, *members[i].first)}).second) return false;
    return true;
  };
  Axis chosen = Axis::None;
  bool found = false;
  for (Axis axis : {Axis::BlockSize, Axis::Threads, Axis::Work}) {
    std::set<double> xs;
    for (const auto& m : members) xs.insert(x_of(axis, *m.first));
    if (xs.size() >= 2 && unique_on(axis)) {
      chosen = axis;
      found = true;
      break;
    }
  }
  if (!found && unique_on(Axis::None)) found = true;
  if (!found && !force) return false;
  if (!found) chosen = Axis::BlockSize;  // last resort: several points per line and x
  // No line with two points (each copy method at its own block size): bars,
  // each labelled with its x.
  if (found && chosen != Axis::None && labels.size() > 1 &&
      std::set<std::string>(labels.begin(), labels.end()).size() == labels.size()) {
    Family probe;
    probe.axis = chosen;
    probe.bytes_metric = counts_bytes(*members.front().first);
    for (std::size_t i = 0; i < members.size(); ++i) labels[i] += " · " + x_text(probe, x_of(chosen, *members[i].first));
    chosen = Axis::None;
  }
  out = Family{};
  out.suite = members.front().first->suite;
  out.title = title_of(members, experiment);
  out.axis = chosen;
  out.bytes_metric = counts_bytes(*members.front().first);
  for (std::size_t i = 0; i < members.size(); ++i) {
    out.points.push_back({members[i].first, members[i].second, labels[i], x_of(chosen, *members[i].first)});
    if (std::find(out.series.begin(), out.series.end(), labels[i]) == out.series.end()) out.series.push_back(labels[i]);
  }
  std::stable_sort(out.points.begin(), out.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  return true;
}

}  // namespace

std::vector<SuiteView> group_results(const std::vector<Source>& sources) {
  std::vector<SuiteView> suites;
  auto suite_of = [&](const std::string& name) -> SuiteView& {
    for (auto& s : suites)
      if (s.suite == name) return s;
    suites.push_back({name, {}, {}});
    return suites.back();
  };
  for (std::size_t i = 0; i < sources.size(); ++i)
    for (const auto& r : sources[i].results->results) suite_of(r.suite).records.emplace_back(&r, i);

  for (auto& suite : suites) {
    // Partitions in first-seen order.
    using Key = std::tuple<std::string, std::string, std::string, std::string, bool>;
    std::vector<std::pair<Key, std::vector<Member>>> parts;
    for (const auto& m : suite.records) {
      const harness::Result& r = *m.first;
      if (!measured(r)) continue;
      Key key{std::string(harness::to_string(r.op)), harness::pattern_name(r), family_cache(r), sync_class(r), counts_bytes(r)};
      auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == key; });
      if (it == parts.end()) {
        parts.push_back({key, {}});
        it = std::prev(parts.end());
      }
      it->second.push_back(m);
    }
    for (const auto& [key, members] : parts) {
      Family f;
      if (try_family(members, sources, "", false, f)) {
        suite.families.push_back(std::move(f));
        continue;
      }
      // Experiments, then merged back greedily while every line keeps one
      // point per block size: a sweep stored as one experiment per size
      // becomes one chart again, and overlapping experiments get their own.
      std::vector<std::pair<std::string, std::vector<Member>>> by_experiment;
      for (const auto& m : members) {
        auto it = std::find_if(by_experiment.begin(), by_experiment.end(),
                               [&](const auto& p) { return p.first == m.first->experiment; });
        if (it == by_experiment.end()) {
          by_experiment.push_back({m.first->experiment, {}});
          it = std::prev(by_experiment.end());
        }
        it->second.push_back(m);
      }
      struct Cluster {
        std::vector<std::string> experiments;
        std::vector<Member> members;
        std::set<PointKey> keys;
        bool open = true;  // internally one point per line and block size
      };
      std::vector<Cluster> clusters;
      for (auto& [experiment, sub] : by_experiment) {
        std::set<PointKey> keys;
        bool unique = true;
        for (const auto& m : sub) unique &= keys.insert(point_key(m)).second;
        Cluster* into = nullptr;
        if (unique)
          for (auto& c : clusters)
            if (c.open && std::none_of(keys.begin(), keys.end(), [&](const PointKey& k) { return c.keys.count(k); })) {
              into = &c;
              break;
            }
        if (!into) {
          clusters.push_back({});
          into = &clusters.back();
          into->open = unique;
        }
        into->experiments.push_back(experiment);
        into->members.insert(into->members.end(), sub.begin(), sub.end());
        into->keys.insert(keys.begin(), keys.end());
      }
      for (const auto& c : clusters) {
        Family g;
        try_family(c.members, sources, c.experiments.size() == 1 ? c.experiments.front() : "", true, g);
        suite.families.push_back(std::move(g));
      }
    }
  }
  return suites;
}

std::string axis_title(const Family& f) {
  switch (f.axis) {
    case Axis::BlockSize: return "block size (bytes per call)";
    case Axis::Threads: return "threads";
    case Axis::Work: return f.bytes_metric ? "bytes per repetition" : "operations per repetition";
    case Axis::None: return "";
  }
  return "";
}

std::string x_text(const Family& f, double x) {
  switch (f.axis) {
    case Axis::BlockSize: return bytes_text(static_cast<std::uint64_t>(x));
    case Axis::Threads: return std::to_string(static_cast<std::uint64_t>(x)) + (x == 1 ? " thread" : " threads");
    case Axis::Work:
      return f.bytes_metric ? bytes_text(static_cast<std::uint64_t>(x)) : grouped(static_cast<std::uint64_t>(x)) + " ops";
    case Axis::None: return "";
  }
  return "";
}

}  // namespace iolab::report
