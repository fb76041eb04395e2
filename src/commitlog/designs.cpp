// Opening a commit log of any design (each family in its own file) and
// removing what a log made.
#include "designs.h"

#include "design_base.h"
#include "iolab/base/error.h"
#include "iolab/io/buffer.h"

namespace iolab::commitlog {
namespace detail {
namespace {

void validate(const Options& o) {
  if (o.segment_size < 4096 || o.segment_size % io::kPageSize != 0)
    throw UsageError("segment size " + std::to_string(o.segment_size), "must be a multiple of 4096 bytes");
  if (o.topics == 0 || o.topics > 65536) throw UsageError("topics " + std::to_string(o.topics), "must be 1..65536");
  if (o.batch_bytes == 0 || o.index_interval == 0)
    throw UsageError("batch or index interval of 0 bytes", "must be at least 1");
  if (o.flush_interval.count() <= 0 || o.commit_interval.count() <= 0)
    throw UsageError("flush or commit interval", "must be positive");
  if (o.transient_buffer < 64 * 1024 || o.transient_buffer % io::kPageSize != 0)
    throw UsageError("transient buffer " + std::to_string(o.transient_buffer),
                     "must be a multiple of 4096 bytes, at least 64 KiB");
  if (o.write_batch < 32 * 1024 || o.write_batch % io::kPageSize != 0)
    throw UsageError("write batch " + std::to_string(o.write_batch), "must be a multiple of 4096 bytes, at least 32 KiB");
}

}  // namespace

std::unique_ptr<CommitLog> open_commit_log(LogFs& fs, const std::filesystem::path& dir, const Options& options) {
  validate(options);
  bool per_topic = traits(options.design).log_per_topic;
  for (const std::string& name : fs.list(dir)) {
    bool topic_dir = name.starts_with("topic-");
    if ((per_topic && (name == "log" || name == "index")) || (!per_topic && topic_dir))
      throw Error("open commit log", dir.string(),
                  "holds a log of another layout (" + std::string(per_topic ? "a shared log" : "a log per topic") +
                      ") than design " + std::string(to_string(options.design)),
                  EINVAL);
  }
  return per_topic ? open_kafka_log(fs, dir, options) : open_shared_log(fs, dir, options);
}

void remove_log_files(LogFs& fs, const std::filesystem::path& dir) {
  auto ours = [](const std::string& name) {
    std::uint64_t n = 0;
    return parse_segment_name(name, n) || parse_segment_name(name, n, ".index") || parse_segment_name(name, n, ".cq");
  };
  // Removes our files from `d`, then `d` itself if nothing else is left.
  auto clear = [&](const std::filesystem::path& d) {
    bool foreign = false;
    for (const std::string& name : fs.list(d)) {
      if (ours(name) && !fs.is_directory(d / name))
        fs.remove(d / name);
      else
        foreign = true;
    }
    if (!foreign) fs.remove_dir(d);
  };
  for (const std::string& name : fs.list(dir)) {
    auto sub = dir / name;
    if (!fs.is_directory(sub)) continue;
    if (name == "log" || name.starts_with("topic-")) {
      clear(sub);
    } else if (name == "index") {
      bool foreign = false;
      for (const std::string& topic : fs.list(sub)) {
        if (topic.starts_with("topic-") && fs.is_directory(sub / topic))
          clear(sub / topic);
        else
          foreign = true;
      }
      if (!foreign && fs.list(sub).empty()) fs.remove_dir(sub);
    }
  }
}

}  // namespace detail

std::unique_ptr<CommitLog> open_commit_log(const std::filesystem::path& dir, const Options& options) {
  return detail::open_commit_log(detail::posix_fs(), dir, options);
}

void remove_log_files(const std::filesystem::path& dir) { detail::remove_log_files(detail::posix_fs(), dir); }

}  // namespace iolab::commitlog
