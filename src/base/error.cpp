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
    char escaped[8];
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
