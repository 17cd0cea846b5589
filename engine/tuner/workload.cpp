#include "engine/tuner/workload.h"

#include "engine/loop_ir/ir_printer.h"
#include "engine/support/sha256.h"

#include <cctype>
#include <map>
#include <sstream>

namespace lathe::tuner {
namespace {

bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// `text` with every whole-word occurrence of a key of `names` replaced by its value.
std::string renameWords(const std::string& text, const std::map<std::string, std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!isWordChar(text[i])) {
      out += text[i++];
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && isWordChar(text[end]))
      ++end;
    const std::string word = text.substr(i, end - i);
    const auto it = names.find(word);
    out += it == names.end() ? word : it->second;
    i = end;
  }
  return out;
}

} // namespace

std::string workloadKey(const loop::Kernel& kernel) {
  std::map<std::string, std::string> names{{kernel.name, "kernel"}};
  int p = 0;
  for (const loop::Buffer& b : kernel.inputs)
    names.emplace(b.name(), "p" + std::to_string(p++));
  for (const loop::Buffer& b : kernel.outputs)
    names.emplace(b.name(), "p" + std::to_string(p++));
  // Comments (the ONNX nodes a kernel came from, the lowering's notes) are not the workload.
  std::istringstream lines(loop::toString(kernel));
  std::string canonical;
  for (std::string line; std::getline(lines, line);)
    canonical += renameWords(line.substr(0, line.find('#')), names) + "\n";
  return sha256Hex(canonical).substr(0, 16);
}

} // namespace lathe::tuner
