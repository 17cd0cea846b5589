#pragma once
// Everything the `lathe` command prints goes through api::escapeText:
// names from a hostile model cannot send control sequences to the terminal or invalid UTF-8
// to a script. Line breaks and tabs pass.

#include <iosfwd>
#include <memory>

namespace lathe::cli {

// Replaces the buffer of `stream` with an escaping one for the lifetime of the returned
// object (which restores the original).
std::shared_ptr<void> escapeOutputOf(std::ostream& stream);

} // namespace lathe::cli
