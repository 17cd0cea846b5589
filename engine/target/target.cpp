#include "engine/target/target.h"

#include "engine/support/diagnostics.h"

#include <sstream>

namespace lathe::target {

std::string Target::text() const {
  std::string s = kind == Kind::Cuda ? "cuda" : "llvm";
  if (!triple.empty())
    s += " -mtriple=" + triple;
  if (!cpu.empty())
    s += " -mcpu=" + cpu;
  if (!features.empty())
    s += " -mattr=" + features;
  if (!arch.empty())
    s += " -arch=" + arch;
  if (optLevel != 3)
    s += " -O" + std::to_string(optLevel);
  return s;
}

Target parseTarget(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string word;
  Target t;
  if (!(in >> word))
    throw Error(ErrorKind::Invalid, "empty target string (try \"llvm\")");
  if (word == "llvm")
    t.kind = Kind::Llvm;
  else if (word == "cuda")
    t.kind = Kind::Cuda;
  else
    throw Error(ErrorKind::Invalid, "unknown target kind '" + word + "' in \"" + std::string(text) +
                                        "\" (expected llvm or cuda)");
  while (in >> word) {
    auto value = [&](std::string_view prefix) { return word.substr(prefix.size()); };
    if (word.rfind("-mtriple=", 0) == 0)
      t.triple = value("-mtriple=");
    else if (word.rfind("-mcpu=", 0) == 0)
      t.cpu = value("-mcpu=");
    else if (word.rfind("-mattr=", 0) == 0)
      t.features = value("-mattr=");
    else if (word.rfind("-arch=", 0) == 0 && t.kind == Kind::Cuda)
      t.arch = value("-arch=");
    else if (word.size() == 3 && word.rfind("-O", 0) == 0 && word[2] >= '0' && word[2] <= '3')
      t.optLevel = word[2] - '0';
    else
      throw Error(ErrorKind::Invalid, "unknown target option '" + word + "' in \"" +
                                          std::string(text) +
                                          "\" (options: -mtriple=, -mcpu=, -mattr=, -O0..-O3" +
                                          (t.kind == Kind::Cuda ? ", -arch=" : "") + ")");
  }
  if (t.kind == Kind::Cuda && t.arch.empty())
    t.arch = "sm_90";
  return t;
}

std::vector<KnownTarget> knownTargets() {
  return {
      {"Host CPU", "llvm", "this machine's CPU, every instruction set extension it has"},
      {"x86-64 (AVX2)", "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell", "x86-64 with AVX2 and FMA"},
      {"x86-64 (AVX-512)", "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512",
       "x86-64 with AVX-512"},
      {"AArch64 Linux", "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1",
       "64-bit Arm with NEON"},
      {"RISC-V Linux", "llvm -mtriple=riscv64-linux-gnu -mattr=+v",
       "64-bit RISC-V with the vector extension"},
      {"Cortex-M33", "llvm -mtriple=thumbv8m.main-none-eabihf -mcpu=cortex-m33",
       "microcontroller with single-precision FPU (hard float), no operating system"},
      {"Cortex-M0", "llvm -mtriple=thumbv6m-none-eabi -mcpu=cortex-m0",
       "microcontroller without FPU (float in software), no operating system"},
      {"WebAssembly", "llvm -mtriple=wasm32-unknown-unknown -mattr=+simd128",
       "wasm32 with 128-bit SIMD"},
      {"CUDA sm_80", "cuda -arch=sm_80", "NVIDIA Ampere GPUs (A100) through PTX"},
      {"CUDA sm_90", "cuda -arch=sm_90", "NVIDIA Hopper GPUs (H100, H200) through PTX"},
  };
}

} // namespace lathe::target
