// fio jobs as iolab experiments: each option in effect mapped to what iolab
// does the same way, or refused with the reason (docs/fio-jobs.md).
#include "iolab/fio/job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "iolab/base/error.h"
#include "iolab/io/registry.h"
#include "iolab/base/units.h"

#include "options.h"

namespace iolab::harness {
namespace fio_detail {
namespace {


struct MapContext {
  std::filesystem::path cwd;
};

class JobMapper {
 public:
  JobMapper(const FioSection& section, const JobOptions& options, std::vector<FioMappedOption> ignored,
            const MapContext& context)
      : section_(section), options_(options), context_(context) {
    job_.section = section.name;
    job_.name = section.name;
    job_.place = section.place;
    job_.ignored = std::move(ignored);
  }

  FioMappedJob map() {
    FileExperiment& e = job_.experiment;
    e.suite = "fio";
    names();
    direction();
    engine();
    block_size();
    file_size();
    depth();
    cache();
    flushes();
    threads();
    repetitions();
    paths();
    reporting();
    e.experiment = job_.name + " · " + std::string(to_string(e.op)) + " " + std::string(to_string(e.pattern)) + " " +
                   size_label(e.block_size) + " " +
                   (e.cache == CacheState::Direct ? "direct" : e.op == Op::Read ? std::string(to_string(e.cache)) : "buffered");
    if (e.sync.flushes()) e.experiment += " sync " + to_string(e.sync);
    if (job_.threads > 1) e.experiment += " x" + std::to_string(job_.threads);
    job_.notes.push_back(traits_.needs_alignment
                             ? "buffers: page-aligned, as fio's for O_DIRECT"
                             : "buffers: iolab's heap buffer starts 64 bytes past a page boundary; fio's starts where "
                               "malloc put it (page-aligned only for O_DIRECT or mem_align)");
    if (e.op == Op::Write && job_.threads == 1)
      job_.notes.push_back(
          "writes: iolab writes a fresh file every pass, its blocks allocated as it writes; fio writes into the file "
          "it created (preallocated by its default fallocate=native) and overwrites it in later loops");
    job_.notes.push_back("latency: iolab's percentiles come from a separate pass timing every call, never from the "
                         "throughput passes; fio times every I/O of its run");
    for (const Setting* s : options_.in_effect()) {
      auto it = mapped_.find(s);
      job_.options.push_back({s->option.text, s->option.place, it == mapped_.end() ? "no effect here" : it->second});
    }
    for (auto& d : defaults_) job_.options.push_back(std::move(d));
    return job_;
  }

 private:
  const Setting* get(std::string_view key) const { return options_.get(key); }
  void say(const Setting* s, std::string text) {
    if (s) mapped_[s] = std::move(text);
  }
  // A default of fio's that decides something, listed with the options.
  void say_default(std::string option, std::string text) {
    defaults_.push_back({std::move(option), FioPlace{"fio's default", 0}, std::move(text)});
  }
  [[noreturn]] void refuse(const Setting* s, const std::string& why) const {
    if (s) fail(s->option.place, "'" + shown(s->option) + "': " + why);
    fail(section_.place, "job [" + printable(section_.name) + "]: " + why);
  }
  bool on(std::string_view key) const {
    const Setting* s = get(key);
    return s && s->value.number != 0;
  }
  std::uint64_t number(std::string_view key, std::uint64_t fallback) const {
    const Setting* s = get(key);
    return s ? s->value.number : fallback;
  }

  void names() {
    if (const Setting* s = get("name")) {
      job_.name = s->value.text;
      say(s, "the job's name in the results (section [" + section_.name + "])");
    }
    if (const Setting* s = get("description")) {
      job_.description = s->value.text;
      say(s, "recorded with the job");
    }
  }

