#include "iolab/fio/runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "iolab/base/error.h"
#include "iolab/harness/runner.h"
#include "iolab/io/registry.h"
#include "iolab/io/scratch.h"
#include "iolab/base/units.h"

extern char** environ;

namespace iolab::fio {

namespace {

// Which fio engine makes the same calls as an iolab method. A name-to-name
// table, because fio's engines are known by name; everything else (O_DIRECT,
// queue depth, buffers) is decided from the method's traits.
struct FioIoengine {
  std::string_view method, engine, note;
  bool sets_ring_flags = false;  // SINGLE_ISSUER, DEFER_TASKRUN and COOP_TASKRUN, whatever the job says
};
constexpr std::array<FioIoengine, 7> kIoengines{{
    {"pread", "psync", "fio calls pread(2) at explicit offsets, as iolab's pread"},
    {"direct", "psync", "fio calls pread(2) on an O_DIRECT descriptor, as iolab's direct"},
    {"vectored", "pvsync2", "fio calls preadv2(2) with one iovec per call; iolab's vectored calls preadv(2) with one iovec per segment"},
    {"syscall", "sync", "fio calls read(2), with lseek(2) only when the position moves, as iolab's syscall"},
    {"mmap", "mmap", "fio maps the whole file each time it opens it (every loop) and copies each block out with memcpy"},
    {"io_uring", "io_uring",
     "fio 3.33 sets COOP_TASKRUN, SINGLE_ISSUER and DEFER_TASKRUN on its ring, iolab's (the suites' default) "
     "none: they raised neither IOPS nor IOPS per CPU second here (docs/performance.md); fio submits in one "
     "io_uring_enter and reaps in another",
     true},
    {"libaio", "libaio", "fio submits a batch with io_submit and reaps with io_getevents"},
}};

std::string quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t\n\"'$`\\!*?;&|<>()[]{}~#") == std::string::npos) return arg;
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last non-empty line of a program's output: where fio says what went wrong.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

const nlohmann::json& field(const nlohmann::json& j, const char* key, const std::string& where, const std::string& source) {
  if (!j.is_object() || !j.contains(key))
    throw Error("parse fio output", source, "no field " + where + key + " (is this fio's --output-format=json?)");
  return j.at(key);
}

double number(const nlohmann::json& j, const char* key, const std::string& where, const std::string& source) {
  const auto& v = field(j, key, where, source);
  if (!v.is_number()) throw Error("parse fio output", source, "field " + where + key + " is not a number");
  return v.get<double>();
}

std::uint64_t count(const nlohmann::json& j, const char* key, const std::string& where, const std::string& source) {
  double v = number(j, key, where, source);
  if (v < 0) throw Error("parse fio output", source, "field " + where + key + " is negative");
  return static_cast<std::uint64_t>(v);
}

// iolab's queue submits up to its batch in one call and reaps up to as
// many of the completions that are there; fio reaps one per call unless its
// maximum is raised (iodepth_batch_complete_max defaults to the minimum, 1).
void append_batch(std::vector<std::string>& a, const FioJob& job) {
  if (job.submit_batch <= 1) return;
  a.push_back("--iodepth_batch_submit=" + std::to_string(job.submit_batch));
  a.push_back("--iodepth_batch_complete_max=" + std::to_string(job.submit_batch));
}

FioMapping refuse(std::string why) { return {std::nullopt, std::move(why), "", {}}; }

}  // namespace

