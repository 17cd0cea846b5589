// Golden-text test driver: a .lir file holds a RUN line naming passes, the input IR, a
// line "# EXPECT:" and the expected IR. The driver parses the input, runs the passes,
// prints the result and compares. With --update it rewrites the expected part.
//
//   # RUN: fold-batchnorm eliminate-dead-code
//   graph @g opset 17 { ... }
//   # EXPECT:
//   graph @g opset 17 { ... }

#include "engine/graph/parser.h"
#include "engine/graph/printer.h"
#include "engine/graph/verifier.h"
#include "engine/pipeline/pass_manager.h"
#include "engine/support/diagnostics.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

std::string trimTrailing(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// A readable line diff: first differing line with some context.
void printDiff(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  int line = 1;
  while (true) {
    const bool he = static_cast<bool>(std::getline(e, le));
    const bool ha = static_cast<bool>(std::getline(a, la));
    if (!he && !ha)
      break;
    if (!he || !ha || le != la) {
      std::cerr << "first difference at line " << line << ":\n  expected: " << (he ? le : "<end>")
                << "\n  actual:   " << (ha ? la : "<end>") << "\n";
      return;
    }
    ++line;
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: lathe_golden_test FILE.lir [--update]\n";
    return 2;
  }
  const std::string path = argv[1];
  const bool update = argc > 2 && std::string(argv[2]) == "--update";
  std::ifstream in(path);
  if (!in) {
    std::cerr << path << ": cannot open\n";
    return 2;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  const std::string runTag = "# RUN:";
  const std::string expectTag = "# EXPECT:";
  const auto runPos = text.find(runTag);
  const auto expectPos = text.find("\n" + expectTag);
  if (runPos == std::string::npos || expectPos == std::string::npos) {
    std::cerr << path << ": needs a '# RUN:' line and a '# EXPECT:' line\n";
    return 2;
  }
  const auto runEnd = text.find('\n', runPos);
  std::istringstream runLine(text.substr(runPos + runTag.size(), runEnd - runPos - runTag.size()));
  const std::string input = text.substr(runEnd + 1, expectPos - runEnd);
  const auto expectedStart = text.find('\n', expectPos + 1);
  const std::string expected =
      expectedStart == std::string::npos ? "" : text.substr(expectedStart + 1);

  try {
    auto graph = lathe::graph::parseGraph(input, path);
    lathe::graph::verifyGraphOrThrow(*graph, path);
    lathe::pipeline::PassManager pm;
    std::string passName;
    while (runLine >> passName) {
      const auto* pass = lathe::pipeline::findPass(passName);
      if (!pass) {
        std::cerr << path << ": unknown pass '" << passName << "'\n";
        return 2;
      }
      pm.addPass(*pass);
    }
    pm.run(*graph);
    const std::string actual = lathe::graph::printGraph(*graph);
    // The printed result must itself parse back to the same text.
    const std::string reparsed = lathe::graph::printGraph(*lathe::graph::parseGraph(actual, path));
    if (reparsed != actual) {
      std::cerr << path << ": printed IR does not round-trip through the parser\n";
      printDiff(actual, reparsed);
      return 1;
    }
    if (update) {
      std::ofstream out(path);
      out << text.substr(0, expectPos) << "\n" << expectTag << "\n" << actual;
      std::cout << "updated " << path << "\n";
      return 0;
    }
    if (trimTrailing(actual) != trimTrailing(expected)) {
      std::cerr << path << ": output differs from the expected IR\n";
      printDiff(expected, actual);
      std::cerr << "----- actual -----\n" << actual;
      return 1;
    }
  } catch (const lathe::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cout << "ok " << path << "\n";
  return 0;
}
