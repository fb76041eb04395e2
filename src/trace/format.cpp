// The trace's text form (docs/trace-format.md): the names of its operations
// and flags, the streaming reader that holds every trace to the limits of
// trace.h, and the writer.
#include <charconv>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "iolab/base/error.h"
#include "iolab/base/names.h"
#include "iolab/trace/trace.h"

namespace iolab::trace {

namespace {

constexpr NameTable<OpKind, 12> kOpKindNames{
    {{OpKind::Open, "open"}, {OpKind::Close, "close"}, {OpKind::Read, "read"}, {OpKind::Write, "write"},
     {OpKind::Fsync, "fsync"}, {OpKind::Fdatasync, "fdatasync"}, {OpKind::SyncFileRange, "sync_file_range"},
     {OpKind::Msync, "msync"}, {OpKind::Truncate, "truncate"}, {OpKind::Allocate, "allocate"}, {OpKind::Map, "map"},
     {OpKind::Unmap, "unmap"}}};

constexpr NameTable<OpFlag, 8> kOpFlagNames{{{kPositional, "pos"}, {kVectored, "vec"}, {kAppend, "append"},
                                             {kCreate, "create"}, {kTruncate, "trunc"}, {kDirect, "direct"},
                                             {kMapWrite, "mapwrite"}, {kShort, "short"}}};

constexpr std::string_view kMagic = "iolab-trace";

// The words of a line, split at runs of spaces (the format writes one).
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

}  // namespace

std::string_view to_string(OpKind kind) { return name_of(kOpKindNames, kind); }
std::optional<OpKind> parse_op_kind(std::string_view word) { return value_of(kOpKindNames, word); }

std::string flags_to_string(std::uint32_t flags) {
  std::string s;
  for (const auto& [bit, name] : kOpFlagNames)
    if ((flags & bit) != 0) {
      if (!s.empty()) s += '|';
      s += name;
    }
  return s.empty() ? "-" : s;
}

struct Reader::State {
  std::istream& in;
  std::string name;
  Header header;
  std::uint64_t line = 0;
  std::uint64_t ops = 0;
  std::uint64_t last_time = 0;
  std::unordered_map<std::uint32_t, std::size_t> files;  // id -> index in header.files
  std::string text;                                      // the current line

  State(std::istream& in_, std::string name_) : in(in_), name(std::move(name_)) {}

  [[noreturn]] void fail(const std::string& cause) const {
    throw UsageError("trace " + name + " line " + std::to_string(line), cause);
  }

  // The next line into `text` (without its '\n'); false at the end. A line
  // longer than kMaxLineBytes is refused before more of it is read.
  bool next_line() {
    text.clear();
    if (in.peek() == std::char_traits<char>::eof()) return false;
    ++line;
    char c = 0;
    while (in.get(c)) {
      if (c == '\n') return true;
      if (text.size() >= kMaxLineBytes) fail("line longer than " + std::to_string(kMaxLineBytes) + " bytes");
      text.push_back(c);
    }
    if (in.bad()) throw Error("read", "trace " + name, "the stream failed after line " + std::to_string(line - 1));
    return true;  // the last line, without a final '\n'
  }

  std::uint64_t number(std::string_view word, const char* what) const {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (word.empty() || ec != std::errc{} || end != word.data() + word.size())
      fail(std::string(what) + " '" + printable(word) + "' is not a whole number" +
           (ec == std::errc::result_out_of_range ? " below 2^64" : ""));
    return v;
  }

  std::uint32_t number32(std::string_view word, const char* what) const {
    const std::uint64_t v = number(word, what);
    if (v > UINT32_MAX) fail(std::string(what) + " " + std::string(word) + " is above 2^32 - 1");
    return static_cast<std::uint32_t>(v);
  }

  std::uint32_t flags(std::string_view word) const {
    if (word == "-") return 0;
    std::uint32_t flags = 0;
    std::size_t start = 0;
    while (start <= word.size()) {
      std::size_t bar = word.find('|', start);
      if (bar == std::string_view::npos) bar = word.size();
      const std::string_view part = word.substr(start, bar - start);
      const auto bit = value_of(kOpFlagNames, part);
      if (!bit) fail("unknown flag '" + printable(part) + "' (expected " + choices_of(kOpFlagNames) + ", or - for none)");
      flags |= *bit;
      start = bar + 1;
    }
    return flags;
  }

  // A header line: the keyword, then the rest. Refused at the end of the
  // input (a truncated header) and when the keyword is another.
  std::string_view header_line(std::string_view keyword) {
    if (!next_line()) {
      ++line;
      fail("the header ends early: expected a '" + std::string(keyword) + "' line");
    }
    const std::string_view t = text;
    if (!t.starts_with(keyword) || (t.size() > keyword.size() && t[keyword.size()] != ' '))
      fail("expected a '" + std::string(keyword) + "' line in the header, found '" +
           printable(t.substr(0, 40)) + (t.size() > 40 ? "...'" : "'"));
    return t.size() > keyword.size() ? t.substr(keyword.size() + 1) : std::string_view{};
  }