FioMapping fio_job_for(const harness::FileExperiment& e) {
  if (e.op != results::Op::Read)
    return refuse(
        "only reads are cross-checked: iolab writes a fresh file every pass (block allocation included), fio "
        "overwrites a file it laid out");
  const FioIoengine* engine = nullptr;
  for (const auto& candidate : kIoengines)
    if (candidate.method == e.method) engine = &candidate;
  if (engine == nullptr) return refuse("fio has no engine that reads as iolab's " + e.method + " method does");
  const io::Method& method = e.method_object ? *e.method_object : io::find_file_method(e.method);

  const io::FileOptions opts = harness::experiment_options(method, e);
  const io::MethodTraits traits = method.traits(opts);
  if (!traits.bypasses_page_cache && e.cache == results::CacheState::Direct)
    return refuse("cache 'direct' needs O_DIRECT; " + e.method + " always goes through the page cache");
  if (!traits.bypasses_page_cache && e.cache == results::CacheState::Cold)
    return refuse(
        "fio drops a file's cached pages only when it first opens it (invalidate=1), so from its second loop on "
        "it reads a warm file; iolab makes the file cold before every pass");

  FioJob job;
  job.engine = std::string(engine->engine);
  job.pattern = e.pattern;
  job.block_size = e.block_size;
  job.file_size = e.ops != 0 ? e.ops * e.block_size : e.file_size;
  job.direct = traits.bypasses_page_cache;
  job.iodepth = traits.queued ? std::max(1u, opts.queue_depth) : 1;
  // iolab's queue hands every freed slot over in one call (submit_batch 0:
  // page-cache reads) or at most submit_batch at a time, reaping as many
  // (O_DIRECT's default 1: fio's default loop, a call per request).
  job.submit_batch = traits.queued ? (opts.submit_batch != 0 ? opts.submit_batch : job.iodepth) : 0;
  job.aligned_buffers = e.buffer.value_or(traits.needs_alignment ? io::BufferKind::Aligned : io::BufferKind::Heap) ==
                        io::BufferKind::Aligned;
  if (traits.maps_file) {
    switch (opts.mmap_advice) {
      case io::Advice::Normal: job.fadvise_hint = "0"; break;
      case io::Advice::Sequential: job.fadvise_hint = "sequential"; break;
      case io::Advice::Random: job.fadvise_hint = "random"; break;
      case io::Advice::WillNeed:
        return refuse("fio's mmap engine has no MADV_WILLNEED hint (fadvise_hint: sequential or random)");
    }
  }
  if (traits.queued) {
    job.register_files = opts.uring.registered_files;
    job.fixed_buffers = opts.uring.fixed_buffers;
    job.sqpoll = opts.uring.sqpoll;
  }
  if (job.file_size == 0) return refuse("an empty file: nothing to read");
  FioMapping mapping{job, "", std::string(engine->note), {}};
  mapping.ring_flags_fio_sets.single_issuer = engine->sets_ring_flags;
  mapping.ring_flags_fio_sets.coop_taskrun = engine->sets_ring_flags;
  return mapping;
}

std::vector<std::string> fio_arguments(const FioJob& job, const std::filesystem::path& file) {
  std::vector<std::string> a{
      "--name=iolab-crosscheck",
      "--filename=" + file.string(),
      "--size=" + size_label(job.file_size),
      std::string("--rw=") + (job.pattern == results::AccessPattern::Rand ? "randread" : "read"),
      "--bs=" + size_label(job.block_size),
      "--ioengine=" + job.engine,
      "--iodepth=" + std::to_string(job.iodepth),
  };
  if (job.direct) a.emplace_back("--direct=1");
  // Keep the cache as iolab made it: fio's default drops the file's pages first.
  a.emplace_back("--invalidate=0");
  if (job.aligned_buffers) a.emplace_back("--iomem_align=4k");
  a.push_back("--fadvise_hint=" + job.fadvise_hint);
  append_batch(a, job);
  if (job.register_files) a.emplace_back("--registerfiles=1");
  if (job.fixed_buffers) a.emplace_back("--fixedbufs=1");
  if (job.sqpoll) a.emplace_back("--sqthread_poll=1");
  if (!job.time_every_io) a.emplace_back("--gtod_reduce=1");
  a.push_back("--loops=" + std::to_string(job.loops));
  a.emplace_back("--output-format=json");
  return a;
}

std::vector<std::string> fio_null_arguments(const FioJob& job, std::uint64_t ios) {
  std::vector<std::string> a{
      "--name=iolab-crosscheck-null",
      "--ioengine=null",
      "--size=" + size_label(std::max<std::uint64_t>(ios, 1) * job.block_size),
      std::string("--rw=") + (job.pattern == results::AccessPattern::Rand ? "randread" : "read"),
      "--bs=" + size_label(job.block_size),
      "--iodepth=" + std::to_string(job.iodepth),
  };
  if (job.aligned_buffers) a.emplace_back("--iomem_align=4k");
  append_batch(a, job);
  if (!job.time_every_io) a.emplace_back("--gtod_reduce=1");
  a.emplace_back("--output-format=json");
  return a;
}

std::string shell_command(const std::filesystem::path& program, const std::vector<std::string>& args) {
  std::string s = quoted(program.string());
  for (const auto& a : args) {
    s += ' ';
    s += quoted(a);
  }
  return s;
}