  void direction() {
    FileExperiment& e = job_.experiment;
    const Setting* s = get("rw");
    const std::string rw = s ? s->value.text : "read";
    if (rw == "rw" || rw == "readwrite" || rw == "randrw")
      refuse(s, "mixed reads and writes: iolab measures reads or writes, not a mix (not yet)");
    if (rw.find("trim") != std::string::npos) refuse(s, "trim: iolab does not measure trims");
    e.op = rw.find("read") != std::string::npos ? Op::Read : Op::Write;
    e.pattern = rw.starts_with("rand") ? AccessPattern::Rand : AccessPattern::Seq;
    if (s && !s->value.postfix.empty()) {
      const bool none = e.pattern == AccessPattern::Rand ? s->value.postfix == "1" : s->value.postfix == "0";
      if (!none)
        refuse(s, e.pattern == AccessPattern::Rand
                      ? "':" + printable(s->value.postfix) + "': fio issues that many I/Os per random offset; iolab one"
                      : "':" + printable(s->value.postfix) + "': fio skips that much between blocks (or goes backwards); "
                        "iolab reads consecutive blocks");
    }
    std::string text = std::string(to_string(e.op)) + ", " +
                       (e.pattern == AccessPattern::Rand
                            ? "random: every block of the file once, in a fixed-seed order (fio's random map, "
                              "norandommap unset, also touches each block once)"
                            : "sequential");
    if (s) say(s, text);
    else say_default("rw=read", text);
  }

  void engine() {
    FileExperiment& e = job_.experiment;
    const Setting* s = get("ioengine");
    const std::string name = s ? s->value.text : "psync";
    const Setting* d = get("direct");
    direct_ = d && (d->spec->name == "buffered" ? d->value.number == 0 : d->value.number != 0);
    const EngineMapping* engine = nullptr;
    for (const auto& candidate : kJobEngines)
      if (candidate.fio == name) engine = &candidate;
    if (!engine) {
      if (name == "posixaio") refuse(s, "iolab has no POSIX AIO (aio_read/aio_write) method");
      refuse(s, "ioengine=" + printable(name) +
                    ": not a file engine iolab has a method for (iolab maps psync, sync, pvsync, pvsync2, mmap, "
                    "libaio, io_uring)");
    }
    const std::string_view method = direct_ ? engine->direct : engine->buffered;
    if (method.empty()) {
      const std::string why(direct_ ? engine->why_not_direct : engine->why_not_buffered);
      refuse(s ? s : d, "ioengine=" + name + " with " + (direct_ ? "direct=1" : "buffered I/O (direct=0)") + ": " + why);
    }
    e.method = std::string(method);
    const io::Method& m = io::find_file_method(e.method);
    io::FileOptions& opts = e.options;
    if (m.traits(opts).direct_optional) opts.direct = direct_;
    traits_ = m.traits(opts);
    const std::string text = "iolab's " + e.method + " method: " + std::string(engine->how);
    if (s) say(s, text);
    else say_default("ioengine=psync", text);
    if (d)
      say(d, direct_ ? "O_DIRECT: iolab opens the file O_DIRECT, buffers page-aligned (as fio's for O_DIRECT)"
                     : "buffered I/O through the page cache");
  }

  void block_size() {
    FileExperiment& e = job_.experiment;
    const Dir dir = e.op == Op::Read ? kRead : kWrite;
    const char* which = dir == kRead ? "read" : "write";
    const Setting* range = get("bsrange");
    const Setting* bs = get("bs");
    std::uint64_t block = 4096;
    if (bs && bs->value.per_dir[dir]) block = *bs->value.per_dir[dir];
    if (range && range->value.ranges[dir]) {
      const auto [low, high] = *range->value.ranges[dir];
      if (low != high)
        refuse(range, "a range of block sizes (" + size_label(low) + " to " + size_label(high) +
                          "): iolab moves one block size per experiment; give one size (bs=)");
      block = low;
      say(range, fmt::format("{} blocks of {} (a range of one size)", which, format_bytes(static_cast<double>(low))));
      if (bs) say(bs, "replaced by bsrange (fio: bsrange wins)");
    } else if (bs) {
      std::string text = fmt::format("{} blocks of {}", which, format_bytes(static_cast<double>(block)));
      const bool list = bs->value.per_dir[kRead] != bs->value.per_dir[kWrite];
      if (list) text += " (fio reads '" + printable(*bs->option.value) + "' as read,write[,trim] sizes, not a range)";
      say(bs, text);
    } else {
      say_default("bs=4k", fmt::format("{} blocks of 4 KiB", which));
    }
    e.block_size = block;
    // One iovec per call, as fio's pvsync engines pass (methods without iovecs ignore it).
    e.options.iov_segment = static_cast<std::size_t>(block);
  }