  void read_header() {
    const auto magic = words_of(header_line(kMagic));
    if (magic.size() != 1) fail("expected 'iolab-trace VERSION'");
    header.version = static_cast<int>(number32(magic[0], "version"));
    if (header.version != kFormatVersion)
      fail("format version " + std::to_string(header.version) + " is not one this iolab reads (it reads " +
           std::to_string(kFormatVersion) + ")");
    const auto source = words_of(header_line("source"));
    if (source.size() != 1) fail("expected 'source WORD'");
    header.source = std::string(source[0]);
    header.command = std::string(header_line("command"));
    const auto files_line = words_of(header_line("files"));
    if (files_line.size() != 1) fail("expected 'files COUNT'");
    const std::uint64_t count = number(files_line[0], "file count");
    if (count > kMaxFiles) fail(std::to_string(count) + " files: a trace names at most " + std::to_string(kMaxFiles));
    header.files.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto f = words_of(header_line("file"));
      if (f.size() != 3) fail("expected 'file ID INITIAL_SIZE FLAGS'");
      FileInfo info;
      info.id = number32(f[0], "file id");
      info.initial_size = number(f[1], "initial size");
      if (info.initial_size >= kMaxEnd) fail("initial size " + std::string(f[1]) + " is not below 2^62");
      info.open_flags = flags(f[2]);
      if (!files.emplace(info.id, header.files.size()).second)
        fail("file " + std::to_string(info.id) + " is declared twice");
      header.files.push_back(info);
    }
    const auto ops_line = words_of(header_line("ops"));
    if (ops_line.size() != 1) fail("expected 'ops COUNT' (or 'ops -')");
    if (ops_line[0] != "-") header.op_count = number(ops_line[0], "operation count");
  }

  bool next(Op& op) {
    for (;;) {
      if (!next_line()) {
        if (header.op_count && ops != *header.op_count)
          fail("the trace ends after " + std::to_string(ops) + " operations; its header says " +
               std::to_string(*header.op_count) + " (truncated?)");
        return false;
      }
      if (!text.empty()) break;  // blank lines are skipped
    }
    const auto w = words_of(text);
    if (w.size() != 7) fail("expected 7 fields 'TIME_NS THREAD FILE OP OFFSET LENGTH FLAGS', found " + std::to_string(w.size()));
    Op o;
    o.time_ns = number(w[0], "time");
    o.thread = number32(w[1], "thread");
    o.file = number32(w[2], "file");
    const auto kind = parse_op_kind(w[3]);
    if (!kind) fail("unknown operation '" + printable(w[3]) + "' (expected " + choices_of(kOpKindNames) + ")");
    o.kind = *kind;
    o.offset = number(w[4], "offset");
    o.length = number(w[5], "length");
    o.flags = flags(w[6]);
    if (!files.contains(o.file)) fail("file " + std::to_string(o.file) + " was never declared");
    if (o.offset >= kMaxEnd || o.length >= kMaxEnd - o.offset)
      fail("offset " + std::string(w[4]) + " + length " + std::string(w[5]) + " is not below 2^62");
    if (o.time_ns < last_time)
      fail("time " + std::to_string(o.time_ns) + " goes back before the previous operation's " + std::to_string(last_time));
    if (header.op_count && ops >= *header.op_count)
      fail("more operations than the header's " + std::to_string(*header.op_count));
    last_time = o.time_ns;
    ++ops;
    op = o;
    return true;
  }
};

Reader::Reader(std::istream& in, std::string name) : state_(std::make_unique<State>(in, std::move(name))) {
  state_->read_header();
}
Reader::~Reader() = default;
const Header& Reader::header() const { return state_->header; }
bool Reader::next(Op& op) { return state_->next(op); }
std::uint64_t Reader::line() const { return state_->line; }

Writer::Writer(std::ostream& out, const Header& header) : out_(out) {
  // The command is one line of at most what the reader takes (it is informational).
  std::string command = printable(header.command);
  const std::size_t room = kMaxLineBytes - 16;
  if (command.size() > room) command = command.substr(0, room - 3) + "...";
  std::string source = header.source.empty() ? std::string("-") : printable(header.source);
  for (char& c : source)
    if (c == ' ') c = '_';
  out_ << kMagic << ' ' << header.version << "\nsource " << source << "\ncommand " << command << "\nfiles "
       << header.files.size() << '\n';
  for (const FileInfo& f : header.files)
    out_ << "file " << f.id << ' ' << f.initial_size << ' ' << flags_to_string(f.open_flags) << '\n';
  out_ << "ops ";
  if (header.op_count) out_ << *header.op_count;
  else out_ << '-';
  out_ << '\n';
}

void Writer::write(const Op& op) {
  out_ << op.time_ns << ' ' << op.thread << ' ' << op.file << ' ' << to_string(op.kind) << ' ' << op.offset << ' '
       << op.length << ' ' << flags_to_string(op.flags) << '\n';
  ++written_;
}

}  // namespace iolab::trace
