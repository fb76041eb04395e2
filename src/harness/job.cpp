#include "iolab/harness/job.h"

#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "iolab/error.h"
#include "iolab/io/registry.h"
#include "iolab/units.h"

namespace iolab::harness {

std::vector<std::string> split_list(std::string_view text, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = text.find(',', start);
    std::string item(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) throw UsageError(std::string(what) + " '" + std::string(text) + "'", "has an empty item");
    out.push_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

SyncPolicy parse_sync_policy(std::string_view text) {
  SyncPolicy p;
  std::string_view schedule = text, durability;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    schedule = text.substr(0, colon);
    durability = text.substr(colon + 1);
  }
  if (schedule.rfind("periodic-", 0) == 0) {
    p.interval = parse_size(schedule.substr(9));
    if (p.interval == 0) throw UsageError("sync '" + std::string(text) + "'", "the flush interval must be above 0");
    schedule = "periodic";
  }
  try {
    p.schedule = parse_schedule(schedule);
    if (!durability.empty()) p.durability = io::parse_durability(durability);
  } catch (const UsageError&) {
    throw UsageError("sync '" + std::string(text) + "'",
                     "expected none, end, every or periodic[-SIZE], optionally :fdatasync, :fsync, :msync, "
                     ":sync_file_range or :flush (e.g. periodic-16k:msync)");
  }
  if (p.schedule == SyncSchedule::None && p.durability != io::Durability::None)
    throw UsageError("sync '" + std::string(text) + "'", "'none' takes no durability call");
  return p;
}

namespace {

std::string sync_label(const SyncPolicy& s) {
  std::string d = s.durability == io::Durability::None ? "" : ":" + std::string(io::to_string(s.durability));
  switch (s.schedule) {
    case SyncSchedule::None: return "none";
    case SyncSchedule::End: return "end" + d;
    case SyncSchedule::EveryWrite: return "every" + d;
    case SyncSchedule::Periodic: return "periodic-" + size_label(s.interval) + d;
  }
  return "?";
}

}  // namespace

std::vector<FileExperiment> expand(const Matrix& m) {
  if (m.methods.empty()) throw UsageError("--method", "name at least one method (see iolab methods)");
  for (const auto& name : m.methods) io::find_file_method(name);  // unknown names fail before anything runs
  for (auto b : m.block_sizes)
    if (b == 0) throw UsageError("--bs 0", "a block size must be at least 1 byte");
  if (m.ops_per_rep == 0 && m.file_size == 0) throw UsageError("--size 0", "the file must hold at least one byte");
  if (m.queue_depth == 0) throw UsageError("--qd 0", "the queue depth must be at least 1");
  std::vector<FileExperiment> out;
  for (Op op : m.ops)
    for (AccessPattern pattern : m.patterns)
      for (std::uint64_t block : m.block_sizes)
        for (CacheState cache : m.caches)
          for (io::BufferKind buffer : m.buffers)
            for (const SyncPolicy& listed : m.syncs) {
              // Caches apply to reads, sync to writes: skip combinations that would repeat a row.
              if (op == Op::Write && cache != m.caches.front() && cache != CacheState::Direct) continue;
              if (op == Op::Read && &listed != &m.syncs.front()) continue;
              const SyncPolicy sync = op == Op::Read ? SyncPolicy{} : listed;
              for (const std::string& method : m.methods) {
                FileExperiment e;
                e.suite = "custom";
                std::string label = std::string(to_string(op)) + " " + std::string(to_string(pattern)) + " " +
                                    size_label(block);
                if (op == Op::Read || cache == CacheState::Direct) label += " " + std::string(to_string(cache));
                label += " " + std::string(io::to_string(buffer));
                if (op == Op::Write) label += " sync " + sync_label(sync);
                e.experiment = label;
                e.method = method;
                e.op = op;
                e.pattern = pattern;
                e.block_size = block;
                e.file_size = m.file_size;
                e.ops = m.ops_per_rep;
                e.buffer = buffer;
                e.cache = cache;
                e.schedule = sync.schedule;
                e.sync = sync.durability;
                e.sync_interval = sync.interval;
                e.eviction = m.eviction;
                e.per_op_latency = m.latency;
                e.options.queue_depth = m.queue_depth;
                if (io::find_file_method(method).traits().queued) e.batch = m.queue_depth;
                out.push_back(std::move(e));
              }
            }
  return out;
}

// ---- job files -----------------------------------------------------------------

namespace {

struct JobReader {
  std::string file;

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw UsageError("job file " + file, "'" + key + "': " + why);
  }

