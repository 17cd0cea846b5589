#pragma once
// Line diff of two texts (Myers' O(ND) algorithm in linear space) and its side-by-side
// layout. Qt-free so it can be tested and timed on its own.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::views {

// One step of an edit script that turns `a` into `b`.
struct DiffOp {
  enum class Kind : std::uint8_t { Equal, Delete, Insert };
  Kind kind;
  int aIndex; // line in a (Equal, Delete); for Insert, the a line it goes before
  int bIndex; // line in b (Equal, Insert); for Delete, the b line it goes before
};

// A shortest edit script over whole lines (no line is both deleted and inserted as equal).
// Lines are compared exactly; each distinct line is hashed once.
std::vector<DiffOp> diffLines(const std::vector<std::string_view>& a,
                              const std::vector<std::string_view>& b);

// Splits on '\n'; a trailing newline does not make an extra empty line.
std::vector<std::string_view> splitLines(std::string_view text);

// One row of a side-by-side view. -1 on a side means a blank filler row there.
struct DiffRow {
  enum class Kind : std::uint8_t {
    Same,    // both sides, equal
    Removed, // left only
    Added,   // right only
    Changed, // a removed line paired with an added one
  };
  Kind kind;
  int left;
  int right;
};

struct SideBySideDiff {
  std::vector<DiffRow> rows;
  int removed = 0;             // lines only in the left text (including changed ones)
  int added = 0;               // lines only in the right text (including changed ones)
  std::vector<int> hunkStarts; // first row of each run of non-Same rows
};

// Within each run of deletions and insertions, the k-th deleted line is paired with the
// k-th inserted one (Changed); the rest get a filler row on the other side.
SideBySideDiff sideBySide(const std::vector<DiffOp>& script);
// Pairs by what a line defines instead: within a run, a deleted and an inserted line are
// paired when their pairingKey()s line up (a diff of the keys), so `%a: ... = Conv(...)`
// pairs with the new `%a: ...` line rather than with whatever inserted line comes first.
SideBySideDiff sideBySide(const std::vector<DiffOp>& script, const std::vector<std::string_view>& a,
                          const std::vector<std::string_view>& b);
// The part of an IR line before its first ':' or '=' (the name it defines, `%a` or
// `const %w`), without trailing blanks; empty for a line with neither. Key-less lines
// pair with each other in order.
std::string_view pairingKey(std::string_view line);
SideBySideDiff diffTexts(std::string_view before, std::string_view after);

} // namespace lathe::views
