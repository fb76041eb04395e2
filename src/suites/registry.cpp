#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "iolab/base/names.h"
#include "iolab/base/error.h"
#include "iolab/suites/suite.h"

namespace iolab::suites {
namespace {

// Every suite, in the order `iolab suites` lists them and the seeds group
// runs them. (The class that runs each registers itself from its own .cpp.)
constexpr SuiteInfo kCatalogue[] = {
    {.name = "seq-read", .seed = "001",
     .description = "read a whole file with 1 KiB, 1 MiB, 10 MiB buffers: streams, read(2) heap/aligned, mmap, io_uring; warm and cold"},
    {.name = "write-buffering", .seed = "002 #1-#2",
     .description = "128-byte writes buffered (4 KiB) vs unbuffered; 1-4 KiB writes through a 4 KiB buffer (the half-buffer rule)"},
    {.name = "buffer-alloc", .seed = "002 #3",
     .description = "allocate, touch and free 128-byte buffers 100 K..2 M times: new[], posix_memalign(4096), anonymous mmap"},
    {.name = "write-path", .seed = "002 #4-#6",
     .description = "pwrite from heap vs aligned buffers (1 KiB; 4 KiB..64 MiB sweep); mmap vs pwrite vs stdio writes; 1..20 KiB pwrite"},
    {.name = "copy", .seed = "002 #7",
     .description = "copy a warm file: read/write 4 KiB and 1 MiB, sendfile, copy_file_range, splice, mmap+write; with and without fdatasync"},
    {.name = "direct", .seed = "002 #8",
     .description = "O_DIRECT vs buffered pread/pwrite (cold, warm, + fdatasync), 4 KiB..1 MiB; the queue-depth curve of random "
                    "4 KiB O_DIRECT reads: io_uring, libaio and N threads of pread"},
    {.name = "packet-sweep", .seed = "004",
     .description = "read/write packets of 32 B..the whole file via mmap, pread, syscall, stdio, iostream (warm and cold); "
                    "1 KiB writes with no flush, an inline or a background flush every 16 KiB, one at the end"},
    {.name = "store", .seed = "000",
     .description = "employee record store: insert, random get, remove 10%, reinsert 10%, reopen; fields / gather / mmap / "
                    "buffered backends beside LMDB and SQLite, each table at one commit cadence for all",
     .reads_option = "--records"},
    {.name = "parallel", .seed = "003",
     .description = "W threads write and read disjoint regions of one shared file (or a file each) with pread, mmap, "
                    "O_DIRECT, io_uring; int32 arrays moved raw, encoded, per element, bulk; bandwidth vs workers",
     .reads_option = "--threads"},
    {.name = "commitlog", .seed = "004",
     .description = "message-queue commit logs (kafka, rocketmq, rocketmq-transient, qmq, activemq, group-commit): "
                    "message sizes, producers, topics, flush on/off, past the dirty limit, segment rolls, catch-up reads",
     .group = SuiteGroup::ByName},
    {.name = "memory", .seed = "issue 24",
     .description = "larger than memory: random 4 KiB reads (the working set twice, or a time bound) and 256 KiB scans of files "
                    "0.5..4x a memory cgroup's limit, by mmap (+MADV_RANDOM), pread, O_DIRECT, io_uring and libaio at QD 32; "
                    "mmap stores vs pwrite past the limit; with a per-second series",
     .own_repetitions = "one timed pass per record, from a cold file up to 1x the limit and from the group's page cache proven "
                        "full of the file past it, no warm-up and no latency pass (--reps, --warmup, "
                        "--min-time and --max-time do not apply: a pass is seconds long and its per-second series is the time "
                        "course); a random-read pass ends at two reads of the working set or its time bound",
     .group = SuiteGroup::ByName},
};

constexpr NameTable<Scale, 4> kScaleNames{
    {{Scale::Tiny, "tiny"}, {Scale::Quick, "quick"}, {Scale::Default, "default"}, {Scale::Full, "full"}}};

std::vector<std::unique_ptr<const Suite>>& registry() {
  static std::vector<std::unique_ptr<const Suite>> suites;
  return suites;
}

// Registered suites (of `group` only, if given), in catalogue order.
std::vector<const Suite*> listed_suites(std::optional<SuiteGroup> group) {
  std::vector<const Suite*> out;
  for (const SuiteInfo& info : kCatalogue)
    if (!group || info.group == *group)
      for (const auto& s : registry())
        if (s->name() == info.name) out.push_back(s.get());
  return out;
}

}  // namespace

const SuiteInfo& catalogued(std::string_view name) {
  for (const SuiteInfo& info : kCatalogue)
    if (info.name == name) return info;
  throw std::logic_error("suite '" + std::string(name) + "' is not in the catalogue (registry.cpp)");
}

SuiteRegistration::SuiteRegistration(std::unique_ptr<const Suite> suite) { registry().push_back(std::move(suite)); }

std::vector<const Suite*> all_suites() { return listed_suites(std::nullopt); }
std::vector<const Suite*> seed_suites() { return listed_suites(SuiteGroup::Seeds); }

const Suite& find_suite(std::string_view name) {
  std::string known;
  for (const Suite* s : all_suites()) {
    if (s->name() == name) return *s;
    known += (known.empty() ? "" : ", ") + std::string(s->name());
  }
  throw UsageError("suite '" + std::string(name) + "'", "unknown; known: " + known);
}

std::string_view to_string(Scale s) { return name_of(kScaleNames, s); }
Scale parse_scale(std::string_view name) { return parse_name(kScaleNames, name, "scale"); }

}  // namespace iolab::suites
