#pragma once
// The source files of an exported model (`lathe export`): model.h and model.c describing its
// tensors and kernel calls for the standalone C runtime (runtime/c), an example main.c, a
// Makefile and a README with the build command for the target. Text only: the caller
// writes them next to the kernels' and weights' objects.

#include "engine/export/bare_metal.h"
#include "engine/export/bundle_manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::exporter {

// How an export is built and run, by the target's triple.
enum class ExportPlatform {
  Linux,     // a hosted Linux target: gcc (or a cross gcc), POSIX threads
  BareMetal, // no operating system (thumb*-none-eabi): freestanding runtime
  Wasm,      // wasm32: a module for a JavaScript host
};

struct ExportToolchain {
  ExportPlatform platform = ExportPlatform::Linux;
  std::string compiler; // "cc", "aarch64-linux-gnu-gcc", "clang-19 --target=wasm32"...
  std::string emulator; // how to run the result on this machine ("qemu-aarch64"), or ""
  std::string cpuFlags; // extra compiler flags for the CPU ("-march=rv64gcv")
  bool crossCompiled = false;
  std::optional<BareBoard> board; // bare metal: the QEMU board the example is linked for
};
// `cpu` is the target's -mcpu ("" or "generic" when none was given).
ExportToolchain toolchainFor(const std::string& triple, const std::string& cpu,
                             const std::string& hostTriple);

struct ExportLayout {
  BundleManifest manifest;            // slots, kernels, calls, inputs and outputs; target
  std::vector<std::uint64_t> offsets; // per slot: in the arena (intermediates) or weights
  std::uint64_t arenaBytes = 0;
  std::uint64_t weightBytes = 0;
  std::uint64_t scratchBytes = 0; // kernels' heap temporaries at most (one thread)
  std::string name;               // C identifier the model's symbols start with
  std::string modelFile;          // the ONNX file's name, for comments
};

// Bytes of a model's inputs and outputs, each rounded up to 64 (at least 64): model.h's
// MODEL_IO_BYTES, the static buffers of a bare-metal example.
std::uint64_t ioBytes(const BundleManifest& m);

// A C identifier made of `text` ("mobilenet-v2.onnx" stem -> "mobilenet_v2").
std::string cIdentifier(const std::string& text);

struct SourceFile {
  std::string name;
  std::string text;
  std::string description;
};

// model.h, model.c, an example (main.c on Linux; wasm_main.c and a Node main.js for wasm32;
// main.c, startup.c and link.ld for a board on bare metal),
// Makefile, README.md, and the runtime's lathe_runtime.h and lathe_runtime.c. Throws lathe::Error
// (Unsupported) for a model the runtime cannot run (a dimension known only at run time, a kernel of
// over 64 parameters).
std::vector<SourceFile> exportSources(const ExportLayout& layout, const ExportToolchain& toolchain);

// The runtime's sources and the example program (runtime/c), built into Lathe.
const std::string& runtimeHeaderSource();
const std::string& runtimeSource();
const std::string& exampleMainSource();
const std::string& wasmMainSource();
const std::string& exampleMainJsSource();
const std::string& bareMainSource();
const std::string& bareStartupSource();

} // namespace lathe::exporter