  void file_size() {
    FileExperiment& e = job_.experiment;
    const Setting* s = get("size");
    if (!s)
      refuse(nullptr, "no size=: fio would use the size of the existing file, and iolab creates its own files; give "
                      "size= (or --fio-set size=64m)");
    if (s->value.number == 0) refuse(s, "size 0: the file must hold at least one byte");
    e.file_size = s->value.number;
    say(s, fmt::format("a file of {} per {} (fio: the bytes each job moves; iolab: its file, {} per pass)",
                       format_bytes(static_cast<double>(e.file_size)), "worker",
                       e.op == Op::Read ? "read whole" : "written whole"));
  }

  void depth() {
    io::FileOptions& opts = job_.experiment.options;
    const Setting* qd = get("iodepth");
    const Setting* batch = get("iodepth_batch");
    const Setting* cmin = get("iodepth_batch_complete_min");
    const Setting* cmax = get("iodepth_batch_complete_max");
    const std::uint64_t depth = number("iodepth", 1);
    if (depth == 0 || depth > 4096) refuse(qd, "iodepth from 1 to 4096");
    if (!traits_.queued) {
      opts.queue_depth = 1;
      const std::string why = "no effect: a synchronous engine has one I/O in flight (fio caps the depth at 1 too)";
      say(qd, depth > 1 ? why : "1: one I/O in flight");
      say(batch, why);
      say(cmin, why);
      say(cmax, why);
      return;
    }
    opts.queue_depth = static_cast<unsigned>(depth);
    // fio submits `iodepth_batch` I/Os per call (default 1: each as it is
    // queued; 0 or more than the depth: the depth).
    std::uint64_t submit = number("iodepth_batch", 1);
    if (submit == 0 || submit > depth) submit = depth;
    opts.submit_batch = static_cast<unsigned>(submit);
    say(qd, fmt::format("queue depth {}: {} requests kept in flight", depth, depth));
    const std::string submitted = fmt::format("at most {} request{} per submission call, as fio", submit, submit == 1 ? "" : "s");
    if (batch) say(batch, submitted);
    else say_default("iodepth_batch=1", submitted + " (each as it is queued)");
    if (number("iodepth_batch_complete_min", 1) != 1)
      refuse(cmin, "iolab's queue waits for one completion when it must wait, then reaps up to its submission "
                   "batch of those ready; it cannot wait for more, or poll without waiting");
    say(cmin, "1: wait for at least one completion, as iolab's queue");
    const std::uint64_t reap = std::max<std::uint64_t>(1, number("iodepth_batch_complete_max", 1));
    // iolab's queue reaps at most its submission batch per call.
    const std::uint64_t fio_reap = std::min(reap, depth);
    const std::string reaped =
        fio_reap == submit
            ? fmt::format("reap up to {} completion{} per call, as iolab's queue", fio_reap, fio_reap == 1 ? "" : "s")
            : fmt::format("fio reaps at most {} completion{} per call; iolab's queue reaps up to its submission batch "
                          "({}), {} calls than fio's",
                          fio_reap, fio_reap == 1 ? "" : "s", submit, submit > fio_reap ? "fewer" : "more");
    if (cmax) say(cmax, reaped);
    else say_default("iodepth_batch_complete_max=1", reaped);
  }

