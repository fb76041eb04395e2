#include "iolab/harness/job.h"

#include "iolab/base/input_file.h"
#include "iolab/harness/limits.h"

#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "iolab/base/error.h"
#include "iolab/io/registry.h"
#include "iolab/base/units.h"

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

std::vector<MethodVariant> variants_of(const std::vector<std::string>& methods) {
  std::vector<MethodVariant> out;
  for (const auto& name : methods) out.push_back(MethodVariant{name, "", {}, std::nullopt});
  return out;
}

std::vector<FileExperiment> expand(const Matrix& m) {
  if (m.methods.empty()) throw UsageError("--method", "name at least one method (see iolab methods)");
  for (const auto& v : m.methods) io::find_file_method(v.method);  // unknown names fail before anything runs
  for (auto b : m.block_sizes)
    if (b == 0) throw UsageError("--bs 0", "a block size must be at least 1 byte");
  if (m.ops_per_rep == 0 && m.file_size == 0) throw UsageError("--size 0", "the file must hold at least one byte");
  for (unsigned qd : m.queue_depths)
    if (qd == 0) throw UsageError("--qd 0", "the queue depth must be at least 1");
  // The size of the matrix, from its axes, before anything is allocated.
  long double combos = 1;
  const std::vector<unsigned> depths = m.queue_depths.empty() ? std::vector<unsigned>{0} : m.queue_depths;
  for (std::size_t n : {m.ops.size(), m.patterns.size(), m.block_sizes.size(), m.caches.size(), m.buffers.size(),
                        m.syncs.size(), depths.size(), m.methods.size()})
    combos *= static_cast<long double>(n);
  if (combos > static_cast<long double>(kMaxMatrixExperiments))
    throw UsageError("the matrix", "expands to " + std::to_string(static_cast<unsigned long long>(combos)) +
                                       " experiments, more than the " + std::to_string(kMaxMatrixExperiments) +
                                       " one run may hold; split it");
  std::vector<FileExperiment> out;
  for (results::Op op : m.ops)
    for (results::AccessPattern pattern : m.patterns)
      for (std::uint64_t block : m.block_sizes)
        for (results::CacheState cache : m.caches)
          for (const auto& buffer : m.buffers)
            for (const io::FlushPolicy& listed : m.syncs) {
              // Caches apply to reads, sync to writes: skip combinations that would repeat a row.
              if (op == results::Op::Write && cache != m.caches.front() && cache != results::CacheState::Direct) continue;
              if (op == results::Op::Read && &listed != &m.syncs.front()) continue;
              const io::FlushPolicy sync = op == results::Op::Read ? io::FlushPolicy{} : listed;
              std::string label = std::string(to_string(op)) + " " + std::string(to_string(pattern)) + " " +
                                  size_label(block);
              if (op == results::Op::Read || cache == results::CacheState::Direct) label += " " + std::string(to_string(cache));
              if (buffer) label += " " + std::string(io::to_string(*buffer));
              if (op == results::Op::Write) label += " sync " + to_string(sync);
              for (unsigned qd : depths)
                for (const MethodVariant& v : m.methods) {
                  // A method without a queue runs at the first depth only.
                  if (qd != depths.front() && !io::find_file_method(v.method).traits(v.options).queued) continue;
                  FileExperiment e;
                  e.suite = "custom";
                  e.experiment = label;
                  e.method = v.method;
                  e.method_label = v.label;
                  e.options = v.options;
                  if (qd != 0) e.options.queue_depth = qd;
                  e.op = op;
                  e.pattern = pattern;
                  e.block_size = block;
                  e.file_size = m.file_size;
                  e.ops = m.ops_per_rep;
                  e.buffer = v.buffer ? v.buffer : buffer;
                  e.cache = cache;
                  e.sync = sync;
                  e.eviction = m.eviction;
                  e.latency = m.latency;
                  out.push_back(std::move(e));
                }
            }
  return out;
}

// ---- job files -----------------------------------------------------------------

