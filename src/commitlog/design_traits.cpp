// The six designs by name and what each is: traits, descriptions, names.
#include "iolab/base/names.h"
#include "iolab/commitlog/commit_log.h"

namespace iolab::commitlog {

namespace {
constexpr NameTable<Design, 6> kDesignNames{{{Design::Kafka, "kafka"}, {Design::RocketMq, "rocketmq"},
                                            {Design::RocketMqTransient, "rocketmq-transient"}, {Design::Qmq, "qmq"},
                                            {Design::ActiveMq, "activemq"}, {Design::GroupCommit, "group-commit"}}};
}  // namespace

std::string_view to_string(Design d) noexcept { return name_of(kDesignNames, d); }
Design parse_design(std::string_view name) { return parse_name(kDesignNames, name, "design"); }

std::string_view describe(Design d) noexcept {
  switch (d) {
    case Design::Kafka:
      return "a log per topic; pwrite of producer batches, sparse mmap offset index; no flush but one at segment "
             "roll, off the append path; pread and sendfile reads";
    case Design::RocketMq:
      return "one shared log of preallocated mapped segments; stores through the mapping; a flush thread msyncs "
             ">= 16 KiB; per-topic index; mmap reads";
    case Design::RocketMqTransient:
      return "appends into an aligned buffer; a commit thread pwrites it (200 ms or half full); a flush thread "
             "fdatasyncs >= 16 KiB; mmap reads";
    case Design::Qmq:
      return "one shared log of preallocated mapped segments, each message stored through the mapping (QMQ's "
             "LogSegment.append into its MappedByteBuffer), no segment created ahead; a flush thread msyncs >= 16 KiB; "
             "per-topic index; mmap reads";
    case Design::ActiveMq:
      return "each message queued into a write batch in memory; a writer thread takes the batch whenever it is idle "
             "and writes it with lseek + one write (up to 4 MiB: KahaDB's DataFileAppender); acknowledged when queued; "
             "never flushes; read(2) reads";
    case Design::GroupCommit:
      return "pwrite appends; each append waits for an fdatasync covering it, one leader syncing for all waiting; "
             "pread reads";
  }
  return "?";
}

namespace {
constexpr NameTable<AckLevel, 3> kAckLevels{
    {{AckLevel::Buffered, "buffered"}, {AckLevel::Written, "written"}, {AckLevel::Durable, "durable"}}};
}  // namespace

std::string_view to_string(AckLevel a) noexcept { return name_of(kAckLevels, a); }

DesignTraits traits(Design d) noexcept {
  DesignTraits t;
  switch (d) {
    case Design::Kafka:
      t.log_per_topic = true;
      t.batches = true;
      t.read_path = ReadPath::Sendfile;
      break;
    case Design::RocketMq:
    case Design::Qmq:
      t.topic_index = t.writes_through_map = t.preallocates = t.flush_thread = true;
      t.read_path = ReadPath::Mmap;
      break;
    case Design::RocketMqTransient:
      t.topic_index = t.preallocates = t.flush_thread = t.commit_thread = true;
      t.ack = AckLevel::Buffered;
      t.read_path = ReadPath::Mmap;
      break;
    case Design::ActiveMq:
      t.commit_thread = t.preallocates = true;
      t.ack = AckLevel::Buffered;
      t.read_path = ReadPath::Read;
      break;
    case Design::GroupCommit:
      t.ack = AckLevel::Durable;
      t.read_path = ReadPath::Pread;
      break;
  }
  return t;
}

}  // namespace iolab::commitlog