  void cache() {
    FileExperiment& e = job_.experiment;
    const Setting* inv = get("invalidate");
    const Setting* pre = get("pre_read");
    if (traits_.bypasses_page_cache) {
      e.cache = CacheState::Direct;
      say(inv, "no effect: O_DIRECT bypasses the page cache");
      say(pre, "no effect: O_DIRECT bypasses the page cache");
      return;
    }
    if (e.op == Op::Write) {
      e.cache = CacheState::Warm;  // not used by writes: each pass writes a fresh file
      const std::string why = "no effect: iolab writes a fresh file every pass, nothing of it cached before";
      say(inv, why);
      say(pre, why);
      return;
    }
    if (on("pre_read")) {
      e.cache = CacheState::Warm;
      say(pre, "warm: iolab reads the file once and proves it resident (mincore) before every pass");
      say(inv, "no effect with pre_read (fio ignores it too)");
    } else if (inv && inv->value.number == 0) {
      e.cache = CacheState::Warm;
      say(inv, "warm: fio leaves the file's pages as they are (a file it just laid out is cached); iolab reads it "
               "once and proves it resident before every pass");
      say(pre, "0: no pre-read");
    } else {
      e.cache = CacheState::Cold;
      const std::string text =
          "cold: iolab evicts the file (fdatasync + fadvise DONTNEED) and proves it evicted before every pass; fio "
          "drops it once, when it opens the file, so its later loops (time_based, loops) read what stayed cached";
      if (inv) say(inv, text);
      else say_default("invalidate=1", text);
      say(pre, "0: no pre-read");
    }
  }

  void flushes() {
    FileExperiment& e = job_.experiment;
    const Setting* fs = get("fsync");
    const Setting* fds = get("fdatasync");
    const Setting* end = get("end_fsync");
    const Setting* close = get("fsync_on_close");
    if (e.op == Op::Read) {
      for (const Setting* s : {fs, fds, end, close}) say(s, "no effect on reads (fio syncs only after writes)");
      return;
    }
    const std::uint64_t every_fsync = number("fsync", 0), every_fdatasync = number("fdatasync", 0);
    const bool at_end = on("end_fsync") || on("fsync_on_close");
    if (every_fsync && every_fdatasync)
      refuse(fds, "both fsync= and fdatasync=: iolab has one flush policy per experiment");
    if ((every_fsync || every_fdatasync) && at_end)
      refuse(on("end_fsync") ? end : close, "a flush every N writes and one at the end: iolab has one flush policy "
                                            "per experiment");
    // fio's mmap engine syncs with msync(MS_SYNC), as iolab's mmap does (its own data sync).
    const bool own_sync = traits_.maps_file;
    SyncPolicy& p = e.sync;
    const std::uint64_t every = every_fsync ? every_fsync : every_fdatasync;
    const Setting* periodic = every_fsync ? fs : fds;
    const io::Durability call = every_fdatasync ? io::Durability::Fdatasync : io::Durability::Fsync;
    const std::string call_name = own_sync ? "msync(MS_SYNC)" : std::string(io::to_string(call));
    if (every) {
      p.call = own_sync ? io::Durability::None : call;
      if (every == 1) {
        p.schedule = FlushSchedule::EveryWrite;
        say(periodic, "an " + call_name + " after every write (iolab's sync policy " + to_string(p) + ")");
      } else {
        p.schedule = FlushSchedule::EveryBytes;
        p.interval = checked_multiply(every, e.block_size, periodic->option);
        say(periodic, fmt::format("an {} after every {} writes ({} written; iolab's sync policy {})", call_name, every,
                                  format_bytes(static_cast<double>(p.interval)), to_string(p)));
      }
    } else if (at_end) {
      p.schedule = FlushSchedule::End;
      p.call = own_sync ? io::Durability::None : io::Durability::Fsync;
      const std::string text = "one " + (own_sync ? std::string("msync(MS_SYNC)") : std::string("fsync")) +
                               " after the last write of each pass, timed (iolab's sync policy " + to_string(p) + ")";
      if (on("end_fsync")) say(end, text);
      else say(end, "0: no flush of its own");
      if (on("fsync_on_close")) say(close, on("end_fsync") ? "the same flush (iolab closes the file once per pass)" : text);
      else say(close, "0: no flush of its own");
    } else {
      say(fs, "0: no flush");
      say(fds, "0: no flush");
      say(end, "0: no flush");
      say(close, "0: no flush");
      if (!traits_.bypasses_page_cache)
        say_default("fsync=0", "no flush: the written data ends in the page cache, as fio's");
    }
  }

