#pragma once
// Checks for numeric options whose messages say what is wrong in a line (CLI11's own range
// validators print the whole range of double), and the bound on thread counts.
#include <string>

namespace lathe::cli {

// CLI11 validators: an empty string when `text` is fine, else the reason.
std::string atLeastOne(const std::string& text);
std::string threadCount(const std::string& text); // 0 (one per core) to 4096

// `requested` threads (0: one per core) bounded by this machine's cores, with a note on
// stderr when that changes it.
int boundedThreads(int requested);

} // namespace lathe::cli
