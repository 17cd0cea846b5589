#pragma once
// Names in a model are bytes from an untrusted file: they may be invalid UTF-8 or carry
// terminal control sequences. These functions make such text safe wherever it is shown or
// written (terminals, messages, npz member names); JSON writers replace invalid UTF-8.

#include <string>
#include <string_view>

namespace lathe {

// Valid, printable UTF-8: every control character (C0, DEL, C1) and every byte that is not
// part of a valid UTF-8 sequence becomes "\xNN". With keepLineBreaks, '\n' and '\t' stay.
std::string escapeText(std::string_view bytes, bool keepLineBreaks = false);

// Whether escapeText would change nothing.
bool isPlainText(std::string_view bytes, bool keepLineBreaks = false);

} // namespace lathe
