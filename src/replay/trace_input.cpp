// What a replay takes of a trace before any method runs (replay.h): the
// file read whole within a bound, its operations checked, and the timeline
// the report draws.
#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_set>

#include "iolab/base/error.h"
#include "iolab/replay/replay.h"
#include "replay_workload.h"

namespace iolab::replay {

using detail::kKinds;
using trace::Op;
using trace::OpKind;

Trace read_trace(const std::filesystem::path& file, std::size_t max_ops) {
  const std::string name = file.string();
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status)) throw UsageError("trace " + name, "no such file");
  if (!std::filesystem::is_regular_file(status)) throw UsageError("trace " + name, "is not a regular file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("trace " + name, std::string("cannot be read: ") + std::strerror(errno));
  trace::Reader reader(in, name);
  Trace t;
  t.name = file.filename().string();
  t.header = reader.header();
  // The count the writer knew: no doubling of the vector on the way (a hostile count is capped).
  if (t.header.op_count) t.ops.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(*t.header.op_count, max_ops)));
  for (Op op; reader.next(op);) {
    if (t.ops.size() == max_ops)
      throw UsageError("trace " + name, "holds more than " + std::to_string(max_ops) +
                                            " operations; a replay keeps them in memory: replay a part of it");
    t.ops.push_back(op);
  }
  if (in.bad()) throw UsageError("trace " + name, std::string("cannot be read: ") + std::strerror(errno));
  return t;
}

nlohmann::json timeline(const Trace& t, std::size_t buckets) {
  buckets = std::max<std::size_t>(1, buckets);
  const std::uint64_t last = t.ops.empty() ? 0 : t.ops.back().time_ns;
  const bool by_time = last > 0;  // a trace without times (some fio iologs) is laid out by position
  const double span = by_time ? static_cast<double>(last) + 1 : static_cast<double>(std::max<std::size_t>(1, t.ops.size()));
  // Counted in plain arrays (a trace may hold millions of operations), made JSON once.
  std::array<std::vector<std::uint64_t>, kKinds> ops, bytes;
  std::array<std::map<std::uint64_t, std::uint64_t>, kKinds> sizes;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (op.kind == OpKind::Open || op.kind == OpKind::Close || op.kind == OpKind::Map || op.kind == OpKind::Unmap) continue;
    const auto k = static_cast<std::size_t>(op.kind);
    if (ops[k].empty()) ops[k].assign(buckets, 0), bytes[k].assign(buckets, 0);
    const double at = by_time ? static_cast<double>(op.time_ns) : static_cast<double>(i);
    const auto b = std::min(buckets - 1, static_cast<std::size_t>(at / span * static_cast<double>(buckets)));
    ++ops[k][b];
    if (op.kind == OpKind::Read || op.kind == OpKind::Write) {
      bytes[k][b] += op.length;
      unsigned c = 0;  // the class of n: the least 2^c >= n
      while ((std::uint64_t{1} << c) < op.length && c < 63) ++c;
      ++sizes[k][std::uint64_t{1} << c];
    }
  }
  nlohmann::json kinds = nlohmann::json::object(), by_size = nlohmann::json::object();
  for (std::size_t k = 0; k < kKinds; ++k) {
    if (ops[k].empty()) continue;
    const std::string name(trace::to_string(static_cast<OpKind>(k)));
    kinds[name] = {{"ops", ops[k]}, {"bytes", bytes[k]}};
    for (const auto& [size, n] : sizes[k]) by_size[name][std::to_string(size)] = n;
  }
  return {{"by", by_time ? "time" : "operation"}, {"span", by_time ? last : t.ops.size()}, {"buckets", buckets},
          {"kinds", kinds}, {"sizes", by_size}};
}

unsigned trace_depth(const Trace& t) {
  std::unordered_set<std::uint32_t> threads;
  for (const Op& op : t.ops)
    if (op.kind == OpKind::Read || op.kind == OpKind::Write) {
      threads.insert(op.thread);
      if (threads.size() == kMaxDepth) break;
    }
  return std::max<unsigned>(1, static_cast<unsigned>(threads.size()));
}

void check(const Trace& t) {
  auto fail = [&](const std::string& what) { throw UsageError("trace " + t.name, what); };
  std::unordered_set<std::uint32_t> ids;
  for (const auto& f : t.header.files)
    if (!ids.insert(f.id).second) fail("file " + std::to_string(f.id) + " is declared twice");
  std::uint64_t time = 0;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    const std::string where = "op " + std::to_string(i + 1) + ": ";
    if (!ids.contains(op.file)) fail(where + "file " + std::to_string(op.file) + " was never declared");
    if (op.offset >= trace::kMaxEnd || op.length >= trace::kMaxEnd - op.offset)
      fail(where + "offset " + std::to_string(op.offset) + " + length " + std::to_string(op.length) +
           " reaches 2^62 or beyond");
    if (op.time_ns < time) fail(where + "its time goes back");
    time = op.time_ns;
    if ((op.kind == OpKind::Read || op.kind == OpKind::Write) && op.length > kMaxCallBytes)
      fail(where + "moves " + std::to_string(op.length) + " bytes in one call; a replay moves at most " +
           std::to_string(kMaxCallBytes));
  }
}

}  // namespace iolab::replay
