#include "engine/support/diagnostics.h"

#include "engine/support/text_escape.h"

namespace lathe {

const char* errorKindName(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::Invalid:
    return "invalid";
  case ErrorKind::Unsupported:
    return "unsupported";
  case ErrorKind::Io:
    return "io";
  case ErrorKind::Internal:
    return "internal";
  case ErrorKind::Cancelled:
    return "cancelled";
  }
  return "?";
}

std::string formatError(ErrorKind kind, const std::string& reason, const ErrorLocation& where) {
  // Names come from untrusted files: no raw control sequences or invalid UTF-8 in messages.
  std::string out;
  if (!where.file.empty())
    out += escapeText(where.file) + ": ";
  if (!where.node.empty()) {
    out += "node '" + escapeText(where.node) + "'";
    if (!where.op.empty())
      out += " (" + escapeText(where.op) + ")";
    out += ": ";
  } else if (!where.op.empty()) {
    out += escapeText(where.op) + ": ";
  }
  if (kind == ErrorKind::Unsupported)
    out += "unsupported: ";
  else if (kind == ErrorKind::Internal)
    out += "internal error: ";
  out += escapeText(reason, /*keepLineBreaks=*/true);
  return out;
}

Error::Error(ErrorKind kind, std::string reason, ErrorLocation where)
    : std::runtime_error(formatError(kind, reason, where)), kind_(kind), reason_(std::move(reason)),
      where_(std::move(where)) {}

Error Error::within(const ErrorLocation& outer) const {
  ErrorLocation merged = where_;
  if (merged.file.empty())
    merged.file = outer.file;
  if (merged.node.empty())
    merged.node = outer.node;
  if (merged.op.empty())
    merged.op = outer.op;
  return Error(kind_, reason_, merged);
}

void failInternal(const char* file, int line, const std::string& message) {
  throw Error(ErrorKind::Internal, message + " [" + file + ":" + std::to_string(line) + "]");
}

} // namespace lathe
