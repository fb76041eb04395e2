// The one error type of iolab: what was being done, to what, and why.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace iolab {

// Thrown for every failure iolab reports: a failed system call (errno set),
// bad input (errno 0, `detail` says what is wrong), data that does not verify.
// what() is one printable line: "<operation> <subject>: <cause>", with any
// control character in them (a newline in a path, an escape sequence in a
// value) shown escaped (printable()).
class Error : public std::runtime_error {
 public:
  // A failed system call: cause is strerror(err).
  Error(std::string operation, std::string subject, int err);
  // Anything else: cause is `detail`. `err` may still carry an errno value.
  Error(std::string operation, std::string subject, std::string detail, int err = 0);

  const std::string& operation() const noexcept { return operation_; }
  const std::string& subject() const noexcept { return subject_; }
  // errno of the failed call, 0 when the error is not from the system.
  int error_number() const noexcept { return errno_; }

 private:
  std::string operation_;
  std::string subject_;
  int errno_;
};

// Bad user input (an option value, a job file): the CLI exits with code 2.
class UsageError : public Error {
 public:
  UsageError(std::string what_was_given, std::string problem)
      : Error("invalid", std::move(what_was_given), std::move(problem)) {}
};

// `text` safe to show on a terminal: control characters (newline, tab,
// escape, DEL, and the C1 controls of UTF-8) become \n, \t, \x1b, \u009b...;
// everything else, UTF-8 included, is kept. For strings from outside
// (paths, option values, file contents) that a message repeats.
std::string printable(std::string_view text);

// `text` as one line: line breaks become spaces, trailing spaces go, other
// control characters are escaped (printable). For library messages that
// span several lines (CLI11's); iolab's own errors are one line already.
std::string one_line(std::string_view text);

}  // namespace iolab
