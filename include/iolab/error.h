// The one error type of iolab: what was being done, to what, and why.
#pragma once

#include <stdexcept>
#include <string>

namespace iolab {

// Thrown for every failure iolab reports: a failed system call (errno set),
// bad input (errno 0, `detail` says what is wrong), data that does not verify.
// what() is one line: "<operation> <subject>: <cause>".
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

// `text` as one line: newlines become spaces, trailing spaces go (library
// messages, CLI11's among them, span several lines; iolab's errors do not).
std::string one_line(std::string text);

}  // namespace iolab
