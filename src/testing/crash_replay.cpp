// Power-loss states from a FaultEnv's record: what survives at each sync
// point, with every combination of unsynced writes the options allow.
#include "iolab/testing/fault_env.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <span>

#include "iolab/base/error.h"
#include "iolab/io/buffer.h"

#include "fault_env_model.h"

namespace iolab::io {

using namespace fault_model;

void CrashState::write_under(const Path& root) const {
  for (const Path& d : dirs) std::filesystem::create_directories(root / d.relative_path());
  for (const auto& [path, bytes] : files) {
    Path p = root / path.relative_path();
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw Error("write crash state", p.string(), "the write failed", EIO);
  }
}

// ---------------------------------------------------------------- replay

namespace {

// A not-yet-durable change to a file's bytes: a write (or the part of one a
// range sync left) or a size change.
struct Pending {
  bool set_size = false;
  std::uint64_t offset = 0;
  std::span<const std::byte> data;  // into the recorded operation
  std::uint64_t size = 0;
};

void apply_change(Bytes& image, const Pending& e) {
  if (e.set_size) {
    image.resize(e.size);
    return;
  }
  if (e.data.empty()) return;
  if (image.size() < e.offset + e.data.size()) image.resize(e.offset + e.data.size());
  std::memcpy(image.data() + e.offset, e.data.data(), e.data.size());
}

struct FileModel {
  Bytes durable;
  std::vector<Pending> pending;
  std::uint64_t size = 0;  // with every pending change applied
};

}  // namespace

struct CrashReplay::Model {
  std::shared_ptr<const FaultEnv::Impl> env;
  CrashOptions options;
  std::size_t point = 0;
  std::map<std::uint64_t, FileModel> files;
  std::map<Path, std::uint64_t> names;  // durable
  std::set<Path> dirs;                  // durable
  std::vector<const Op*> pending_dir;

  void sync_file(FileModel& f) {
    for (const Pending& e : f.pending) apply_change(f.durable, e);
    f.pending.clear();
  }
  void sync_range(FileModel& f, std::uint64_t lo, std::uint64_t hi) {
    std::vector<Pending> rest;
    for (const Pending& e : f.pending) {
      if (e.set_size) {
        // msync persists the size as fdatasync does: durable now, and no
        // earlier write can show up past a size it cut.
        apply_change(f.durable, e);
        for (Pending& r : rest) {
          if (r.offset >= e.size)
            r.data = {};
          else if (r.offset + r.data.size() > e.size)
            r.data = r.data.first(e.size - r.offset);
        }
        std::erase_if(rest, [](const Pending& r) { return r.data.empty(); });
        continue;
      }
      std::uint64_t a = e.offset, b = e.offset + e.data.size();
      std::uint64_t in_lo = std::max(a, lo), in_hi = std::min(b, hi);
      if (in_lo >= in_hi) {
        rest.push_back(e);
        continue;
      }
      apply_change(f.durable, {false, in_lo, e.data.subspan(in_lo - a, in_hi - in_lo), 0});
      if (a < in_lo) rest.push_back({false, a, e.data.first(in_lo - a), 0});
      if (in_hi < b) rest.push_back({false, in_hi, e.data.subspan(in_hi - a), 0});
    }
    f.pending = std::move(rest);
    // The size covers the writes still pending: what lies past the synced
    // ones reads as zeros if their own writes are lost.
    if (f.durable.size() < f.size) f.durable.resize(f.size);
  }
  static void apply_dir(const Op& op, std::map<Path, std::uint64_t>& names, std::set<Path>& dirs) {
    switch (op.kind) {
      case OpKind::Create: names[op.path] = op.inode; break;
      case OpKind::Rename: {
        auto it = names.find(op.path);
        if (it == names.end() || it->second != op.inode) break;  // its create was lost
        names.erase(it);
        names[op.to] = op.inode;
        break;
      }
      case OpKind::Remove: {
        auto it = names.find(op.path);
        if (it != names.end() && it->second == op.inode) names.erase(it);
        break;
      }
      case OpKind::Mkdir: dirs.insert(op.path); break;
      case OpKind::Rmdir: dirs.erase(op.path); break;
      default: break;
    }
  }