  void threads() {
    const Setting* s = get("numjobs");
    const std::uint64_t n = number("numjobs", 1);
    if (n == 0 || n > 1024) refuse(s, "numjobs from 1 to 1024");
    job_.threads = static_cast<unsigned>(n);
    if (n == 1) {
      say(s, "1: one worker");
      return;
    }
    FileExperiment& e = job_.experiment;
    if (get("filename"))
      refuse(s, fmt::format("numjobs={} with one filename: fio's jobs then share the file, each doing all of its I/O; "
                            "iolab's threads each own a file (leave out filename= to give each job its own, as fio "
                            "does then)",
                            n));
    if (e.cache == CacheState::Cold)
      refuse(s, fmt::format("numjobs={} with a cold cache (invalidate=1, fio's default): iolab's threads read warm or "
                            "O_DIRECT files only; add invalidate=0 (warm) or direct=1",
                            n));
    if (e.sync.schedule != FlushSchedule::None && e.sync.schedule != FlushSchedule::End)
      refuse(s, fmt::format("numjobs={} with a flush every N writes: iolab's threads flush only at the end", n));
    if (e.pattern == AccessPattern::Rand && e.op == Op::Write && traits_.maps_file)
      refuse(s, "random writes through a shared mapping on several threads are not an iolab workload");
    std::string text = fmt::format(
        "{} threads (workers released together by a barrier), each with a file of its own of {}, as fio's {} clones "
        "each with its own file; one record for all, first done and last done",
        n, format_bytes(static_cast<double>(e.file_size)), n);
    if (e.sync.schedule == FlushSchedule::End)
      text += "; each worker's flush at the end is the method's data sync (fdatasync, msync), where fio calls fsync";
    if (e.op == Op::Write) text += "; each pass writes fresh files, preallocated (untimed) as fio's fallocate does";
    say(s, text);
  }

  void repetitions() {
    const Setting* rt = get("runtime");
    const Setting* tb = get("time_based");
    const Setting* lp = get("loops");
    const std::uint64_t runtime_us = number("runtime", 0);
    const bool time_based = on("time_based");
    const std::uint64_t loops = number("loops", 1);
    if (loops == 0 || loops > 100000) refuse(lp, "loops from 1 to 100000");
    if (runtime_us > 86400ull * 1000000) refuse(rt, "at most a day");
    if (time_based && runtime_us == 0) refuse(tb, "time_based without a runtime: fio would run until stopped");
    if (time_based) {
      // The repetitions share the time: each at least runtime / repetitions
      // (the command knows how many), all within the runtime.
      job_.time_based_s = static_cast<double>(runtime_us) / 1e6;
      say(tb, "timed repetitions that together last the runtime (each at least runtime / repetitions); fio loops "
              "over the file until the time is up and stops mid-file, iolab repeats whole passes");
      say(rt, "the time the timed repetitions take in all: " + seconds_text(runtime_us));
      say(lp, "no effect with time_based (fio's time decides)");
      return;
    }
    say(tb, "0: the job ends when its I/O is done");
    if (loops > 1) {
      job_.reps = static_cast<unsigned>(loops);
      job_.min_time = 0.0;
      say(lp, fmt::format("{} timed repetitions of one pass each (fio's {} loops; fio reports them as one figure, "
                          "iolab each as a repetition, with their spread)",
                          loops, loops));
    } else {
      say(lp, "1: iolab's repetitions (several passes, for a spread)");
    }
    if (runtime_us) {
      job_.max_time = static_cast<double>(runtime_us) / 1e6;
      say(rt, "caps the time the timed repetitions may take when lengthened at " + seconds_text(runtime_us) +
                  " (iolab never cuts a pass short; fio stops when the time is up)");
    }
  }

