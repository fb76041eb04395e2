// A replay's setup (replay_workload.h): what the method can replay and
// how, decided once before any pass; the files made and opened before each.
#include <algorithm>
#include <unordered_map>

#include "iolab/base/error.h"
#include "iolab/io/registry.h"
#include "replay_workload.h"

namespace iolab::replay::detail {

namespace {
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

std::optional<std::string> ReplayWorkload::setup() {
  check(t_);
  traits_ = method_.traits(s_.options);
  // A queued method's ring holds the trace's depth (one request per thread that made I/O); the others go one at a time.
  depth_ = traits_.queued ? trace_depth(t_) : 1;
  if (traits_.queued) s_.options.queue_depth = depth_;
  if (io::Availability a = method_.probe(scratch_.path()); !a.available) return a.reason;
  if (io::Availability a = method_.supports_options(s_.options, scratch_.path()); !a.available) return a.reason;
  // The room every file reaches (its initial size, or the end of its furthest write).
  std::vector<std::uint64_t> extent;
  for (const auto& f : t_.header.files) extent.push_back(f.initial_size);
  std::unordered_map<std::uint32_t, std::uint32_t> index;
  for (std::uint32_t i = 0; i < t_.header.files.size(); ++i) index[t_.header.files[i].id] = i;
  file_of_.reserve(t_.ops.size());
  for (const Op& op : t_.ops) {
    file_of_.push_back(index.at(op.file));
    if (op.kind == OpKind::Write || op.kind == OpKind::Truncate)
      extent[file_of_.back()] = std::max(extent[file_of_.back()], op.kind == OpKind::Write ? op.offset + op.length : op.offset);
  }
  std::uint64_t room = 0;
  for (auto e : extent) room += e;
  if (const auto free = io::free_space(scratch_.path()); free && room > *free)
    return "its files reach " + std::to_string(room) + " bytes, more than the " + std::to_string(*free) + " free in " +
           scratch_.path().string();
  // The method once, untimed, on a probe file: O_DIRECT refused, its alignment.
  {
    const auto probe = scratch_.create_unique_file("replay-probe");
    std::unique_ptr<io::File> f;
    try {
      f = method_.open(probe, io::Access::ReadWrite, s_.options);
    } catch (const Error& e) {
      scratch_.remove_file(probe);
      if (e.error_number() == EINVAL || e.error_number() == EOPNOTSUPP) return std::string(e.what());
      throw;
    }
    align_ = traits_.needs_alignment && s_.options.unaligned == io::UnalignedPolicy::Reject ? f->alignment() : 1;
    durability_[static_cast<std::size_t>(OpKind::Fsync)] = io::Durability::Fsync;
    durability_[static_cast<std::size_t>(OpKind::Fdatasync)] = traits_.data_sync;
    durability_[static_cast<std::size_t>(OpKind::Msync)] = traits_.data_sync;
    durability_[static_cast<std::size_t>(OpKind::SyncFileRange)] = io::Durability::SyncFileRange;
    const bool range = f->supports(io::Durability::SyncFileRange);
    std::optional<std::string> cannot;
    for (std::size_t i = 0; i < t_.ops.size() && !cannot; ++i) {
      const OpKind k = t_.ops[i].kind;
      if ((k == OpKind::Fsync || k == OpKind::Fdatasync || k == OpKind::Msync) &&
          !f->supports(durability_[static_cast<std::size_t>(k)]))
        cannot = std::string(method_.name()) + " cannot make the " +
                 std::string(io::to_string(durability_[static_cast<std::size_t>(k)])) + " call " + op_words(i, t_.ops[i]) +
                 " asks for";
    }
    f->close();
    f.reset();
    scratch_.remove_file(probe);
    if (cannot) return cannot;
    if (!range) why_not_[static_cast<std::size_t>(OpKind::SyncFileRange)] = std::string(method_.name()) + " cannot make it";
  }
  if (align_ > 1)
    for (std::size_t i = 0; i < t_.ops.size(); ++i) {
      const Op& op = t_.ops[i];
      if ((op.kind == OpKind::Read || op.kind == OpKind::Write) && (op.offset % align_ != 0 || op.length % align_ != 0))
        return op_words(i, op) + " is not " + std::to_string(align_) + "-aligned";
    }
  return plan();
}

// Decides each op's action and simulates a pass on the model: what every
// file ends with, the bytes reads return, the file as the last read saw it.
std::optional<std::string> ReplayWorkload::plan() {
  why_not_[static_cast<std::size_t>(OpKind::Allocate)] = "io::File has no fallocate call, and a trace does not say "
                                                          "whether the program kept the size";
  why_not_[static_cast<std::size_t>(OpKind::Map)] = why_not_[static_cast<std::size_t>(OpKind::Unmap)] =
      "the method maps (or not) as it does for every call";
  why_not_[static_cast<std::size_t>(OpKind::Close)] =
      traits_.user_space_buffer ? "" : "each file stays open through the pass (closed at its end)";
  for (const auto& f : t_.header.files) final_.emplace_back(f.initial_size);
  std::uint64_t max_read = 1, max_write = 1;
  action_.reserve(t_.ops.size());
  // Queued methods: the bytes each read or write depends on or changes, for the waves (plan_waves).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> hazard(depth_ > 1 ? t_.ops.size() : 0);
  for (std::size_t i = 0; i < t_.ops.size(); ++i) {
    const Op& op = t_.ops[i];
    Layout& l = final_[file_of_[i]];
    Action a = Action::Nothing;
    switch (op.kind) {
      case OpKind::Read:
        a = Action::Read;
        max_read = std::max(max_read, op.length);
        expected_read_bytes_ += l.readable(op.offset, op.length);
        last_read_ = i;
        // A read the file's end cuts short depends on the end too: on every byte from its offset on.
        if (!hazard.empty())
          hazard[i] = {op.offset, l.readable(op.offset, op.length) < op.length ? UINT64_MAX : op.offset + op.length};
        break;
      case OpKind::Write:
        a = Action::Write;
        max_write = std::max(max_write, op.length);
        // A write past the end also changes the size: the bytes from the old end on read differently after it.
        if (!hazard.empty()) hazard[i] = {std::min(op.offset, l.size()), op.offset + op.length};
        l.write(op.offset, op.length);
        break;
      case OpKind::Fsync:
      case OpKind::Fdatasync:
      case OpKind::Msync:
        a = Action::Sync;
        break;
      case OpKind::SyncFileRange:
        a = why_not_[static_cast<std::size_t>(op.kind)].empty() ? Action::Sync : Action::Nothing;
        break;
      case OpKind::Truncate:
        a = Action::Truncate;
        l.truncate(op.offset);
        break;
      case OpKind::Open:
        if (op.flags & trace::kTruncate) {
          a = Action::Truncate;
          l.truncate(0);
        }
        break;
      case OpKind::Close:
        a = traits_.user_space_buffer ? Action::Flush : Action::Nothing;
        break;
      case OpKind::Allocate:
      case OpKind::Map:
      case OpKind::Unmap:
        break;
    }
    action_.push_back(a);
    ++kind_ops_[static_cast<std::size_t>(op.kind)];
    if (a == Action::Nothing && op.kind != OpKind::Open) ++not_replayed_[static_cast<std::size_t>(op.kind)];
    if (i == last_read_) at_last_read_ = l;  // as the read saw it (a read changes nothing)
  }
  const io::BufferKind kind = traits_.needs_alignment ? io::BufferKind::Aligned : io::BufferKind::Heap;
  // Writes take the pattern of their offset from a ring of whole pages (aligned offsets stay aligned in it).
  source_ = std::make_unique<harness::WriteSource>(s_.seed, std::uint64_t{64} << 20, round_up(max_write, io::kPageSize), kind);
  slot_bytes_ = static_cast<std::size_t>(round_up(max_read, io::kPageSize));
  // A wave's reads each need a slot: at most kMaxCallBytes of them (or one), the depth cut to fit.
  depth_ = static_cast<unsigned>(std::clamp<std::uint64_t>(kMaxCallBytes / slot_bytes_, 1, depth_));
  read_buffer_ = io::Buffer(slot_bytes_ * depth_, kind);
  if (depth_ > 1) plan_waves(hazard);
  record_.buffer = kind;
  if (traits_.bypasses_page_cache) {
    record_.cache = results::CacheState::Direct;
    record_.cache_method = "O_DIRECT";
  } else {
    record_.cache.reset();
    record_.cache_method = "fresh files before every pass (written with pwrite, fdatasync)";
  }
  return std::nullopt;
}

// Waves: from each read or write on, the longest run of the ops after it
// that may be in flight together: reads and writes (and ops with nothing to
// do) of distinct threads, at most depth_, none writing bytes another reads
// or writes. A sync, truncate or flush ends a wave: every earlier op of
// every thread completes before it. Ops in a wave are independent, so any
// order of completion ends as the trace's order does, and each thread has
// one op in a wave: its own order is kept from wave to wave.
void ReplayWorkload::plan_waves(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& hazard) {
  const std::size_t n = t_.ops.size();
  wave_len_.assign(n, 0);
  std::vector<std::size_t> members;
  auto is_io = [&](std::size_t j) { return action_[j] == Action::Read || action_[j] == Action::Write; };
  auto conflicts = [&](std::size_t a, std::size_t b) {
    return t_.ops[a].thread == t_.ops[b].thread ||
           (file_of_[a] == file_of_[b] && (action_[a] == Action::Write || action_[b] == Action::Write) &&
            hazard[a].first < hazard[b].second && hazard[b].first < hazard[a].second);
  };
  for (std::size_t i = 0; i < n;) {
    if (!is_io(i)) {
      ++i;
      continue;
    }
    members.clear();
    std::size_t j = i;
    for (; j < n && members.size() < depth_; ++j) {
      if (action_[j] == Action::Nothing) continue;
      if (!is_io(j) || std::any_of(members.begin(), members.end(), [&](std::size_t m) { return conflicts(m, j); }))
        break;
      members.push_back(j);
    }
    wave_len_[i] = static_cast<std::uint32_t>(j - i);
    for (std::size_t m : members)
      depth_reached_ = std::max<std::size_t>(depth_reached_, std::count_if(members.begin(), members.end(), [&](std::size_t o) {
                                               return file_of_[o] == file_of_[m];
                                             }));
    i = j;
  }
}

void ReplayWorkload::before_pass(harness::PassKind) {
  for (auto& s : slots_) scratch_.remove_file(s.path);
  slots_.clear();
  for (const auto& f : t_.header.files) {
    Slot s;
    s.path = scratch_.create_unique_file("replay-" + std::to_string(f.id));
    slots_.push_back(std::move(s));
    auto w = io::find_file_method("pread").open(slots_.back().path, io::Access::ReadWrite);
    for (std::uint64_t off = 0; off < f.initial_size;) {
      const std::uint64_t n = std::min<std::uint64_t>(source_->period(), f.initial_size - off);
      w->write_at(off, source_->at(off, static_cast<std::size_t>(n)));
      off += n;
    }
    // Its initial bytes on the device, so a pass's syncs flush only what the pass wrote; an empty file has none.
    if (f.initial_size > 0) w->sync(io::Durability::Fdatasync);
    w->close();
  }
}

void ReplayWorkload::open_all() {
  for (auto& s : slots_) {
    s.file = method_.open(s.path, io::Access::ReadWrite, s_.options);
    std::span<std::byte> buffers[] = {read_buffer_.span(), source_->buffer()};
    s.file->register_buffers(buffers);
  }
}

void ReplayWorkload::close_all(std::uint64_t& calls) {
  for (auto& s : slots_)
    if (s.file) {
      s.file->close();
      calls += s.file->counters().calls;
      s.file.reset();
    }
}

// io::File has no truncate: the File is closed (its buffers flushed, a
// mapping trimmed), the file truncated by its path, and opened again.
void ReplayWorkload::truncate(Slot& slot, std::uint64_t to, std::uint64_t& calls) {
  slot.file->close();
  calls += slot.file->counters().calls + 1;
  slot.file.reset();
  std::error_code ec;
  std::filesystem::resize_file(slot.path, to, ec);
  if (ec) throw Error("truncate", slot.path.string(), ec.value());
  slot.file = method_.open(slot.path, io::Access::ReadWrite, s_.options);
}


}  // namespace iolab::replay::detail
