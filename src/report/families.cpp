#include "families.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common.h"
#include "family_charts.h"

namespace iolab::report {

namespace {

using Member = std::pair<const results::Result*, std::size_t>;  // record, source index

double x_of(Axis axis, const results::Result& r) {
  switch (axis) {
    case Axis::BlockSize: return static_cast<double>(r.block_size);
    case Axis::Threads: return static_cast<double>(r.threads);
    case Axis::WorkPerPass: return work(r) / passes(r);
    case Axis::TotalDepth: return total_depth(r);
    case Axis::WorkingSetRatio: return working_set_ratio(r);
    case Axis::None: return 0;
  }
  return 0;
}

// What tells one line from another: the same contender in every experiment of a family.
using SeriesKey = std::tuple<std::string, std::string, std::string, std::string, std::size_t>;
SeriesKey series_key(const Member& m) {
  const results::Result& r = *m.first;
  return {r.method, results::buffer_name(r), io::to_string(r.sync), queue_label(r), m.second};
}

// Writes go to a fresh file, buffered (no cache label) or O_DIRECT: one chart.
std::string family_cache(const results::Result& r) {
  if (r.op == results::Op::Write && (!r.cache || r.cache == results::CacheState::Direct)) return "fresh";
  return cache_class(r);
}

// Records that may share a chart: same op, pattern, cache class and flush policy.
using PartKey = std::tuple<std::string, std::string, std::string, std::string>;
PartKey part_key(const results::Result& r) {
  return {std::string(results::to_string(r.op)), results::pattern_name(r), family_cache(r), sync_class(r)};
}

template <typename F>
std::size_t distinct(const std::vector<Member>& members, F key) {
  std::set<decltype(key(*members.front().first))> seen;
  for (const auto& m : members) seen.insert(key(*m.first));
  return seen.size();
}

// Labels that tell the lines apart: the method and its queue depth, plus what
// varies between records of the same method (buffer, the sync call, the results file).
std::vector<std::string> series_labels(const std::vector<Member>& members, const std::vector<Source>& sources) {
  std::map<std::string, std::set<std::string>> buffers_of;  // buffers only for methods measured with several
  for (const auto& m : members) buffers_of[m.first->method].insert(results::buffer_name(*m.first));
  bool syncs = distinct(members, [](const results::Result& r) { return io::to_string(r.sync); }) > 1;
  std::set<std::size_t> files;
  for (const auto& m : members) files.insert(m.second);
  std::vector<std::string> out;
  for (const auto& [r, src] : members) {
    std::string s = r->method;
    if (std::string q = queue_label(*r); !q.empty()) s += " " + q;
    if (buffers_of[r->method].size() > 1 && r->buffer) s += " (" + results::buffer_name(*r) + ")";
    if (syncs) s += " [" + io::to_string(r->sync) + "]";
    if (files.size() > 1) s += " — " + sources[src].label;
    out.push_back(visible(s));
  }
  return out;
}

std::string sync_text(const std::vector<Member>& members) {
  std::set<std::string> syncs;
  for (const auto& m : members) syncs.insert(io::to_string(m.first->sync));
  std::string out;
  for (const auto& s : syncs) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string title_of(const std::vector<Member>& members, const std::string& experiment) {
  const results::Result& r = *members.front().first;
  std::string op(results::to_string(r.op));
  std::string t = experiment.empty() ? op : experiment + " — " + op;
  if (r.pattern) t += ", " + std::string(*r.pattern == results::AccessPattern::Seq ? "sequential" : "random");
  std::set<std::string> labels;
  for (const auto& m : members) labels.insert(results::cache_name(*m.first));
  if (family_cache(r) == "fresh") {
    t += labels.count("direct") ? (labels.size() > 1 ? ", to a fresh file, buffered and O_DIRECT" : ", O_DIRECT to a fresh file")
                                : ", to a fresh file";
  } else if (!family_cache(r).empty()) {
    std::string l;
    for (const auto& x : labels) l += (l.empty() ? "" : "/") + x;
    t += ", " + l + " cache";
  }
  t += ", sync " + sync_text(members);
  if (distinct(members, [](const results::Result& x) { return x.file_size; }) == 1 && r.file_size)
    t += ", " + bytes_text(r.file_size) + " file";
  if (distinct(members, [](const results::Result& x) { return x.threads; }) == 1 && r.threads > 1)
    t += ", " + std::to_string(r.threads) + " threads";
  return visible(t);
}

// A record's point on one of the axes a family may take (index into kTriedAxes).
constexpr Axis kTriedAxes[] = {Axis::BlockSize, Axis::Threads, Axis::WorkPerPass};
constexpr std::size_t kAxes = std::size(kTriedAxes);
using LinePoint = std::tuple<std::size_t, SeriesKey, double>;
std::vector<LinePoint> line_points(const std::vector<Member>& members) {
  std::vector<LinePoint> out;
  for (const auto& m : members)
    for (std::size_t a = 0; a < kAxes; ++a) out.emplace_back(a, series_key(m), x_of(kTriedAxes[a], *m.first));
  return out;
}

// A family from `members` if some axis gives one point per line and x; else
// false (with `force`, block size anyway: several points per line and x).
bool try_family(const std::vector<Member>& members, const std::vector<Source>& sources,
                const std::vector<std::string>& experiments, bool force, Family& out) {
  std::vector<std::string> labels = series_labels(members, sources);
  auto unique_on = [&](Axis axis) {
    std::set<std::pair<std::string, double>> seen;
    for (std::size_t i = 0; i < members.size(); ++i)
      if (!seen.insert({labels[i], x_of(axis, *members[i].first)}).second) return false;
    return true;
  };
  Axis chosen = Axis::None;
  bool found = false;
  for (Axis axis : kTriedAxes) {
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
  out = Family{};
  out.axis = chosen;
  out.bytes_metric = counts_bytes(*members.front().first);
  // No line with two points (each copy method at its own block size): bars,
  // each labelled with its x.
  if (found && chosen != Axis::None && labels.size() > 1 &&
      std::set<std::string>(labels.begin(), labels.end()).size() == labels.size()) {
    for (std::size_t i = 0; i < members.size(); ++i) labels[i] += " · " + x_text(out, x_of(chosen, *members[i].first));
    out.axis = Axis::None;
  }
  out.suite = visible(members.front().first->suite);
  out.title = title_of(members, experiments.size() == 1 ? experiments.front() : "");
  out.experiments = experiments;
  for (auto& e : out.experiments) e = visible(e);
  std::set<std::string> series_seen;
  for (std::size_t i = 0; i < members.size(); ++i) {
    out.points.push_back({members[i].first, members[i].second, labels[i], x_of(out.axis, *members[i].first)});
    if (series_seen.insert(labels[i]).second) out.series.push_back(labels[i]);
  }
  std::stable_sort(out.points.begin(), out.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  return true;
}

// The list of `key`, appended in first-seen order; `index` finds it in log time
// (a linear search made 100,000 records quadratic, issue 29 item 8).
template <typename T, typename K>
std::vector<T>& slot(std::vector<std::pair<K, std::vector<T>>>& list, std::map<K, std::size_t>& index, const K& key) {
  auto [it, fresh] = index.try_emplace(key, list.size());
  if (fresh) list.push_back({key, {}});
  return list[it->second].second;
}

const FamilyChart* claimant(const results::Result& r) {
  for (const FamilyChart* c : family_charts())
    if (c->claims(r)) return c;
  return nullptr;
}

// The families with a chart of their own: one per experiment (and op,
// pattern, cache, flush policy), lines and x as the chart says.
void group_claimed(SuiteView& suite, const std::vector<Source>& sources) {
  using Key = std::tuple<const FamilyChart*, std::string, PartKey>;
  std::vector<std::pair<Key, std::vector<Member>>> parts;
  std::map<Key, std::size_t> index;
  for (const auto& m : suite.records)
    if (measured(*m.first))
      if (const FamilyChart* c = claimant(*m.first))
        slot(parts, index, Key{c, c->group ? c->group(*m.first) : m.first->experiment, part_key(*m.first)}).push_back(m);
  for (const auto& [key, members] : parts) {
    const auto& [chart, experiment, part] = key;
    std::set<std::size_t> files;
    for (const auto& m : members) files.insert(m.second);
    Family f;
    f.suite = visible(suite.suite);
    f.title = title_of(members, experiment);
    f.axis = chart->axis;
    f.bytes_metric = chart->bytes_metric;
    f.chart = chart;
    f.experiments = {visible(experiment)};
    std::set<std::string> series_seen;
    for (const auto& [r, src] : members) {
      std::string label = chart->series(*r) + (files.size() > 1 ? " — " + sources[src].label : "");
      f.points.push_back({r, src, visible(label), x_of(f.axis, *r)});
      if (series_seen.insert(f.points.back().series).second) f.series.push_back(f.points.back().series);
    }
    std::stable_sort(f.points.begin(), f.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    suite.families.push_back(std::move(f));
  }
}

void group_suite(SuiteView& suite, const std::vector<Source>& sources) {
  // The contenders of each experiment, skipped ones included: a method that
  // could not run at one size does not make that size another family.
  std::map<std::pair<std::string, PartKey>, std::set<SeriesKey>> contenders;
  for (const auto& m : suite.records) contenders[{m.first->experiment, part_key(*m.first)}].insert(series_key(m));

  // Partitions, then experiments, in first-seen order.
  using Key = std::pair<PartKey, bool>;
  std::vector<std::pair<Key, std::vector<Member>>> parts;
  std::map<Key, std::size_t> part_index;
  for (const auto& m : suite.records)
    if (measured(*m.first) && !claimant(*m.first)) slot(parts, part_index, Key{part_key(*m.first), counts_bytes(*m.first)}).push_back(m);
  for (const auto& [key, members] : parts) {
    std::vector<std::pair<std::string, std::vector<Member>>> by_experiment;
    std::map<std::string, std::size_t> experiment_index;
    for (const auto& m : members) slot(by_experiment, experiment_index, m.first->experiment).push_back(m);
    // Each experiment joins the first family of the same contenders that still
    // has one point per line and x with it (a sweep stored as one experiment
    // per size is one chart); otherwise it starts a family of its own.
    struct Cluster {
      const std::set<SeriesKey>* contenders;
      std::vector<std::string> experiments;
      std::vector<Member> members;
      std::set<LinePoint> points;  // (axis, line, x) of its members
    };
    std::vector<Cluster> clusters;
    // Per set of contenders: its clusters (positions 0, 1, ... in first-seen
    // order), and which of them hold each point.
    struct Holders {
      std::set<std::size_t> at;
      std::size_t prefix = 0;  // positions 0 .. prefix-1 all hold the point
      std::size_t next_free(std::size_t k) const {  // first position >= k not holding it
        if (k < prefix) k = prefix;
        while (at.count(k)) ++k;
        return k;
      }
    };
    struct Group {
      std::vector<std::size_t> clusters;
      std::map<LinePoint, Holders> holders;
    };
    std::map<std::set<SeriesKey>, Group> groups;
    for (const auto& [experiment, sub] : by_experiment) {
      const std::set<SeriesKey>* who = &contenders[{experiment, key.first}];
      Group& group = groups[*who];
      std::vector<LinePoint> mine = line_points(sub);
      // A join needs one point per line and x on some axis. Records of one series
      // key share a label, so a point the cluster (or sub itself) already has on
      // every axis makes try_family fail: such clusters are skipped unprobed,
      // found through the holders of each point rather than one by one (many
      // experiments of the same matrix would otherwise cost clusters x experiments).
      std::array<bool, kAxes> self_blocked{};
      std::array<std::vector<const Holders*>, kAxes> held;
      {
        std::set<LinePoint> seen;
        for (const auto& p : mine) {
          if (!seen.insert(p).second) self_blocked[std::get<0>(p)] = true;
          if (auto h = group.holders.find(p); h != group.holders.end()) held[std::get<0>(p)].push_back(&h->second);
        }
      }
      // The first position >= k whose cluster holds none of sub's points on some axis.
      auto candidate = [&](std::size_t k) {
        std::size_t best = group.clusters.size();
        for (std::size_t a = 0; a < kAxes; ++a) {
          if (self_blocked[a]) continue;
          std::size_t at = k;
          for (bool moved = true; moved && at < best;) {
            moved = false;
            for (const Holders* h : held[a])
              if (std::size_t n = h->next_free(at); n != at) at = n, moved = true;
          }
          best = std::min(best, at);
        }
        return best;
      };
      Cluster* into = nullptr;
      std::size_t position = 0;
      for (std::size_t pos = candidate(0); pos < group.clusters.size(); pos = candidate(pos + 1)) {
        Cluster& c = clusters[group.clusters[pos]];
        std::vector<Member> joined = c.members;
        joined.insert(joined.end(), sub.begin(), sub.end());
        std::vector<std::string> names = c.experiments;
        names.push_back(experiment);
        Family probe;
        if (try_family(joined, sources, names, false, probe) && probe.axis != Axis::None) {
          into = &c;
          position = pos;
          break;
        }
      }
      if (!into) {
        position = group.clusters.size();
        group.clusters.push_back(clusters.size());
        clusters.push_back({who, {}, {}, {}});
        into = &clusters.back();
      }
      into->experiments.push_back(experiment);
      into->members.insert(into->members.end(), sub.begin(), sub.end());
      for (const auto& p : mine)
        if (into->points.insert(p).second) {
          Holders& h = group.holders[p];
          h.at.insert(position);
          while (h.at.count(h.prefix)) ++h.prefix;
        }
    }
    for (const auto& c : clusters) {
      Family f;
      try_family(c.members, sources, c.experiments, true, f);
      suite.families.push_back(std::move(f));
    }
  }
}

}  // namespace

std::vector<SuiteView> group_results(const std::vector<Source>& sources) {
  std::vector<SuiteView> suites;
  for (std::size_t i = 0; i < sources.size(); ++i)
    for (const auto& r : sources[i].results->results) {
      auto it = std::find_if(suites.begin(), suites.end(), [&](const SuiteView& s) { return s.suite == r.suite; });
      if (it == suites.end()) {
        suites.push_back({r.suite, {}, {}});
        it = std::prev(suites.end());
      }
      it->records.emplace_back(&r, i);
    }
  for (auto& suite : suites) {
    group_suite(suite, sources);
    group_claimed(suite, sources);
  }
  return suites;
}

std::string axis_title(const Family& f) {
  switch (f.axis) {
    case Axis::BlockSize: return "block size (bytes per call)";
    case Axis::Threads: return "threads";
    case Axis::WorkPerPass: return f.bytes_metric ? "bytes per pass" : "operations per pass";
    case Axis::TotalDepth: return "requests in flight (all threads)";
    case Axis::WorkingSetRatio: return "working set / memory limit";
    case Axis::None: return "";
  }
  return "";
}

std::string x_text(const Family& f, double x) {
  // x comes from counts in the file; kept below 2^64 so the conversion is defined.
  auto count = static_cast<std::uint64_t>(std::clamp(x, 0.0, 1.8e19));
  switch (f.axis) {
    case Axis::BlockSize: return bytes_text(count);
    case Axis::Threads: return std::to_string(count) + (count == 1 ? " thread" : " threads");
    case Axis::WorkPerPass: return f.bytes_metric ? bytes_text(count) : grouped(count) + " ops";
    case Axis::TotalDepth: return grouped(count) + " in flight";
    case Axis::WorkingSetRatio: {  // "0.5x", "4x"
      std::string s = sig(x, 3);
      if (s.find('.') != std::string::npos) s.erase(s.find_last_not_of('0') + 1);
      if (s.back() == '.') s.pop_back();
      return s + "x";
    }
    case Axis::None: return "";
  }
  return "";
}

}  // namespace iolab::report