  // A key's items: "a,b" or ["a", "b"]; integers become their decimal text.
  std::vector<std::string> items(const toml::node& n, const std::string& key) const {
    std::vector<std::string> out;
    auto one = [&](const toml::node& v) {
      if (auto s = v.value<std::string>()) {
        for (auto& item : split_list(*s, key)) out.push_back(item);
      } else if (auto i = v.value<std::int64_t>(); i && v.is_integer()) {
        if (*i < 0) fail(key, "must not be negative");
        out.push_back(std::to_string(*i));
      } else {
        fail(key, "expected a string, an integer or a list of them");
      }
    };
    if (auto* arr = n.as_array()) {
      if (arr->empty()) fail(key, "the list is empty");
      for (const auto& v : *arr) one(v);
    } else {
      one(n);
    }
    return out;
  }

  template <typename T, typename Parse>
  std::vector<T> parsed(const toml::node& n, const std::string& key, Parse parse) const {
    std::vector<T> out;
    for (const auto& s : items(n, key)) {
      try {
        out.push_back(parse(s));
      } catch (const UsageError& e) {
        fail(key, e.what());
      }
    }
    return out;
  }

  std::uint64_t single_size(const toml::node& n, const std::string& key) const {
    auto v = parsed<std::uint64_t>(n, key, [](const std::string& s) { return parse_size(s); });
    if (v.size() != 1) fail(key, "expected one value");
    return v.front();
  }
};

}  // namespace

Job read_job(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw UsageError("job file " + file.string(), "is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("job file " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw UsageError("job file " + file.string(), std::string("cannot be read: ") + std::strerror(errno));
  return parse_job(text, file.string());
}

Job parse_job(std::string_view text, const std::string& source) {
  JobReader rd{source};
  toml::table t;
  try {
    t = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::string what(e.description());
    throw UsageError("job file " + source, "line " + std::to_string(e.source().begin.line) + ": " + what);
  }
  Job job;
  Matrix& m = job.matrix;
  const std::set<std::string> known = {"method", "op", "pattern", "bs", "size", "ops", "cache", "buffer", "sync",
                                       "qd", "evict", "latency", "reps", "warmup", "seed"};
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (!known.count(key))
      rd.fail(key, "unknown key (known: method, op, pattern, bs, size, ops, cache, buffer, sync, qd, evict, latency, "
                   "reps, warmup, seed)");
    if (key == "method") {
      m.methods = rd.items(v, key);
      for (const auto& name : m.methods) {
        try {
          io::find_file_method(name);
        } catch (const UsageError& e) {
          rd.fail(key, e.what());
        }
      }
    } else if (key == "op") {
      m.ops = rd.parsed<Op>(v, key, [](const std::string& s) { return parse_op(s); });
    } else if (key == "pattern") {
      m.patterns = rd.parsed<AccessPattern>(v, key, [](const std::string& s) { return parse_pattern(s); });
    } else if (key == "bs") {
      m.block_sizes = rd.parsed<std::uint64_t>(v, key, [](const std::string& s) { return parse_size(s); });
      for (auto b : m.block_sizes)
        if (b == 0) rd.fail(key, "a block size must be at least 1 byte");
    } else if (key == "size") {
      m.file_size = rd.single_size(v, key);
    } else if (key == "ops") {
      m.ops_per_rep = rd.single_size(v, key);
    } else if (key == "cache") {
      m.caches = rd.parsed<CacheState>(v, key, [](const std::string& s) { return parse_cache(s); });
    } else if (key == "buffer") {
      m.buffers = rd.parsed<io::BufferKind>(v, key, [](const std::string& s) { return io::parse_buffer_kind(s); });
    } else if (key == "sync") {
      m.syncs = rd.parsed<SyncPolicy>(v, key, [](const std::string& s) { return parse_sync_policy(s); });
    } else if (key == "qd") {
      std::uint64_t qd = rd.single_size(v, key);
      if (qd == 0 || qd > 4096) rd.fail(key, "expected 1 to 4096");
      m.queue_depth = static_cast<unsigned>(qd);
    } else if (key == "evict") {
      auto e = rd.parsed<Eviction>(v, key, [](const std::string& s) { return parse_eviction(s); });
      if (e.size() != 1) rd.fail(key, "expected one value");
      m.eviction = e.front();
    } else if (key == "latency") {
      auto b = v.value<bool>();
      if (!b || !v.is_boolean()) rd.fail(key, "expected true or false");
      m.latency = *b;
    } else if (key == "reps" || key == "warmup") {
      auto i = v.value<std::int64_t>();
      if (!i || !v.is_integer() || *i < (key == "reps" ? 1 : 0) || *i > 100000)
        rd.fail(key, key == "reps" ? "expected an integer of at least 1" : "expected an integer of at least 0");
      (key == "reps" ? job.reps : job.warmup) = static_cast<unsigned>(*i);
    } else if (key == "seed") {
      auto i = v.value<std::int64_t>();
      if (!i || !v.is_integer() || *i < 0) rd.fail(key, "expected a non-negative integer");
      job.seed = static_cast<std::uint64_t>(*i);
    }
  }
  if (m.methods.empty()) rd.fail("method", "missing: name at least one method");
  return job;
}

}  // namespace iolab::harness
