#pragma once
// Explanations for people learning how a model becomes machine code: one per graph pass, per
// schedule primitive and per compile stage, written in docs/explain/<kind>/<name>.md and built
// into Lathe. `lathe explain NAME` prints one; the workbench shows them beside what they
// explain.

#include <string>
#include <vector>

namespace lathe::api {

struct Explanation {
  std::string kind; // "pass", "primitive" or "stage"
  std::string name; // "fold-batchnorm", "split", "lowering"
  std::string text; // Markdown: a "# name: summary" line, then paragraphs
  // The text's first line without its "# ".
  std::string title() const;
};

// All of them, by kind and name.
const std::vector<Explanation>& explanations();
// The same in the order a person meets them: the stages as a model goes through them, the
// passes as the default pipeline runs them (others after), then the primitives by name.
std::vector<const Explanation*> explanationsInOrder();
// The one named `name` (of `kind` when given), or null.
const Explanation* findExplanation(const std::string& name, const std::string& kind = {});

} // namespace lathe::api
