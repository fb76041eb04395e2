#include "iolab/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "iolab/base/error.h"
#include "iolab/base/units.h"

namespace iolab {

std::string read_input_file(const std::filesystem::path& file, std::string_view what, std::uint64_t limit,
                            Unreadable unreadable) {
  const std::string name = std::string(what) + " " + file.string();
  auto cannot = [&](int err) {  // throws
    const std::string why = std::string("cannot be read: ") + std::strerror(err);
    if (unreadable == Unreadable::BadInput) throw UsageError(name, why);
    throw Error("read", name, why, err);
  };
  // Opened once and checked by its descriptor: what is read is what was checked.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) cannot(errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) cannot(errno);
  if (S_ISDIR(st.st_mode)) throw UsageError(name, "is a directory");
  if (!S_ISREG(st.st_mode)) throw UsageError(name, "is not a regular file (a pipe or a device may never end)");
  const std::string too_large = "larger than " + format_bytes(static_cast<double>(limit)) + ", iolab's limit for one";
  if (static_cast<std::uint64_t>(st.st_size) > limit) throw UsageError(name, too_large);
  std::string text(static_cast<std::size_t>(st.st_size) + 1, '\0');
  std::size_t got = 0;
  for (;;) {
    if (got == text.size()) {  // it grows while being read
      if (text.size() > limit) throw UsageError(name, too_large);
      text.resize(std::min<std::uint64_t>(limit + 1, text.size() * 2 + 4096));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) cannot(errno);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > limit) throw UsageError(name, too_large);
  text.resize(got);
  return text;
}

std::size_t json_nesting_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

TomlShape toml_shape(std::string_view text) {
  TomlShape shape;
  std::size_t depth = 0, parts = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#') {  // a comment, to the end of the line
      while (i < text.size() && text[i] != '\n') ++i;
      parts = 1;
    } else if (c == '"' || c == '\'') {
      // "...", '...', and the multi-line """...""" and '''...'''
      const bool multi = text.substr(i, 3) == std::string(3, c);
      const std::string close = multi ? std::string(3, c) : std::string(1, c);
      std::size_t j = i + close.size();
      while (j < text.size() && text.substr(j, close.size()) != close) {
        if (c == '"' && text[j] == '\\') ++j;
        ++j;
      }
      i = j + close.size() - 1;
    } else if (c == '[' || c == '{') {
      shape.depth = std::max(shape.depth, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == '.') {
      shape.key_parts = std::max(shape.key_parts, ++parts);
    } else if (c == '\n' || c == ',' || c == '=') {
      parts = 1;
    }
  }
  shape.key_parts = std::max<std::size_t>(shape.key_parts, 1);
  return shape;
}

}  // namespace iolab
