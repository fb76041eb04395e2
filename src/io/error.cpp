#include "iolab/error.h"

#include <cstring>

namespace iolab {
namespace {
std::string compose(const std::string& operation, const std::string& subject, const std::string& cause) {
  std::string s = operation;
  if (!subject.empty()) s += " " + subject;
  return s + ": " + cause;
}
}  // namespace

Error::Error(std::string operation, std::string subject, int err)
    : Error(std::move(operation), std::move(subject), std::strerror(err), err) {}

Error::Error(std::string operation, std::string subject, std::string detail, int err)
    : std::runtime_error(compose(operation, subject, detail)),
      operation_(std::move(operation)),
      subject_(std::move(subject)),
      errno_(err) {}

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace iolab
