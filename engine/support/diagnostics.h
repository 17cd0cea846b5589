#pragma once
// User errors (bad model, bad arguments) versus internal errors (broken invariants).
// Both are exceptions so that the GUI survives either; only user errors are "expected".

#include <stdexcept>
#include <string>

namespace lathe {

enum class ErrorKind {
  Invalid,     // the input is malformed or inconsistent
  Unsupported, // valid input that Lathe does not handle (yet)
  Io,          // a file could not be read or written
  Internal,    // a bug in Lathe: an invariant did not hold
  Cancelled,   // the user stopped the work
};

const char* errorKindName(ErrorKind kind);

// Where a problem was found; every field is optional.
struct ErrorLocation {
  std::string file;
  std::string node; // node name (or value name when no node applies)
  std::string op;   // op type of the node
};

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, std::string reason, ErrorLocation where = {});

  ErrorKind kind() const { return kind_; }
  const std::string& reason() const { return reason_; }
  const ErrorLocation& where() const { return where_; }

  // A copy of this error with empty location fields filled from `outer`.
  Error within(const ErrorLocation& outer) const;

private:
  ErrorKind kind_;
  std::string reason_;
  ErrorLocation where_;
};

// "file: node 'n' (Op): reason" with the parts that are known.
std::string formatError(ErrorKind kind, const std::string& reason, const ErrorLocation& where);

[[noreturn]] void failInternal(const char* file, int line, const std::string& message);

} // namespace lathe

// Internal invariant check; the message says what went wrong, not how to fix the input.
#define LATHE_CHECK(cond, message)                                                                 \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::lathe::failInternal(__FILE__, __LINE__,                                                    \
                            std::string("check failed: " #cond ": ") + (message));                 \
  } while (false)