namespace {

// An integer node's value; nothing for any other node. (toml++'s
// value<int64_t>() also converts a float, and one beyond int64's range, such
// as 2e104, is undefined behaviour: found by fuzz/job_fuzz.)
std::optional<std::int64_t> integer(const toml::node& v) {
  if (!v.is_integer()) return std::nullopt;
  return v.value<std::int64_t>();
}

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
        std::vector<std::string> list;
        try {
          list = split_list(*s, key);
        } catch (const UsageError& e) {  // named with the file, as every other error (found by fuzz/job_fuzz)
          fail(key, e.what());
        }
        for (auto& item : list) out.push_back(item);
      } else if (auto i = integer(v)) {
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
  return parse_job(read_input_file(file, "job file", kJobFileMaxBytes), file.string());
}

Job parse_job(std::string_view text, const std::string& source) {
  JobReader rd{source};
  // toml++ recurses per dotted-key part and per nested value: bounded first.
  const TomlShape shape = toml_shape(text);
  if (shape.depth > kTomlMaxDepth)
    throw UsageError("job file " + source, "nested deeper than " + std::to_string(kTomlMaxDepth) + " levels (a job file is flat)");
  if (shape.key_parts > kTomlMaxKeyParts)
    throw UsageError("job file " + source, "a key or table name of more than " + std::to_string(kTomlMaxKeyParts) +
                                               " dotted parts (a job file's keys are plain)");
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
      std::vector<std::string> names = rd.items(v, key);
      m.methods = variants_of(names);
      for (const auto& name : names) {
        try {
          io::find_file_method(name);
        } catch (const UsageError& e) {
          rd.fail(key, e.what());
        }
      }
    } else if (key == "op") {
      m.ops = rd.parsed<results::Op>(v, key, [](const std::string& s) { return results::parse_op(s); });
    } else if (key == "pattern") {
      m.patterns = rd.parsed<results::AccessPattern>(v, key, [](const std::string& s) { return results::parse_pattern(s); });
    } else if (key == "bs") {
      m.block_sizes = rd.parsed<std::uint64_t>(v, key, [](const std::string& s) { return parse_size(s); });
      for (auto b : m.block_sizes)
        if (b == 0) rd.fail(key, "a block size must be at least 1 byte");
    } else if (key == "size") {
      m.file_size = rd.single_size(v, key);
    } else if (key == "ops") {
      m.ops_per_rep = rd.single_size(v, key);
    } else if (key == "cache") {
      m.caches = rd.parsed<results::CacheState>(v, key, [](const std::string& s) { return results::parse_cache(s); });
    } else if (key == "buffer") {
      m.buffers = rd.parsed<std::optional<io::BufferKind>>(
          v, key, [](const std::string& s) { return std::optional(io::parse_buffer_kind(s)); });
    } else if (key == "sync") {
      m.syncs = rd.parsed<io::FlushPolicy>(v, key, [](const std::string& s) { return io::parse_flush_policy(s); });
    } else if (key == "qd") {
      m.queue_depths.clear();
      // A count, as on the command line (--qd 32), not a size: "4k" is not a queue depth.
      for (auto qd : rd.parsed<std::uint64_t>(v, key, [](const std::string& s) {
             return parse_count(s, "qd", kQueueDepthBounds.min, kQueueDepthBounds.max);
           }))
        m.queue_depths.push_back(static_cast<unsigned>(qd));
    } else if (key == "evict") {
      auto e = rd.parsed<results::Eviction>(v, key, [](const std::string& s) { return results::parse_eviction(s); });
      if (e.size() != 1) rd.fail(key, "expected one value");
      m.eviction = e.front();
    } else if (key == "latency") {
      if (!v.is_boolean()) rd.fail(key, "expected true or false");
      m.latency = *v.value<bool>();
    } else if (key == "reps" || key == "warmup") {
      const CountBounds& b = key == "reps" ? kRepsBounds : kWarmupBounds;
      auto i = integer(v);
      if (!i || *i < static_cast<std::int64_t>(b.min) || static_cast<std::uint64_t>(*i) > b.max)
        rd.fail(key, "expected an integer from " + std::to_string(b.min) + " to " + std::to_string(b.max));
      (key == "reps" ? job.reps : job.warmup) = static_cast<unsigned>(*i);
    } else if (key == "seed") {
      auto i = integer(v);
      if (!i || *i < 0) rd.fail(key, "expected a non-negative integer");
      job.seed = static_cast<std::uint64_t>(*i);
    }
  }
  if (m.methods.empty()) rd.fail("method", "missing: name at least one method");
  return job;
}

}  // namespace iolab::harness
