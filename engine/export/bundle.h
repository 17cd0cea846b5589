#pragma once
// Compiled module bundles (`lathe compile -o model.tar`): a tar archive holding
//   manifest.json  - target, tensors (slots), kernel calls with their ONNX nodes, inputs/outputs
//   kernels.so     - the kernels as a shared object linked with lld (kernels.o for targets
//                    without shared objects, e.g. bare-metal Cortex-M)
//   weights.bin    - every constant, 64-byte aligned, at the offsets the manifest gives
// `lathe run model.tar` loads it back without recompiling.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lathe::exporter {

struct BundleSlot {
  std::string name;
  std::string role; // "input", "output", "constant", "intermediate"
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::uint64_t weightsOffset = 0; // constants only
  std::uint64_t bytes = 0;
};

struct BundleCall {
  std::string kernel;
  std::vector<int> args;
  std::vector<std::string> nodes;
  double flops = 0; // floating-point operations per call (0: unknown), for the profiler
};

struct BundleManifest {
  std::string format = "lathe-bundle-1";
  std::string model;   // the ONNX file it came from
  std::string target;  // canonical target string
  std::string triple;  // resolved LLVM triple
  std::string library; // "kernels.so" or "kernels.o"
  std::vector<BundleSlot> slots;
  std::vector<BundleCall> calls;
  std::vector<int> inputs, outputs;
};

std::string manifestToJson(const BundleManifest& manifest);
BundleManifest manifestFromJson(const std::string& json, const std::string& source);

// Links an object file into a shared object for `triple` with lld (wasm-ld for wasm32).
// Returns the library's bytes; throws lathe::Error naming the linker's message.
std::string linkSharedObject(const std::string& object, const std::string& triple);
bool canLinkSharedObject(const std::string& triple);

void writeBundle(const std::string& path, const BundleManifest& manifest,
                 const std::string& library, const std::string& weights,
                 const std::vector<std::pair<std::string, std::string>>& extraFiles = {});

struct LoadedBundle {
  BundleManifest manifest;
  std::string weights;
  std::string libraryPath; // extracted to a private temporary folder
  std::string folder;      // that folder; removed when the LoadedBundle goes away
  ~LoadedBundle();
};

// Reads and checks a bundle; the library is extracted so that it can be dlopen'ed.
std::unique_ptr<LoadedBundle> readBundle(const std::string& path);

} // namespace lathe::exporter
