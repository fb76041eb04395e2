// A fio job's I/O as iolab's (job_mapper.h): direction, engine, block size,
// file size, queue depth, cache state and flushes.
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
#include "iolab/base/units.h"
#include "iolab/io/registry.h"
#include "job_mapper.h"

namespace iolab::fio::detail {

void JobMapper::direction() {
  harness::FileExperiment& e = job_.experiment;
  const Setting* s = get("rw");
  const std::string rw = s ? s->value.text : "read";
  if (rw == "rw" || rw == "readwrite" || rw == "randrw")
    refuse(s, "mixed reads and writes: iolab measures reads or writes, not a mix (not yet)");
  if (rw.find("trim") != std::string::npos) refuse(s, "trim: iolab does not measure trims");
  e.op = rw.find("read") != std::string::npos ? results::Op::Read : results::Op::Write;
  e.pattern = rw.starts_with("rand") ? results::AccessPattern::Rand : results::AccessPattern::Seq;
  if (s && !s->value.postfix.empty()) {
    const bool none = e.pattern == results::AccessPattern::Rand ? s->value.postfix == "1" : s->value.postfix == "0";
    if (!none)
      refuse(s, e.pattern == results::AccessPattern::Rand
                    ? "':" + printable(s->value.postfix) + "': fio issues that many I/Os per random offset; iolab one"
                    : "':" + printable(s->value.postfix) + "': fio skips that much between blocks (or goes backwards); "
                      "iolab reads consecutive blocks");
  }
  std::string text = std::string(to_string(e.op)) + ", " +
                     (e.pattern == results::AccessPattern::Rand
                          ? "random: every block of the file once, in a fixed-seed order (fio's random map, "
                            "norandommap unset, also touches each block once)"
                          : "sequential");
  if (s) say(s, text);
  else say_default("rw=read", text);
}

void JobMapper::engine() {
  harness::FileExperiment& e = job_.experiment;
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

void JobMapper::block_size() {
  harness::FileExperiment& e = job_.experiment;
  const Dir dir = e.op == results::Op::Read ? kRead : kWrite;
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

void JobMapper::file_size() {
  harness::FileExperiment& e = job_.experiment;
  const Setting* s = get("size");
  if (!s)
    refuse(nullptr, "no size=: fio would use the size of the existing file, and iolab creates its own files; give "
                    "size= (or --fio-set size=64m)");
  if (s->value.number == 0) refuse(s, "size 0: the file must hold at least one byte");
  e.file_size = s->value.number;
  say(s, fmt::format("a file of {} per {} (fio: the bytes each job moves; iolab: its file, {} per pass)",
                     format_bytes(static_cast<double>(e.file_size)), "worker",
                     e.op == results::Op::Read ? "read whole" : "written whole"));
}

void JobMapper::depth() {
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

void JobMapper::cache() {
  harness::FileExperiment& e = job_.experiment;
  const Setting* inv = get("invalidate");
  const Setting* pre = get("pre_read");
  if (traits_.bypasses_page_cache) {
    e.cache = results::CacheState::Direct;
    say(inv, "no effect: O_DIRECT bypasses the page cache");
    say(pre, "no effect: O_DIRECT bypasses the page cache");
    return;
  }
  if (e.op == results::Op::Write) {
    e.cache = results::CacheState::Warm;  // not used by writes: each pass writes a fresh file
    const std::string why = "no effect: iolab writes a fresh file every pass, nothing of it cached before";
    say(inv, why);
    say(pre, why);
    return;
  }
  if (on("pre_read")) {
    e.cache = results::CacheState::Warm;
    say(pre, "warm: iolab reads the file once and proves it resident (mincore) before every pass");
    say(inv, "no effect with pre_read (fio ignores it too)");
  } else if (inv && inv->value.number == 0) {
    e.cache = results::CacheState::Warm;
    say(inv, "warm: fio leaves the file's pages as they are (a file it just laid out is cached); iolab reads it "
             "once and proves it resident before every pass");
    say(pre, "0: no pre-read");
  } else {
    e.cache = results::CacheState::Cold;
    const std::string text =
        "cold: iolab evicts the file (fdatasync + fadvise DONTNEED) and proves it evicted before every pass; fio "
        "drops it once, when it opens the file, so its later loops (time_based, loops) read what stayed cached";
    if (inv) say(inv, text);
    else say_default("invalidate=1", text);
    say(pre, "0: no pre-read");
  }
}

void JobMapper::flushes() {
  harness::FileExperiment& e = job_.experiment;
  const Setting* fs = get("fsync");
  const Setting* fds = get("fdatasync");
  const Setting* end = get("end_fsync");
  const Setting* close = get("fsync_on_close");
  if (e.op == results::Op::Read) {
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
  io::FlushPolicy& p = e.sync;
  const std::uint64_t every = every_fsync ? every_fsync : every_fdatasync;
  const Setting* periodic = every_fsync ? fs : fds;
  const io::Durability call = every_fdatasync ? io::Durability::Fdatasync : io::Durability::Fsync;
  const std::string call_name = own_sync ? "msync(MS_SYNC)" : std::string(io::to_string(call));
  if (every) {
    p.call = own_sync ? io::Durability::None : call;
    if (every == 1) {
      p.schedule = io::FlushSchedule::EveryWrite;
      say(periodic, "an " + call_name + " after every write (iolab's sync policy " + to_string(p) + ")");
    } else {
      p.schedule = io::FlushSchedule::EveryBytes;
      p.interval = checked_multiply(every, e.block_size, periodic->option);
      say(periodic, fmt::format("an {} after every {} writes ({} written; iolab's sync policy {})", call_name, every,
                                format_bytes(static_cast<double>(p.interval)), to_string(p)));
    }
  } else if (at_end) {
    p.schedule = io::FlushSchedule::End;
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

}  // namespace iolab::fio::detail
