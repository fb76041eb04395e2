#include "iolab/base/error.h"

#include <cstdio>
#include <cstring>

namespace iolab {
namespace {
std::string compose(const std::string& operation, const std::string& subject, const std::string& cause) {
  std::string s = printable(operation);
  if (!subject.empty()) s.append(" ").append(printable(subject));
  return s.append(": ").append(printable(cause));
}
// The code point at text[i] when it is one a terminal acts on rather than
// shows (U+061C, U+200E, U+200F, U+2028..U+202E, U+2066..U+2069), else 0.
unsigned invisible_format_char(std::string_view text, std::size_t i) {
  auto at = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  if (at(i) == 0xd8 && at(i + 1) == 0x9c) return 0x061c;
  if (at(i) != 0xe2) return 0;
  const unsigned b1 = at(i + 1), b2 = at(i + 2);
  if (b2 < 0x80 || b2 > 0xbf) return 0;
  const unsigned cp = 0x2000 | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
  if (b1 != 0x80 && b1 != 0x81) return 0;
  if (cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) return cp;
  return 0;
}
}  // namespace

Error::Error(std::string operation, std::string subject, int err)
    : Error(std::move(operation), std::move(subject), std::strerror(err), err) {}

Error::Error(std::string operation, std::string subject, std::string detail, int err)
    : std::runtime_error(compose(operation, subject, detail)),
      operation_(std::move(operation)),
      subject_(std::move(subject)),
      errno_(err) {}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    char escaped[16];  // room for "\\u" and 8 hex digits, the most an unsigned can print
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // U+0080..U+009F in UTF-8: C1 controls (CSI is U+009B), escapes to a terminal.
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(text[++i]));
      out += escaped;
    } else if (unsigned cp = invisible_format_char(text, i); cp != 0) {
      // Line and paragraph separators, bidirectional overrides and isolates:
      // a terminal breaks the line or reorders what follows (U+202E).
      std::snprintf(escaped, sizeof escaped, "\\u%04x", cp);
      out += escaped;
      i += cp < 0x800 ? 1 : 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string one_line(std::string_view text) {
  std::string joined(text);
  for (auto& c : joined)
    if (c == '\n' || c == '\r') c = ' ';
  while (!joined.empty() && joined.back() == ' ') joined.pop_back();
  return printable(joined);
}

}  // namespace iolab
