// Internal: one line of strace's output taken apart (strace -f -ttt -y -s 0):
// the process, the time, the call, its arguments split at top-level commas,
// and its result with the path strace showed for a returned descriptor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace iolab::trace::strace {

// "1796572797.139793" as nanoseconds since the epoch; nullopt if it is not one.
std::optional<std::uint64_t> parse_time(std::string_view text);

// What a line is.
enum class LineKind {
  Call,        // a whole call: "12 1.5 read(3</f>, ""..., 4) = 4"
  Unfinished,  // "12 1.5 read(3</f>,  <unfinished ...>": `text` is the call so far
  Resumed,     // "12 1.6 <... read resumed>""..., 4) = 4": `text` is the rest
  Exited,      // "12 1.7 +++ exited with 0 +++" (or killed by a signal)
  Other,       // signals, strace's own messages, anything else
};

struct Line {
  LineKind kind = LineKind::Other;
  std::uint64_t pid = 0;
  std::uint64_t time_ns = 0;
  std::string_view text;  // Call, Unfinished: from the call's name; Resumed: after "resumed>"
};
// Splits the prefix off a line; Other when there is no "PID TIME" or "TIME" prefix.
Line split_line(std::string_view line);

// A call taken apart. Arguments are as strace printed them, trimmed.
struct Call {
  std::string_view name;
  std::vector<std::string_view> args;
  bool ok = false;               // the result is a number (not -1 ERRNO, not ?)
  std::int64_t result = 0;       // the result as a signed number (hex addresses included)
  std::uint64_t result_u = 0;    // the same, unsigned (addresses)
  std::optional<std::string> result_path;  // "= 3</tmp/f>": /tmp/f, unescaped
};
// nullopt when the text is not "name(args) = result".
std::optional<Call> parse_call(std::string_view text);

// A descriptor argument "3</tmp/f>": the number and the path strace showed
// (unescaped: strace writes '>' and unprintable bytes as octal or hex
// escapes); nullopt when it is no descriptor.
struct FdArg {
  std::int64_t fd = -1;
  std::optional<std::string> path;
};
std::optional<FdArg> parse_fd(std::string_view arg);

// A number as strace prints it (decimal, 0x hex, a leading '-'); nullopt otherwise.
std::optional<std::int64_t> parse_number(std::string_view text);

// Whether symbolic flags "O_RDWR|O_CREAT|O_TRUNC" hold `flag`.
bool has_flag(std::string_view flags, std::string_view flag);

// The value after "key=" in a structure strace printed ("st_size=48251"); nullopt when absent.
std::optional<std::string_view> field(std::string_view text, std::string_view key);

}  // namespace iolab::trace::strace
