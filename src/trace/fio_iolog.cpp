// fio's iologs (write_iolog=, read_iolog=) as traces (import.h,
// docs/trace-format.md "From a fio iolog"). Version 2:
//   fio version 2 iolog
//   FILE add|open|close
//   FILE read|write|sync|datasync|trim|wait OFFSET LENGTH
// Version 3 puts the time first (microseconds since the log began, fio's
// utime_since_now): "TIME FILE ACTION [OFFSET LENGTH]".
#include <charconv>
#include <string>
#include <unordered_map>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/trace/import.h"

namespace iolab::trace {

namespace {

std::vector<std::string_view> iolog_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size() && words.size() <= 6) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

struct IologFile {
  std::uint32_t id = 0;
  std::uint64_t ops = 0;
  std::uint64_t end = 0;  // the furthest byte it reads or writes: its initial size
  bool open = false;
  bool opened = false;  // opened at least once (fio opens every file it adds)
};

class IologPass {
 public:
  IologPass(const std::string& name, std::unordered_map<std::string, IologFile>& files, bool second)
      : name_(name), files_(files), second_(second) {}

  std::function<void(const Op&)> emit;
  std::uint64_t lines = 0, ignored = 0, ops = 0;
  int version = 0;

  [[noreturn]] void fail(const std::string& cause) const {
    throw UsageError("fio iolog " + name_ + " line " + std::to_string(lines), cause);
  }

  std::uint64_t number(std::string_view w, const char* what) const {
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc{} || p != w.data() + w.size())
      fail(std::string(what) + " '" + printable(w) + "' is not a whole number");
    return v;
  }

  IologFile& file(std::string_view name) {
    auto it = files_.find(std::string(name));
    if (it == files_.end()) fail("file '" + printable(name) + "' was never added ('FILE add' comes first)");
    return it->second;
  }

  void line(std::string_view text) {
    ++lines;
    if (text.size() > kMaxLineBytes) fail("line longer than " + std::to_string(kMaxLineBytes) + " bytes");
    if (lines == 1) {
      if (text.starts_with("fio version 2 iolog")) version = 2;
      else if (text.starts_with("fio version 3 iolog")) version = 3;
      else fail("not a fio iolog of version 2 or 3 (its first line is 'fio version 2 iolog' or 'fio version 3 iolog')");
      return;
    }
    auto w = iolog_words(text);
    if (w.empty()) return;
    std::uint64_t time_us = 0;
    if (version == 3) {
      time_us = number(w[0], "time");
      w.erase(w.begin());
    }
    if (w.size() != 2 && w.size() != 4)
      fail("expected '" + std::string(version == 3 ? "TIME " : "") + "FILE ACTION' or '" +
           (version == 3 ? "TIME " : "") + "FILE ACTION OFFSET LENGTH'");
    const std::string_view action = w[1];
    if (w.size() == 2) {
      if (action == "add") {
        if (files_.contains(std::string(w[0]))) {
          if (!second_) fail("file '" + printable(w[0]) + "' is added twice");
          return;
        }
        if (files_.size() >= kMaxFiles) fail("more than " + std::to_string(kMaxFiles) + " files");
        IologFile f;
        f.id = static_cast<std::uint32_t>(files_.size());
        files_.emplace(std::string(w[0]), f);
        return;
      }
      IologFile& f = file(w[0]);
      if (action == "open") {
        f.open = f.opened = true;
        op(time_us, f, OpKind::Open, 0, 0);
      } else if (action == "close") {
        f.open = false;
        op(time_us, f, OpKind::Close, 0, 0);
      } else {
        fail("unknown file action '" + printable(action) + "' (expected add, open or close)");
      }
      return;
    }
    const std::uint64_t offset = number(w[2], "offset"), length = number(w[3], "length");
    if (offset >= kMaxEnd || length >= kMaxEnd - offset)
      fail("offset " + std::string(w[2]) + " + length " + std::string(w[3]) + " is not below 2^62");
    if (action == "wait" || action == "trim") {  // no trace operation: a pause (v2), a discard
      ++ignored;
      return;
    }
    IologFile& f = file(w[0]);
    if (action == "read" || action == "write") {
      f.end = std::max(f.end, offset + length);
      op(time_us, f, action == "read" ? OpKind::Read : OpKind::Write, offset, length, kPositional);
    } else if (action == "sync") {
      op(time_us, f, OpKind::Fsync, 0, 0);
    } else if (action == "datasync") {
      op(time_us, f, OpKind::Fdatasync, 0, 0);
    } else {
      fail("unknown action '" + printable(action) + "' (expected read, write, sync, datasync, trim or wait)");
    }
  }

 private:
  const std::string& name_;
  std::unordered_map<std::string, IologFile>& files_;
  bool second_;
  std::uint64_t last_ns_ = 0;

  void op(std::uint64_t time_us, IologFile& f, OpKind kind, std::uint64_t offset, std::uint64_t length,
          std::uint32_t flags = 0) {
    ++ops;
    ++f.ops;
    if (!second_ || !emit) return;
    Op o;
    // fio writes the times of requests as they were issued: with a queue
    // deeper than one, one may precede the line before it; kept in order.
    o.time_ns = std::max(last_ns_, time_us * 1000);
    last_ns_ = o.time_ns;
    o.file = f.id;
    o.kind = kind;
    o.offset = offset;
    o.length = length;
    o.flags = flags;
    emit(o);
  }
};

template <typename F>
void each_iolog_line(std::istream& in, const std::string& name, F&& f) {
  in.clear();
  in.seekg(0);
  if (!in) throw Error("read", "fio iolog " + name, "it cannot be read from its start again");
  std::string line;
  char c = 0;
  bool any = false;
  while (in.get(c)) {
    any = true;
    if (c == '\n') {
      f(std::string_view(line));
      line.clear();
      any = false;
      continue;
    }
    if (line.size() > kMaxLineBytes) {  // refused by the pass, without reading the rest
      f(std::string_view(line));
    }
    line.push_back(c);
  }
  if (in.bad()) throw Error("read", "fio iolog " + name, "the stream failed");
  if (any) f(std::string_view(line));
}

}  // namespace

ImportSummary fio_iolog_to_trace(std::istream& in, const std::string& name, std::ostream& out) {
  std::unordered_map<std::string, IologFile> files;
  IologPass first(name, files, false);
  each_iolog_line(in, name, [&](std::string_view l) { first.line(l); });
  if (first.lines == 0) throw UsageError("fio iolog " + name, "is empty (its first line is 'fio version 2 iolog' or 'fio version 3 iolog')");
  Header header;
  header.source = first.version == 3 ? "fio-iolog-v3" : "fio-iolog-v2";
  header.command = "fio iolog " + name;
  header.files.resize(files.size());
  for (const auto& [path, f] : files) header.files[f.id] = FileInfo{f.id, f.end, 0};
  header.op_count = first.ops;
  Writer writer(out, header);
  for (auto& [path, f] : files) f.open = false;
  IologPass second(name, files, true);
  second.emit = [&](const Op& o) { writer.write(o); };
  each_iolog_line(in, name, [&](std::string_view l) { second.line(l); });
  ImportSummary s;
  s.ops = writer.written();
  s.files = files.size();
  s.threads = s.ops > 0 ? 1 : 0;
  s.lines = second.lines;
  s.ignored = second.ignored;
  return s;
}

}  // namespace iolab::trace
