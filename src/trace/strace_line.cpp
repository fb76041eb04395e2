// strace's lines taken apart (strace_line.h).
#include "strace_line.h"

#include <charconv>

namespace iolab::trace::strace {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// strace's escapes in a path (print_quoted_string): \ooo, \xHH, \n, \t, \\, \".
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    const char c = s[++i];
    if (c >= '0' && c <= '7') {
      int v = 0, n = 0;
      while (n < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7') v = v * 8 + (s[i++] - '0'), ++n;
      --i;
      out.push_back(static_cast<char>(v & 0xff));
    } else if (c == 'x' && i + 1 < s.size()) {
      int v = 0;
      const auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + std::min(s.size(), i + 3), v, 16);
      if (ec != std::errc{}) {
        out += "\\x";
        continue;
      }
      i = static_cast<std::size_t>(p - s.data()) - 1;
      out.push_back(static_cast<char>(v));
    } else {
      switch (c) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'v': out.push_back('\v'); break;
        case 'f': out.push_back('\f'); break;
        default: out.push_back(c);
      }
    }
  }
  return out;
}

// The index of the ')' closing the '(' at `open`, skipping strings,
// brackets and <path> annotations; npos when there is none.
std::size_t closing(std::string_view s, std::size_t open, std::vector<std::size_t>* commas) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {  // a string: to its closing quote
      for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\') ++i;
      if (i >= s.size()) return std::string_view::npos;
    } else if (c == '<') {  // a path annotation: strace escapes '>' inside it
      const std::size_t end = s.find('>', i);
      if (end == std::string_view::npos) return std::string_view::npos;
      i = end;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return c == ')' ? i : std::string_view::npos;
      if (depth < 0) return std::string_view::npos;
    } else if (c == ',' && depth == 1 && commas != nullptr) {
      commas->push_back(i);
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<std::uint64_t> parse_time(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view sec = text.substr(0, dot), frac = text.substr(dot + 1);
  if (!all_digits(sec) || !all_digits(frac) || frac.size() > 9 || sec.size() > 10) return std::nullopt;
  std::uint64_t s = 0, f = 0;
  std::from_chars(sec.data(), sec.data() + sec.size(), s);
  std::from_chars(frac.data(), frac.data() + frac.size(), f);
  for (std::size_t i = frac.size(); i < 9; ++i) f *= 10;
  return s * 1000000000ull + f;
}

Line split_line(std::string_view line) {
  Line l;
  std::string_view rest = trim(line);
  std::size_t space = rest.find(' ');
  if (space == std::string_view::npos) return l;
  std::string_view first = rest.substr(0, space);
  if (all_digits(first)) {  // the pid (strace -f writing one file)
    if (first.size() > 10) return l;
    std::from_chars(first.data(), first.data() + first.size(), l.pid);
    rest = trim(rest.substr(space + 1));
    space = rest.find(' ');
    if (space == std::string_view::npos) return l;
    first = rest.substr(0, space);
  }
  const auto t = parse_time(first);
  if (!t) return l;
  l.time_ns = *t;
  rest = trim(rest.substr(space + 1));
  constexpr std::string_view kUnfinished = "<unfinished ...>";
  if (rest.starts_with("+++ exited with") || rest.starts_with("+++ killed by")) {
    l.kind = LineKind::Exited;
  } else if (rest.starts_with("<... ")) {
    const std::size_t end = rest.find(" resumed>");
    if (end == std::string_view::npos) return l;
    l.kind = LineKind::Resumed;
    l.text = rest.substr(end + 9);
  } else if (rest.ends_with(kUnfinished)) {
    l.kind = LineKind::Unfinished;
    l.text = trim(rest.substr(0, rest.size() - kUnfinished.size()));
  } else if (!rest.empty() && ((rest[0] >= 'a' && rest[0] <= 'z') || rest[0] == '_')) {
    l.kind = LineKind::Call;
    l.text = rest;
  }
  return l;
}

std::optional<std::int64_t> parse_number(std::string_view text) {
  text = trim(text);
  bool negative = false;
  if (text.starts_with('-')) {
    negative = true;
    text.remove_prefix(1);
  }
  std::uint64_t v = 0;
  int base = 10;
  if (text.starts_with("0x")) {
    base = 16;
    text.remove_prefix(2);
  }
  if (text.empty()) return std::nullopt;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc{} || p != text.data() + text.size()) return std::nullopt;
  return negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
}

std::optional<Call> parse_call(std::string_view text) {
  const std::size_t open = text.find('(');
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  Call call;
  call.name = text.substr(0, open);
  for (char c : call.name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return std::nullopt;
  std::vector<std::size_t> commas;
  const std::size_t close = closing(text, open, &commas);
  if (close == std::string_view::npos) return std::nullopt;
  std::size_t start = open + 1;
  for (std::size_t comma : commas) {
    call.args.push_back(trim(text.substr(start, comma - start)));
    start = comma + 1;
  }
  const std::string_view last = trim(text.substr(start, close - start));
  if (!last.empty() || !commas.empty()) call.args.push_back(last);
  std::string_view result = trim(text.substr(close + 1));
  if (!result.starts_with('=')) return std::nullopt;
  result = trim(result.substr(1));
  // "3</tmp/f>", "0x7f00", "-1 ENOENT (...)", "?", "0x8000 (flags O_RDONLY)"
  std::size_t end = 0;
  while (end < result.size() && result[end] != ' ' && result[end] != '<') ++end;
  const auto n = parse_number(result.substr(0, end));
  if (!n || *n < 0) return call;  // a failed call: ok stays false
  call.ok = true;
  call.result = *n;
  call.result_u = static_cast<std::uint64_t>(*n);
  if (end < result.size() && result[end] == '<') {
    const std::size_t stop = result.rfind('>');
    if (stop != std::string_view::npos && stop > end) call.result_path = unescape(result.substr(end + 1, stop - end - 1));
  }
  return call;
}

std::optional<FdArg> parse_fd(std::string_view arg) {
  arg = trim(arg);
  const std::size_t lt = arg.find('<');
  FdArg fd;
  const auto n = parse_number(arg.substr(0, lt));
  if (!n) return std::nullopt;
  fd.fd = *n;
  if (lt != std::string_view::npos) {
    if (!arg.ends_with('>')) return std::nullopt;
    fd.path = unescape(arg.substr(lt + 1, arg.size() - lt - 2));
  }
  return fd;
}

bool has_flag(std::string_view flags, std::string_view flag) {
  std::size_t start = 0;
  while (start <= flags.size()) {
    std::size_t bar = flags.find('|', start);
    if (bar == std::string_view::npos) bar = flags.size();
    if (trim(flags.substr(start, bar - start)) == flag) return true;
    start = bar + 1;
  }
  return false;
}

std::optional<std::string_view> field(std::string_view text, std::string_view key) {
  std::size_t at = 0;
  while ((at = text.find(key, at)) != std::string_view::npos) {
    const bool starts = at == 0 || text[at - 1] == '{' || text[at - 1] == ' ' || text[at - 1] == ',';
    if (starts && at + key.size() < text.size() && text[at + key.size()] == '=') {
      const std::size_t from = at + key.size() + 1;
      std::size_t to = from;
      while (to < text.size() && text[to] != ',' && text[to] != '}') ++to;
      return trim(text.substr(from, to - from));
    }
    at += key.size();
  }
  return std::nullopt;
}

}  // namespace iolab::trace::strace
