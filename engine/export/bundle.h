#pragma once
// Compiled module bundles (`lathe compile -o model.tar`): a tar archive holding
//   manifest.json  - target, tensors (slots), kernels' parameters, kernel calls with their ONNX
//                    nodes, inputs/outputs, size and SHA-256 of the other two files
//   kernels.so     - the kernels as a shared object linked with lld (kernels.o for targets
//                    without shared objects, e.g. bare-metal Cortex-M)
//   weights.bin    - every constant, 64-byte aligned, at the offsets the manifest gives
// `lathe run model.tar` loads it back without recompiling. A bundle is native code: loading
// its library runs code (constructors) before any kernel is called, so only bundles from a
// trusted source should be opened. readBundle checks everything it can before that.

#include "engine/export/bundle_manifest.h"

#include <memory>
#include <string>
#include <vector>

namespace lathe::exporter {

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
  std::string folder;      // that folder; removed when the LoadedBundle goes away, and on
                           // SIGINT/SIGTERM while it exists (registerTemp)
  int cleanupSlot = -1;
  ~LoadedBundle();
};

// Reads a bundle and checks it before anything of it is loaded: the manifest is validated
// (validateManifest), weights.bin and the library must have the recorded sizes and SHA-256
// hashes, and the library is extracted to a private folder as a regular file of that size,
// so that it can be dlopen'ed. Throws lathe::Error (Invalid) naming the bundle.
std::unique_ptr<LoadedBundle> readBundle(const std::string& path);

} // namespace lathe::exporter
