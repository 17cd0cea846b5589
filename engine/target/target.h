#pragma once
// Target strings ("llvm -mcpu=znver4", "llvm -mtriple=aarch64-linux-gnu", "cuda -arch=sm_90")
// and the descriptions the code generators read.

#include <string>
#include <string_view>
#include <vector>

namespace lathe::target {

enum class Kind { Llvm, Cuda };

struct Target {
  Kind kind = Kind::Llvm;
  std::string triple;   // empty: the host's
  std::string cpu;      // empty: the host's (for the host triple) or "generic"
  std::string features; // LLVM attribute string, e.g. "+avx2,+fma"
  std::string arch;     // CUDA: "sm_90"
  int optLevel = 3;     // 0..3

  bool isHost() const { return kind == Kind::Llvm && triple.empty(); }
  // The canonical string; parseTarget(t.text()) gives t back.
  std::string text() const;
};

// Throws lathe::Error (Invalid) naming the bad option and listing the valid ones.
Target parseTarget(std::string_view text);

// Targets the workbench offers in its picker.
struct KnownTarget {
  std::string label;       // "AArch64 Linux"
  std::string text;        // "llvm -mtriple=aarch64-linux-gnu"
  std::string description; // one line
};
std::vector<KnownTarget> knownTargets();

} // namespace lathe::target
