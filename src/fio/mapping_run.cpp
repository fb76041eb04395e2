// How a fio job runs, as iolab runs it (job_mapper.h): its names, workers,
// repetitions and times, paths, and what only changes fio's reports.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include <limits>

#include <fmt/format.h>

#include "iolab/base/error.h"
#include "iolab/base/units.h"
#include "iolab/io/registry.h"
#include "job_mapper.h"

namespace iolab::fio::detail {

void JobMapper::names() {
  if (const Setting* s = get("name")) {
    job_.name = s->value.text;
    say(s, "the job's name in the results (section [" + section_.name + "])");
  }
  if (const Setting* s = get("description")) {
    job_.description = s->value.text;
    say(s, "recorded with the job");
  }
}

void JobMapper::threads() {
  const Setting* s = get("numjobs");
  const std::uint64_t n = number("numjobs", 1);
  if (n == 0 || n > 1024) refuse(s, "numjobs from 1 to 1024");
  job_.threads = static_cast<unsigned>(n);
  if (n == 1) {
    say(s, "1: one worker");
    return;
  }
  harness::FileExperiment& e = job_.experiment;
  // Each worker's file is counted together (free space, memory): refused while mapping, before anything is printed.
  constexpr auto kMaxOffset = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (e.file_size > kMaxOffset / n)
    refuse(s, fmt::format("numjobs={} x size={}: the workers' files together overflow a file offset", n,
                          size_label(e.file_size)));
  if (get("filename"))
    refuse(s, fmt::format("numjobs={} with one filename: fio's jobs then share the file, each doing all of its I/O; "
                          "iolab's threads each own a file (leave out filename= to give each job its own, as fio "
                          "does then)",
                          n));
  if (e.cache == results::CacheState::Cold)
    refuse(s, fmt::format("numjobs={} with a cold cache (invalidate=1, fio's default): iolab's threads read warm or "
                          "O_DIRECT files only; add invalidate=0 (warm) or direct=1",
                          n));
  if (e.sync.schedule != io::FlushSchedule::None && e.sync.schedule != io::FlushSchedule::End)
    refuse(s, fmt::format("numjobs={} with a flush every N writes: iolab's threads flush only at the end", n));
  if (e.pattern == results::AccessPattern::Rand && e.op == results::Op::Write && traits_.maps_file)
    refuse(s, "random writes through a shared mapping on several threads are not an iolab workload");
  std::string text = fmt::format(
      "{} threads (workers released together by a barrier), each with a file of its own of {}, as fio's {} clones "
      "each with its own file; one record for all, first done and last done",
      n, format_bytes(static_cast<double>(e.file_size)), n);
  if (e.sync.schedule == io::FlushSchedule::End)
    text += "; each worker's flush at the end is the method's data sync (fdatasync, msync), where fio calls fsync";
  if (e.op == results::Op::Write) text += "; each pass writes fresh files, preallocated (untimed) as fio's fallocate does";
  say(s, text);
}

void JobMapper::repetitions() {
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

void JobMapper::paths() {
  const Setting* dir = get("directory");
  const Setting* name = get("filename");
  const std::filesystem::path cwd = context_.cwd.empty() ? std::filesystem::current_path() : context_.cwd;
  auto absolute = [&](const std::filesystem::path& p) { return p.is_absolute() ? p : cwd / p; };
  // fio separates several names with ':', and takes a backslash before one for a ':' within a name.
  auto one_path = [&](const Setting* s, const std::string& several) {
    const std::string& f = s->value.text;
    for (std::size_t i = 0; i < f.size(); ++i)
      if (f[i] == ':' && (i == 0 || f[i - 1] != '\\')) refuse(s, several);
    std::string unescaped;
    for (std::size_t i = 0; i < f.size(); ++i)
      if (!(f[i] == '\\' && i + 1 < f.size() && f[i + 1] == ':')) unescaped += f[i];
    return unescaped;
  };
  std::filesystem::path parent = cwd;
  if (dir) parent = absolute(one_path(dir, "several directories: iolab measures one filesystem per run"));
  if (name) {
    if (name->value.text == "-") refuse(name, "stdin/stdout: iolab reads and writes files it creates");
    const std::string unescaped = one_path(name, "several files: iolab's experiment has one file (per worker)");
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
  struct stat ps {};
  if (::stat(parent.c_str(), &ps) != 0)
    refuse(name ? name : dir, "the directory " + printable(parent.string()) + " does not exist (fio would not create "
                              "it either)");
  if (!S_ISDIR(ps.st_mode))
    refuse(name ? name : dir, printable(parent.string()) + " is not a directory");
  job_.scratch_parent = parent;
  const std::string where = "iolab's scratch directory (a fresh iolab-XXXXXX, removed afterwards) goes in " +
                            parent.string() + "; iolab writes only files it creates there";
  if (name) say(name, where + " (no file of this name is created)");
  if (dir) say(dir, name ? "where the filename is" : where);
  if (!name && !dir) say_default("directory=.", where + " (fio writes in the working directory)");
}

void JobMapper::reporting() {
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

}  // namespace iolab::fio::detail