  void step(const Op& op) {
    switch (op.kind) {
      case OpKind::Write: {
        FileModel& f = files[op.inode];
        f.pending.push_back({false, op.offset, op.data, 0});
        f.size = std::max<std::uint64_t>(f.size, op.offset + op.data.size());
        break;
      }
      case OpKind::SetSize: {
        FileModel& f = files[op.inode];
        f.pending.push_back({true, 0, {}, op.length});
        f.size = op.length;
        break;
      }
      case OpKind::Sync:
        if (options.honour_syncs) sync_file(files[op.inode]);
        break;
      case OpKind::SyncRange:
        if (options.honour_syncs) sync_range(files[op.inode], op.offset, op.offset + op.length);
        break;
      case OpKind::SyncDir: {
        if (!options.honour_syncs) break;
        std::vector<const Op*> rest;
        for (const Op* d : pending_dir) {
          if (d->in_dir(op.path))
            apply_dir(*d, names, dirs);
          else
            rest.push_back(d);
        }
        pending_dir = std::move(rest);
        break;
      }
      default: pending_dir.push_back(&op); break;
    }
  }
};

CrashReplay::CrashReplay(const FaultEnv& env, const CrashOptions& options) : model_(std::make_unique<Model>()) {
  model_->env = env.impl_;
  model_->options = options;
  if (options.sector == 0) throw UsageError("crash sector size 0", "must be at least 1 byte");
  const FaultEnv::Impl& m = *env.impl_;
  model_->names = m.initial_names;
  model_->dirs = m.initial_dirs;
  for (const auto& [id, bytes] : m.initial_content) {
    FileModel& f = model_->files[id];
    f.durable = bytes;
    f.size = bytes.size();
  }
}

CrashReplay::~CrashReplay() = default;

void CrashReplay::advance_to(std::size_t point) {
  std::lock_guard lock(model_->env->mu);
  const auto& ops = model_->env->ops;
  if (point > ops.size()) point = ops.size();
  for (; model_->point < point; ++model_->point) model_->step(ops[model_->point]);
}

std::size_t CrashReplay::point() const noexcept { return model_->point; }

std::size_t CrashReplay::pending() const {
  std::size_t n = model_->pending_dir.size();
  for (const auto& [id, f] : model_->files) n += f.pending.size();
  return n;
}

CrashState CrashReplay::state(std::uint64_t seed) const {
  const Model& m = *model_;
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); };
  // A profile per state, so the states cover both ends (every unsynced
  // change lost: LevelDB's fault env; every one kept: a process crash)
  // and everything between.
  double keep = 0, tear = 0, keep_dir = 0;
  switch (rng() % 10) {
    case 0: break;  // all lost
    case 1: keep = keep_dir = 1; break;
    default:
      keep = uniform();
      tear = uniform() * (1 - keep) * 0.6;
      keep_dir = uniform();
  }
  CrashState s;
  auto names = m.names;
  s.dirs = m.dirs;
  for (const Op* d : m.pending_dir) {
    if (uniform() < keep_dir) {
      Model::apply_dir(*d, names, s.dirs);
      ++s.kept;
    } else {
      ++s.dropped;
    }
  }
  const auto& created = m.env->created_dirs;
  for (const auto& [path, id] : names) {
    Path dir = parent_of(path);
    if (created.count(dir) != 0 && s.dirs.count(dir) == 0) continue;  // its directory was lost
    auto it = m.files.find(id);
    Bytes image;
    if (it != m.files.end()) {
      const FileModel& f = it->second;
      image = f.durable;
      for (const Pending& e : f.pending) {
        double u = uniform();
        if (u < keep) {
          apply_change(image, e);
          ++s.kept;
        } else if (!e.set_size && u < keep + tear && e.data.size() > 1) {
          // Torn: each sector (aligned in the file) kept or lost on its own.
          ++s.torn;
          std::uint64_t at = e.offset, end = e.offset + e.data.size();
          while (at < end) {
            std::uint64_t next = std::min<std::uint64_t>(end, (at / m.options.sector + 1) * m.options.sector);
            if (rng() & 1) apply_change(image, {false, at, e.data.subspan(at - e.offset, next - at), 0});
            at = next;
          }
        } else {
          ++s.dropped;
        }
      }
    }
    s.files[path] = std::move(image);
  }
  return s;
}

}  // namespace iolab::io