FioFigures parse_fio_json(std::string_view text, const std::string& source) {
  // fio prints notes ("note: both iodepth >= 1 and synchronous I/O engine...")
  // on stdout before the JSON: start at the first line that opens an object.
  std::size_t start = text.starts_with('{') ? 0 : text.find("\n{");
  if (start == std::string_view::npos) throw Error("parse fio output", source, "no JSON object in it");
  nlohmann::json j = nlohmann::json::parse(text.substr(start), nullptr, false);
  if (j.is_discarded()) throw Error("parse fio output", source, "its JSON does not parse");
  FioFigures f;
  const auto& version = field(j, "fio version", "", source);
  if (!version.is_string()) throw Error("parse fio output", source, "field 'fio version' is not a string");
  f.version = version.get<std::string>();
  const auto& jobs = field(j, "jobs", "", source);
  if (!jobs.is_array() || jobs.empty()) throw Error("parse fio output", source, "field jobs holds no job");
  const auto& job = jobs.front();
  if (number(job, "error", "jobs[0].", source) != 0)
    throw Error("parse fio output", source, "fio's job failed with error " + job.at("error").dump());
  const auto& read = field(job, "read", "jobs[0].", source);
  f.ios = count(read, "total_ios", "jobs[0].read.", source);
  f.bytes = count(read, "io_bytes", "jobs[0].read.", source);
  f.runtime_s = number(read, "runtime", "jobs[0].read.", source) / 1000.0;
  f.job_runtime_s = number(job, "job_runtime", "jobs[0].", source) / 1000.0;
  f.usr_cpu = number(job, "usr_cpu", "jobs[0].", source);
  f.sys_cpu = number(job, "sys_cpu", "jobs[0].", source);
  f.context_switches = count(job, "ctx", "jobs[0].", source);
  f.minor_faults = count(job, "minf", "jobs[0].", source);
  f.major_faults = count(job, "majf", "jobs[0].", source);
  return f;
}

std::optional<std::filesystem::path> find_program(std::string_view name, std::string_view search_path) {
  auto runnable = [](const std::filesystem::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string_view::npos) {
    std::filesystem::path p{std::string(name)};
    return runnable(p) ? std::optional(p) : std::nullopt;
  }
  std::size_t start = 0;
  while (start <= search_path.size()) {
    std::size_t colon = search_path.find(':', start);
    std::string_view dir = search_path.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    if (!dir.empty()) {  // an empty entry means the current directory: not searched, as a safety
      std::filesystem::path p = std::filesystem::path(std::string(dir)) / std::string(name);
      if (runnable(p)) return p;
    }
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return std::nullopt;
}

ProgramOutput run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                          io::ScratchDir& scratch) {
  const std::filesystem::path out = scratch.create_unique_file("stdout"), err = scratch.create_unique_file("stderr");
  struct Cleanup {
    io::ScratchDir& scratch;
    std::filesystem::path out, err;
    ~Cleanup() {
      try {
        scratch.remove_file(out);
        scratch.remove_file(err);
      } catch (...) {  // the scratch directory removes what is left
      }
    }
  } cleanup{scratch, out, err};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW, 0);
  std::vector<std::string> copies{program.string()};
  copies.insert(copies.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw Error("run", program.string(), rc);

  // A signal ending iolab while the child runs (io/scratch.h): the child is
  // killed and waited for before the scratch directory goes, or it would go
  // on writing (and fio re-creating) its files there after iolab ended.
  // Waiting without reaping (WNOWAIT) keeps the pid the child's until this
  // thread reaps it under the lock, so the hook never signals a reused pid.
  struct Child {
    std::mutex mutex;
    bool reaped = false;
  };
  auto child = std::make_shared<Child>();
  io::InterruptHook kill_on_signal([child, pid](int) {
    std::lock_guard lock(child->mutex);
    if (child->reaped) return;
    ::kill(pid, SIGKILL);
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
  });
  siginfo_t info{};
  // Not an I/O retry: waiting for the child is resumed after a signal handler ran.
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0) {
    if (errno != EINTR) throw Error("wait for", program.string(), errno);
  }
  int status = 0;
  {
    std::lock_guard lock(child->mutex);
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw Error("wait for", program.string(), errno);
    }
    child->reaped = true;
  }
  // Killed by the hook above: the cleanup thread is ending iolab; nothing more to do here.
  if (io::interrupting_signal() != 0) io::wait_for_signal_cleanup();
  if (WIFSIGNALED(status))
    throw Error("run", program.string(), std::string("killed by signal ") + ::strsignal(WTERMSIG(status)));
  ProgramOutput r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

FioFigures run_fio(const std::filesystem::path& fio, const std::vector<std::string>& args, io::ScratchDir& scratch) {
  ProgramOutput r = run_program(fio, args, scratch);
  if (r.exit_code != 0) {
    std::string why = last_line(r.err);
    if (why.empty()) why = last_line(r.out);
    throw Error("run", shell_command(fio, args),
                "exit code " + std::to_string(r.exit_code) + (why.empty() ? "" : ": " + why));
  }
  return parse_fio_json(r.out, fio.string() + " output");
}

std::string fio_version(const std::filesystem::path& fio, io::ScratchDir& scratch) {
  ProgramOutput r = run_program(fio, {"--version"}, scratch);
  std::string v = last_line(r.out);
  if (r.exit_code != 0 || v.empty())
    throw Error("run", fio.string() + " --version", "exit code " + std::to_string(r.exit_code) + ", no version printed");
  return v;
}

}  // namespace iolab::fio