  void paths() {
    const Setting* dir = get("directory");
    const Setting* name = get("filename");
    const std::filesystem::path cwd = context_.cwd.empty() ? std::filesystem::current_path() : context_.cwd;
    auto absolute = [&](const std::filesystem::path& p) { return p.is_absolute() ? p : cwd / p; };
    std::filesystem::path parent = cwd;
    if (dir) {
      if (dir->value.text.find(':') != std::string::npos)
        refuse(dir, "several directories: iolab measures one filesystem per run");
      parent = absolute(dir->value.text);
    }
    if (name) {
      const std::string& f = name->value.text;
      if (f == "-") refuse(name, "stdin/stdout: iolab reads and writes files it creates");
      for (std::size_t i = 0; i < f.size(); ++i)
        if (f[i] == ':' && (i == 0 || f[i - 1] != '\\'))
          refuse(name, "several files: iolab's experiment has one file (per worker)");
      std::string unescaped;
      for (std::size_t i = 0; i < f.size(); ++i)
        if (!(f[i] == '\\' && i + 1 < f.size() && f[i + 1] == ':')) unescaped += f[i];
      // fio puts directory= in front of the filename, whatever it is.
      const std::filesystem::path full = dir ? parent / unescaped : absolute(unescaped);
      struct stat st {};
      const bool exists = ::lstat(full.c_str(), &st) == 0;
      if (full.lexically_normal().parent_path() == "/dev" || (exists && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))))
        refuse(name, "names a device (" + printable(full.string()) + "): iolab writes only files it creates in its "
                     "own scratch directory");
      if (exists)
        refuse(name, "names an existing " + std::string(S_ISDIR(st.st_mode) ? "directory" : "file") + " (" +
                         printable(full.string()) + "): iolab never touches files it did not create; name one that "
                         "does not exist, or use directory=");
      parent = full.parent_path();
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec))
      refuse(name ? name : dir, "the directory " + printable(parent.string()) + " does not exist (fio would not create "
                                "it either)");
    job_.scratch_parent = parent;
    const std::string where = "iolab's scratch directory (a fresh iolab-XXXXXX, removed afterwards) goes in " +
                              parent.string() + "; iolab writes only files it creates there";
    if (name) say(name, where + " (no file of this name is created)");
    if (dir) say(dir, name ? "where the filename is" : where);
    if (!name && !dir) say_default("directory=.", where + " (fio writes in the working directory)");
  }

  void reporting() {
    if (const Setting* kb = get("kb_base"))
      say(kb, kb->value.number == 1024 ? "k, m, g... are powers of 1024 and kib, mib... of 1000 (fio's default rule)"
                                       : "k, m, g... are powers of 1000 and kib, mib... of 1024");
    const Setting* th = get("thread");
    const Setting* gr = get("group_reporting");
    const Setting* sw = get("stonewall");
    say(th, "no effect: iolab's workers are always threads of one process");
    say(gr, "no effect: iolab reports a job's workers as one record (first done and last done)");
    job_.stonewall = on("stonewall");
    say(sw, "iolab runs every job alone, one after another, stonewall or not");
  }

  const FioSection& section_;
  const JobOptions& options_;
  const MapContext& context_;
  FioMappedJob job_;
  bool direct_ = false;
  io::MethodTraits traits_;
  std::map<const Setting*, std::string> mapped_;
  std::vector<FioMappedOption> defaults_;
};

}  // namespace
}  // namespace fio_detail

std::vector<FioMappedJob> map_fio_jobs(const FioJobFile& file, const FioMapSettings& settings) {
  using namespace fio_detail;
  const MapContext context{settings.cwd};
  std::vector<FioOption> overrides;
  for (const auto& text : settings.overrides) {
    FioOption o = override_option(text);
    setting(o, 1024, false);  // an unknown option or a bad value fails before any job is looked at
    overrides.push_back(std::move(o));
  }
  unsigned override_kb = 0;
  for (const auto& o : overrides)
    if (find_spec(o.key)->kind == Kind::KbBase) override_kb = static_cast<unsigned>(parse_value(*find_spec(o.key), o, 1024).number);

  JobOptions globals;
  std::vector<FioMappedOption> global_ignored;
  unsigned global_kb = 1024;
  std::vector<FioMappedJob> jobs;
  for (const FioSection& section : file.sections) {
    const unsigned kb = override_kb ? override_kb : own_kb_base(section).value_or(global_kb);
    JobOptions options = section.global ? JobOptions() : globals;
    std::vector<FioMappedOption> ignored = global_ignored;
    std::vector<Setting> own;
    for (const auto& o : section.options) {
      if (auto s = setting(o, kb, settings.lenient)) own.push_back(std::move(*s));
      else ignored.push_back({o.text, o.place, "ignored (--fio-lenient): iolab does not map this option"});
    }
    if (section.global) {
      for (auto& s : own) globals.add(std::move(s));
      global_ignored = std::move(ignored);
      global_kb = kb;
      continue;
    }
    for (auto& s : own) options.add(std::move(s));
    for (const auto& o : overrides) options.add(*setting(o, kb, false));
    jobs.push_back(JobMapper(section, options, std::move(ignored), context).map());
  }
  if (jobs.empty()) fail({file.path, 0}, "no job: only [global] sections (fio: \"No job(s) defined\")");
  // fio starts the jobs between two stonewalls together; iolab runs each alone.
  for (std::size_t first = 0; first < jobs.size();) {
    std::size_t end = first + 1;
    while (end < jobs.size() && !jobs[end].stonewall) ++end;
    if (end - first > 1)
      for (std::size_t i = first; i < end; ++i) {
        std::vector<std::string> others;
        for (std::size_t k = first; k < end; ++k)
          if (k != i) others.push_back("[" + jobs[k].section + "]");
        jobs[i].notes.push_back(fmt::format(
            "fio runs this job at the same time as {} (no stonewall between them), their I/O competing; iolab runs "
            "each job alone, one after another",
            fmt::join(others, ", ")));
      }
    first = end;
  }
  return jobs;
}

nlohmann::json to_json(const FioMappedJob& job, const std::string& job_file) {
  auto list = [](const std::vector<FioMappedOption>& options) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& o : options) a.push_back({{"option", o.option}, {"at", to_string(o.place)}, {"mapped", o.mapping}});
    return a;
  };
  nlohmann::json j{{"job_file", job_file},
                   {"section", job.section},
                   {"name", job.name},
                   {"description", job.description},
                   {"at", to_string(job.place)},
                   {"threads", job.threads},
                   {"scratch_parent", job.scratch_parent.string()},
                   {"stonewall", job.stonewall},
                   {"options", list(job.options)},
                   {"ignored", list(job.ignored)},
                   {"notes", job.notes}};
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j["reps"] = optional(job.reps);
  j["min_time_s"] = optional(job.min_time);
  j["max_time_s"] = optional(job.max_time);
  j["time_based_s"] = optional(job.time_based_s);
  return j;
}

}  // namespace iolab::harness
